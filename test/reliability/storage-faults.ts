import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import type { SQSEvent } from 'aws-lambda';
import { functionS3Client } from '../../functions/aws/env.js';
import { handler as fetchHandler } from '../../functions/fetch-report/handler.js';
import { handler as parseHandler } from '../../functions/parse-report/handler.js';
import { objectCreatedRecord, sqsEventOf } from '../../local/lake/sqs-message.js';
import { REPORT_HEADER, generateTransactions, writeReportCsv } from '../../local/simulator/index.js';
import { lambdaContext, metricPoints } from '../helpers/handler-harness.js';
import { objectExists, sha256 } from '../helpers/lake-inspect.js';
import { injectS3Faults, type FaultRule } from '../helpers/s3-faults.js';
import { assertLoadedOnce, assertNothingStored, curatedKeysOf, failedParse, fetchOutcomes, lineAt, loadedParse, logLine, recordStarts, simulatorIds } from './expect.js';
import { backfillOf, buckets, CSV, day, getWorld, it, keysOf, type World } from './harness.js';

/**
 * Storage and delivery faults on the real chain: raw objects that are truncated or corrupted at rest, S3
 * failing while the Parquet file is uploaded, the same S3 event delivered twice, and two runs of one window
 * at the same time. In every case the table key holds either nothing, the earlier complete file, or a complete
 * new file with each row once; never a partial file.
 */

const ROWS = 20;
const LOGIN = 'reliability-storage';
const reportOf = (date: string, rows = ROWS) => writeReportCsv(REPORT_HEADER, generateTransactions(LOGIN, day(date), rows), CSV);
const idsOf = (date: string, rows = ROWS) => generateTransactions(LOGIN, day(date), rows).map((r) => r[1]!);

/** A parse that failed on a day's raw object: typed error in the manifest, no table, the raw file as it was. */
async function assertRefused(w: World, run: Awaited<ReturnType<World['putRaw']>>, date: string, code: string, raw: Buffer, earlierTable?: Buffer) {
  const { error } = failedParse(run, date);
  assert.equal(error.name, code);
  const m = await w.manifest(date);
  assert.equal(m.outcome, 'failed');
  assert.equal(m.error?.code, code);
  assert.equal(logLine(run, 'Load failed: nothing was written to the table').code, code);
  if (earlierTable) assert.ok((await w.read('curated', keysOf(date).table)).equals(earlierTable), 'the earlier Parquet file is untouched');
  else assert.equal(await objectExists(w.lake.client, buckets.curated, keysOf(date).table), false, 'no table file');
  assert.ok((await w.read('raw', keysOf(date).raw)).equals(raw), 'the raw file is kept as it was');
  assert.deepEqual(await w.incomplete(), { raw: [], curated: [] }, 'no incomplete multipart upload');
  return { error, manifest: m };
}

/** A report whose Parquet file is over 8 MiB (incompressible descriptions): its upload is multipart, two parts. */
function largeReport(date: string): { csv: Buffer; ids: string[] } {
  const rows = generateTransactions(LOGIN, day(date), 60).map((r) => r.map((v, c) => (c === 7 ? randomBytes(150_000).toString('base64') : v)));
  return { csv: writeReportCsv(REPORT_HEADER, rows, CSV), ids: rows.map((r) => r[1]!) };
}

