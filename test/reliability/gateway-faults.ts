import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe } from 'node:test';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { AuthenticationRefused, GatewayUnavailable, UnexpectedAnswer } from '../../functions/core/errors.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';
import { parseLocalDateTime } from '../../functions/core/time/window.js';
import { functionS3Client } from '../../functions/aws/env.js';
import { logger, metrics } from '../../functions/aws/powertools.js';
import { fetchWindows } from '../../functions/fetch-report/fetch-windows.js';
import { DRIFTED_HEADER, driftRow, generateTransactions, NOT_AUTHORISED_MESSAGE, writeReportCsv } from '../../local/simulator/index.js';
import { injectS3Faults } from '../helpers/s3-faults.js';
import { leakGuard } from '../helpers/leak-guard.js';
import {
  assertLoadedOnce,
  assertNothingStored,
  curatedKeysOf,
  failedParse,
  fetchOutcomes,
  loadedParse,
  logLine,
  simulatorIds,
  withoutJitter,
} from './expect.js';
import { backfillOf, buckets, CSV, day, ENVIRONMENT, getWorld, it, keysOf, REPORT_ID } from './harness.js';

/**
 * Gateway faults through the fetch function's handler, as Lambda invokes it, against the simulator's fault
 * modes, with the parse its raw object triggers (S3 event -> SQS message -> parse handler). Each case asserts
 * the typed error (or outcome), what an alarm sees (the FetchOutcome metric, the failed invocation, the log
 * line), and what is in the buckets: nothing lost, nothing twice, nothing half written.
 */

const ROWS = 20;

