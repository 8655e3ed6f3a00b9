import { FIXTURE_QUERIES_DIR } from '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { bucketNames } from '../../functions/core/naming.js';
import { parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { openLakeDatabase } from '../../local/duckdb/duckdb.js';
import { LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { startLocalPipeline, type WindowOutcome } from '../../local/pipeline/pipeline.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { QUERIES_DIR_VARIABLE } from '../../lib/saved-queries/saved-queries.js';
import { runQueryCommand, type QueryOutput } from '../../local/cli/query.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * `reports query` over a lake the real local pipeline filled (simulator -> fetch -> s3rver -> parse ->
 * Parquet on disk), read back through the per-report views: types as Athena has them, values exact.
 */

const report = loadCatalog().get('transactions');
const day = (d: number) => windowAt({ year: 2026, month: 11, day: d, hour: 0, minute: 0, second: 0 }, parseWindowSize('P1D'));

/** Captures what the command prints, stdout and stderr apart. */
function capture(): QueryOutput & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (text) => void stdout.push(...text.split('\n')), err: (l) => stderr.push(l) };
}

/** The raw CSV the gateway sent for a window, as s3rver keeps it on disk: the expected values, record by record. */
async function rawRecords(lakeDir: string, dt: string): Promise<Array<Record<string, string>>> {
  const dir = join(lakeDir, bucketNames(LOCAL_ENVIRONMENT).raw, 'raw', report.id, 'connection=default', `dt=${dt}`);
  const file = (await readdir(dir)).find((f) => f.endsWith('.csv._S3rver_object'))!;
  return parse(await readFile(join(dir, file)), { columns: true, bom: true });
}

