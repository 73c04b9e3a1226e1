// Sign-in with SMS two-factor over a cookie session with CSRF (web) and
// over a bearer token (mobile), through plain fetch as a browser or an app
// would send it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from './harness.js';

let gw;
before(async () => { gw = await startGateway(); });
after(async () => { await gw?.stop(); });

const VIEWER = '{ viewer { kind permissions } }';

test('two-factor sign-in gives a cookie session that needs the CSRF header', async () => {
  const s = await gw.signInStaff();
  assert.equal(s.challenge.__typename, 'TwoFactorChallenge');
  assert.match(s.challenge.maskedPhone, /\*/, 'the phone is masked');
  assert.ok(s.cookie, 'SignedIn sets the session cookie');
  assert.ok(s.csrf);

  // The cookie alone is refused for a POST: a cross-site form cannot use it.
  const noCSRF = await gw.post(VIEWER, {}, { Cookie: s.cookie });
  assert.equal(noCSRF.status, 403);
  assert.equal(noCSRF.body.errors[0].extensions.code, 'FORBIDDEN');

  const wrongCSRF = await gw.post(VIEWER, {}, { Cookie: s.cookie, 'X-CSRF-Token': 'x' + s.csrf });
  assert.equal(wrongCSRF.status, 403);

  const ok = await gw.post(VIEWER, {}, { Cookie: s.cookie, 'X-CSRF-Token': s.csrf });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.data.viewer.kind, 'STAFF');

  // GET runs queries with the cookie and no CSRF header (it cannot change state).
  const get = await fetch(`${gw.graphql}?query=${encodeURIComponent(VIEWER)}`, { headers: { Cookie: s.cookie } });
  assert.equal((await get.json()).data.viewer.kind, 'STAFF');
});

test('a wrong two-factor code is refused with a client code and no session', async () => {
  const input = { kind: 'STAFF', email: 'staff@demo.test', password: 'demo-password' };
  await gw.post(`mutation($input: SignInInput!) { signIn(input: $input) { __typename } }`, { input });
  const code = await gw.smsCode();
  const wrong = String((Number(code) + 1) % 10 ** code.length).padStart(code.length, '0');
  const r = await gw.post(`mutation($input: SignInInput!) { signIn(input: $input) { __typename } }`,
    { input: { ...input, twoFactorCode: wrong } });
  assert.ok(r.body.errors?.length, 'refused');
  assert.notEqual(r.body.errors[0].extensions.code, 'INTERNAL');
  assert.deepEqual(r.headers.getSetCookie().filter((c) => c.startsWith('fingraph_session=') && !/Max-Age=0|Max-Age=-/.test(c)), []);
});

test('two-factor sign-in gives a bearer token for mobile clients', async () => {
  const s = await gw.signInStaff();
  const r = await gw.post(VIEWER, {}, { Authorization: `Bearer ${s.token}` });
  assert.equal(r.status, 200, 'bearer requests need no CSRF header');
  assert.equal(r.body.data.viewer.kind, 'STAFF');
  assert.ok(r.body.data.viewer.permissions.includes('payments.operate'));

  const out = await gw.post('mutation { signOut }', {}, { Authorization: `Bearer ${s.token}` });
  assert.equal(out.body.data.signOut, true);
  const after = await gw.post(VIEWER, {}, { Authorization: `Bearer ${s.token}` });
  assert.equal(after.body.data.viewer, null, 'the token is dead after signOut');
});
