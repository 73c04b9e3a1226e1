// graphql-http's audit suite of the GraphQL-over-HTTP specification run
// against the gateway's /graphql: every MUST passes. SHOULD and MAY results
// are printed for the record (some are deliberate choices: see
// docs/sandbox.md "Clients: the playground, the dashboard, the JavaScript
// tests").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serverAudits } from 'graphql-http';
import { startGateway } from './harness.js';

let gw;
before(async () => { gw = await startGateway(); });
after(async () => { await gw?.stop(); });

test('graphql-http serverAudits: every MUST passes', async (t) => {
  const audits = serverAudits({ url: () => gw.graphql, fetchFn: fetch });
  const musts = audits.filter((a) => a.name.startsWith('MUST'));
  assert.ok(musts.length > 10, 'the suite has MUST audits');
  for (const audit of audits) {
    const result = await audit.fn();
    if (audit.name.startsWith('MUST')) {
      await t.test(audit.name, () => {
        assert.equal(result.status, 'ok', `${audit.name}: ${result.reason ?? ''}`);
      });
    } else if (result.status !== 'ok') {
      t.diagnostic(`${result.status}: ${audit.name}${result.reason ? ` (${result.reason})` : ''}`);
    }
  }
});
