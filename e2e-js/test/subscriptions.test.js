// Live events with real subscription clients: graphql-ws (websocket,
// graphql-transport-ws) and graphql-sse (server-sent events). The events
// are webhook-derived: the sandbox fires a payments event, delivers it to
// the gateway's webhook, the gateway stores and enriches it and streams it.
// Also: a reconnect that resumes after the last cursor without loss or
// repeat, and sessions the gateway refuses (4403) or ends (4401), with the
// client's connection attempts counted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient as wsClient } from 'graphql-ws';
import { createClient as sseClient } from 'graphql-sse';
import WebSocket from 'ws';
import { startGateway, waitFor, EVENTS } from './harness.js';

let gw;
let staff;
before(async () => {
  gw = await startGateway();
  staff = await gw.signInStaff();
});
after(async () => { await gw?.stop(); });

const bearer = () => ({ Authorization: `Bearer ${staff.token}` });

async function eventsCursor() {
  const r = await gw.post('{ eventsCursor }', {}, bearer());
  return r.body.data.eventsCursor;
}

/** A WebSocket class that records every socket opened and how it closed. */
function recordingWebSocket(options = {}) {
  const sockets = [];
  const closes = [];
  class Recording extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols, options);
      sockets.push(this);
      this.on('close', (code, reason) => closes.push({ code, reason: reason.toString() }));
    }
  }
  return { Recording, sockets, closes };
}

/** Waits until the sandbox's delivery of the event got a 2xx from the gateway. */
async function delivered(eventId) {
  await waitFor(async () => {
    const ds = await gw.sandbox('GET', '/_sandbox/deliveries');
    return ds.some((d) => d.event_id === eventId && d.status >= 200 && d.status < 300);
  }, 15_000, `delivery of ${eventId}`);
}

test('graphql-ws over the session cookie receives a webhook-derived event', async () => {
  const { Recording, sockets } = recordingWebSocket({ headers: { Cookie: staff.cookie } });
  const client = wsClient({ url: gw.ws, webSocketImpl: Recording, retryAttempts: 0 });
  const seen = [];
  const dispose = client.subscribe(
    { query: EVENTS, variables: { after: await eventsCursor(), names: ['IndividualActivated'] } },
    { next: (m) => seen.push(m), error: (e) => seen.push({ error: e }), complete: () => {} },
  );
  const fired = await gw.trigger('IndividualActivated');
  await waitFor(() => seen.length > 0, 15_000, 'an event');
  assert.equal(seen[0].errors, undefined);
  assert.equal(seen[0].data.events.event.upstreamId, fired.id);
  assert.equal(seen[0].data.events.event.individualId, fired.payload.individual_id);
  assert.equal(sockets.length, 1);
  dispose();
  await client.dispose();
});

test('graphql-sse with a bearer token receives a webhook-derived event', async () => {
  const client = sseClient({ url: gw.graphql, headers: bearer, retryAttempts: 0 });
  const seen = [];
  const dispose = client.subscribe(
    { query: EVENTS, variables: { after: await eventsCursor(), names: ['IndividualBlocked'] } },
    { next: (m) => seen.push(m), error: (e) => seen.push({ error: e }), complete: () => {} },
  );
  const fired = await gw.trigger('IndividualBlocked');
  await waitFor(() => seen.length > 0, 15_000, 'an event');
  assert.equal(seen[0].error, undefined, String(seen[0].error));
  assert.equal(seen[0].data.events.event.upstreamId, fired.id);
  assert.equal(seen[0].data.events.event.name, 'IndividualBlocked');
  dispose();
  client.dispose();
});

