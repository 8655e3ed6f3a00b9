import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { reportSources } from '../../functions/core/definitions/catalog-files.js';
import { bucketNames } from '../../functions/core/naming.js';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { SIGNATURE_METHODS } from '../../functions/core/gateway/signature-methods.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { openObjectStream } from '../../functions/aws/s3-streams.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { LOCAL_LAKE_CREDENTIALS, startLocalLake } from '../../local/lake/local-lake.js';
import { startLocalPipeline, type LocalPipeline, type LocalPipelineOptions } from '../../local/pipeline/pipeline.js';
import { runLocal } from '../../local/cli/run.js';
import { generateTransactions, HARD_CASE_COUNT } from '../../local/simulator/index.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * The whole chain on a real S3 protocol (s3rver on loopback) with the simulator as the gateway, through
 * local/pipeline/pipeline.ts: fetch -> raw object -> ObjectCreated -> SQS-shaped message -> parse -> Parquet ->
 * DuckDB view. The oracle is the simulator's own generateTransactions for the same login and window.
 */

const ROWS_PER_DAY = 300;
const day = (date: string) => windowAt(parseLocalDateTime(date), parseWindowSize('P1D'));
const lakes: string[] = [];
const newLakeDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pipeline-'));
  lakes.push(dir);
  return dir;
};
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

async function withPipeline<T>(options: Partial<LocalPipelineOptions>, fn: (p: LocalPipeline) => Promise<T>): Promise<T> {
  const pipeline = await startLocalPipeline({ lakeDir: await newLakeDir(), simulator: { rowsPerDay: ROWS_PER_DAY }, ...options });
  try {
    return await fn(pipeline);
  } finally {
    await pipeline.close();
  }
}

