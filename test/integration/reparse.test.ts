import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { bucketNames } from '../../functions/core/naming.js';
import { REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';
import { headerLine } from '../../functions/core/gateway/answer.js';
import { rawKey, tableKey } from '../../functions/core/lake/s3-keys.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { runQueryCommand, type QueryOutput } from '../../local/cli/query.js';
import { reparseCommand, runReparseCommand } from '../../local/cli/reparse.js';
import { runLocal } from '../../local/cli/run.js';
import { LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { startLocalLake } from '../../local/lake/local-lake.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * `reports reparse` on the local lake, tried as a new user would: a gateway that is not this project's (a
 * hand-written server) serves three daily windows, `npm start` loads them, then the definition changes (amount
 * decimal(18,3) -> decimal(18,4), merchant_oid renamed order_ref). The lake's readers say the three partitions are
 * stale and how to fix them, DuckDB reads them as Athena would, and the reparse rebuilds them from the raw files
 * without one gateway request, every row reading back exactly under the new schema. Then a raw file whose header no
 * longer matches fails with SchemaDrift while the other windows go on.
 */

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const DAYS = ['2026-11-20', '2026-11-21', '2026-11-22'];
const ROWS = 40;
const buckets = bucketNames(LOCAL_ENVIRONMENT);
const fixture = JSON.parse(readFileSync(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8')) as { columns: Array<Record<string, unknown>> };
const headers = fixture.columns.map((c) => c.header as string);

/** One window's rows, different per date: 64-bit ids, three-decimal amounts of both signs, text with the delimiter and quotes. */
function rowsOf(date: string): string[][] {
  const [y, m, d] = date.split('-');
  return Array.from({ length: ROWS }, (_, i) => [
    `Shop ${i}, "quoted" «№${i}»`,
    String(9_007_199_254_740_993n + BigInt(Number(d) * 1000 + i)),
    `oid-${date}-${i}`,
    `${date} ${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07`,
    `${i % 3 === 1 ? '-' : ''}${i * 37}.${String((i * 7) % 1000).padStart(3, '0')}`,
    i % 2 ? 'EUR' : 'RUB',
    i % 5 === 0 ? 'REFUND' : 'SALE',
    i % 4 === 0 ? '' : `order ${i}\r\nsecond line`,
    `${d}.${m}.${y}`,
  ]);
}
const csvOf = (header: readonly string[], rows: string[][]) => [header, ...rows].map((r) => headerLine(r, ',')).join('\r\n') + '\r\n';

describe('reports reparse on the local lake, as a new user would try it', () => {
  let dir: string;
  let lakeDir: string;
  let catalogFile: string;
  let gatewayUrl: string;
  let secretFile: string;
  let server: http.Server;
  let requests = 0;

  /** Rewrites the definition the commands load (PAYNET_REPORTS_DIR points at this copy of the fixture). */
  const define = async (change: (columns: Array<Record<string, unknown>>) => void) => {
    const definition = JSON.parse(await readFile(catalogFile, 'utf8')) as { columns: Array<Record<string, unknown>> };
    change(definition.columns);
    await writeFile(catalogFile, JSON.stringify(definition, null, 2));
  };
  const query = async (sql: string, json = true) => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const io: QueryOutput = { out: (t) => void stdout.push(...t.split('\n')), err: (l) => void stderr.push(...l.split('\n')) };
    const code = await runQueryCommand(sql, { lake: lakeDir, json }, io);
    return { code, stdout, stderr, rows: json && code === 0 ? stdout.map((l) => JSON.parse(l) as Record<string, unknown>) : [] };
  };
  const reparse = async (from: string, to: string) => {
    const lines: string[] = [];
    const summary = await runReparseCommand({ report: 'transactions', from, to, lake: lakeDir, tty: false }, (l) => lines.push(l));
    return { summary, text: lines.join('\n') };
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reparse-'));
    lakeDir = join(dir, 'lake');
    await mkdir(join(dir, 'reports'));
    await mkdir(join(dir, 'queries'));
    catalogFile = join(dir, 'reports', 'transactions.json');
    await writeFile(catalogFile, JSON.stringify(fixture, null, 2));
    process.env[REPORTS_DIR_VARIABLE] = join(dir, 'reports');
    process.env.PAYNET_QUERIES_DIR = join(dir, 'queries');

    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        requests++;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { inputReportParameters: Array<{ name: string; value: string }> };
        const date = body.inputReportParameters.find((p) => p.name === 'dateFrom')!.value.slice(0, 10);
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(csvOf(headers, rowsOf(date)));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    gatewayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/reports/services/v2/rpt-engine`;
    secretFile = join(dir, 'secret.json');
    await writeFile(secretFile, JSON.stringify({ login: 'foreign-merchant', controlKey: 'foreign-key' }));
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('three windows loaded, the definition changed: the readers say three partitions are stale and DuckDB reads them as Athena would', async () => {
    const lines: string[] = [];
    const loaded = await runLocal({ gatewayUrl, secretFile, from: DAYS[0], to: '2026-11-23', lake: lakeDir }, (l) => lines.push(l));
    assert.equal(loaded.loaded, 3, lines.join('\n'));
    assert.equal(requests, 3);
    assert.ok(!lines.some((l) => /Stale/.test(l)), 'nothing is stale while the definition is the one the windows were loaded with');

    await define((columns) => {
      columns.find((c) => c.name === 'amount')!.type = 'decimal(18,4)';
      columns.find((c) => c.name === 'merchant_oid')!.name = 'order_ref';
    });
    const command = `npm run reports -- reparse --report transactions --from 2026-11-20 --to 2026-11-23 --lake ${lakeDir}`;

    // npm run query: the notice on stderr, before any result.
    const counted = await query('SELECT count(*) AS n, count(order_ref) AS refs FROM transactions');
    assert.equal(counted.code, 0, counted.stderr.join('\n'));
    assert.deepEqual(counted.rows, [{ n: String(3 * ROWS), refs: '0' }], 'the renamed column reads NULL in the older files, as in Athena; a count still runs');
    const notice = counted.stderr.join('\n');
    assert.match(notice, /^Stale: 3 partitions of "transactions" were written under another definition than the current one/m);
    assert.match(notice, /3 windows \(2026-11-20, 2026-11-21, 2026-11-22\)/);
    assert.match(notice, /column merchant_oid was renamed order_ref: order_ref reads NULL there/);
    assert.match(notice, /column amount was retyped decimal\(18,3\) -> decimal\(18,4\): .*every query reading amount there fails \(HIVE_BAD_DATA\)/);
    assert.ok(notice.includes(command), notice);

    // A query that reads the retyped column in those files fails, as Athena's would, naming them and the fix.
    const summed = await query('SELECT sum(amount) FROM transactions');
    assert.equal(summed.code, 1);
    const failure = summed.stderr.join('\n');
    assert.match(failure, /Column amount of "transactions" is INT64 DECIMAL\(18,3\) in the Parquet files of 3 window\(s\) \(2026-11-20, 2026-11-21, 2026-11-22\), but the definition now says decimal\(18,4\)/);
    assert.ok(failure.includes(command), failure);

    // npm start for the next day: it loads under the new definition and says the same of the three before it.
    const next: string[] = [];
    const run = await runLocal({ gatewayUrl, secretFile, from: '2026-11-23', to: '2026-11-24', lake: lakeDir }, (l) => next.push(l));
    assert.equal(run.loaded, 1, next.join('\n'));
    const said = next.join('\n');
    assert.match(said, /^Stale: 3 partitions of "transactions"/m);
    assert.ok(said.includes(command), said);
    const newest = await query("SELECT sum(amount) AS total, count(order_ref) AS refs FROM transactions WHERE dt = '2026-11-23'");
    assert.equal(newest.code, 0, 'a query of the new partition alone runs, as in Athena');
    assert.equal(newest.rows[0]!.refs, String(ROWS));
  });

  it('reparse rebuilds the three windows from their raw files without a gateway request; every row reads back exactly', async () => {
    const before = requests;
    const { summary, text } = await reparse('2026-11-20', '2026-11-23');
    assert.deepEqual([summary.done, summary.failed.length, summary.skipped], [3, 0, 0], text);
    assert.equal(requests, before, 'not one request to the gateway');
    assert.match(text, /^Reparse of "transactions": 3 P1D window\(s\) 2026-11-20 \.\. 2026-11-22 \(3 with a raw file\), 2 at a time, locally on lake .*; the gateway is not called\.$/m);
    assert.match(text, /^Reparse of "transactions": 3 window\(s\) in [\d.]+ s: 3 rebuilt, 0 failed, 0 without a raw file; 120 rows written, 0 rejected\. No gateway request was made\.$/m);

    const after = await query('SELECT count(*) AS n FROM transactions');
    assert.deepEqual(after.stderr, [], 'nothing is stale any more');
    for (const date of DAYS) {
      const { code, rows, stderr } = await query(`SELECT * FROM transactions WHERE dt = '${date}' ORDER BY transaction_id`);
      assert.equal(code, 0, stderr.join('\n'));
      const sent = rowsOf(date);
      assert.equal(rows.length, sent.length);
      rows.forEach((row, i) => {
        const [merchant, id, oid, created, amount, currency, type, description, reportDate] = sent[i]!;
        assert.deepEqual(row, {
          merchant_name: merchant,
          transaction_id: id,
          order_ref: oid,
          created_date: created,
          // decimal(18,4): the same number, with the fourth place the new scale gives it.
          amount: `${amount}0`,
          currency,
          transaction_type: type,
          order_description: description === '' ? null : description,
          date_of_report: date,
          connection: 'default',
          dt: date,
        }, `${date} row ${i}`);
        assert.equal(reportDate!.split('.').reverse().join('-'), date);
      });
    }
  });

  it('is idempotent, and a window without a raw file is reported as such, not as a failure', async () => {
    const snapshot = async () => (await query('SELECT * FROM transactions ORDER BY dt, transaction_id')).stdout;
    const before = await snapshot();
    const { summary, text } = await reparse('2026-11-20', '2026-11-26');
    assert.deepEqual([summary.done, summary.failed.length, summary.skipped], [4, 0, 2], text);
    assert.match(text, /^ {2}2026-11-24 +skipped +\d+ ms {2}no raw file at raw\/transactions\/connection=default\/dt=2026-11-24\/2026-11-24T00-00-00\.csv: nothing to rebuild$/m);
    assert.match(text, /Windows without a raw file .*:\n {2}2026-11-24, 2026-11-25$/);
    assert.deepEqual(await snapshot(), before, 'the same rows, once each');
    assert.equal(await reparseExitCode('2026-11-24', '2026-11-25'), 0);
  });

  it('a raw file that no longer parses fails with SchemaDrift and keeps its table file; the other windows go on, and the readers still say it is stale', async () => {
    // The provider's header, as it would be after a change on their side; the definition moves on meanwhile.
    const drifted = csvOf(headers.map((h) => (h === 'Merchant_OID' ? 'Order_Reference' : h)), rowsOf('2026-11-21'));
    const lake = await startLocalLake({ dir: lakeDir, buckets });
    try {
      const key = rawKey(feedKey('transactions'), windowAt(parseLocalDateTime('2026-11-21'), parseWindowSize('P1D')), 'CSV');
      await lake.client.send(new PutObjectCommand({ Bucket: buckets.raw, Key: key, Body: drifted, ContentType: 'text/csv' }));
    } finally {
      await lake.close();
    }
    await define((columns) => {
      columns.find((c) => c.name === 'order_description')!.name = 'description';
    });
    const tableFile = join(lakeDir, buckets.curated, `${tableKey(feedKey('transactions'), windowAt(parseLocalDateTime('2026-11-21'), parseWindowSize('P1D')))}._S3rver_object`);
    const tableBefore = await readFile(tableFile);

    const { summary, text } = await reparse('2026-11-20', '2026-11-24');
    assert.deepEqual([summary.done, summary.failed.length], [3, 1], text);
    assert.equal(summary.failed[0]!.code, 'SchemaDrift');
    assert.match(text, /Failed windows .*\n {2}2026-11-21 {2}SchemaDrift: The header row of report "transactions" differs from its definition: missing "Merchant_OID"; extra "Order_Reference"/);
    assert.deepEqual(await readFile(tableFile), tableBefore, 'the table file of the failed window is untouched');

    const { stderr } = await query("SELECT count(*) FROM transactions WHERE dt = '2026-11-20'");
    const notice = stderr.join('\n');
    assert.match(notice, /^Stale: 1 partition of "transactions"/m);
    assert.match(notice, /column order_description was renamed description/);
    assert.match(notice, /1 window of them \(2026-11-21\) failed its latest load \(SchemaDrift\): the table file there is the older load's; a raw file whose header no longer matches the definition cannot be reparsed/);
    assert.match(notice, /reparse --report transactions --from 2026-11-21 --to 2026-11-22 --lake /);
  });

  const reparseExitCode = async (from: string, to: string) => {
    const log = console.log;
    console.log = () => undefined;
    try {
      return await reparseCommand({ report: 'transactions', from, to, lake: lakeDir, tty: false });
    } finally {
      console.log = log;
    }
  };
});