describe('reliability: gateway faults through the fetch handler', () => {
  it('one 500, then success: retried once with a fresh signature, exactly one raw file, its rows loaded once', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, fault: { mode: 'error500', times: 1 } });
    w.useGateway(sim);
    const date = '2026-01-01';
    const run = await withoutJitter(() => w.fetch(backfillOf(date), 'gw-500-once'));
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.result!.windows[0]!.attempts, 2);
    assert.deepEqual(sim.requests.map((r) => [r.status, r.outcome]), [[500, 'fault'], [200, 'report']]);
    assert.notEqual(sim.requests[0]!.nonce, sim.requests[1]!.nonce, 'the retry is signed afresh');
    assert.equal(logLine(run, 'Gateway busy or unreachable: retrying').problem, 'HTTP 500 Internal Server Error');
    assert.deepEqual(fetchOutcomes(run), ['Success']);
    loadedParse(run, date);
    await assertLoadedOnce(w, date, w.expectedReport(w.hmac.login, date, ROWS), simulatorIds(w.hmac.login, date, ROWS));
  });

  it('429 with Retry-After: waits at least what the gateway asked, then one raw file, loaded once', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, fault: { mode: 'rateLimited', times: 1, retryAfterSeconds: 1 } });
    w.useGateway(sim);
    const date = '2026-01-02';
    const run = await w.fetch(backfillOf(date), 'gw-429');
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(sim.requests.map((r) => r.status), [429, 200]);
    const retry = logLine(run, 'Gateway busy or unreachable: retrying');
    assert.equal(retry.retryAfterMs, 1000);
    assert.ok(Number(retry.delayMs) >= 1000, `waited ${String(retry.delayMs)} ms`);
    const gap = sim.requests[1]!.time.getTime() - sim.requests[0]!.time.getTime();
    assert.ok(gap >= 990, `the second request came ${gap} ms after the first`);
    assert.deepEqual(fetchOutcomes(run), ['Success']);
    await assertLoadedOnce(w, date, w.expectedReport(w.hmac.login, date, ROWS), simulatorIds(w.hmac.login, date, ROWS));
  });

  it('persistent 5xx: GatewayUnavailable after every attempt, the invocation fails (retry + alarm), nothing stored', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, fault: { mode: 'error500' } });
    w.useGateway(sim);
    const date = '2026-01-03';
    const run = await withoutJitter(() => w.fetch(backfillOf(date), 'gw-500-always'));
    assert.ok(run.error instanceof GatewayUnavailable, String(run.error));
    assert.equal(run.error.code, 'GatewayUnavailable');
    assert.equal(run.error.retryable, true, 'a later run may succeed');
    assert.equal(run.error.attempts, 4);
    assert.match(run.error.message, /^The gateway was unavailable after 4 attempt\(s\); last problem: HTTP 500 Internal Server Error\. Nothing was saved\./);
    assert.equal(sim.requests.length, 4);
    assert.equal(new Set(sim.requests.map((r) => r.nonce)).size, 4, 'every attempt has its own nonce');
    // The alarm's view: a FetchOutcome data point with outcome=GatewayUnavailable, and the failed invocation.
    assert.deepEqual(fetchOutcomes(run), ['GatewayUnavailable']);
    assert.equal(logLine(run, 'Window failed').code, 'GatewayUnavailable');
    const verdict = logLine(run, 'Fetch run failed');
    assert.equal(verdict.level, 'ERROR');
    assert.equal((verdict.error as { name?: string }).name, 'GatewayUnavailable');
    assert.equal(run.parses.length, 0, 'nothing to parse');
    await assertNothingStored(w, date);
  });

  it('connection dropped mid-body: the multipart upload is aborted, no raw object, no Parquet; the retry stores it once', async () => {
    const w = await getWorld();
    // Large enough that the half sent before the cut fills more than one 8 MiB part: the upload is multipart.
    const rows = 130_000;
    const sim = await w.simulator({ rowsPerDay: rows, fault: { mode: 'dropMidBody', times: 1 } });
    w.useGateway(sim);
    const date = '2026-01-04';
    const rawKey = keysOf(date).raw;
    const s3 = injectS3Faults(functionS3Client());
    try {
      const run = await w.fetch(backfillOf(date), 'gw-drop');
      assert.ok(run.error instanceof GatewayUnavailable, String(run.error));
      assert.match(run.error.message, /the connection broke after \d+ byte\(s\) of the report/);
      assert.equal(sim.requests.length, 1, 'not retried inside the run: the bytes were already flowing into S3');
      const commands = s3.commandsFor((k) => k === rawKey);
      assert.equal(commands[0], 'CreateMultipartUploadCommand', commands.join());
      assert.ok(commands.includes('UploadPartCommand'), `a part was uploaded before the cut: ${commands.join()}`);
      assert.equal(commands.at(-1), 'AbortMultipartUploadCommand', commands.join());
      assert.ok(!commands.includes('CompleteMultipartUploadCommand') && !commands.includes('PutObjectCommand'), commands.join());
      assert.deepEqual(fetchOutcomes(run), ['GatewayUnavailable']);
      assert.equal(logLine(run, 'The report broke off').level, 'WARN');
      assert.equal(run.parses.length, 0);
      await assertNothingStored(w, date);

      // The schedule's retry (or the next run's lookback): the whole report, once.
      const again = await w.fetch(backfillOf(date), 'gw-drop-retry');
      assert.equal(again.error, undefined, String(again.error));
      assert.equal(s3.commandsFor((k) => k === rawKey).filter((c) => c === 'CompleteMultipartUploadCommand').length, 1);
      loadedParse(again, date);
      await assertLoadedOnce(w, date, w.expectedReport(w.hmac.login, date, rows), simulatorIds(w.hmac.login, date, rows));
    } finally {
      s3.remove();
    }
  });

  it('an answer slower than the time-out: GatewayUnavailable after the attempts, nothing stored, even when the answer comes later', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, fault: { mode: 'slow', delayMs: 1500 } });
    const date = '2026-01-05';
    // The handler's own time-out is 300 s; this drives the same run (fetchWindows, with the handler's S3 client,
    // logger and metrics) with a 300 ms one.
    const started = performance.now();
    const run = await w.capture('fetchWindows (slow gateway)', () =>
      fetchWindows(
        { kind: 'backfill', reportId: REPORT_ID, from: parseLocalDateTime(date), to: day(date).end },
        {
          catalog: loadCatalog(),
          s3: functionS3Client(),
          rawBucket: buckets.raw,
          environment: ENVIRONMENT,
          connectionOf: (name) => ({ name, endpointUrl: sim.url, loadSecret: async () => w.hmac }),
          logger,
          metrics,
          gateway: { timeouts: { totalMs: 300 }, retry: { attempts: 2, baseDelayMs: 0 } },
        },
        'gw-slow',
      ),
    );
    const elapsed = performance.now() - started;
    assert.ok(run.error instanceof GatewayUnavailable, String(run.error));
    assert.equal(run.error.attempts, 2);
    assert.match(run.error.message, /no complete answer within the total time-out of 300 ms/);
    assert.ok(elapsed < 1500, `gave up after ${Math.round(elapsed)} ms, before the gateway answered`);
    assert.deepEqual(fetchOutcomes(run), ['GatewayUnavailable']);
    // The gateway answers both requests later, into closed connections: still nothing may appear.
    for (let waited = 0; sim.requests.length < 2 && waited < 5000; waited += 50) await sleep(50);
    assert.equal(sim.requests.length, 2);
    await w.lake.settled();
    await assertNothingStored(w, date);
  });

  it('authentication refused (HMAC-SHA1): AuthenticationRefused, not retried, no other window tried, nothing stored', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS });
    const wrong: GatewaySecret = { login: w.hmac.login, controlKey: `wrong-${randomBytes(16).toString('hex')}` };
    leakGuard.gatewaySecret('the wrong HMAC secret', wrong);
    w.useGateway(sim, wrong);
    // 2026-01-10T00:15Z is 03:15 in Moscow: the 9th, with lookback the 8th and 7th.
    const run = await w.fetch({ reportId: REPORT_ID, scheduledTime: '2026-01-10T00:15:00Z' }, 'gw-refused-hmac');
    assert.ok(run.error instanceof AuthenticationRefused, String(run.error));
    assert.equal(run.error.retryable, false);
    assert.match(run.error.message, /^The gateway of connection "default" refused to authorise login "reliability-hmac" signing with HMAC-SHA1: it said "You are not authorized/);
    assert.match(run.error.message, /stops until it is fixed: "transactions"\..* Secrets Manager secret "paynet-reports\/reliability\/gateway"\. Its secret was re-read after the refusal: unchanged, so not retried\.$/);
    assert.equal(sim.requests.length, 1, 'one request: a refusal is never retried');
    assert.deepEqual([sim.requests[0]!.outcome, sim.requests[0]!.detail], ['refused', 'bad-signature']);
    assert.deepEqual(fetchOutcomes(run), ['AuthenticationRefused']);
    logLine(run, /remaining windows were not tried/);
    for (const date of ['2026-01-09', '2026-01-08', '2026-01-07']) await assertNothingStored(w, date);
  });

  it('authentication refused (RSA-SHA256 with a key the gateway does not hold): names the method, never the key', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS });
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const wrong: GatewaySecret = { login: w.rsa.login, signatureMethod: 'RSA-SHA256', privateKeyPem: stranger.privateKey };
    leakGuard.gatewaySecret('an RSA key the gateway does not hold', wrong);
    w.useGateway(sim, wrong);
    const date = '2026-01-11';
    const run = await w.fetch(backfillOf(date), 'gw-refused-rsa');
    assert.ok(run.error instanceof AuthenticationRefused, String(run.error));
    assert.match(run.error.message, /login "reliability-rsa" signing with RSA-SHA256/);
    assert.match(run.error.message, /that the provider holds your public key/);
    assert.ok(!run.error.message.includes('PRIVATE KEY'));
    assert.equal(sim.requests.length, 1);
    assert.equal(sim.requests[0]!.detail, 'bad-signature');
    assert.deepEqual(fetchOutcomes(run), ['AuthenticationRefused']);
    await assertNothingStored(w, date);
  });

  it('an HTML error page (200 text/html): UnexpectedAnswer quoting it, one request, nothing stored', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, fault: { mode: 'htmlError' } });
    w.useGateway(sim);
    const date = '2026-01-12';
    const run = await w.fetch(backfillOf(date), 'gw-html');
    assert.ok(run.error instanceof UnexpectedAnswer, String(run.error));
    assert.equal(run.error.retryable, false);
    assert.match(run.error.message, /^The gateway's answer is not a report \(a web page instead of a report; HTTP 200, content type "text\/html; charset=UTF-8"\)\. It began: "<!DOCTYPE html>\\n<html><head><title>502 Bad Gateway/);
    assert.equal(sim.requests.length, 1);
    assert.deepEqual(fetchOutcomes(run), ['UnexpectedAnswer']);
    await assertNothingStored(w, date);
  });

  it('an empty body (200 text/csv, no bytes): UnexpectedAnswer, one request, nothing stored', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, fault: { mode: 'emptyBody' } });
    w.useGateway(sim);
    const date = '2026-01-13';
    const run = await w.fetch(backfillOf(date), 'gw-empty');
    assert.ok(run.error instanceof UnexpectedAnswer, String(run.error));
    assert.match(run.error.message, /^The gateway's answer is not a report \(an empty body; HTTP 200, content type "text\/csv; charset=UTF-8"\)/);
    assert.equal(sim.requests.length, 1);
    assert.deepEqual(fetchOutcomes(run), ['UnexpectedAnswer']);
    await assertNothingStored(w, date);
  });

  it('a changed header row: the raw file is kept, no table file, SchemaDrift in the manifest and the failed message', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, fault: { mode: 'schemaDrift' } });
    w.useGateway(sim);
    const date = '2026-01-14';
    const run = await w.fetch(backfillOf(date), 'gw-drift');
    assert.equal(run.error, undefined, 'the fetch itself succeeded');
    assert.deepEqual(fetchOutcomes(run), ['Success']);
    const keys = keysOf(date);
    const drifted = writeReportCsv(DRIFTED_HEADER, generateTransactions(w.hmac.login, day(date), ROWS).map(driftRow), CSV);
    assert.ok((await w.read('raw', keys.raw)).equals(drifted), 'the raw file is kept as the gateway sent it');

    const { error } = failedParse(run, date);
    assert.equal(error.name, 'SchemaDrift');
    const m = await w.manifest(date);
    assert.equal(m.outcome, 'failed');
    assert.deepEqual([m.error?.code, m.error?.retryable], ['SchemaDrift', false]);
    assert.match(m.error!.message, /^The header row of report "transactions" differs from its definition: missing "Merchant_OID"; extra "Merchant_Order_ID", "Transaction_status"; moved .*Nothing was written to the table; the raw file is kept\./);
    assert.equal(m.source.key, keys.raw);
    assert.deepEqual(await curatedKeysOf(w, date), [keys.manifest], 'no table file and no rejects file');
    assert.equal(logLine(run, 'Load failed: nothing was written to the table').code, 'SchemaDrift');
    assert.deepEqual(await w.incomplete(), { raw: [], curated: [] });
    assert.ok(!run.text.includes(NOT_AUTHORISED_MESSAGE));
  });
});
