// The reference dashboard: how a web frontend uses the gateway, in plain
// JavaScript (ES modules, no framework). It is a model to copy, not a
// product. What it shows:
//   - sign-in with SMS two-factor over a cookie session: the cookie is
//     HttpOnly and set by the gateway; the page keeps only the CSRF token
//     (in memory) and sends it as X-CSRF-Token with every POST;
//   - one query for the screen, read before subscribing, with the newest
//     page of the event history (a Relay connection), then the live event
//     feed subscribed with `after:` that page's startCursor, so no event
//     falls in between and none is shown twice;
//   - on a dropped connection graphql-ws reconnects (bounded back-off) and
//     re-sends the subscription, whose `after` variable always holds the
//     last cursor received: the feed resumes without loss or repeats;
//   - an ended session (close 4401) is final: the page asks to sign in
//     again instead of reconnecting in a loop;
//   - the corporation's wallets, its cards and their latest transactions,
//     for principals that have them (persons and API clients of a
//     corporation), as a live query (@live) that the gateway answers again
//     whenever one of them changes; every event of the feed names its
//     subject (a Node), and a small normalised store (one object per
//     global id, as Apollo Client's or urql's caches keep them) holds both;
//   - a "Credit 10.00" button that books a transfer on a wallet in the
//     sandbox, outside the gateway: the new balance arrives as the live
//     query's next answer, and the feed shows the event.
import { createClient } from './vendor/graphql-ws.js';

const $ = (sel) => document.querySelector(sel);
const state = {
  csrf: '', client: null, stopFeed: null, cursor: null,
  // What the banking half shows, as global ids into the store; null until
  // the screen has the principal's corporation.
  walletIds: null, cardIds: new Map(), cardTxIds: [],
};

// --- the normalised store ------------------------------------------------

// One object per global id (every Node's id is unique across types), its
// fields merged from every answer and event that carried it. Views keep ids
// and read the store when they draw, so an event's subject updates the
// wallet in the wallet list and the card's funding wallet alike.
const store = new Map();

/** Merges a Node's fields into its stored object; returns that object. */
function put(node) {
  if (!node?.id) return node;
  const cur = store.get(node.id) ?? {};
  for (const [k, v] of Object.entries(node)) if (v !== undefined) cur[k] = v;
  store.set(node.id, cur);
  return cur;
}

/** GraphQL error with the gateway's extensions.code. */
class GraphQLError extends Error {
  constructor(err) {
    super(err.message);
    this.code = err.extensions?.code ?? 'UNKNOWN';
  }
}

/** POSTs one operation with the session cookie and the CSRF header. */
async function gql(query, variables = {}) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json' };
  if (state.csrf) headers['X-CSRF-Token'] = state.csrf;
  const res = await fetch('/graphql', {
    method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors?.length) throw new GraphQLError(body.errors[0]);
  return body.data;
}

/** Reads the current session with GET, which needs no CSRF header. */
async function currentViewer() {
  const q = encodeURIComponent('{ viewer { kind permissions csrfToken } }');
  const res = await fetch(`/graphql?query=${q}`, { credentials: 'same-origin' });
  const body = await res.json();
  return body.data?.viewer ?? null;
}

const SIGN_IN = `mutation SignIn($input: SignInInput!) {
  signIn(input: $input) {
    __typename
    ... on TwoFactorChallenge { maskedPhone challengeId }
    ... on SignedIn { csrfToken viewer { kind permissions } }
  }
}`;

// What an event's subject brings along: the fields this screen shows of the
// entities it keeps (the store merges them), and only the id of others. A
// card's status and a card transaction's have different types, which one
// selection may not give the same response name: the card's is aliased,
// and stored under its field's name (as normalising caches store aliases).
const EVENT_FIELDS = `id upstreamId name createdAt orderId individualId
    subject {
      __typename id
      ... on Wallet { name currency purpose balance { amount currency } }
      ... on Card { cardStatus: status displayName availableBalance { amount currency } }
      ... on CardTransaction { amount { amount currency } status description createdAt }
    }`;

