// The playground page: GraphiQL over /graphql (POST) and graphql-ws
// (subscriptions), with example operations for the sandbox's demo data.
// Bundled by build.mjs into playground/dist; the gateway embeds the result.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { createClient } from 'graphql-ws/client';
import { parse, Kind } from 'graphql';
import 'graphiql/style.css';
import { examples } from './examples.js';

const http = new URL('/graphql', location.href).toString();
const ws = http.replace(/^http/, 'ws');

// Cookie sessions need X-CSRF-Token on every POST (docs/identity.md). The
// playground remembers the token from the last response that carried one
// (signIn's SignedIn, viewer.csrfToken) for this tab only, and forgets it on
// signOut, so the example sign-in works without copying headers around.
const csrfKey = 'fingraph.csrf';
function rememberCSRF(body) {
  const d = body && body.data;
  if (!d) return;
  const tok = (d.signIn && d.signIn.csrfToken) || (d.signInCustomer && d.signInCustomer.csrfToken) ||
    (d.viewer && d.viewer.csrfToken);
  if (tok) sessionStorage.setItem(csrfKey, tok);
  if (d.signOut !== undefined) sessionStorage.removeItem(csrfKey);
}

async function csrfFetch(url, init = {}) {
  const headers = new Headers(init.headers);
  const tok = sessionStorage.getItem(csrfKey);
  if (tok && !headers.has('X-CSRF-Token')) headers.set('X-CSRF-Token', tok);
  const res = await fetch(url, { ...init, headers, credentials: 'same-origin' });
  const copy = res.clone();
  copy.json().then(rememberCSRF, () => {});
  return res;
}

// Subscriptions run over graphql-transport-ws; the upgrade request carries
// the session cookie (or, with none, sandbox mode's demo session). A refused
// connection (4403) or an ended session (4401) is reported, not retried.
const wsClient = createClient({
  url: ws,
  lazy: true,
  retryAttempts: 3,
  shouldRetry: (e) => !(e && (e.code === 4401 || e.code === 4403)),
});

const baseFetcher = createGraphiQLFetcher({ url: http, fetch: csrfFetch, wsClient });

// GraphiQL updates the operation name a moment after the editor changes, so
// a run right after switching tabs sent the previous tab's name, which the
// gateway rightly refuses ("operation SignIn not found"). A name that is not
// in the document is replaced by the document's only operation.
function operationNameIn(query, name) {
  let doc;
  try {
    doc = parse(query);
  } catch {
    return name; // let the gateway report the syntax error
  }
  const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (ops.some((op) => op.name?.value === name)) return name;
  return ops.length === 1 ? ops[0].name?.value : name;
}

// A live query (@live) is a query to GraphiQL's fetcher, which would POST
// it and get one answer: it goes over the socket instead, where the gateway
// answers again whenever the answer changes.
function isLive(query, name) {
  let doc;
  try {
    doc = parse(query);
  } catch {
    return false;
  }
  const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const op = ops.find((o) => o.name?.value === name) ?? (ops.length === 1 ? ops[0] : null);
  return op?.operation === 'query' && (op.directives ?? []).some((d) => d.name.value === 'live');
}

/** The answers of an operation on the socket, as the async iterable GraphiQL reads. */
function overSocket(params) {
  const queue = [];
  let wake = () => {};
  let done = false;
  let failure = null;
  const dispose = wsClient.subscribe(params, {
    next: (v) => { queue.push(v); wake(); },
    error: (e) => {
      failure = e instanceof Error ? e : new Error(`socket closed: ${e?.code ?? ''} ${e?.reason ?? ''}`.trim());
      done = true;
      wake();
    },
    complete: () => { done = true; wake(); },
  });
  return {
    [Symbol.asyncIterator]() { return this; },
    async next() {
      while (!queue.length && !done) await new Promise((r) => { wake = r; });
      if (queue.length) return { value: queue.shift(), done: false };
      if (failure) throw failure;
      return { value: undefined, done: true };
    },
    async return() {
      dispose();
      return { value: undefined, done: true };
    },
  };
}

const fetcher = (params, opts) => {
  const p = { ...params, operationName: operationNameIn(params.query, params.operationName) };
  return isLive(p.query, p.operationName) ? overSocket(p) : baseFetcher(p, opts);
};

function Playground() {
  return (
    <GraphiQL
      fetcher={fetcher}
      defaultTabs={examples}
      // GraphiQL 4 fills the variables editor on first load from this prop,
      // not from the first tab.
      variables={examples[0].variables}
      defaultEditorToolsVisibility="variables"
      isHeadersEditorEnabled
    />
  );
}

createRoot(document.getElementById('graphiql')).render(<Playground />);
