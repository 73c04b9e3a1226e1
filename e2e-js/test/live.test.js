// Live events for persons, with real clients: a transfer booked on a wallet
// through the sandbox's control API (outside the gateway, as a transfer from
// another bank arrives) reaches a person of the wallet's corporation as an
// event whose subject is the wallet with its new balance, over graphql-ws
// and over graphql-sse; a person of another corporation, subscribed the
// same way, receives nothing of it; and Apollo Client's InMemoryCache,
// which normalises the subject by its id, shows the new balance in the
// query it cached before, with no refetch.
//
// The gateway hears of such a change only from its banking poller, which
// polls the corporations of live subscribers every
// FINGRAPH_BANK_POLL_INTERVAL (1 s here, the minimum).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient as wsClient } from 'graphql-ws';
import { createClient as sseClient } from 'graphql-sse';
import { ApolloClient, InMemoryCache, HttpLink, ApolloLink, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import WebSocket from 'ws';
import { startGateway, waitFor } from './harness.js';

let gw;
let anna;
let ben;
before(async () => {
  gw = await startGateway({ FINGRAPH_BANK_POLL_INTERVAL: '1s' });
  anna = await gw.signInPerson('anna@demo.test'); // Demo Trading SIA
  ben = await gw.signInPerson('ben@second.test'); // Second Ventures OÜ
});
after(async () => { await gw?.stop(); });

const bearer = (s) => ({ Authorization: `Bearer ${s.token}` });

// The fields a dashboard shows of a wallet, selected on the event's subject.
const EVENTS = `subscription Live($after: String) {
  events(after: $after) {
    cursor source
    event { id name subject { __typename id ... on Wallet { name balance { amount currency } } } }
  }
}`;

const WALLETS = `{ currentCorporation { upstreamId wallets { id upstreamId name currency balance { amount currency } } } }`;

/** The session's corporation's wallets, as the gateway shows them now. */
async function wallets(s) {
  const r = await gw.post(WALLETS, {}, bearer(s));
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return r.body.data.currentCorporation.wallets;
}

/**
 * The stream's position as the session sees it (the newest page of its
 * history): subscribing after it, nothing that happens later is missed,
 * however long the subscription takes to reach the gateway.
 */
async function cursor(s) {
  const r = await gw.post('{ eventHistory(first: 1) { pageInfo { startCursor } } }', {}, bearer(s));
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return r.body.data.eventHistory.pageInfo.startCursor;
}

/** Subscribes s over transport ('ws' or 'sse'); every LiveEvent lands in seen. */
async function subscribe(transport, s, seen) {
  const variables = { after: await cursor(s) };
  const sink = {
    next: (m) => seen.push(m.errors ? { errors: m.errors } : m.data.events),
    error: (e) => seen.push({ error: e }),
    complete: () => {},
  };
  const client = transport === 'ws'
    ? wsClient({ url: gw.ws, webSocketImpl: WebSocket, connectionParams: { sessionToken: s.token }, retryAttempts: 0 })
    : sseClient({ url: gw.graphql, headers: () => bearer(s), retryAttempts: 0 });
  const dispose = client.subscribe({ query: EVENTS, variables }, sink);
  return async () => { dispose(); await client.dispose(); };
}

/** Waits for the event in seen whose subject is wallet w at balance amount. */
function arrival(seen, w, amount, who) {
  return waitFor(() => {
    const bad = seen.find((e) => e.error || e.errors);
    if (bad) throw new Error(`${who}'s subscription failed: ${JSON.stringify(bad.errors ?? String(bad.error))}`);
    return seen.find((e) => e.event.subject?.id === w.id && e.event.subject.balance.amount === amount);
  }, 30_000, `${who}'s event for ${w.name} at ${amount}`);
}

for (const transport of ['ws', 'sse']) {
  const name = transport === 'ws' ? 'graphql-ws' : 'graphql-sse';
  test(`${name}: a credit made outside the gateway reaches the person with its wallet as subject, and no other corporation`, { timeout: 90_000 }, async () => {
    const [annas, bens] = [await wallets(anna), await wallets(ben)];
    const aw = annas.find((w) => w.currency === 'USD');
    const bw = bens[0];
    const annaSeen = [];
    const benSeen = [];
    const stopAnna = await subscribe(transport, anna, annaSeen);
    const stopBen = await subscribe(transport, ben, benSeen);
    try {
      await gw.livePolled(2);
      const booked = await gw.credit(aw.upstreamId, 1000);
      assert.equal(booked.amount, aw.balance.amount + 1000, 'the sandbox booked the transfer');

      const got = await arrival(annaSeen, aw, aw.balance.amount + 1000, 'Anna');
      assert.equal(got.source, 'banking', 'announced by the banking poller: the gateway made no call to change it');
      assert.equal(got.event.subject.__typename, 'Wallet');
      assert.equal(got.event.subject.name, aw.name);
      assert.deepEqual(got.event.subject.balance, { amount: aw.balance.amount + 1000, currency: 'USD' });

      // Ben's own corporation changes after Anna's event arrived: the
      // stream is ordered, so by the time Ben has this, he would have had
      // Anna's had it been delivered to him.
      await gw.credit(bw.upstreamId, 500);
      await arrival(benSeen, bw, bw.balance.amount + 500, 'Ben');
      const annaWalletIds = new Set(annas.map((w) => w.id));
      assert.deepEqual(benSeen.filter((e) => annaWalletIds.has(e.event.subject?.id)), [], 'no event about a wallet of Anna\'s corporation');
      // An event of another corporation would come with a null subject
      // (Ben may not read it); every event Ben had names something of his.
      assert.deepEqual(benSeen.filter((e) => !e.event.subject), [], 'no event whose subject Ben may not read');
    } finally {
      await stopAnna();
      await stopBen();
    }
  });
}

test('Apollo Client: the event\'s subject normalises into the cached Wallet, and the cached query shows the new balance', { timeout: 90_000 }, async () => {
  // Every HTTP request Apollo makes is counted: after the first query the
  // new balance must come from the subscription alone.
  let httpRequests = 0;
  const countingFetch = (...args) => { httpRequests++; return fetch(...args); };
  const http = new HttpLink({ uri: gw.graphql, headers: bearer(anna), fetch: countingFetch });
  const ws = new GraphQLWsLink(wsClient({
    url: gw.ws, webSocketImpl: WebSocket, connectionParams: { sessionToken: anna.token }, retryAttempts: 0,
  }));
  const client = new ApolloClient({
    link: ApolloLink.split(({ operationType }) => operationType === 'subscription', ws, http),
    cache: new InMemoryCache(),
  });
  const SCREEN = gql`query Screen {
    currentCorporation { id wallets { id upstreamId name currency balance { amount currency } } }
    eventHistory(first: 1) { pageInfo { startCursor } }
  }`;
  const { data } = await client.query({ query: SCREEN });
  const w = data.currentCorporation.wallets.find((x) => x.currency === 'USD');
  const requestsBefore = httpRequests;

  const seen = [];
  const errors = [];
  const sub = client.subscribe({ query: gql(EVENTS), variables: { after: data.eventHistory.pageInfo.startCursor } })
    .subscribe({ next: ({ data: d, error }) => (error ? errors.push(error) : seen.push(d.events)), error: (e) => errors.push(e) });
  try {
    await gw.livePolled(1);
    await gw.credit(w.upstreamId, 1000);
    const want = w.balance.amount + 1000;
    const walletRef = client.cache.identify({ __typename: 'Wallet', id: w.id });
    const BALANCE = gql`fragment Balance on Wallet { balance { amount currency } }`;
    await waitFor(() => {
      if (errors.length) throw new Error(`subscription failed: ${errors.map(String)}`);
      return client.readFragment({ id: walletRef, fragment: BALANCE })?.balance.amount === want;
    }, 30_000, 'the cached Wallet to show the new balance');
    assert.ok(seen.some((e) => e.event.subject?.id === w.id), 'the change came as an event about the wallet');

    // The query cached before the event reads the new balance from the
    // cache: one Wallet entry, updated in place.
    const cached = client.readQuery({ query: SCREEN });
    assert.equal(cached.currentCorporation.wallets.find((x) => x.id === w.id).balance.amount, want);
    const entries = Object.keys(client.cache.extract()).filter((k) => k === walletRef);
    assert.equal(entries.length, 1);
    const again = await client.query({ query: SCREEN, fetchPolicy: 'cache-only' });
    assert.equal(again.data.currentCorporation.wallets.find((x) => x.id === w.id).balance.amount, want);
    assert.equal(httpRequests, requestsBefore, 'no refetch: the subscription updated the cache');
  } finally {
    sub.unsubscribe();
    client.stop();
  }
});