/** A subject as the store keeps it: aliased fields under their own names. */
function unalias(subject) {
  if (!subject || !('cardStatus' in subject)) return subject;
  const { cardStatus, ...rest } = subject;
  return { ...rest, status: cardStatus };
}

// The screen's one query. The customers and their orders are a payments
// operator's (staff, the merchant's API client): they are asked for only
// when the viewer may operate payments.
const dashboardQuery = (operator) => `query Dashboard {
  viewer { kind permissions csrfToken }
  ${operator ? `customers {
    id number status
    contact { name email }
    orders { id upstreamId number status created amount { amount currency } }
  }` : ''}
  eventHistory(first: 20) {
    edges { cursor source node { ${EVENT_FIELDS} } }
    pageInfo { startCursor }
  }
}`;

const EVENTS = `subscription Events($after: String) {
  events(after: $after) {
    cursor source
    event { ${EVENT_FIELDS} }
  }
}`;

function text(tag, value, cls) {
  const el = document.createElement(tag);
  el.textContent = value ?? '';
  if (cls) el.className = cls;
  return el;
}

function table(headers, rows) {
  const t = document.createElement('table');
  const head = t.createTHead().insertRow();
  for (const h of headers) head.append(text('th', h));
  const body = t.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const cell of row) {
      // Long ids are cut for the eye; the whole id stays in the title.
      const long = typeof cell === 'string' && /^[0-9a-f-]{36}$/.test(cell);
      const td = text('td', long ? `${cell.slice(0, 8)}…` : cell, long ? 'id' : '');
      if (long) td.title = cell;
      tr.append(td);
    }
  }
  return t;
}

const money = (m) => (m ? `${(m.amount / 100).toFixed(2)} ${m.currency}` : '');

function showViewer(viewer, signedInHere) {
  $('#who').textContent = viewer ? `Signed in: ${viewer.kind}` : 'Signed out';
  $('#sign-out').hidden = !signedInHere;
  $('#sign-in-card').hidden = signedInHere;
}

// --- sign-in -------------------------------------------------------------

let challenge = null;

async function signIn(ev) {
  ev.preventDefault();
  const f = ev.target;
  const input = { kind: f.kind.value, email: f.email.value, password: f.password.value };
  if (f.kind.value === 'PERSON') input.deviceFingerprint = 1;
  if (challenge) {
    input.twoFactorCode = f.code.value.trim();
    if (challenge.challengeId) input.challengeId = challenge.challengeId;
  }
  const hint = $('#sign-in-hint');
  hint.classList.remove('error');
  try {
    const { signIn: r } = await gql(SIGN_IN, { input });
    if (r.__typename === 'TwoFactorChallenge') {
      challenge = r;
      $('#code-row').hidden = false;
      f.code.focus();
      hint.textContent = `A code went to ${r.maskedPhone}. Enter it and sign in again.`;
      return;
    }
    challenge = null;
    f.code.value = '';
    $('#code-row').hidden = true;
    state.csrf = r.csrfToken;
    // Another principal sees other events and other entities: the screen
    // starts again from its own history.
    state.cursor = null;
    state.cardTxIds = [];
    store.clear();
    showViewer(r.viewer, true);
    await refresh(r.viewer);
  } catch (err) {
    hint.textContent = `${err.code}: ${err.message}`;
    hint.classList.add('error');
  }
}

async function signOut() {
  await gql('mutation { signOut }').catch(() => {});
  state.csrf = '';
  stopFeed('signed out');
  location.reload();
}

// --- the screen ----------------------------------------------------------

