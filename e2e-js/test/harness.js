// The harness of the JavaScript end-to-end tests: it builds the gateway
// (`go build`), starts it with the sandbox in-process on free loopback
// ports and a temporary JetStream directory, and gives the tests small
// helpers: GraphQL over fetch, the sandbox's control API, sign-in with SMS
// two-factor. Nothing is mocked: every call crosses real HTTP.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import readline from 'node:readline';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..', '..');
export const artifacts = path.resolve(here, '..', 'artifacts');

let built;

/** Builds the gateway once per test process (go build is incremental). */
export function buildGateway() {
  if (built) return built;
  mkdirSync(artifacts, { recursive: true });
  const bin = path.join(artifacts, 'fingraph');
  execFileSync('go', ['build', '-o', bin, '.'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  built = bin;
  return bin;
}

/**
 * Starts a gateway with the in-process sandbox. The addresses are chosen by
 * the kernel (port 0) and read back from the gateway's JSON start-up log.
 * env overrides FINGRAPH_* settings.
 */
export async function startGateway(env = {}) {
  const bin = buildGateway();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'fingraph-e2e-js-'));
  const child = spawn(bin, [], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? tmpdir(),
      FINGRAPH_ADDR: '127.0.0.1:0',
      FINGRAPH_SANDBOX_ADDR: '127.0.0.1:0',
      FINGRAPH_DATA_DIR: dataDir,
      FINGRAPH_LOG_FORMAT: 'json',
      FINGRAPH_SANDBOX_ANONYMOUS: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = [];
  let sandboxURL;
  let gatewayURL;
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${logs.join('\n')}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${logs.join('\n')}`)));
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        logs.push(line);
        let rec;
        try { rec = JSON.parse(line); } catch { return; }
        if (rec.sandbox) sandboxURL = rec.sandbox;
        if (rec.msg === 'gateway listening') gatewayURL = rec.graphql.replace(/\/graphql$/, '');
        if (rec.msg === 'webhook registered' || (gatewayURL && env.FINGRAPH_REGISTER_WEBHOOK === 'false')) {
          clearTimeout(timer);
          resolve();
        }
      });
    }
  });
  await ready;
  const gw = new Gateway(gatewayURL, sandboxURL, child, dataDir, logs);
  return gw;
}

/** A running gateway and its sandbox. */
export class Gateway {
  constructor(url, sandboxURL, child, dataDir, logs) {
    Object.assign(this, { url, sandboxURL, child, dataDir, logs });
    this.graphql = `${url}/graphql`;
    this.ws = this.graphql.replace(/^http/, 'ws');
  }

  /** Stops the gateway (SIGTERM, then waits) and removes its data. */
  async stop() {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** POSTs an operation; returns {status, body, headers}. */
  async post(query, variables, headers = {}) {
    const res = await fetch(this.graphql, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, body: await res.json(), headers: res.headers };
  }

  /** Calls the sandbox's control API. */
  async sandbox(method, p, body) {
    const res = await fetch(this.sandboxURL + p, {
      method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }

  /** Upstream calls so far, per route (the sandbox's counters). */
  async stats() {
    return this.sandbox('GET', '/_sandbox/stats');
  }

  /** The newest SMS code the sandbox sent. */
  async smsCode() {
    const msgs = await this.sandbox('GET', '/_sandbox/sms');
    if (!msgs.length) throw new Error('no SMS in the sandbox outbox');
    return msgs[0].code;
  }

  /**
   * Signs the demo staff member in through SMS two-factor. Returns the
   * session token, the CSRF token and the cookie the gateway set.
   */
  async signInStaff() {
    const input = { kind: 'STAFF', email: 'staff@demo.test', password: 'demo-password' };
    const first = await this.post(SIGN_IN, { input });
    if (first.body.data?.signIn?.__typename !== 'TwoFactorChallenge') {
      throw new Error(`expected a TwoFactorChallenge, got ${JSON.stringify(first.body)}`);
    }
    const code = await this.smsCode();
    const second = await this.post(SIGN_IN, { input: { ...input, twoFactorCode: code } });
    const s = second.body.data?.signIn;
    if (s?.__typename !== 'SignedIn') throw new Error(`sign-in failed: ${JSON.stringify(second.body)}`);
    const cookie = second.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('fingraph_session='));
    return { token: s.sessionToken, csrf: s.csrfToken, cookie, viewer: s.viewer, challenge: first.body.data.signIn };
  }

  /**
   * Signs a demo person in (Anna and Ben of the two demo corporations have
   * no two-factor; Toms, tfa@demo.test, has: his code is read from the
   * sandbox's SMS outbox). Returns what signInStaff returns.
   */
  async signInPerson(email) {
    const input = { kind: 'PERSON', email, password: 'demo-password', deviceFingerprint: 4242 };
    let r = await this.post(SIGN_IN, { input });
    const challenge = r.body.data?.signIn;
    if (challenge?.__typename === 'TwoFactorChallenge') {
      const more = { twoFactorCode: await this.smsCode() };
      if (challenge.challengeId) more.challengeId = challenge.challengeId;
      r = await this.post(SIGN_IN, { input: { ...input, ...more } });
    }
    const s = r.body.data?.signIn;
    if (s?.__typename !== 'SignedIn') throw new Error(`sign-in of ${email} failed: ${JSON.stringify(r.body)}`);
    const cookie = r.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('fingraph_session='));
    return { token: s.sessionToken, csrf: s.csrfToken, cookie, viewer: s.viewer };
  }

  /**
   * Books an incoming transfer of amount (minor units) on a wallet through
   * the sandbox's control API: a change made outside the gateway, which
   * only the banking poller can announce. Returns the wallet as the
   * sandbox answers it (its new amount).
   */
  async credit(walletUpstreamId, amount) {
    return this.sandbox('POST', `/_sandbox/banking/wallets/${walletUpstreamId}/credit`, { amount });
  }

  /** A metric's value from the gateway's /metrics (served to loopback clients). */
  async metric(name) {
    const text = await (await fetch(`${this.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    if (!line) throw new Error(`metric ${name} not found`);
    return Number(line.slice(name.length + 1));
  }

  /**
   * Waits until the banking poller polls at least n corporations and has
   * then completed 2n more polls. A corporation's first poll is a baseline
   * that announces nothing, so a change made before it would never be
   * announced: a test that makes one waits here first.
   */
  async livePolled(n) {
    await waitFor(async () => (await this.metric('fingraph_live_corporations_polled')) >= n, 30_000, `${n} corporations polled`);
    const from = await this.metric('fingraph_live_polls_total');
    await waitFor(async () => (await this.metric('fingraph_live_polls_total')) >= from + 2 * n, 30_000, `${2 * n} more polls`);
  }

  /** Signs the demo API client in (no two-factor); returns the bearer token. */
  async signInAPI() {
    const r = await this.post(SIGN_IN, { input: { kind: 'API_KEY', apiKey: 'demo-api-key' } });
    return r.body.data.signIn.sessionToken;
  }

  /** Fires a payments event in the sandbox; it reaches the gateway as a webhook. */
  async trigger(name = 'IndividualActivated') {
    return this.sandbox('POST', '/_sandbox/trigger', { name });
  }
}

export const SIGN_IN = `mutation SignIn($input: SignInInput!) {
  signIn(input: $input) {
    __typename
    ... on TwoFactorChallenge { maskedPhone challengeId }
    ... on SignedIn { sessionToken csrfToken viewer { kind permissions } }
  }
}`;

export const EVENTS = `subscription Events($after: String, $names: [String!]) {
  events(after: $after, names: $names) { cursor source event { id upstreamId name individualId } }
}`;

/** Waits until cond() is true, polling; fails after ms. */
export async function waitFor(cond, ms = 15_000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether Debian's chromium is installed (browser tests skip without it). */
export const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const haveChromium = existsSync(chromiumPath);
