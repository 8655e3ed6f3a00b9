import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { parseAuthorizationHeader } from '../../functions/core/gateway/oauth.js';
import { signReportRequest } from '../../local/cli/sign.js';
import { startSimulator, type Simulator } from '../../local/simulator/index.js';

/** `reports sign`: the printed curl command, run as a user would, gets the report from a gateway. */

const run = promisify(execFile);

describe('reports sign', () => {
  let sim: Simulator;
  let dir: string;
  before(async () => {
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'sign-'));
    await writeFile(join(dir, 'hmac.json'), JSON.stringify(sim.credentials.hmac));
    await writeFile(join(dir, 'rsa.json'), JSON.stringify(sim.credentials.rsa));
  });
  after(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const method of ['hmac', 'rsa'] as const) {
    it(`prints a curl command that fetches the window's report (${method})`, async () => {
      const described = await signReportRequest({ gatewayUrl: sim.url, secretFile: join(dir, `${method}.json`), report: 'transactions', from: '2026-11-20' });
      assert.equal(parseAuthorizationHeader(described.authorization)?.oauth_consumer_key, sim.credentials[method].login);
      assert.match(described.body, /"value":"2026-11-20 00:00:00"/);
      const { stdout } = await run('sh', ['-c', described.curl]);
      assert.match(stdout, /^"Merchant_Name","Transaction_id"/);
      assert.equal(sim.requests.at(-1)?.outcome, 'report');
    });
  }
});