async function refresh(viewer) {
  const operator = viewer?.permissions?.includes('payments.operate') ?? true;
  // Payments events (what the sandbox's trigger fires) reach payments
  // operators only: others get neither their customers nor the button.
  $('#customers-card').hidden = !operator;
  $('#trigger').hidden = !operator;
  let data;
  try {
    data = await gql(dashboardQuery(operator));
  } catch (err) {
    // Nothing of an earlier session stays on the screen.
    stopFeed('off');
    state.walletIds = null;
    for (const id of ['#wallets-card', '#cards-card', '#card-transactions-card']) $(id).hidden = true;
    $(operator ? '#customers' : '#events').replaceChildren(text('p', `${err.code}: ${err.message}`, 'error'));
    return;
  }
  state.csrf = data.viewer?.csrfToken || state.csrf;
  if (operator) {
    const rows = [];
    for (const c of data.customers) {
      if (c.orders.length === 0) rows.push([c.number, c.contact.name, c.contact.email, '', '', '']);
      for (const o of c.orders) rows.push([c.number, c.contact.name, c.contact.email, o.upstreamId, o.status, money(o.amount)]);
    }
    $('#customers').replaceChildren(
      text('p', `${data.customers.length} customers, ${rows.filter((r) => r[3]).length} orders in the last 30 days`, 'hint'),
      table(['customer', 'name', 'e-mail', 'order', 'status', 'amount'], rows),
    );
  }
  // The first time, show the newest events already on the stream, then
  // subscribe after the newest of them (startCursor; on an empty page, the
  // stream's position): every newer event arrives, none is missed in
  // between or shown twice. A later refresh keeps the running feed's cursor.
  const history = data.eventHistory;
  if (state.cursor == null) {
    $('#events').replaceChildren();
    for (const edge of [...history.edges].reverse()) {
      put(unalias(edge.node.subject));
      showEvent({ cursor: edge.cursor, source: edge.source, event: edge.node });
    }
  }
  startFeed(state.cursor ?? history.pageInfo.startCursor);
  // The banking half is a live query on the feed's socket: one connection
  // carries the feed and the live answers.
  optionalSections().catch(() => {});
}

// --- wallets and cards --------------------------------------------------

// The banking half of the screen: the corporation's wallets, each wallet's
// cards and their latest transactions, as one live query (@live): the
// gateway answers at once, then again, whole, whenever a change touches a
// wallet or card of the answer (a transfer credited outside the gateway,
// found by its banking poller; a card issued; the gateway's own mutations),
// and sends nothing when the answer did not change. The page merges no event
// into these views by hand: it draws each answer. Every edge is batched by
// the gateway (a fixed number of upstream calls however many there are).
// Principals without a corporation (staff, a payments-only API client) get
// an error for these fields, and the sections stay hidden.
const WALLETS = `query Wallets @live {
  currentCorporation {
    name
    wallets {
      id name currency purpose balance { amount currency }
      cards {
        id displayName status
        maskedPan { lastFour }
        availableBalance { amount currency }
        cardholder { firstName lastName }
        transactions(first: 5) {
          edges { node { id amount { amount currency } status description createdAt } }
        }
      }
    }
  }
}`;

/** How many card transactions the screen lists, newest first. */
const LATEST_CARD_TRANSACTIONS = 10;

function showWallets() {
  if (!state.walletIds) return;
  const t = document.createElement('table');
  const head = t.createTHead().insertRow();
  for (const h of ['wallet', 'currency', 'purpose', 'balance', '']) head.append(text('th', h));
  const body = t.createTBody();
  for (const id of state.walletIds) {
    const w = store.get(id);
    const tr = body.insertRow();
    tr.dataset.walletId = id;
    const credit = text('button', 'Credit 10.00', 'small');
    credit.type = 'button';
    credit.addEventListener('click', () => creditWallet(id));
    const action = document.createElement('td');
    action.append(credit);
    tr.append(text('td', w.name), text('td', w.currency), text('td', w.purpose ?? ''),
      text('td', money(w.balance), 'balance'), action);
  }
  $('#wallets-table').replaceChildren(t);
}