test('a dropped connection reconnects and resumes after the last cursor, without loss or repeat', async () => {
  const { Recording, sockets } = recordingWebSocket();
  // The retry waits for the test: events are fired while the client is
  // certainly disconnected.
  let release;
  let waiting = false;
  const client = wsClient({
    url: gw.ws,
    webSocketImpl: Recording,
    connectionParams: { sessionToken: staff.token },
    retryAttempts: 3,
    retryWait: () => new Promise((r) => { waiting = true; release = r; }),
  });
  // The dashboard's pattern: graphql-ws re-sends this payload on reconnect,
  // and `after` always holds the last cursor received.
  const payload = { query: EVENTS, variables: { after: await eventsCursor(), names: ['IndividualActivated'] } };
  const ids = [];
  const errors = [];
  client.subscribe(payload, {
    next: ({ data, errors: errs }) => {
      if (errs) return errors.push(errs);
      ids.push(data.events.event.upstreamId);
      payload.variables.after = data.events.cursor;
    },
    error: (e) => errors.push(e),
    complete: () => {},
  });

  const a = await gw.trigger('IndividualActivated');
  await waitFor(() => ids.length === 1, 15_000, 'the first event');

  sockets[0].terminate(); // the network drops: close 1006, no close frame
  await waitFor(() => waiting, 5_000, 'the client to start retrying');
  const b = await gw.trigger('IndividualActivated');
  const c = await gw.trigger('IndividualActivated');
  await delivered(b.id);
  await delivered(c.id);
  assert.deepEqual(ids, [a.id], 'nothing arrives while disconnected');

  release();
  await waitFor(() => ids.length >= 3, 15_000, 'the missed events');
  await new Promise((r) => setTimeout(r, 300)); // a repeat would arrive by now
  assert.deepEqual(ids, [a.id, b.id, c.id], 'every event once, in order');
  assert.deepEqual(errors, []);
  assert.equal(sockets.length, 2, 'one reconnect');
  await client.dispose();
});

test('a refused session (4403) is retried a bounded number of times, then reported', async () => {
  const { Recording, sockets, closes } = recordingWebSocket();
  let error;
  const client = wsClient({
    url: gw.ws,
    webSocketImpl: Recording,
    connectionParams: { sessionToken: 'not-a-session' },
    retryAttempts: 3,
    retryWait: async () => {},
  });
  client.subscribe({ query: EVENTS }, { next: () => {}, error: (e) => { error = e; }, complete: () => {} });
  await waitFor(() => error, 15_000, 'the client to give up');
  // What the gateway sends: 4403 with a reason, on every attempt.
  assert.equal(error.code, 4403);
  assert.equal(sockets.length, 4, 'the first attempt and the 3 retries graphql-ws allows for 4403, no more');
  assert.deepEqual(closes.map((c) => c.code), [4403, 4403, 4403, 4403]);
  assert.match(closes[0].reason, /forbidden/);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(sockets.length, 4, 'no further attempt after giving up');
  await client.dispose();

  // With the dashboard's shouldRetry, a 4403 is not retried at all.
  const second = recordingWebSocket();
  let err2;
  const client2 = wsClient({
    url: gw.ws, webSocketImpl: second.Recording, connectionParams: { sessionToken: 'not-a-session' },
    retryAttempts: 8, retryWait: async () => {},
    shouldRetry: (e) => !(e && (e.code === 4401 || e.code === 4403)),
  });
  client2.subscribe({ query: EVENTS }, { next: () => {}, error: (e) => { err2 = e; }, complete: () => {} });
  await waitFor(() => err2, 15_000, 'the second client to give up');
  assert.equal(err2.code, 4403);
  assert.equal(second.sockets.length, 1);
  await client2.dispose();
});

test('an ended session (4401) is fatal: the client does not reconnect', async () => {
  const s = await gw.signInStaff();
  const { Recording, sockets, closes } = recordingWebSocket();
  let error;
  const seen = [];
  const client = wsClient({
    url: gw.ws,
    webSocketImpl: Recording,
    connectionParams: { sessionToken: s.token },
    retryAttempts: 5,
    retryWait: async () => {},
  });
  client.subscribe(
    { query: EVENTS, variables: { after: await eventsCursor(), names: ['IndividualActivated'] } },
    { next: (m) => seen.push(m), error: (e) => { error = e; }, complete: () => {} },
  );
  await gw.trigger('IndividualActivated');
  await waitFor(() => seen.length > 0, 15_000, 'the subscription to be live');

  const out = await gw.post('mutation { signOut }', {}, { Authorization: `Bearer ${s.token}` });
  assert.equal(out.body.data.signOut, true);
  await waitFor(() => error, 15_000, 'the socket to close');
  assert.equal(error.code, 4401);
  assert.deepEqual(closes.map((c) => c.code), [4401]);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(sockets.length, 1, 'graphql-ws treats 4401 as fatal: one connection in all');
  await client.dispose();
});
