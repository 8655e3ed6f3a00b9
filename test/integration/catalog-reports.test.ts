import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { parquetMetadata } from 'hyparquet';
import { readReportSources, REPORTS_DIR } from '../../functions/core/definitions/catalog-files.js';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { glueColumns } from '../../functions/core/definitions/table-schema.js';
import { compileBooleanTokens, compilePattern, parseBoolean, parseDate, parseDecimal, parseTimestamp } from '../../functions/core/csv/value-parsers.js';
import { parseLocalDateTime, parseWindowSize, windowAt, type ReportWindow } from '../../functions/core/time/window.js';
import { readReportQueries } from '../../lib/constructs/catalog.js';
import { projectPath } from '../../lib/bundling/project.js';
import { QueryFailed } from '../../local/duckdb/duckdb.js';
import { startLocalPipeline, type LocalPipeline } from '../../local/pipeline/pipeline.js';
import { runLocal } from '../../local/cli/run.js';
import { definitionRows } from '../../local/simulator/definition-rows.js';
import { generateTransactions, writeReportCsv } from '../../local/simulator/index.js';
import { simulatorLogin } from '../../local/connections/local-gateways.js';
import { hasSampleColumns } from '../../local/simulator/transactions.js';
import { listKeys, readObject } from '../helpers/lake-inspect.js';
import { athenaTypeOfParquet } from '../helpers/parquet-types.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * Every report of the catalog, whatever config/reports/ holds, end to end: the embedded simulator answers
 * it (rows generated from its columns, in its delimiter, encoding and patterns), the fetch stores it, the
 * parse types it into Parquet on the local lake, DuckDB reads it back value for value, its saved queries
 * run, and the Parquet file's schema is the Glue table's. Adding or removing a definition adds or removes
 * cases here; it never breaks one. The same runs over fixture shapes a shipped folder may lack
 * (test/fixtures/report-shapes/): semicolons and windows-1251 with Cyrillic headers and minute-precision
 * times, pipes with ISO-T milliseconds and compact dates in six-hour windows, a PDF report.
 *
 * No fixture-reports import here on purpose: the shipped folder is read explicitly.
 */

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const ROWS_PER_DAY = 96;
const SHAPES_DIR = fileURLToPath(new URL('../fixtures/report-shapes/', import.meta.url));
const shipped = ReportCatalog.fromSources(readReportSources(REPORTS_DIR));
const shapes = ReportCatalog.fromSources(readReportSources(SHAPES_DIR));

const dirs: string[] = [];
after(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
const newDir = async (name: string) => {
  const dir = await mkdtemp(join(tmpdir(), `catalog-${name}-`));
  dirs.push(dir);
  return dir;
};

/** A fixed window of the report's length, so the expected rows are known. */
const windowOf = (r: ReportDefinition): ReportWindow => windowAt(parseLocalDateTime('2026-11-20'), parseWindowSize(r.window));

/** What the simulator sent for this report and window: the oracle. */
const simulatedRows = (r: ReportDefinition, w: ReportWindow): string[][] =>
  hasSampleColumns(r.columns) ? [...generateTransactions(simulatorLogin(r.connections[0]!, 'hmac'), w, ROWS_PER_DAY)] : [...definitionRows(r, simulatorLogin(r.connections[0]!, 'hmac'), w, ROWS_PER_DAY)];

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** One SELECT expression per column giving a comparable text: exact numbers, ms and days since 1970. */
function comparableSql(r: ReportDefinition): string {
  return r.columns
    .map((c) => {
      const col = q(c.name);
      switch (c.kind) {
        case 'timestamp':
          return `CAST(epoch_ms(${col}) AS VARCHAR)`;
        case 'date':
          return `CAST(date_diff('day', DATE '1970-01-01', ${col}) AS VARCHAR)`;
        case 'string':
          return col;
        default:
          return `CAST(${col} AS VARCHAR)`;
      }
    })
    .join(', ');
}

/** The CSV text of one row typed the way the table holds it, as the same comparable text. */
function comparableRow(r: ReportDefinition, row: readonly string[]): Array<string | null> {
  return r.columns.map((c, i) => {
    const text = row[i]!;
    if (text === '' && c.nullable) return null;
    switch (c.kind) {
      case 'string':
        return text;
      case 'bigint':
        return BigInt(text).toString();
      case 'decimal':
        return String(parseDecimal(text, c.precision!, c.scale!));
      case 'timestamp':
        return String(parseTimestamp(text, compilePattern(c.pattern!, 'timestamp')));
      case 'date':
        return String(parseDate(text, compilePattern(c.pattern!, 'date')));
      case 'boolean':
        return String(parseBoolean(text, compileBooleanTokens(c.values)) === 1);
    }
  });
}

const sortRows = (rows: Array<Array<string | null>>) => rows.map((r) => JSON.stringify(r)).sort();

/** DuckDB's decimals as unscaled integers, like comparableRow's. */
function normaliseDecimals(r: ReportDefinition, rows: Array<Array<string | null>>): Array<Array<string | null>> {
  return rows.map((row) => row.map((v, i) => {
    const c = r.columns[i]!;
    return v !== null && c.kind === 'decimal' ? String(parseDecimal(v, c.precision!, c.scale!)) : v;
  }));
}

async function withPipeline<T>(catalog: ReportCatalog, r: ReportDefinition, samples: Record<string, string> | undefined, fn: (p: LocalPipeline) => Promise<T>): Promise<T> {
  const p = await startLocalPipeline({ catalog, lakeDir: await newDir(r.id), simulator: { rowsPerDay: ROWS_PER_DAY, samples } });
  try {
    return await fn(p);
  } finally {
    await p.close();
  }
}

/** The report through the whole chain, checked against `expected` rows (default: what the simulator generates). */
async function assertEndToEnd(catalog: ReportCatalog, r: ReportDefinition, options: { samples?: Record<string, string>; expected?: string[][]; queries?: boolean } = {}) {
  const w = windowOf(r);
  await withPipeline(catalog, r, options.samples, async (p) => {
    const outcome = await p.runWindow(feedKey(r.id), w);
    assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
    if (r.format === 'PDF') {
      // A PDF is kept as received; nothing is typed (docs/architecture.md): a manifest, no table file.
      assert.equal(outcome.status, 'not-parsed');
      assert.equal(outcome.fetched?.kind, 'pdf');
      assert.deepEqual(await listKeys(p.s3, p.buckets.curated, `tables/${r.id}/`), []);
      return;
    }
    const expected = options.expected ?? simulatedRows(r, w);
    assert.ok(expected.length > 0);
    assert.equal(outcome.status, 'loaded');
    assert.equal(outcome.rowsRejected, 0);
    assert.equal(outcome.rowsWritten, expected.length);

    // The Parquet file's schema is the Glue table's columns, in order.
    const [key, ...more] = await listKeys(p.s3, p.buckets.curated, `tables/${r.id}/`);
    assert.ok(key && more.length === 0, `one table file for ${r.id}`);
    const bytes = await readObject(p.s3, p.buckets.curated, key);
    const leaves = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer).schema.slice(1);
    assert.deepEqual(
      leaves.map((e) => ({ name: e.name, type: athenaTypeOfParquet(e) })),
      glueColumns(r.columns).map((c) => ({ name: c.name, type: c.type })),
    );

    const db = await p.openDatabase();
    try {
      const actual = (await db.query(`SELECT ${comparableSql(r)} FROM ${q(r.id)}`)).rows as Array<Array<string | null>>;
      assert.deepEqual(sortRows(normaliseDecimals(r, actual)), sortRows(expected.map((row) => comparableRow(r, row))));
      if (options.queries) {
        for (const saved of readReportQueries(r, projectPath('queries'))) {
          try {
            await db.query(saved.sql);
          } catch (e) {
            if (e instanceof QueryFailed) assert.fail(`queries/${r.id}/${saved.name}.sql fails on DuckDB: ${e.message}`);
            throw e;
          }
        }
      }
    } finally {
      db.close();
    }
  });
}