/** The cards of every wallet; state.cardIds has a wallet once its part came. */
function showCards() {
  const cards = state.walletIds.flatMap((w) => (state.cardIds.get(w) ?? []).map((id) => ({ ...store.get(id), wallet: store.get(w).name })));
  const pending = state.walletIds.filter((w) => !state.cardIds.has(w)).length;
  $('#cards').replaceChildren(
    cards.length
      ? table(['card', 'status', 'cardholder', 'wallet', 'available'],
        cards.map((c) => [`${c.displayName ?? 'card'} ·${c.maskedPan.lastFour}`, c.status,
          c.cardholder ? `${c.cardholder.firstName} ${c.cardholder.lastName}` : '',
          c.wallet, money(c.availableBalance)]))
      : text('p', pending ? 'Loading…' : 'None.', 'hint'),
  );
  if (pending && cards.length) $('#cards').append(text('p', `${pending} wallets still loading…`, 'hint'));
  $('#cards-card').hidden = false;
}

/** Adds card transactions to the list: newest first, each once. */
function addCardTransactions(ids) {
  const all = [...new Set([...state.cardTxIds, ...ids])];
  const when = (id) => Date.parse(store.get(id)?.createdAt ?? '') || 0;
  all.sort((a, b) => when(b) - when(a));
  state.cardTxIds = all.slice(0, LATEST_CARD_TRANSACTIONS);
}

function showCardTransactions() {
  const txs = state.cardTxIds.map((id) => store.get(id));
  $('#card-transactions').replaceChildren(
    txs.length
      ? table(['when', 'description', 'status', 'amount'],
        txs.map((x) => [x.createdAt ? new Date(x.createdAt).toLocaleString() : '', x.description ?? '', x.status ?? '', money(x.amount)]))
      : text('p', 'None yet.', 'hint'),
  );
  $('#card-transactions-card').hidden = false;
}

/**
 * Runs the banking half on the page's websocket (graphql-transport-ws): a
 * live query arrives there as one next payload per answer, each whole.
 * Every Node is merged into the store; the views keep ids.
 */
function optionalSections() {
  return new Promise((resolve) => {
    state.client.subscribe({ query: WALLETS }, {
      next: (answer) => {
        const corp = answer.data?.currentCorporation;
        if (!corp) return;
        state.cardIds.clear();
        state.walletIds = corp.wallets.map(({ cards, ...w }) => {
          const id = put(w).id;
          state.cardIds.set(id, (cards ?? []).map(({ transactions, ...c }) => put(c).id));
          return id;
        });
        const txIds = corp.wallets.flatMap((w) => w.cards ?? [])
          .flatMap((c) => c.transactions?.edges ?? []).map((e) => put(e.node).id);
        addCardTransactions(txIds);
        $('#wallets-corp').textContent = corp.name;
        showWallets();
        $('#wallets-card').hidden = false;
        showCards();
        showCardTransactions();
      },
      error: resolve,
      complete: resolve,
    });
  });
}

/**
 * An event's subject is merged into the store, for the feed's lines. The
 * wallets and cards follow their live query; a new card transaction, which
 * no answer held yet, joins the list at once.
 */
function applySubject(aliased) {
  const subject = unalias(aliased);
  if (!subject?.id) return;
  put(subject);
  switch (subject.__typename) {
    case 'CardTransaction':
      if (!state.walletIds) break;
      addCardTransactions([subject.id]);
      showCardTransactions();
      break;
    default:
  }
}

/**
 * The "Credit 10.00" button: books an incoming transfer on the wallet in
 * the sandbox (POST /sandbox/credit, sandbox mode only), outside the
 * gateway. The screen does not change the balance itself: it waits for
 * the event that the gateway's banking poller publishes, which brings the
 * wallet with its new balance.
 */
async function creditWallet(walletId) {
  const out = $('#credit-result');
  const headers = { 'Content-Type': 'application/json' };
  if (state.csrf) headers['X-CSRF-Token'] = state.csrf;
  const res = await fetch('/sandbox/credit', {
    method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify({ walletId, amount: 1000 }),
  });
  if (res.status === 404 && !res.headers.get('Content-Type')?.includes('json')) out.textContent = 'Only in sandbox mode.';
  else if (!res.ok) out.textContent = (await res.json()).errors?.[0]?.message ?? `HTTP ${res.status}`;
  else out.textContent = `credited 10.00 to ${store.get(walletId)?.name ?? 'the wallet'}: the new balance arrives with the live wallets`;
}