describe('reports query over the local lake', () => {
  let lakeDir: string;
  let emptyDir: string;
  let outcomes: WindowOutcome[];

  before(async () => {
    lakeDir = await mkdtemp(join(tmpdir(), 'query-lake-'));
    emptyDir = join(lakeDir, 'nothing-here');
    const pipeline = await startLocalPipeline({ lakeDir, simulator: { rowsPerDay: 40 } });
    try {
      outcomes = [await pipeline.runWindow(feedKey(report.id), day(20)), await pipeline.runWindow(feedKey(report.id), day(21))];
    } finally {
      await pipeline.close();
    }
    assert.deepEqual(outcomes.map((o) => o.status), ['loaded', 'loaded'], JSON.stringify(outcomes.map((o) => o.error)));
  });
  after(async () => rm(lakeDir, { recursive: true, force: true }));

  it('has one view per report, typed as the Glue table, with dt from the partition directories', async () => {
    const db = await openLakeDatabase({ lakeDir });
    try {
      // The report's view, and the loads view over its manifests.
      assert.deepEqual(db.views.map((v) => [v.name, v.files]), [['transactions', 2], ['loads', 2]]);
      const described = await db.query('DESCRIBE transactions');
      assert.deepEqual(Object.fromEntries(described.rows.map((r) => [r[0], r[1]])), {
        merchant_name: 'VARCHAR',
        transaction_id: 'BIGINT',
        merchant_oid: 'VARCHAR',
        created_date: 'TIMESTAMP',
        amount: 'DECIMAL(18,3)',
        currency: 'VARCHAR',
        transaction_type: 'VARCHAR',
        order_description: 'VARCHAR',
        date_of_report: 'DATE',
        connection: 'VARCHAR',
        dt: 'VARCHAR',
      });
      const perDay = await db.query('SELECT dt, count(*) AS n FROM transactions GROUP BY dt ORDER BY dt');
      assert.deepEqual(perDay.rows, [
        ['2026-11-20', String(outcomes[0]!.rowsWritten)],
        ['2026-11-21', String(outcomes[1]!.rowsWritten)],
      ]);
    } finally {
      db.close();
    }
  });

  it('--json prints every value exactly as the gateway sent it: bigint and decimal as strings', async () => {
    const io = capture();
    const code = await runQueryCommand("SELECT * FROM transactions WHERE dt = '2026-11-20' ORDER BY transaction_id", { lake: lakeDir, json: true }, io);
    assert.equal(code, 0);
    const rows = io.stdout.map((l) => JSON.parse(l) as Record<string, unknown>);
    const sent = await rawRecords(lakeDir, '2026-11-20');
    assert.equal(rows.length, sent.length);
    const byId = new Map(sent.map((r) => [r.Transaction_id!, r]));
    for (const row of rows) {
      const csv = byId.get(row.transaction_id as string);
      assert.ok(csv, `transaction ${String(row.transaction_id)} was sent`);
      assert.equal(typeof row.transaction_id, 'string');
      assert.equal(row.amount, csv.Amount, 'decimal(18,3) text, digit for digit');
      assert.equal(row.created_date, csv.Created_date, 'the wall clock as sent (yyyy-MM-dd HH:mm:ss)');
      const [dd, mm, yyyy] = csv.Date_of_report!.split('.');
      assert.equal(row.date_of_report, `${yyyy}-${mm}-${dd}`);
      assert.equal(row.order_description, csv.Order_description === '' ? null : csv.Order_description);
      assert.equal(row.dt, '2026-11-20');
    }
  });

  it('prints an aligned table with numbers right-aligned and a row count; sums stay decimal', async () => {
    const io = capture();
    const sql = 'SELECT dt, count(*) AS transactions, sum(amount) AS total FROM transactions GROUP BY dt ORDER BY dt';
    assert.equal(await runQueryCommand(sql, { lake: lakeDir }, io), 0);
    const lines = io.stdout.join('\n').split('\n');
    assert.match(lines[0]!, /^dt +transactions +total$/);
    assert.match(lines[2]!, /^2026-11-20 +\d+ +-?\d+\.\d{3}$/, 'a DECIMAL sum keeps its three places');
    assert.equal(lines.at(-1), '(2 rows)');
    // Right-aligned: the numbers end where their header ends.
    assert.equal(lines[2]!.length, lines[0]!.length);
    assert.deepEqual(io.stderr, []);
  });

  it('runs every saved query of the report (test/fixtures/queries/transactions/*.sql) as Athena would get it', async () => {
    const dir = join(FIXTURE_QUERIES_DIR, 'transactions');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.sql'));
    assert.ok(files.length > 0);
    for (const file of files) {
      const io = capture();
      assert.equal(await runQueryCommand(undefined, { lake: lakeDir, file: join(dir, file) }, io), 0, `${file}: ${io.stderr.join('\n')}`);
    }
  });

  it('on an empty lake: an empty view with the same columns and types, and a note instead of a glob error', async () => {
    const io = capture();
    assert.equal(await runQueryCommand('SELECT count(*) AS n, sum(amount) AS total FROM transactions', { lake: emptyDir, json: true }, io), 0);
    assert.deepEqual(io.stdout, ['{"n":"0","total":null}']);
    assert.match(io.stderr.join('\n'), /no lake at .*nothing-here/);

    const [full, empty] = await Promise.all([openLakeDatabase({ lakeDir }), openLakeDatabase({ lakeDir: emptyDir })]);
    try {
      assert.equal(empty.views[0]!.files, 0);
      assert.deepEqual((await empty.query('DESCRIBE transactions')).rows, (await full.query('DESCRIBE transactions')).rows);
    } finally {
      full.close();
      empty.close();
    }

    const listed = capture();
    assert.equal(await runQueryCommand(undefined, { lake: emptyDir, list: true }, listed), 0);
    assert.match(listed.stdout[0]!, /^transactions \(0 files\): merchant_name VARCHAR, transaction_id BIGINT, .*amount DECIMAL\(18,3\).*dt VARCHAR$/);
  });

  it('bad SQL: DuckDB\'s message on stderr and exit code 1, from the command line too', async () => {
    const io = capture();
    assert.equal(await runQueryCommand('SELECT nope FROM transactions', { lake: lakeDir }, io), 1);
    assert.match(io.stderr.join('\n'), /The query failed: Binder Error: .*"nope"/);
    assert.deepEqual(io.stdout, []);

    const cli = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/reports.ts', 'query', '--lake', lakeDir, 'SELEC 1']).then(
      () => assert.fail('exit code 0'),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /Parser Error: syntax error at or near "SELEC"/);
    assert.equal(cli.stdout, '');
  });

  it('--file of a saved query (under the queries root) that Athena (Trino) cannot parse: refused before DuckDB runs it; elsewhere DuckDB syntax is fine', async () => {
    const queries = join(lakeDir, 'queries');
    await mkdir(join(queries, 'transactions'), { recursive: true });
    const text = '\n-- Amounts as text.\nSELECT dt,\n       amount::varchar AS amount_text\nFROM transactions\nLIMIT 1\n';
    const saved = join(queries, 'transactions', 'as_text.sql');
    const scratch = join(lakeDir, 'scratch.sql');
    await writeFile(saved, text);
    await writeFile(scratch, text);
    const root = process.env[QUERIES_DIR_VARIABLE];
    process.env[QUERIES_DIR_VARIABLE] = queries;
    try {
      const io = capture();
      await assert.rejects(
        runQueryCommand(undefined, { lake: lakeDir, file: saved }, io),
        (e: unknown) => e instanceof ConfigurationError && e.message.startsWith(`${saved}:4:14: Athena (Trino) cannot parse this saved query: ':'`),
      );
      assert.deepEqual([io.stdout, io.stderr], [[], []], 'DuckDB did not run it');

      const local = capture();
      assert.equal(await runQueryCommand(undefined, { lake: lakeDir, file: scratch }, local), 0, local.stderr.join('\n'));
      assert.match(local.stdout.join('\n'), /^dt +amount_text\n/, 'a file outside the queries root is not published: DuckDB runs it');

      const cli = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/reports.ts', 'query', '--lake', lakeDir, '--file', saved]).then(
        () => assert.fail('exit code 0'),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      assert.equal(cli.code, 1);
      assert.equal(cli.stderr.trim().split('\n')[0], `ConfigurationError: ${saved}:4:14: Athena (Trino) cannot parse this saved query: ':' is not valid at this position, expecting an existing column or a keyword. Write it in SQL both DuckDB and Trino accept (for example CAST(x AS varchar) instead of x::varchar).`);
      assert.equal(cli.stdout, '');
    } finally {
      process.env[QUERIES_DIR_VARIABLE] = root;
    }
  });
});