describe('every report of the shipped catalog (config/reports/), end to end', () => {
  // A shipped folder that does not load fails this file at its first line (`shipped` above).
  for (const r of shipped.reports) {
    it(`${r.id}: simulator, fetch, lake, parse, DuckDB value for value; Parquet schema = Glue columns; its saved queries run`, async () => {
      await assertEndToEnd(shipped, r, { queries: true });
    });
  }
});

describe('report shapes a new user brings (test/fixtures/report-shapes/)', () => {
  for (const r of shapes.reports) {
    it(`${r.id}: ${r.description}`, async () => {
      await assertEndToEnd(shapes, r);
    });
  }

  it('the generated rows carry the hard cases: the delimiter, quotes, line breaks, Cyrillic, extreme numbers, empty nullables', () => {
    const r = shapes.get('payouts_cp1251');
    const rows = simulatedRows(r, windowOf(r));
    const text = rows.flat();
    for (const needle of [';', '"', '\n', '\r\n', '«', '№', '€']) assert.ok(text.some((v) => v.includes(needle)), `a value with ${JSON.stringify(needle)}`);
    assert.ok(text.includes('9223372036854775807') && text.includes('-9223372036854775808'));
    assert.ok(text.includes('9999999999999999.99') && text.includes('-9999999999999999.99'));
    assert.ok(rows.some((row) => row[4] === ''), 'an empty nullable comment');
    // Minute precision, in the report's own pattern.
    assert.ok(rows.every((row) => /^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}$/.test(row[1]!)));
  });

  it('--sample ID=FILE: the simulator answers that report with the given file, and it loads as sent', async () => {
    const r = shapes.get('payouts_cp1251');
    const rows = [
      ['1', '20.11.2026 09:30', '1500.00', 'ООО «Ромашка»', 'Первая; "выплата"', '20/11/2026'],
      ['9223372036854775807', '20.11.2026 23:59', '-0.01', 'ИП Петров №5', '', ''],
    ];
    const file = join(await newDir('sample'), 'payouts-sample.csv');
    await writeFile(file, writeReportCsv(r.columns.map((c) => c.header), rows, { delimiter: ';', encoding: 'windows-1251' }));
    await assertEndToEnd(shapes, r, { samples: { [r.id]: file }, expected: rows });
  });

  it('`npm start -- --report ID` with only the definition file added: runs, and says the report has no saved queries', async () => {
    const dir = await newDir('drop-in');
    for (const f of await readdir(SHAPES_DIR)) if (f.startsWith('payouts')) await writeFile(join(dir, f), await import('node:fs/promises').then((fs) => fs.readFile(join(SHAPES_DIR, f))));
    const saved = process.env.PAYNET_REPORTS_DIR;
    process.env.PAYNET_REPORTS_DIR = dir;
    const lines: string[] = [];
    try {
      const summary = await runLocal({ report: 'payouts_cp1251', from: '2026-11-20', to: '2026-11-21', lake: await newDir('lake') }, (l) => lines.push(l));
      assert.equal(summary.failedWindows, 0, lines.join('\n'));
      assert.equal(summary.windows[0]?.status, 'loaded');
      assert.ok(lines.some((l) => l.includes('No saved queries for "payouts_cp1251"')), lines.join('\n'));
    } finally {
      if (saved === undefined) delete process.env.PAYNET_REPORTS_DIR;
      else process.env.PAYNET_REPORTS_DIR = saved;
    }
  });
});