// --- live events ---------------------------------------------------------

function feedStatus(s, live = false) {
  const el = $('#feed-status');
  el.textContent = s;
  el.classList.toggle('live', live);
}

function stopFeed(why) {
  state.stopFeed?.();
  state.client?.dispose();
  state.client = state.stopFeed = null;
  feedStatus(why);
}

/** What an event is about, in a few words. */
function about(ev) {
  const s = ev.subject ? store.get(ev.subject.id) ?? ev.subject : null;
  if (s?.__typename === 'Wallet') return ` ${s.name}: ${money(s.balance)}`;
  if (s?.__typename === 'CardTransaction') return ` ${s.description ?? 'card transaction'} ${money(s.amount)}`;
  if (s?.__typename === 'Card') return ` card ${s.displayName ?? ''} ${s.status ?? ''}`;
  if (ev.orderId) return ` order ${ev.orderId}`;
  if (ev.individualId) return ` individual ${ev.individualId}`;
  return s ? ` ${s.__typename}` : '';
}

function showEvent(e) {
  const li = document.createElement('li');
  // The upstream's id: what support and the upstream's console know it by.
  li.dataset.eventId = e.event.upstreamId;
  li.append(text('span', e.event.name, 'name'), text('span', ` ${e.source}`),
    text('time', new Date(e.event.createdAt).toLocaleTimeString()),
    text('span', about(e.event)));
  $('#events').prepend(li);
}

function startFeed(after) {
  stopFeed('connecting');
  const url = new URL('/graphql', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const client = createClient({
    url: url.toString(),
    // The upgrade request carries the session cookie: no token in the page.
    retryAttempts: 8,
    // 4401: the session ended; graphql-ws treats it as fatal already. 4403:
    // the session is unknown; a retry cannot help either.
    shouldRetry: (e) => !(e && (e.code === 4401 || e.code === 4403)),
    // A replaced client closes after its successor connected: only the
    // current client may set the status.
    on: {
      connected: () => { if (state.client === client) feedStatus('live', true); },
      closed: (e) => { if (state.client === client) feedStatus(`reconnecting (${e?.code ?? 'closed'})`); },
    },
  });
  // graphql-ws re-sends this same payload on every reconnect, so keeping
  // the last cursor in its variables makes a reconnect resume after it.
  const payload = { query: EVENTS, variables: { after } };
  state.cursor = after;
  state.client = client;
  state.stopFeed = client.subscribe(payload, {
    next: ({ data, errors }) => {
      if (errors?.length) return feedStatus(`error: ${errors[0].extensions?.code ?? errors[0].message}`);
      const ev = data.events;
      payload.variables.after = state.cursor = ev.cursor;
      applySubject(ev.event.subject);
      showEvent(ev);
    },
    error: (err) => {
      if (state.client !== client) return;
      const code = err?.code ?? err?.[0]?.extensions?.code;
      feedStatus(code === 4401 ? 'session ended: sign in again' : `stopped (${code ?? 'error'})`);
    },
    complete: () => {},
  });
}

async function trigger(ev) {
  ev.preventDefault();
  const out = $('#trigger-result');
  const headers = { 'Content-Type': 'application/json' };
  if (state.csrf) headers['X-CSRF-Token'] = state.csrf;
  const res = await fetch('/sandbox/trigger', {
    method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify({ name: ev.target.name.value }),
  });
  if (res.status === 404) out.textContent = 'Only in sandbox mode.';
  else if (!res.ok) out.textContent = (await res.json()).errors?.[0]?.message ?? `HTTP ${res.status}`;
  else out.textContent = `fired ${(await res.json()).name ?? ''}`;
}

// --- start ---------------------------------------------------------------

$('#sign-in').addEventListener('submit', signIn);
$('#sign-out').addEventListener('click', signOut);
$('#trigger').addEventListener('submit', trigger);

const viewer = await currentViewer().catch(() => null);
if (viewer) {
  state.csrf = viewer.csrfToken;
  showViewer(viewer, false);
  await refresh(viewer);
} else {
  showViewer(null, false);
}
