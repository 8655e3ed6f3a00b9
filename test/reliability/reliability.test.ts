import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { after, describe } from 'node:test';
import { leakGuard } from '../helpers/leak-guard.js';
import './gateway-faults.js';
import './storage-faults.js';
import './bad-data.js';
import './property.js';
import './security.js';
import { closeWorld, counts, getWorld, it } from './harness.js';

/**
 * The reliability and security suite (issue 6): what users get under every fault and bad input we can
 * foresee, on the real local chain (simulator fault modes, s3rver, the two Lambda handlers). One process on
 * purpose: one lake and one set of credentials shared by every case, and one leak guard that sees everything
 * the whole suite prints, throws and stores, scanned by the last case below. The README ("Faults and bad input") is the table of
 * these cases for users.
 */

describe('reliability: nothing the suite produced leaks a credential', () => {
  it('no control key, private key line or signature in any output, error, request log, manifest or rejects file', async () => {
    const w = await getWorld();
    await w.recordArtifacts();
    // The taps saw the suite: signed requests on the wire, log lines and errors recorded, secrets to look for.
    assert.ok(leakGuard.wire.clientRequests >= 30, `signed requests seen: ${leakGuard.wire.clientRequests}`);
    assert.ok(leakGuard.wire.signatures.size >= 25, `signatures collected: ${leakGuard.wire.signatures.size}`);
    assert.ok(leakGuard.recordedBytes > 200_000, `bytes of output recorded: ${leakGuard.recordedBytes}`);
    const findings = leakGuard.scan();
    assert.deepEqual(findings, [], `credentials leaked:\n${findings.map((f) => `${f.secret} in ${f.where}: ${JSON.stringify(f.context)}`).join('\n')}`);
    assert.deepEqual(leakGuard.reusedNonces(), [], 'the client never sent one nonce twice');
  });
});

after(async () => {
  await closeWorld();
  console.log(
    `reliability suite: ${counts.started} cases, ${counts.passed} passed` +
      (counts.propertyRuns ? ` (the property case compared ${counts.propertyRuns} generated reports with DuckDB)` : ''),
  );
});
