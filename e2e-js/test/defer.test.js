// Incremental delivery with real clients: Apollo Client 4 reads a query with
// @defer over HTTP multipart/mixed (deferSpec=20220824) and renders the
// first part before the deferred one, then the merged result from its
// cache; graphql-ws receives the same query as several next payloads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApolloClient, InMemoryCache, HttpLink, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startGateway, SIGN_IN } from './harness.js';

let gw;
let token;
before(async () => {
  gw = await startGateway({ FINGRAPH_REGISTER_WEBHOOK: 'false' });
  const r = await gw.post(SIGN_IN, { input: { kind: 'PERSON', email: 'anna@demo.test', password: 'demo-password', deviceFingerprint: 1 } });
  token = r.body.data?.signIn?.sessionToken;
  assert.ok(token, `anna signs in: ${JSON.stringify(r.body)}`);
  // The card reads are the slow part of the screen, so that the first
  // part is surely read on its own before the deferred ones.
  await gw.sandbox('POST', '/_sandbox/faults', { route: 'GET /banking/v2/cards/{id}/transactions', latency_ms: 300 });
});
after(async () => { await gw?.stop(); });

const WALLETS = `query Wallets {
  currentCorporation {
    id name
    wallets {
      id name
      ... @defer(label: "cards") {
        cards { id displayName transactions(first: 2) { edges { node { id status } } } }
      }
    }
  }
}`;

test('Apollo Client renders the wallets before their deferred cards, then the merged result from its cache', async () => {
  const client = new ApolloClient({
    link: new HttpLink({ uri: gw.graphql, headers: { Authorization: `Bearer ${token}` } }),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
  const query = gql(WALLETS);
  const renders = [];
  await new Promise((resolve, reject) => {
    const sub = client.watchQuery({ query }).subscribe({
      next: (r) => {
        renders.push(r);
        if (!r.loading) { sub.unsubscribe(); resolve(); }
      },
      error: reject,
    });
  });
  const withData = renders.filter((r) => r.data?.currentCorporation);
  const firstRender = withData[0];
  // The first render is of the first part, still loading: gqlgen writes a
  // deferred field as null there, which Apollo shows until its part comes.
  assert.equal(firstRender.loading, true, 'the first render is of the first part');
  assert.ok(firstRender.data.currentCorporation.wallets.length > 0);
  assert.ok(firstRender.data.currentCorporation.wallets.every((w) => w.cards == null), 'no cards in the first render');
  const last = withData.at(-1);
  assert.equal(last.loading, false);
  assert.equal(last.dataState, 'complete');
  assert.ok(withData.length >= 2, 'a render before the deferred part and one after');
  const cards = last.data.currentCorporation.wallets.flatMap((w) => w.cards ?? []);
  assert.ok(cards.length > 0, 'the deferred cards are merged in');

  // The merged result is in the normalised cache: every card stored once,
  // referenced from its wallet.
  const cache = client.cache.extract();
  const cardKeys = Object.keys(cache).filter((k) => k.startsWith('Card:'));
  assert.equal(cardKeys.length, cards.length);
  const fromCache = client.readQuery({ query });
  assert.deepEqual(fromCache.currentCorporation.wallets.flatMap((w) => (w.cards ?? []).map((c) => c.id)), cards.map((c) => c.id));
  client.stop();
});

test('graphql-ws delivers a deferred query as several next payloads', async () => {
  const client = createClient({ url: gw.ws, webSocketImpl: WebSocket, connectionParams: { sessionToken: token }, retryAttempts: 0 });
  const payloads = [];
  try {
    for await (const p of client.iterate({ query: WALLETS })) payloads.push(p);
  } finally {
    await client.dispose();
  }
  assert.ok(payloads.length >= 2, `${payloads.length} payloads`);
  assert.equal(payloads[0].hasNext, true);
  assert.ok(payloads[0].data.currentCorporation.wallets.length > 0);
  assert.equal(payloads.at(-1).hasNext, false);
  for (const p of payloads.slice(1)) {
    assert.equal(p.label, 'cards');
    assert.deepEqual(p.path.slice(0, 2), ['currentCorporation', 'wallets']);
    assert.ok(Array.isArray(p.data.cards));
  }
});
