// Example operations the playground opens with, one tab each, for the
// sandbox's demo data (README "Demo sign-ins").

const customers = `# The README's first query: the customers with their orders. In sandbox
# mode a request without a session acts as the demo API client, so run it as
# it is. The next tabs sign in, show a dashboard, create an order, follow
# live events and defer a slow part.
query Customers {
  customers {
    id
    number
    contact { name email }
    orders { id status amount { amount currency } }
  }
}
`;

const signIn = `# Sign in as the demo staff member, who has SMS two-factor.
# 1. Run it as it is: the answer is a TwoFactorChallenge.
# 2. Read the code from the sandbox: GET <sandbox>/_sandbox/sms (the sandbox's
#    address is in the gateway's start-up log; FINGRAPH_SANDBOX_ADDR fixes it).
# 3. Put it in the variables as "code" and run again: SignedIn sets the session
#    cookie, and the playground sends its csrfToken with every later request.
mutation SignIn($code: String) {
  signIn(input: {
    kind: STAFF
    email: "staff@demo.test"
    password: "demo-password"
    twoFactorCode: $code
  }) {
    __typename
    ... on TwoFactorChallenge { maskedPhone expiresAt }
    ... on SignedIn { csrfToken viewer { kind permissions } }
  }
}
`;

const dashboard = `# The dashboard screen in one request: who is signed in, the customers
# with their orders (batched: two upstream calls in all), and the newest
# events (a Relay connection): subscribe with after: pageInfo.startCursor
# and no event falls in between.
query Dashboard {
  viewer { kind permissions }
  customers {
    id
    number
    contact { name email }
    orders { id status amount { amount currency } }
  }
  eventHistory(first: 5) {
    edges { cursor source node { id name createdAt } }
    pageInfo { startCursor hasNextPage endCursor }
  }
}
`;

const createOrder = `# Authorise a card payment. Card tokens go in variables, never in the
# query text. tok_ok_* succeeds, tok_3ds_* asks for 3-D Secure, tok_fail_*
# is declined; retry with the same idempotencyKey.
mutation CreateOrder($input: CreateOrderInput!) {
  createOrder(input: $input) {
    __typename
    ... on Order { id status amount { amount currency } }
    ... on VerificationRequired { orderId verificationUrl message }
    ... on OrderFailed { orderId code message }
  }
}
`;

const events = `# The live event feed (websocket, graphql-transport-ws). Run it, then
# create an order in the other tab or fire a sandbox event:
#   curl -XPOST <sandbox>/_sandbox/trigger -d '{"name":"IndividualActivated"}'
# Keep the last cursor: subscribe again with after: it to get what was missed.
subscription LiveEvents($after: String) {
  events(after: $after) {
    cursor
    source
    event { id name createdAt orderId individualId }
  }
}
`;

const deferredCards = `# Incremental delivery: the corporation and its wallets come first, its
# cards with their transactions (one upstream read per card, the slowest
# part) in a later part, as each @defer fragment completes. Sign in as a
# person of a corporation first (anna@demo.test, see the README's demo
# sign-ins): staff have no corporation.
query CorporationCards {
  currentCorporation {
    name
    wallets { name currency balance { amount currency } }
    ... @defer(label: "cards") {
      cards {
        displayName
        status
        maskedPan { lastFour }
        transactions(first: 3) {
          edges { node { type status amount { amount currency } createdAt } }
        }
      }
    }
  }
}
`;

const liveWallets = `# A live query: answered at once, then again whenever a wallet or card of
# the answer changes (a transfer from outside, found by the banking poller;
# a card issued; a conversion through the gateway). Nothing is sent while
# the answer stays the same. Sign in as a person of a corporation first
# (anna@demo.test), run it, then credit a wallet from outside:
#   curl -XPOST <sandbox>/_sandbox/banking/wallets/<upstreamId>/credit -d '{"amount":1000}'
query LiveWallets @live {
  currentCorporation {
    name
    wallets { id upstreamId name balance { amount currency } }
    cards { id displayName status availableBalance { amount currency } }
  }
}
`;

/**
 * The default tabs: the README's first query (the tab the playground opens
 * on), sign in, the dashboard query, a mutation, live events, a query
 * with its slow part deferred, and a live query.
 */
export const examples = [
  { query: customers },
  { query: signIn, variables: '{\n  "code": null\n}' },
  { query: dashboard },
  {
    query: createOrder,
    variables: JSON.stringify({
      input: {
        idempotencyKey: 'playground-1',
        currency: 'EUR',
        items: { amount: 1250 },
        payment: { card: { token: 'tok_ok_playground' } },
      },
    }, null, 2),
  },
  { query: events },
  { query: deferredCards },
  { query: liveWallets },
];
