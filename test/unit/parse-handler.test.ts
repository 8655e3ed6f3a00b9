import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FullBatchFailureError } from '@aws-lambda-powertools/batch';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { bucketNames } from '../../functions/core/naming.js';
import { FINDING_LOG_MESSAGE } from '../../functions/core/quality/checks.js';
import { encodeS3EventKey, rawKey } from '../../functions/core/lake/s3-keys.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { openObjectStream, putBytes } from '../../functions/aws/s3-streams.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { handler } from '../../functions/parse-report/handler.js';
import { LOCAL_LAKE_CREDENTIALS, startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { DRIFTED_HEADER, REPORT_HEADER, driftRow, generateTransactions, writeReportCsv, writeReportPdf } from '../../local/simulator/index.js';
import { openDuckDb } from '../helpers/duckdb.js';
import { captureJsonLines, eventFixture, lambdaContext, metricPoints } from '../helpers/handler-harness.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * The parse function's handler as Lambda calls it: SQS batches wrapping S3 notifications (fixtures in
 * test/fixtures/events), the local lake as S3 (AWS_ENDPOINT_URL_S3), raw objects put there first.
 */

const buckets = bucketNames('test');
const ROWS = 40;
const LOGIN = 'merchant-under-test';
const day = (date: string) => windowAt(parseLocalDateTime(date), parseWindowSize('P1D'));
const csvOptions = { delimiter: ',', encoding: 'UTF-8' };
const REJECTS_HEADER_ONLY = '"line","column","reason","record"\r\n';

describe('parse-report handler', () => {
  let dir: string;
  let lake: LocalLake;
  const saved = { ...process.env };

  const putRaw = async (date: string, body: Buffer, format: 'csv' | 'pdf') => {
    const key = rawKey(feedKey('transactions'), day(date), format);
    await putBytes({
      client: lake.client,
      bucket: buckets.raw,
      key,
      body,
      contentType: format === 'csv' ? 'text/csv; charset=UTF-8' : 'application/pdf',
      metadata: { 'run-id': `fetch-${date}`, 'fetched-at': '2026-11-21T00:15:40.000Z' },
    });
    // The lake announces the object to listeners; this test drives the handler itself, from fixtures.
    await lake.settled();
    return { key, sha256: createHash('sha256').update(body).digest('hex') };
  };
  const curatedKeys = async (prefix = '') =>
    ((await lake.client.send(new ListObjectsV2Command({ Bucket: buckets.curated, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!).sort();
  const readCurated = async (key: string) => {
    const opened = await openObjectStream({ client: lake.client, bucket: buckets.curated, key });
    const chunks: Buffer[] = [];
    for await (const c of opened.body) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  const manifest = async (date: string) =>
    JSON.parse((await readCurated(`manifests/transactions/connection=default/dt=${date}/${date}T00-00-00.json`)).toString('utf8')) as LoadManifest;
  /** The single-message fixture, pointed at another key: the same real shape. */
  const objectCreated = (key: string): SQSEvent => {
    const event = eventFixture<SQSEvent>('sqs-s3-object-created.json');
    const body = JSON.parse(event.Records[0]!.body);
    body.Records[0].s3.object.key = encodeS3EventKey(key);
    event.Records[0]!.body = JSON.stringify(body);
    return event;
  };
  const invoke = (event: SQSEvent, requestId: string) => captureJsonLines(() => handler(event, lambdaContext(requestId, 'paynet-reports-test-parse')));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parse-handler-'));
    lake = await startLocalLake({ dir, buckets });
    Object.assign(process.env, {
      CURATED_BUCKET: buckets.curated,
      PIPELINE_ENVIRONMENT: 'test',
      AWS_REGION: 'eu-central-1',
      AWS_ENDPOINT_URL_S3: lake.endpoint,
      AWS_ACCESS_KEY_ID: LOCAL_LAKE_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_LAKE_CREDENTIALS.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    });
  });
  after(async () => {
    process.env = saved;
    await lake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('an ObjectCreated message: Parquet at the table key, a header-only rejects file, a manifest, metrics', async () => {
    const rows = generateTransactions(LOGIN, day('2026-11-20'), ROWS);
    const raw = await putRaw('2026-11-20', writeReportCsv(REPORT_HEADER, rows, csvOptions), 'csv');
    const run = await invoke(eventFixture<SQSEvent>('sqs-s3-object-created.json'), 'req-parse-1');
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(run.result, { batchItemFailures: [] });

    assert.deepEqual(await curatedKeys(), [
      'manifests/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json',
      'rejected/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv',
      'tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet',
    ]);
    assert.equal((await readCurated('rejected/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv')).toString(), REJECTS_HEADER_ONLY);

    const m = await manifest('2026-11-20');
    assert.equal(m.outcome, 'loaded');
    assert.deepEqual(m.window, { start: '2026-11-20T00:00:00', end: '2026-11-21T00:00:00', timeZone: 'Europe/Moscow' });
    assert.deepEqual(m.rows, { read: ROWS, written: ROWS, rejected: 0, emptyLines: 0 });
    assert.equal(m.source.key, raw.key);
    assert.equal(m.source.sha256, raw.sha256);
    assert.equal(m.source.fetchRunId, 'fetch-2026-11-20');
    assert.equal(m.loadRunId, 'req-parse-1');
    const parquet = await readCurated(m.table!.key);
    assert.equal(m.table!.sha256, createHash('sha256').update(parquet).digest('hex'));
    assert.equal(m.table!.bytes, parquet.length);
    assert.equal(m.error, undefined);
    assert.ok(typeof m.loadLagSeconds === 'number');

    const db = await openDuckDb();
    try {
      const file = join(dir, buckets.curated, `${m.table!.key}._S3rver_object`);
      const ids = await db.query(`SELECT transaction_id FROM read_parquet('${file}')`);
      assert.deepEqual(ids.map((r) => r.transaction_id), rows.map((r) => BigInt(r[1]!)));
    } finally {
      db.close();
    }

    // Rows per environment; a report's series of completed loads, its connection named for the alarms' WHERE.
    assert.deepEqual(metricPoints(run.lines, 'RowsWritten').map((p) => [p.value, p.dims.report, p.dims.environment, p.dims.service]), [
      [ROWS, undefined, 'test', 'paynet-reports'],
    ]);
    assert.deepEqual(metricPoints(run.lines, 'LoadsCompleted').map((p) => [p.value, p.dims.report, p.dims.connection, p.dims.environment]), [[1, undefined, undefined, 'test']]);
    assert.deepEqual(metricPoints(run.lines, 'RowsRejected'), [], 'no rejected rows: no series');
    assert.equal(metricPoints(run.lines, 'LoadLagSeconds')[0]?.value, m.loadLagSeconds);
    const loaded = run.lines.find((l) => l.message === 'Report loaded');
    assert.equal(loaded?.runId, 'req-parse-1');
    assert.equal(loaded?.window, '2026-11-20T00:00:00/2026-11-21T00:00:00');
    assert.equal(loaded?.sourceKey, raw.key);
    // The dashboard's newest-load table groups these lines by both (lib/constructs/dashboard.ts).
    assert.deepEqual([loaded?.report, loaded?.connection], ['transactions', 'default']);
  });

  it('a batch with one bad message reports only that message; a PDF gets a manifest; keys outside raw/ are ignored', async () => {
    const pdf = await writeReportPdf(REPORT_HEADER, generateTransactions(LOGIN, day('2026-11-19'), 5), {
      title: 'Custom transactions report',
      subtitle: 'test',
      date: new Date(Date.UTC(2026, 10, 19)),
    });
    const raw = await putRaw('2026-11-19', pdf, 'pdf');
    const run = await invoke(eventFixture<SQSEvent>('sqs-batch-one-bad.json'), 'req-parse-batch');
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(run.result, { batchItemFailures: [{ itemIdentifier: '0a6e3f0c-1d2b-4b8e-8f2a-6c1e9d7b5a02' }] });

    const m = await manifest('2026-11-19');
    assert.equal(m.outcome, 'not-parsed');
    assert.equal(m.source.key, raw.key);
    assert.equal(m.source.sha256, raw.sha256);
    assert.equal(m.table, undefined);
    assert.deepEqual(await curatedKeys('tables/transactions/connection=default/dt=2026-11-19/'), []);
    assert.deepEqual(await curatedKeys('rejected/transactions/connection=default/dt=2026-11-19/'), []);
    // The dashboard's newest-load table counts this line as a completed load (lib/constructs/dashboard.ts).
    const kept = run.lines.find((l) => l.message === 'PDF report kept in the raw bucket; it is not parsed');
    assert.equal(kept?.manifestKey, 'manifests/transactions/connection=default/dt=2026-11-19/2026-11-19T00-00-00.json');

    const bad = run.lines.find((l) => l.level === 'ERROR' && l.messageId === '0a6e3f0c-1d2b-4b8e-8f2a-6c1e9d7b5a02');
    assert.match(String((bad?.error as { message?: string } | undefined)?.message), /is not an S3 event notification \(problem with: Records\.0\.s3\.bucket\.name, Records\.0\.s3\.object\)/);
    const ignored = run.lines.find((l) => l.message === 'Ignoring an object outside raw/');
    assert.equal(ignored?.key, 'exports/finance/readme first.txt', 'the key is decoded as S3 encodes it');
  });

  it('s3:TestEvent succeeds without work', async () => {
    const before = await curatedKeys();
    const run = await invoke(eventFixture<SQSEvent>('sqs-s3-test-event.json'), 'req-test-event');
    assert.deepEqual(run.result, { batchItemFailures: [] });
    assert.deepEqual(await curatedKeys(), before);
    assert.ok(run.lines.some((l) => String(l.message).startsWith('s3:TestEvent')));
  });

  it('schema drift: no table file, the raw file kept, a failed manifest, and the message fails (to the DLQ after its retries)', async () => {
    const drifted = writeReportCsv(DRIFTED_HEADER, generateTransactions(LOGIN, day('2026-11-21'), ROWS).map(driftRow), csvOptions);
    const raw = await putRaw('2026-11-21', drifted, 'csv');
    const run = await invoke(objectCreated(raw.key), 'req-drift');
    // Batch size 1: the one message failed, so Powertools fails the invocation (the parse-errors alarm sees it).
    assert.ok(run.error instanceof FullBatchFailureError, String(run.error));
    assert.equal(run.error.recordErrors[0]?.name, 'SchemaDrift');

    const m = await manifest('2026-11-21');
    assert.equal(m.outcome, 'failed');
    assert.equal(m.error?.code, 'SchemaDrift');
    assert.equal(m.error?.retryable, false);
    assert.match(m.error!.message, /Merchant_OID/);
    assert.equal(m.source.key, raw.key);
    assert.deepEqual(await curatedKeys('tables/transactions/connection=default/dt=2026-11-21/'), []);
    assert.deepEqual(await curatedKeys('rejected/transactions/connection=default/dt=2026-11-21/'), []);
    assert.deepEqual(metricPoints(run.lines, 'RowsWritten'), []);
    assert.ok((await openObjectStream({ client: lake.client, bucket: buckets.raw, key: raw.key })).body.destroy(), 'raw file kept');
    const failed = run.lines.find((l) => l.message === 'Load failed: nothing was written to the table');
    assert.equal(failed?.code, 'SchemaDrift');
  });

  it('too many rejected rows: the rejects are kept, no table; a later good file replaces the stale rejects', async () => {
    const rows = generateTransactions(LOGIN, day('2026-11-22'), ROWS);
    const broken = rows.map((r, i) => (i === 7 ? r.map((v, j) => (j === 4 ? '12,5 RUB' : v)) : r));
    const raw = await putRaw('2026-11-22', writeReportCsv(REPORT_HEADER, broken, csvOptions), 'csv');
    const first = await invoke(objectCreated(raw.key), 'req-rejects');
    assert.ok(first.error instanceof FullBatchFailureError);
    let m = await manifest('2026-11-22');
    assert.equal(m.outcome, 'failed');
    assert.equal(m.error?.code, 'TooManyRejectedRows');
    assert.deepEqual(m.rows, { read: ROWS, written: ROWS - 1, rejected: 1, emptyLines: 0 });
    assert.deepEqual(await curatedKeys('tables/transactions/connection=default/dt=2026-11-22/'), []);
    const rejects = (await readCurated('rejected/transactions/connection=default/dt=2026-11-22/2026-11-22T00-00-00.csv')).toString();
    // Line 10, not 9: the physical line the record starts on, and an earlier value spans two lines.
    assert.match(rejects, /^"line","column","reason","record"\r\n"10","Amount","not a decimal: ""12,5 RUB""",/);
    assert.deepEqual(metricPoints(first.lines, 'RowsRejected').map((p) => p.value), [1], 'the rejected-rows alarm sees them');

    await putRaw('2026-11-22', writeReportCsv(REPORT_HEADER, rows, csvOptions), 'csv');
    const second = await invoke(objectCreated(raw.key), 'req-rejects-fixed');
    assert.deepEqual(second.result, { batchItemFailures: [] });
    m = await manifest('2026-11-22');
    assert.equal(m.outcome, 'loaded');
    assert.equal((await readCurated('rejected/transactions/connection=default/dt=2026-11-22/2026-11-22T00-00-00.csv')).toString(), REJECTS_HEADER_ONLY);
    assert.deepEqual(await curatedKeys('tables/transactions/connection=default/dt=2026-11-22/'), ['tables/transactions/connection=default/dt=2026-11-22/2026-11-22T00-00-00.parquet']);
  });

  it('a window far below the same weekday of earlier weeks, with a repeated key: loaded, its findings in the manifest, a metric and a log line naming it', async () => {
    // Three Fridays of 40 rows, then one of 4 whose first row comes twice.
    for (const date of ['2026-10-02', '2026-10-09', '2026-10-16']) {
      await putRaw(date, writeReportCsv(REPORT_HEADER, generateTransactions(LOGIN, day(date), ROWS), csvOptions), 'csv');
      const run = await invoke(objectCreated(rawKey(feedKey('transactions'), day(date), 'csv')), `req-history-${date}`);
      assert.deepEqual(run.result, { batchItemFailures: [] });
      assert.deepEqual(metricPoints(run.lines, 'QualityFindings'), [], 'too little history: nothing flagged, no series');
    }
    const few = generateTransactions(LOGIN, day('2026-10-23'), 4);
    await putRaw('2026-10-23', writeReportCsv(REPORT_HEADER, [...few, few[0]!], csvOptions), 'csv');
    const run = await invoke(objectCreated(rawKey(feedKey('transactions'), day('2026-10-23'), 'csv')), 'req-low');
    assert.deepEqual(run.result, { batchItemFailures: [] }, 'a finding does not fail the message');

    const m = await manifest('2026-10-23');
    assert.equal(m.outcome, 'loaded');
    assert.equal(m.rows?.written, 5);
    assert.deepEqual(
      m.checks?.map((c) => [c.check, c.outcome, c.observed, c.expected]),
      [
        ['volume-rows', 'anomaly', 5, { low: 20, high: 80, median: 40 }],
        ['duplicate-keys', 'anomaly', 1, { low: 0, high: 0 }],
      ],
    );
    assert.equal(m.checks?.[0]?.message, 'volume low: 5 rows, expected 20-80 from 3 of the last 4 Fridays');
    assert.deepEqual(m.checks?.[0]?.history?.map((h) => h.window), ['2026-10-16T00:00:00', '2026-10-09T00:00:00', '2026-10-02T00:00:00']);

    assert.deepEqual(metricPoints(run.lines, 'QualityFindings').map((p) => [p.value, p.dims.report, p.dims.environment, p.dims.service]), [
      [2, 'transactions', 'test', 'paynet-reports'],
    ]);
    assert.deepEqual(metricPoints(run.lines, 'DuplicateKeys').map((p) => p.value), [1]);
    const finding = run.lines.find((l) => l.message === FINDING_LOG_MESSAGE);
    assert.equal(finding?.level, 'WARN');
    assert.equal(finding?.report, 'transactions');
    assert.equal(finding?.window, '2026-10-23T00:00:00/2026-10-24T00:00:00');
    assert.match(String(finding?.finding), /^volume low: 5 rows, expected 20-80 .*; duplicate keys: 1 row\(s\) repeat a transaction_id/);

    // Loading the window again judges it again, against the same history: never against itself.
    const again = await invoke(objectCreated(rawKey(feedKey('transactions'), day('2026-10-23'), 'csv')), 'req-low-again');
    assert.deepEqual(metricPoints(again.lines, 'QualityFindings').map((p) => p.value), [2]);
    assert.deepEqual((await manifest('2026-10-23')).checks?.[0]?.history?.length, 3);
  });

  it('a key under raw/ that is not the layout fails its message with a ConfigurationError', async () => {
    const run = await invoke(objectCreated('raw/transactions/manual-upload.csv'), 'req-odd-key');
    assert.ok(run.error instanceof FullBatchFailureError);
    assert.equal(run.error.recordErrors[0]?.name, 'ConfigurationError');
    assert.match(run.error.recordErrors[0]!.message, /does not follow the layout/);
  });
});