describe('reliability: a truncated or corrupted raw object', () => {
  it('cut inside a quoted value: MalformedReport, no table file, the raw object kept', async () => {
    const w = await getWorld();
    const date = '2026-02-01';
    const raw = reportOf(date).subarray(0, -10);
    const run = await w.putRaw(date, raw);
    const { manifest } = await assertRefused(w, run, date, 'MalformedReport', raw);
    assert.match(manifest.error!.message, /^Report "transactions" is not a well-formed CSV file: Quote Not Closed/);
    assert.equal(manifest.error!.retryable, false);
    assert.deepEqual(await curatedKeysOf(w, date), [keysOf(date).manifest], 'no rejects file either');
    assert.deepEqual(metricPoints(run.lines, 'RowsWritten'), []);
  });

  it('cut between two fields: the short record is quarantined with its line, and the load refused (TooManyRejectedRows)', async () => {
    const w = await getWorld();
    const date = '2026-02-02';
    const full = reportOf(date);
    const starts = recordStarts(full);
    const last = starts.at(-1)!;
    // After the fourth field of the last record and its delimiter.
    let fields = 0;
    let cut = last;
    for (let quoted = false; fields < 4; cut++) {
      if (full[cut] === 0x22) quoted = !quoted;
      else if (full[cut] === 0x2c && !quoted) fields++;
    }
    const raw = full.subarray(0, cut);
    const run = await w.putRaw(date, raw);
    const { manifest } = await assertRefused(w, run, date, 'TooManyRejectedRows', raw);
    assert.deepEqual(manifest.rows, { read: ROWS, written: ROWS - 1, rejected: 1, emptyLines: 0 });
    const rejects = (await w.read('curated', keysOf(date).rejected)).toString('utf8');
    assert.ok(rejects.split('\r\n')[1]!.startsWith(`"${lineAt(full, last)}","","has 5 field(s), the header has 9","`), rejects);
    // The rejected-rows alarm sees it, and the freshness alarm sees no rows written.
    assert.deepEqual(metricPoints(run.lines, 'RowsRejected').map((p) => p.value), [1]);
    assert.deepEqual(metricPoints(run.lines, 'RowsWritten').map((p) => p.value), [0]);
  });

  it('random bytes instead of a report: MalformedReport (not UTF-8)', async () => {
    const w = await getWorld();
    const date = '2026-02-03';
    let x = 12345;
    const raw = Buffer.from(Array.from({ length: 4096 }, () => ((x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16) & 0xff));
    const run = await w.putRaw(date, raw);
    const { manifest } = await assertRefused(w, run, date, 'MalformedReport', raw);
    assert.match(manifest.error!.message, /bytes that are not UTF-8 between byte 0 and \d+/);
  });

  it('cut inside a multibyte UTF-8 character at the end: MalformedReport, never a U+FFFD in the table', async () => {
    const w = await getWorld();
    const date = '2026-02-04';
    const full = reportOf(date);
    let lead = full.length - 1;
    while (full[lead]! < 0xc0) lead--; // the last multibyte character's lead byte
    const raw = full.subarray(0, lead + 1);
    const run = await w.putRaw(date, raw);
    const { manifest } = await assertRefused(w, run, date, 'MalformedReport', raw);
    assert.match(manifest.error!.message, /the file ends inside a UTF-8 character \(byte \d+\)/);
  });

  it('a byte lost inside a multibyte character mid-file: MalformedReport naming the byte range', async () => {
    const w = await getWorld();
    const date = '2026-02-05';
    const full = reportOf(date);
    const lead = full.findIndex((b) => b >= 0xc0);
    const raw = Buffer.concat([full.subarray(0, lead + 1), full.subarray(lead + 2)]);
    const run = await w.putRaw(date, raw);
    const { manifest } = await assertRefused(w, run, date, 'MalformedReport', raw);
    assert.match(manifest.error!.message, /bytes that are not UTF-8 between byte \d+ and \d+/);
  });

  it('an empty raw object: SchemaDrift naming every column as missing', async () => {
    const w = await getWorld();
    const date = '2026-02-06';
    const run = await w.putRaw(date, Buffer.alloc(0));
    const { manifest } = await assertRefused(w, run, date, 'SchemaDrift', Buffer.alloc(0));
    assert.match(manifest.error!.message, /missing "Merchant_Name", "Transaction_id", "Merchant_OID",/);
  });

  it('a loaded window whose raw object is then replaced by a truncated copy: the earlier table stays byte for byte', async () => {
    const w = await getWorld();
    const date = '2026-02-07';
    const good = reportOf(date);
    loadedParse(await w.putRaw(date, good), date);
    const before = await w.read('curated', keysOf(date).table);
    const truncated = good.subarray(0, Math.floor(good.length / 2));
    const run = await w.putRaw(date, truncated);
    await assertRefused(w, run, date, 'MalformedReport', truncated, before);
    const table = await w.table(date);
    assert.deepEqual([table.rows, table.distinctIds], [ROWS, ROWS]);
    assert.equal((await w.manifest(date)).outcome, 'failed', 'the manifest describes the latest attempt');
  });
});

describe('reliability: S3 fails while a file is uploaded', () => {
  /**
   * Puts `csv` at the day's raw key with `rules` active on the handlers' S3 client; the chain's parse fails.
   * While failing, the table key is checked from another client: nothing may be visible. Then the message
   * is delivered again (SQS's retry) without faults, and the day must hold each row once.
   */
  async function failThenRetry(date: string, csv: Buffer, ids: string[], rules: FaultRule[], expectCommands: string[] | ((commands: string[]) => void)) {
    const w = await getWorld();
    const tableKey = keysOf(date).table;
    const previous = (await objectExists(w.lake.client, buckets.curated, tableKey)) ? await w.read('curated', tableKey) : undefined;
    const visibleWhileFailing: boolean[] = [];
    const s3 = injectS3Faults(
      functionS3Client(),
      rules.map((r) => ({
        ...r,
        before: async () => {
          visibleWhileFailing.push(await objectExists(w.lake.client, buckets.curated, tableKey));
        },
      })),
    );
    let run;
    try {
      run = await w.putRaw(date, csv);
    } finally {
      s3.remove();
    }
    assert.equal(s3.injected, 1, 'the fault struck');
    assert.deepEqual(visibleWhileFailing, [previous !== undefined], 'mid-upload, the table key shows nothing new');
    if (typeof expectCommands === 'function') expectCommands(s3.commandsFor((k) => k === tableKey));
    else assert.deepEqual(s3.commandsFor((k) => k === tableKey), expectCommands);
    const { record, error } = failedParse(run, date);
    assert.equal(error.name, 'InternalError');
    const m = await w.manifest(date);
    assert.equal(m.outcome, 'failed');
    assert.deepEqual([m.error?.code, m.error?.retryable], ['Unexpected', true]);
    assert.match(m.error!.message, /^We encountered an internal error/);
    if (previous) assert.ok((await w.read('curated', tableKey)).equals(previous), 'the earlier table file is untouched');
    else assert.equal(await objectExists(w.lake.client, buckets.curated, tableKey), false, 'no table file');
    assert.deepEqual(await w.incomplete(), { raw: [], curated: [] }, 'the multipart upload was aborted');

    // SQS delivers the message again.
    const retry = await w.parse(record.event, `retry-${date}`);
    assert.deepEqual(retry.result, { batchItemFailures: [] }, String(retry.error));
    await assertLoadedOnce(w, date, csv, ids);
  }

  it('S3 refuses the raw file: the fetch fails with the S3 error (FetchOutcome Unexpected), nothing stored, nothing parsed', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS });
    w.useGateway(sim);
    const date = '2026-02-09';
    const s3 = injectS3Faults(functionS3Client(), [{ command: 'PutObjectCommand', key: (k) => k === keysOf(date).raw, nth: 1 }]);
    let run;
    try {
      run = await w.fetch(backfillOf(date), 'raw-put-fails');
    } finally {
      s3.remove();
    }
    assert.equal((run.error as Error | undefined)?.name, 'InternalError', String(run.error));
    assert.deepEqual(fetchOutcomes(run), ['Unexpected']);
    assert.equal(logLine(run, 'Window failed').code, 'Unexpected');
    assert.equal(sim.requests.length, 1, 'the gateway is not asked again within the run');
    assert.equal(run.parses.length, 0);
    await assertNothingStored(w, date);
  });

  it('the first UploadPart fails: nothing at the table key, the upload aborted; the redelivered message loads it once', async () => {
    const date = '2026-02-10';
    const { csv, ids } = largeReport(date);
    const isTable = (k: string) => k === keysOf(date).table;
    // The 12 MB report is one row group (under the 64 MiB bound), handed to the sink in one write: it may cut
    // the second part before the first one's failure comes back, so one or two UploadParts precede the abort.
    await failThenRetry(date, csv, ids, [{ command: 'UploadPartCommand', key: isTable, nth: 1 }], (commands) =>
      assert.match(commands.join(' '), /^CreateMultipartUploadCommand( UploadPartCommand){1,2} AbortMultipartUploadCommand$/),
    );
  });

  it('the last UploadPart fails over an earlier good table: the earlier file stays whole until the retry replaces it', async () => {
    const w = await getWorld();
    const date = '2026-02-11';
    const first = largeReport(date);
    loadedParse(await w.putRaw(date, first.csv), date);
    const isTable = (k: string) => k === keysOf(date).table;
    const second = largeReport(date); // new descriptions: a different file
    await failThenRetry(date, second.csv, second.ids, [{ command: 'UploadPartCommand', key: isTable, nth: 2 }], [
      'CreateMultipartUploadCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'AbortMultipartUploadCommand',
    ]);
  });

  it('CompleteMultipartUpload fails: nothing at the table key, the upload aborted', async () => {
    const date = '2026-02-12';
    const { csv, ids } = largeReport(date);
    const isTable = (k: string) => k === keysOf(date).table;
    await failThenRetry(date, csv, ids, [{ command: 'CompleteMultipartUploadCommand', key: isTable, nth: 1 }], [
      'CreateMultipartUploadCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'CompleteMultipartUploadCommand',
      'AbortMultipartUploadCommand',
    ]);
  });

  it('the PutObject of a small Parquet file fails: nothing at the table key', async () => {
    const date = '2026-02-13';
    const isTable = (k: string) => k === keysOf(date).table;
    await failThenRetry(date, reportOf(date), idsOf(date), [{ command: 'PutObjectCommand', key: isTable, nth: 1 }], ['PutObjectCommand']);
  });

  it('the rejects file cannot be written: the Parquet file is not published either', async () => {
    const date = '2026-02-15';
    const isRejects = (k: string) => k === keysOf(date).rejected;
    // The table's bytes stay in memory until the file is committed, after the rejects: nothing is sent for it.
    await failThenRetry(date, reportOf(date), idsOf(date), [{ command: 'PutObjectCommand', key: isRejects, nth: 1 }], []);
  });

  it('the manifest cannot be written after the table was: the message fails, so it is retried, and the retry records the load', async () => {
    const w = await getWorld();
    const date = '2026-02-14';
    const s3 = injectS3Faults(functionS3Client(), [{ command: 'PutObjectCommand', key: (k) => k === keysOf(date).manifest, nth: 1 }]);
    let run;
    try {
      run = await w.putRaw(date, reportOf(date));
    } finally {
      s3.remove();
    }
    const { record, error } = failedParse(run, date);
    assert.equal(error.name, 'InternalError');
    // The table file that was committed is whole; the redelivered message rewrites it and the manifest.
    const retry = await w.parse(record.event, `retry-${date}`);
    assert.deepEqual(retry.result, { batchItemFailures: [] }, String(retry.error));
    await assertLoadedOnce(w, date, reportOf(date), idsOf(date));
  });
});

