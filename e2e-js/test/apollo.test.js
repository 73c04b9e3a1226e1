// Apollo Client against the gateway: the dashboard query normalised in the
// InMemoryCache (every object with an id stored once and referenced from
// wherever it appears), a mutation whose answer updates the cached order in
// every place the screen shows it with no refetch, and a subscription over
// graphql-ws through Apollo's GraphQLWsLink.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApolloClient, InMemoryCache, HttpLink, ApolloLink, gql } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startGateway, waitFor } from './harness.js';

let gw;
let token;
before(async () => {
  gw = await startGateway();
  token = (await gw.signInStaff()).token;
});
after(async () => { await gw?.stop(); });

function apollo() {
  const http = new HttpLink({ uri: gw.graphql, headers: { Authorization: `Bearer ${token}` } });
  const ws = new GraphQLWsLink(createClient({
    url: gw.ws, webSocketImpl: WebSocket, connectionParams: { sessionToken: token }, retryAttempts: 0,
  }));
  const link = ApolloLink.split(
    ({ operationType }) => operationType === 'subscription',
    ws, http,
  );
  return new ApolloClient({ link, cache: new InMemoryCache() });
}

const DASHBOARD = gql`query Dashboard {
  viewer { kind }
  customers { id number contact { name email } orders { id status amount { amount currency } } }
  orders { id status customer { id } }
}`;

test('the dashboard query is normalised: each customer and order is stored once', async () => {
  const client = apollo();
  const { data } = await client.query({ query: DASHBOARD });
  assert.ok(data.customers.length > 0);
  const cache = client.cache.extract();
  const orderKeys = Object.keys(cache).filter((k) => k.startsWith('Order:'));
  const customerKeys = Object.keys(cache).filter((k) => k.startsWith('Customer:'));
  assert.equal(customerKeys.length, data.customers.length, 'one entry per customer');

  // Orders reached through customers and through the root orders field are
  // the same entries, referenced from both.
  const nested = new Set(data.customers.flatMap((c) => c.orders.map((o) => o.id)));
  const root = new Set(data.orders.map((o) => o.id));
  const shared = [...nested].filter((id) => root.has(id));
  assert.ok(shared.length > 0, 'some orders appear in both lists');
  assert.equal(orderKeys.length, new Set([...nested, ...root]).size, 'one entry per order, however often it appears');
  const rootRefs = cache.ROOT_QUERY.orders.map((r) => r.__ref);
  assert.ok(rootRefs.includes(`Order:${shared[0]}`));
  const owner = data.customers.find((c) => c.orders.some((o) => o.id === shared[0]));
  assert.ok(cache[`Customer:${owner.id}`].orders.some((r) => r.__ref === `Order:${shared[0]}`));
  client.stop();
});

// screenCalls counts the upstream calls a query could make: every route but
// the event reads, which the gateway's webhook pipeline makes on its own
// (the capture below sends a webhook, and its enrichment may land at any
// moment of the test).
const screenCalls = (stats) => Object.entries(stats.routes ?? {})
  .filter(([route]) => !/\/events(\/|$)|\/pending_actions/.test(route))
  .reduce((n, [, calls]) => n + calls, 0);

test('a mutation updates the cached order everywhere, with no refetch', async () => {
  const client = apollo();
  const { data } = await client.query({ query: DASHBOARD });
  const authorised = data.orders.find((o) => o.status === 'AUTHORIZED');
  assert.ok(authorised, 'the demo data has an authorised order');
  await gw.sandbox('POST', '/_sandbox/stats/reset');

  const { data: m } = await client.mutate({
    mutation: gql`mutation Capture($id: ID!) { captureOrder(input: {orderId: $id}) { orderId applied order { id status } } }`,
    variables: { id: authorised.id },
  });
  assert.equal(m.captureOrder.order.status, 'CAPTURED');
  const callsAfterMutation = screenCalls(await gw.stats());

  // Read the screen back from the cache only: both places show CAPTURED.
  const cached = client.readQuery({ query: DASHBOARD });
  assert.equal(cached.orders.find((o) => o.id === authorised.id).status, 'CAPTURED');
  const nested = cached.customers.flatMap((c) => c.orders).find((o) => o.id === authorised.id);
  if (nested) assert.equal(nested.status, 'CAPTURED');
  const again = await client.query({ query: DASHBOARD, fetchPolicy: 'cache-first' });
  assert.equal(again.data.orders.find((o) => o.id === authorised.id).status, 'CAPTURED');
  assert.equal(screenCalls(await gw.stats()), callsAfterMutation, 'the cache answered: no upstream call');
  client.stop();
});

test('a subscription through Apollo receives a webhook-derived event', async () => {
  const client = apollo();
  const seen = [];
  // Read the cursor first, subscribe after it: the event fired next arrives
  // even if it is stored before the subscription reaches the gateway.
  const { data: c } = await client.query({ query: gql`{ eventsCursor }`, fetchPolicy: 'network-only' });
  const sub = client.subscribe({
    query: gql`subscription($after: String) { events(names: ["IndividualActivated"], after: $after) { cursor source event { id upstreamId name individualId } } }`,
    variables: { after: c.eventsCursor },
  }).subscribe({ next: ({ data }) => seen.push(data.events) });
  const fired = await gw.trigger('IndividualActivated');
  await waitFor(() => seen.length > 0, 15_000, 'an event');
  assert.equal(seen[0].event.upstreamId, fired.id, 'the event the sandbox fired');
  assert.equal(seen[0].event.name, 'IndividualActivated');
  assert.equal(seen[0].source, 'payments');
  assert.ok(seen[0].cursor);
  sub.unsubscribe();
  client.stop();
});

// Relay-style paging with Apollo's own field policy: fetchMore with the
// endCursor until hasNextPage is false merges every page into one cached
// list, each person once, as many as totalCount says.
test('relayStylePagination pages persons to the end, each once', async () => {
  const client = new ApolloClient({
    link: new HttpLink({ uri: gw.graphql, headers: { Authorization: `Bearer ${token}` } }),
    cache: new InMemoryCache({
      typePolicies: { Query: { fields: { persons: relayStylePagination(['sortBy', 'sortDirection']) } } },
    }),
  });
  const PERSONS = gql`query Persons($first: Int, $after: String) {
    persons(first: $first, after: $after) {
      edges { cursor node { id email } }
      pageInfo { hasNextPage endCursor }
      totalCount
    }
  }`;
  const first = await client.query({ query: PERSONS, variables: { first: 3 } });
  let conn = first.data.persons;
  assert.ok(conn.totalCount > 3, 'more than one page of persons');
  let fetches = 1;
  while (conn.pageInfo.hasNextPage) {
    // network-only: the policy's read answers any after from the merged list.
    const more = await client.query({ query: PERSONS, variables: { first: 3, after: conn.pageInfo.endCursor }, fetchPolicy: 'network-only' });
    fetches++;
    conn = client.readQuery({ query: PERSONS, variables: { first: 3 } }).persons;
    assert.ok(more.data.persons.edges.length > 0, 'no empty page before the end');
    assert.ok(fetches < 100, 'paging ends');
  }
  const ids = conn.edges.map((e) => e.node.id);
  assert.equal(ids.length, conn.totalCount, 'every person, merged into one list');
  assert.equal(new Set(ids).size, ids.length, 'no person twice');
  assert.equal(fetches, Math.ceil(conn.totalCount / 3));
  client.stop();
});