const keys = async (client: S3Client, bucket: string, prefix: string) =>
  ((await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!).sort();
const read = async (client: S3Client, bucket: string, key: string) => {
  const opened = await openObjectStream({ client, bucket, key });
  const chunks: Buffer[] = [];
  for await (const c of opened.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};
const manifestOf = async (p: LocalPipeline, date: string, reportId = 'transactions') =>
  JSON.parse((await read(p.s3, p.buckets.curated, `manifests/${reportId}/connection=default/dt=${date}/${date}T00-00-00.json`)).toString()) as LoadManifest;

/** "20.11.2026" -> "2026-11-20": the report's date pattern to DuckDB's DATE text. */
const isoDate = (ddmmyyyy: string) => ddmmyyyy.split('.').reverse().join('-');

/** Every value of every row of the view equals the simulator's row, by type. */
async function assertTableEqualsSimulator(p: LocalPipeline, date: string) {
  const expected = generateTransactions((await p.connection('default')).login, day(date), ROWS_PER_DAY).sort((a, b) => (BigInt(a[1]!) < BigInt(b[1]!) ? -1 : 1));
  assert.ok(expected.length >= HARD_CASE_COUNT, 'every hard case is in the window');
  const db = await p.openDatabase();
  try {
    const result = await db.query(`SELECT * FROM transactions WHERE dt = '${date}' ORDER BY transaction_id`);
    assert.deepEqual(
      result.columns.map((c) => `${c.name} ${c.type}`),
      [
        'merchant_name VARCHAR',
        'transaction_id BIGINT',
        'merchant_oid VARCHAR',
        'created_date TIMESTAMP',
        'amount DECIMAL(18,3)',
        'currency VARCHAR',
        'transaction_type VARCHAR',
        'order_description VARCHAR',
        'date_of_report DATE',
        'connection VARCHAR',
        'dt VARCHAR',
      ],
    );
    assert.equal(result.rows.length, expected.length);
    result.rows.forEach((row, i) => {
      const [merchant, id, oid, created, amount, currency, type, description, reportDate, connection, dt] = row;
      const want = expected[i]!;
      const where = `row ${i} (id ${want[1]})`;
      assert.equal(merchant, want[0], where); // strings byte for byte: «», №, €, quotes, commas
      assert.equal(typeof id, 'string', 'BIGINT arrives as exact text, never a float');
      assert.equal(BigInt(id as string), BigInt(want[1]!), where); // ids above 2^53 and 2^62 included
      assert.equal(oid, want[2], where);
      assert.equal(created, want[3], where); // TIMESTAMP: the gateway's wall clock, unshifted
      assert.equal(amount, want[4], where); // DECIMAL(18,3) text: exact, 3 fractional digits, sign kept
      assert.equal(currency, want[5], where);
      assert.equal(type, want[6], where);
      assert.equal(description, want[7] === '' ? null : want[7], where); // nullable: empty is NULL; CR/LF kept
      assert.equal(reportDate, isoDate(want[8]!), where);
      assert.equal(connection, 'default', where);
      assert.equal(dt, date, where);
    });
  } finally {
    db.close();
  }
}

describe('the local pipeline end to end (s3rver + simulator)', () => {
  after(async () => {
    for (const dir of lakes) await rm(dir, { recursive: true, force: true });
  });

  for (const method of SIGNATURE_METHODS) {
    it(`${method}: a window lands as Parquet equal to what the simulator sent; a re-run leaves one copy of each row`, async () => {
      await withPipeline({ signatureMethod: method }, async (p) => {
        assert.equal((await p.connection('default')).signatureMethod, method);
        const first = await p.runWindow(feedKey('transactions'), day('2026-11-20'));
        assert.equal(first.error, undefined, JSON.stringify(first.error));
        assert.equal(first.status, 'loaded');
        assert.equal(first.rowsRead, ROWS_PER_DAY);
        assert.equal(first.rowsWritten, ROWS_PER_DAY);
        assert.equal(first.rowsRejected, 0);
        assert.equal(first.fetched?.kind, 'csv');
        assert.equal(first.manifest?.source.sha256, first.fetched?.sha256, 'the parse read exactly what the fetch stored');
        assert.ok(first.parquetBytes > 0 && first.bytes > first.parquetBytes);
        await assertTableEqualsSimulator(p, '2026-11-20');

        const again = await p.runWindow(feedKey('transactions'), day('2026-11-20'));
        assert.equal(again.status, 'loaded');
        await p.runWindow(feedKey('transactions'), day('2026-11-21'));
        const db = await p.openDatabase();
        try {
          const counts = await db.query('SELECT dt, count(*) AS n, count(DISTINCT transaction_id) AS ids FROM transactions GROUP BY dt ORDER BY dt');
          assert.deepEqual(counts.rows, [
            ['2026-11-20', String(ROWS_PER_DAY), String(ROWS_PER_DAY)],
            ['2026-11-21', String(ROWS_PER_DAY), String(ROWS_PER_DAY)],
          ]);
        } finally {
          db.close();
        }
        assert.deepEqual(await keys(p.s3, p.buckets.raw, 'raw/transactions/connection=default/dt=2026-11-20/'), ['raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv']);
        assert.deepEqual(await keys(p.s3, p.buckets.curated, 'tables/transactions/connection=default/dt=2026-11-20/'), ['tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet']);
      });
    });
  }

  it('a PDF report keeps the raw PDF and a manifest, and writes no table file', async () => {
    const shipped = transactionsJson as { id: string; bodyTemplate: Record<string, unknown> };
    const pdfVariant = { ...shipped, id: 'transactions_pdf', format: 'PDF', bodyTemplate: { ...shipped.bodyTemplate, reportFormat: 'PDF' } };
    const catalog = ReportCatalog.fromSources([...reportSources(), { file: 'test: PDF variant', raw: pdfVariant }]);
    await withPipeline({ catalog }, async (p) => {
      const outcome = await p.runWindow(feedKey('transactions_pdf'), day('2026-11-20'));
      assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
      assert.equal(outcome.status, 'not-parsed');
      assert.equal(outcome.fetched?.kind, 'pdf');
      const pdf = await read(p.s3, p.buckets.raw, 'raw/transactions_pdf/connection=default/dt=2026-11-20/2026-11-20T00-00-00.pdf');
      assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
      const m = await manifestOf(p, '2026-11-20', 'transactions_pdf');
      assert.equal(m.outcome, 'not-parsed');
      assert.equal(m.source.sha256, outcome.fetched?.sha256);
      assert.deepEqual(await keys(p.s3, p.buckets.curated, 'tables/'), []);
      assert.deepEqual(await keys(p.s3, p.buckets.curated, 'rejected/'), []);
    });
  });

  it('schema drift leaves the raw file and a failed manifest, and no table file', async () => {
    await withPipeline({ simulator: { rowsPerDay: ROWS_PER_DAY, fault: { mode: 'schemaDrift' } } }, async (p) => {
      const outcome = await p.runWindow(feedKey('transactions'), day('2026-11-20'));
      assert.equal(outcome.status, 'failed');
      assert.deepEqual([outcome.error?.stage, outcome.error?.code], ['parse', 'SchemaDrift']);
      assert.match(outcome.error!.message, /Merchant_Order_ID/);
      assert.deepEqual(await keys(p.s3, p.buckets.raw, 'raw/'), ['raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv']);
      const m = await manifestOf(p, '2026-11-20');
      assert.equal(m.outcome, 'failed');
      assert.equal(m.error?.code, 'SchemaDrift');
      assert.deepEqual(await keys(p.s3, p.buckets.curated, 'tables/'), []);
    });
  });

  it('a refused login fails the window at the fetch, with its typed code, and stores nothing', async () => {
    await withPipeline({ secret: { login: 'sim-merchant-hmac', controlKey: 'not-the-key' } }, async (p) => {
      const outcome = await p.runWindow(feedKey('transactions'), day('2026-11-20'));
      assert.equal(outcome.status, 'failed');
      assert.deepEqual([outcome.error?.stage, outcome.error?.code], ['fetch', 'AuthenticationRefused']);
      // It names the connection, the login, the reports it stops and where the right value goes; never the key.
      assert.match(outcome.error!.message, /connection "default" refused to authorise login "sim-merchant-hmac" signing with HMAC-SHA1/);
      assert.match(outcome.error!.message, /Every report over this connection stops until it is fixed: "transactions"\..*into the connection's secret, the embedded simulator's test account\./);
      assert.doesNotMatch(outcome.error!.message, /not-the-key/);
      assert.deepEqual(await keys(p.s3, p.buckets.raw, ''), []);
    });
  });

  describe('with an external S3-compatible endpoint', () => {
    let storeDir: string;
    let store: Awaited<ReturnType<typeof startLocalLake>>;
    before(async () => {
      storeDir = await newLakeDir();
      // Another s3rver plays the external store: this process gets none of its events.
      store = await startLocalLake({ dir: storeDir, buckets: bucketNames('other') });
    });
    after(async () => store.close());

    it('creates the buckets, drives the parse step from the keys the fetch wrote, and queries a local copy', async () => {
      const lakeDir = await newLakeDir();
      await withPipeline({ lakeDir, s3Endpoint: store.endpoint, s3Credentials: LOCAL_LAKE_CREDENTIALS }, async (p) => {
        assert.equal(p.lake, undefined);
        const outcome = await p.runWindow(feedKey('transactions'), day('2026-11-20'));
        assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
        assert.equal(outcome.status, 'loaded');
        assert.deepEqual(await keys(store.client, 'paynet-reports-local-curated', 'tables/'), ['tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet']);
        assert.equal(await p.queryLakeDir(), join(lakeDir, 's3-cache'));
        await assertTableEqualsSimulator(p, '2026-11-20');
      });
    });
  });

  it('npm start (runLocal) prints each window, the saved queries\' results and a summary', async () => {
    const lines: string[] = [];
    const summary = await runLocal({ report: 'transactions', from: '2026-11-19', to: '2026-11-21', lake: await newLakeDir() }, (l) => lines.push(l));
    const out = lines.join('\n');
    assert.equal(summary.failedWindows, 0);
    assert.equal(summary.failedQueries, 0);
    assert.match(out, /^Connection "default": http:\/\/127\.0\.0\.1:\d+\/\S+ \(embedded simulator\), login "sim-default-hmac" signing with HMAC-SHA1, at most 2 request\(s\) at a time\.$/m);
    assert.match(out, /^ {2}2026-11-19 {2}CSV {5}loaded +250 +0 /m);
    assert.match(out, /^ {2}2026-11-20 {2}CSV {5}loaded +250 +0 /m);
    for (const name of ['daily_totals', 'latest_load_per_day', 'refunds_and_negative_amounts']) assert.match(out, new RegExp(`^── ${name}: `, 'm'));
    // latest_load_per_day has no date filter: both windows show whatever today is.
    assert.match(out, /^2026-11-20 +250 +2026-11-20 \d\d:\d\d:\d\d +2026-11-20 \d\d:\d\d:\d\d +2026-11-20$/m);
    assert.match(out, /^2026-11-19 +250 /m);
    assert.match(out, /Done: 2 window\(s\) asked: 2 loaded, 0 failed, 0 not tried; 500 rows fetched, 500 written, 0 rejected; [\d,]+ raw bytes; [\d.]+ s\.$/);
  });
});