describe('reliability: duplicate deliveries and concurrent runs', () => {
  it('the same S3 event delivered twice, one after the other: one copy of each row', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS });
    w.useGateway(sim);
    const date = '2026-02-20';
    const run = await w.fetch(backfillOf(date), 'dup-fetch');
    const first = loadedParse(run, date);
    const again = await w.parse(first.event as SQSEvent, 'dup-parse-2');
    assert.deepEqual(again.result, { batchItemFailures: [] }, String(again.error));
    assert.equal(logLine(again, 'Report loaded').sourceKey, keysOf(date).raw);
    await assertLoadedOnce(w, date, w.expectedReport(w.hmac.login, date, ROWS), simulatorIds(w.hmac.login, date, ROWS));
    assert.equal((await w.read('curated', keysOf(date).rejected)).toString(), '"line","column","reason","record"\r\n');
  });

  it('the same S3 event delivered twice at the same time: both succeed, one complete copy', async () => {
    const w = await getWorld();
    const date = '2026-02-21';
    const { csv, ids } = largeReport(date);
    w.chain.enabled = false;
    try {
      const stored = await w.putRaw(date, csv);
      assert.equal(stored.parses.length, 0);
    } finally {
      w.chain.enabled = true;
    }
    // The event S3 would send for it, delivered to two parse invocations at once.
    const event = sqsEventOf([objectCreatedRecord({ bucket: buckets.raw, key: keysOf(date).raw, size: csv.length })]);
    const run = await w.capture('two parses of one event', () =>
      Promise.all([
        parseHandler(event, lambdaContext('dup-concurrent-a', 'paynet-reports-reliability-parse')),
        parseHandler(event, lambdaContext('dup-concurrent-b', 'paynet-reports-reliability-parse')),
      ]),
    );
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(run.result, [{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    assert.equal(run.lines.filter((l) => l.message === 'Report loaded').length, 2);
    await assertLoadedOnce(w, date, csv, ids);
  });

  it('two runs of the same window at the same time: each key holds one complete file, each row once', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: 2_000 });
    w.useGateway(sim);
    const date = '2026-02-22';
    const run = await w.capture('two concurrent fetch runs', () =>
      Promise.all([
        fetchHandler(backfillOf(date), lambdaContext('concurrent-a', 'paynet-reports-reliability-fetch')),
        fetchHandler(backfillOf(date), lambdaContext('concurrent-b', 'paynet-reports-reliability-fetch')),
      ]),
    );
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(fetchOutcomes(run), ['Success', 'Success']);
    assert.equal(sim.requests.length, 2);
    assert.equal(run.parses.length, 2, 'each raw object raised its event');
    // Should a parse fail while the other run's commits the same window, SQS would deliver its message
    // again; so does this, and the end state must then be exact. (The local lake replaces
    // s3rver's PUT so that, as on S3, neither run's parse reads a half-written raw file or manifest.)
    for (const failed of run.parses.filter((p) => p.error !== undefined)) {
      const again = await w.parse(failed.event, `redelivered-${failed.key}`);
      assert.deepEqual(again.result, { batchItemFailures: [] }, String(again.error));
    }
    await assertLoadedOnce(w, date, w.expectedReport(w.hmac.login, date, 2_000), simulatorIds(w.hmac.login, date, 2_000));
    const m = await w.manifest(date);
    assert.ok(['concurrent-a', 'concurrent-b'].includes(m.source.fetchRunId ?? ''), 'the manifest names one of the two runs');
    assert.equal(m.table?.sha256, sha256(await w.read('curated', keysOf(date).table)));
  });
});
