// @live queries and Apollo's multipart HTTP subscriptions with real clients
// (docs/live.md): Anna's live wallets over graphql-ws and graphql-sse answer
// at once and again after a transfer credited outside the gateway (the
// banking poller finds it, 1 s interval), while Ben's, of another
// corporation, gets nothing of it; Apollo Client's HttpLink, with no
// websocket at all, receives a subscription's event over multipart HTTP,
// as a person and as an API client.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient as wsClient } from 'graphql-ws';
import { createClient as sseClient } from 'graphql-sse';
import { ApolloClient, InMemoryCache, HttpLink, gql } from '@apollo/client';
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

const LIVE = `query @live { currentCorporation { wallets { id upstreamId currency balance { amount } } } }`;
const USD = 'b0000000-0000-4000-8000-000000000003';
const SECOND_EUR = 'b0000000-0000-4000-8000-000000000011';

const balanceOf = (answer, upstreamId) =>
  answer.data.currentCorporation.wallets.find((w) => w.upstreamId === upstreamId)?.balance.amount;

/** Subscribes with a graphql-ws or graphql-sse client; returns the answers seen. */
function live(client) {
  const seen = [];
  const dispose = client.subscribe({ query: LIVE }, {
    next: (m) => seen.push(m),
    error: (e) => seen.push({ error: e }),
    complete: () => {},
  });
  return { seen, dispose };
}

for (const [name, make] of [
  ['graphql-ws', (s) => wsClient({ url: gw.ws, webSocketImpl: WebSocket, connectionParams: { sessionToken: s.token }, retryAttempts: 0 })],
  ['graphql-sse', (s) => sseClient({ url: gw.graphql, headers: () => bearer(s), retryAttempts: 0 })],
]) {
  test(`${name}: a live query follows a credit outside the gateway, for its own corporation only`, async () => {
    const annaClient = make(anna);
    const benClient = make(ben);
    const a = live(annaClient);
    const b = live(benClient);
    await waitFor(() => a.seen.length === 1 && b.seen.length === 1, 15_000, 'the first answers');
    assert.equal(a.seen[0].errors, undefined, JSON.stringify(a.seen[0]));
    await gw.livePolled(2);

    const credited = await gw.credit(USD, 1500);
    // A deadline on the wait, not a timing assertion.
    await waitFor(() => a.seen.length >= 2, 6_000, "Anna's new answer");
    assert.equal(balanceOf(a.seen.at(-1), USD), credited.amount);

    // Ben's next answer is his own credit's: nothing of Anna's came before.
    const benCredited = await gw.credit(SECOND_EUR, 200);
    await waitFor(() => b.seen.length >= 2, 6_000, "Ben's new answer");
    assert.equal(b.seen.length, 2, JSON.stringify(b.seen));
    assert.equal(balanceOf(b.seen[1], SECOND_EUR), benCredited.amount);

    a.dispose();
    b.dispose();
    await annaClient.dispose();
    await benClient.dispose();
  });
}

const EVENTS = gql`subscription Events($after: String) {
  events(after: $after) { cursor source event { name upstreamId subject { __typename id } } }
}`;

/** An Apollo Client whose only link is HTTP: subscriptions go multipart. */
function apollo(headers) {
  return new ApolloClient({ link: new HttpLink({ uri: gw.graphql, headers }), cache: new InMemoryCache() });
}

async function historyCursor(headers) {
  const r = await gw.post('{ eventHistory(first: 1) { pageInfo { startCursor } } }', {}, headers);
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return r.body.data.eventHistory.pageInfo.startCursor;
}

test('Apollo Client: a person subscribes over multipart HTTP and receives a banking event', async () => {
  const client = apollo(bearer(anna));
  const seen = [];
  const sub = client.subscribe({ query: EVENTS, variables: { after: await historyCursor(bearer(anna)) } }).subscribe({
    next: (r) => seen.push(r),
    error: (e) => seen.push({ error: e }),
  });
  await gw.livePolled(1);
  await gw.credit(USD, 300);
  // The credit's two announcements, on one stream.
  const named = (n) => seen.some((r) => r.data?.events?.event?.name === n);
  await waitFor(() => named('WalletBalanceChanged') && named('WalletTransactionCreated'), 15_000, 'both events of the credit');
  const ev = seen.find((r) => r.data?.events?.event?.name === 'WalletBalanceChanged');
  assert.equal(ev.data.events.event.subject.__typename, 'Wallet');
  assert.ok(!seen.some((r) => r.error), String(seen.find((r) => r.error)?.error));
  sub.unsubscribe();
  client.stop();
});

test('Apollo Client: an API client subscribes over multipart HTTP and receives a payments event', async () => {
  const token = await gw.signInAPI();
  const headers = { Authorization: `Bearer ${token}` };
  const client = apollo(headers);
  const seen = [];
  const sub = client.subscribe({ query: EVENTS, variables: { after: await historyCursor(headers) } }).subscribe({
    next: (r) => seen.push(r),
    error: (e) => seen.push({ error: e }),
  });
  // Two events on one request: the stream stays open after the first.
  const first = await gw.trigger('OrderCreated');
  await waitFor(() => seen.some((r) => r.data?.events?.event?.upstreamId === first.id), 15_000, 'the first event');
  const second = await gw.trigger('OrderCreated');
  await waitFor(() => seen.some((r) => r.data?.events?.event?.upstreamId === second.id), 15_000, 'the second event');
  assert.ok(!seen.some((r) => r.error), String(seen.find((r) => r.error)?.error));
  sub.unsubscribe();
  client.stop();
});
