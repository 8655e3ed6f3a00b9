import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };
import pkg from '../../package.json' with { type: 'json' };
import { PIPELINE_NAME } from '../../functions/core/build-info.js';
import type { ByteSink } from '../../functions/core/byte-sink.js';
import { convertCsvToParquet, DEFAULT_ROW_GROUP_BYTES, DEFAULT_ROW_GROUP_ROWS } from '../../functions/core/convert/csv-to-parquet.js';
import { STATS_BYTES } from '../../functions/core/parquet/encoder.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { openDuckDb, type TestDb } from '../helpers/duckdb.js';
import { expectedTypes, readColumnsOf, readingDifferences, readWithArrowRs, readWithDuckDb, readWithPolars, unscaledDigits, type ReadColumn } from '../helpers/independent-readers.js';
import { footerProblems, type CheckOptions } from '../helpers/parquet-checks.js';
import { readParquetFooter, type ParquetFooter } from '../helpers/parquet-footer.js';

/**
 * Issue 11, as a new user would try it: a report from a gateway that is not this project's (its own
 * headers, delimiter, patterns and types), converted with the defaults, then
 *  - the file's own Thrift structures (read by test/helpers/parquet-footer.ts, no Parquet library) show a
 *    parseable created_by, TIMESTAMP_MILLIS, v1 pages only, no DELTA_BYTE_ARRAY, statistics with null_count
 *    on every chunk, and row groups of the default size;
 *  - arrow-rs (parquet-wasm) and polars read every value exactly as DuckDB does, with the right types;
 *  - every chunk's min/max/null_count is what DuckDB computes over that row group's rows.
 */

const settlements = parseReportDefinition(
  {
    ...transactionsJson,
    id: 'acquirer_settlements',
    delimiter: ';',
    // The gateway writes the delimiter the body asks for; a definition must say the same in both places.
    bodyTemplate: { ...transactionsJson.bodyTemplate, reportCsvDelimiter: ';' },
    rejects: { maxShare: 0 },
    // Columns of its own: the sample's key column (transaction_id) is not among them.
    keys: undefined,
    columns: [
      { header: 'Batch Ref', name: 'batch_ref', type: 'string' },
      { header: 'Booked At', name: 'booked_at', type: 'timestamp', pattern: 'dd/MM/yyyy HH:mm:ss' },
      { header: 'Account', name: 'account_no', type: 'bigint' },
      { header: 'Settled', name: 'settled', type: 'decimal(12,2)' },
      { header: 'Fee', name: 'fee', type: 'decimal(18,6)', nullable: true },
      { header: 'Country', name: 'country', type: 'string' },
      { header: 'Memo', name: 'memo', type: 'string', nullable: true },
      { header: 'Value Date', name: 'value_date', type: 'date', pattern: 'yyyy-MM-dd' },
      { header: 'Disputed', name: 'disputed', type: 'boolean', nullable: true },
    ],
  },
  'acquirer settlements (test fixture)',
);

const readColumns = (report: ReportDefinition): ReadColumn[] => readColumnsOf(report.columns);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Deterministic rows shaped like a settlement file: rising refs and times, a few countries, sparse memos. */
function settlementRows(n: number): string[][] {
  const countries = ['DE', 'FR', 'NL', 'PL', 'ES', 'IT'];
  const rows: string[][] = [];
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const t = Date.UTC(2026, 10, 1) + i * 1_700 + (x % 997);
    const d = new Date(t);
    rows.push([
      `STL-${String(i).padStart(8, '0')}-${(x % 0xfffff).toString(16)}`,
      `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`,
      String(40_000_000_000 + (x % 5_000)),
      `${x % 2 ? '-' : ''}${x % 9_999_999}.${pad(x % 100)}`,
      x % 7 === 0 ? '' : `0.${String(x % 1_000_000).padStart(6, '0')}`,
      countries[x % countries.length]!,
      x % 11 === 0 ? `chargeback ${x.toString(36)}; "disputed", line\nbreak` : '',
      `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`,
      x % 11 === 0 ? 'Yes' : x % 13 === 0 ? '' : ['false', 'TRUE', '0', 'no', '1'][x % 5]!,
    ]);
  }
  return rows;
}

const csvField = (v: string) => (/[";\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const csvOf = (report: ReportDefinition, rows: string[][]) =>
  Buffer.from([report.columns.map((c) => c.header), ...rows].map((r) => r.map(csvField).join(report.delimiter)).join('\r\n') + '\r\n', 'utf8');

async function convert(report: ReportDefinition, csv: Buffer, extra: { rowGroupRows?: number } = {}): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  const sink: ByteSink = { write: (b) => void chunks.push(b), end: () => undefined, abort: () => undefined };
  async function* input() {
    for (let i = 0; i < csv.length; i += 1 << 20) yield csv.subarray(i, i + (1 << 20));
  }
  const m = await convertCsvToParquet({ input: input(), output: sink, report, ...extra });
  assert.equal(m.rowsRejected, 0);
  return Buffer.concat(chunks);
}

const CHECKS: CheckOptions = { application: PIPELINE_NAME, version: pkg.version, minRowsPerGroup: DEFAULT_ROW_GROUP_ROWS, maxGroupBytes: BigInt(DEFAULT_ROW_GROUP_BYTES) };

/** A statistic's bytes as the canonical text of independent-readers.ts (PLAIN encoding of the physical type). */
function statText(bytes: Uint8Array, physicalType: string): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (physicalType === 'INT64') return String(view.getBigInt64(0, true));
  if (physicalType === 'INT32') return String(view.getInt32(0, true));
  if (physicalType === 'BOOLEAN') return String(bytes[0] === 1);
  return Buffer.from(bytes).toString('utf8');
}

/** Per row group and column: DuckDB's min, max and null count over the group's rows, in canonical text. */
async function groupStats(db: TestDb, file: string, footer: ParquetFooter, columns: readonly ReadColumn[]) {
  let at = 0n;
  const bounds = footer.rowGroups.slice(0, -1).map((g) => (at += g.numRows));
  const group = bounds.length ? bounds.map((b) => `CAST(file_row_number >= ${b} AS INTEGER)`).join(' + ') : '0';
  const canon = (c: ReadColumn, e: string) =>
    ({ string: e, bigint: `CAST(${e} AS VARCHAR)`, decimal: `CAST(${e} AS VARCHAR)`, timestamp: `CAST(epoch_ms(${e}) AS VARCHAR)`, date: `CAST(date_diff('day', DATE '1970-01-01', ${e}) AS VARCHAR)`, boolean: `CAST(${e} AS VARCHAR)` })[c.kind];
  const aggs = columns.map((c, i) => `${canon(c, `min("${c.name}")`)} AS min${i}, ${canon(c, `max("${c.name}")`)} AS max${i}, count(*) - count("${c.name}") AS nulls${i}`);
  const rows = await db.query(`SELECT ${group} AS g, ${aggs.join(', ')} FROM read_parquet('${file}', file_row_number = true) GROUP BY ALL ORDER BY g`);
  return rows.map((r) =>
    columns.map((c, i) => {
      const fix = (v: unknown) => (v === null ? null : c.kind === 'decimal' ? unscaledDigits(String(v), c.scale!) : String(v));
      return { min: fix(r[`min${i}`]), max: fix(r[`max${i}`]), nulls: BigInt(r[`nulls${i}`] as bigint | number) };
    }),
  );
}

/** Every chunk's statistics agree with the group's rows: exact, or a truncated bound flagged inexact. */
async function assertStatisticsMatch(db: TestDb, file: string, footer: ParquetFooter, columns: readonly ReadColumn[]): Promise<void> {
  const expected = await groupStats(db, file, footer, columns);
  assert.equal(expected.length, footer.rowGroups.length);
  footer.rowGroups.forEach((group, g) => {
    group.columns.forEach((chunk, c) => {
      const want = expected[g]![c]!;
      const st = chunk.statistics!;
      const where = `row group ${g}, ${chunk.path}`;
      assert.equal(st.nullCount, want.nulls, `${where}: null_count`);
      if (want.min === null) {
        assert.equal(st.minValue, undefined, `${where}: an all-null chunk has no min`);
        return;
      }
      for (const [side, bytes, exact, value] of [
        ['min', st.minValue!, st.isMinValueExact, want.min],
        ['max', st.maxValue!, st.isMaxValueExact, want.max!],
      ] as const) {
        const got = statText(bytes, chunk.physicalType);
        if (chunk.physicalType !== 'BYTE_ARRAY' || Buffer.byteLength(value) <= STATS_BYTES) {
          assert.equal(got, value, `${where}: ${side}_value`);
          assert.notEqual(exact, false, `${where}: an exact ${side} is not flagged inexact`);
        } else {
          assert.equal(exact, false, `${where}: a truncated ${side} is flagged inexact`);
          assert.ok(bytes.length <= STATS_BYTES, `${where}: ${side} truncated to ${STATS_BYTES} bytes, got ${bytes.length}`);
          // A truncated min is a prefix (a lower bound); a truncated max sorts after the real one.
          if (side === 'min') assert.ok(Buffer.from(value).subarray(0, bytes.length).equals(Buffer.from(bytes)), `${where}: min is a prefix`);
          else assert.ok(Buffer.compare(Buffer.from(bytes), Buffer.from(value)) > 0, `${where}: max is an upper bound`);
        }
      }
    });
  });
}

/** arrow-rs and polars read every value, and every type, as DuckDB does. */
async function assertReadersAgree(db: TestDb, file: string, bytes: Buffer, columns: readonly ReadColumn[]): Promise<number> {
  const duck = (await readWithDuckDb(db, [file], columns)).get(file)!;
  const types = expectedTypes(columns);
  const arrow = readWithArrowRs(bytes, columns);
  assert.deepEqual(arrow.types, types.arrow, 'arrow-rs reads every column as its type');
  assert.deepEqual(readingDifferences(duck, arrow.rows, columns), [], 'arrow-rs reads what DuckDB reads');
  const polars = readWithPolars(file, columns);
  assert.deepEqual(polars.types, types.polars, 'polars reads every column as its type');
  assert.deepEqual(readingDifferences(duck, polars.files.get(file) ?? [], columns), [], 'polars reads what DuckDB reads');
  return duck.length;
}

describe('Parquet every engine reads (issue 11)', () => {
  let db: TestDb;
  let dir: string;
  before(async () => {
    db = await openDuckDb();
    dir = await mkdtemp(join(tmpdir(), 'parquet-engines-'));
  });
  after(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("another gateway's 140,000-row report, with the defaults: the footer says what the issue asks, and arrow-rs and polars read it exactly as DuckDB", async () => {
    const columns = readColumns(settlements);
    const rows = settlementRows(140_000);
    const bytes = await convert(settlements, csvOf(settlements, rows));
    const file = join(dir, 'settlements.parquet');
    await writeFile(file, bytes);

    const footer = readParquetFooter(bytes);
    assert.deepEqual(footerProblems(footer, CHECKS), []);
    assert.match(footer.createdBy!, new RegExp(`^paynet-reports-pipeline version ${pkg.version.replace(/\./g, '\\.')} \\(build ([0-9a-f]{7,40}|unknown)\\)$`));
    assert.deepEqual(footer.rowGroups.map((g) => Number(g.numRows)), [131_072, 140_000 - 131_072]);
    const booked = footer.columns.find((c) => c.name === 'booked_at')!;
    assert.equal(booked.convertedType, 'TIMESTAMP_MILLIS');
    assert.deepEqual(booked.logicalType, { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' });
    // Encodings per column, as the docs' table lists them.
    const encodings = Object.fromEntries(footer.rowGroups[0]!.columns.map((c) => [c.path, [...new Set(c.pages.map((p) => `${p.type}:${p.encoding}`))].sort().join(' ')]));
    assert.equal(encodings.batch_ref, 'DATA_PAGE:PLAIN', 'distinct refs: PLAIN, not DELTA_BYTE_ARRAY');
    assert.equal(encodings.country, 'DATA_PAGE:RLE_DICTIONARY DICTIONARY_PAGE:PLAIN', 'few countries: dictionary');
    assert.equal(encodings.account_no, 'DATA_PAGE:DELTA_BINARY_PACKED');
    assert.equal(encodings.booked_at, 'DATA_PAGE:DELTA_BINARY_PACKED');

    assert.equal(await assertReadersAgree(db, file, bytes, columns), 140_000);
    await assertStatisticsMatch(db, file, footer, columns);
  });

  it('a report with a header and no rows: a valid file with no row groups, which arrow-rs and polars read as empty', async () => {
    const columns = readColumns(settlements);
    const bytes = await convert(settlements, csvOf(settlements, []));
    const file = join(dir, 'empty.parquet');
    await writeFile(file, bytes);
    const footer = readParquetFooter(bytes);
    assert.equal(footer.rowGroups.length, 0);
    assert.deepEqual(footerProblems(footer, CHECKS), []);
    assert.equal(await assertReadersAgree(db, file, bytes, columns), 0);
  });

  it('the edges in small row groups: an all-null group, a 100 KB string, years 0001 and 9999, int64 and 18-digit extremes, CR/LF/NUL/emoji', async () => {
    const report = parseReportDefinition({ ...transactionsJson, id: 'edges', rejects: { maxShare: 0 } }, 'edges');
    const columns = readColumns(report);
    const long = `${'€'.repeat(20)}${'x'.repeat(100_000)}`;
    const base = ['M', '1', 'ORD', '2026-11-20 10:00:00', '1.000', 'RUB', 'SALE', '', '20.11.2026'];
    const rows = [
      ['Nul\u0000 and 🎉', '-9223372036854775808', 'ORD-MIN', '0001-01-01 00:00:00', '-999999999999999.999', 'RUB', 'SALE', '', '01.01.0001'],
      ['CR\rLF\nCRLF\r\n', '9223372036854775807', 'ORD-MAX', '9999-12-31 23:59:59', '999999999999999.999', 'USD', 'REFUND', '', '31.12.9999'],
      // the second group: order_description all null
      base,
      base.map((v, i) => (i === 1 ? '2' : v)),
      // the third: a 100 KB value that sorts last, then one that sorts first
      base.map((v, i) => (i === 7 ? long : v)),
      base.map((v, i) => (i === 7 ? 'a' : i === 0 ? long : v)),
    ];
    const csv = Buffer.from([report.columns.map((c) => c.header), ...rows].map((r) => r.map((v) => `"${v.replace(/"/g, '""')}"`).join(',')).join('\r\n'), 'utf8');
    const bytes = await convert(report, csv, { rowGroupRows: 2 });
    const file = join(dir, 'edges.parquet');
    await writeFile(file, bytes);

    const footer = readParquetFooter(bytes);
    assert.deepEqual(footerProblems(footer, { ...CHECKS, minRowsPerGroup: 2 }), []);
    assert.equal(footer.rowGroups.length, 3);
    const descriptions = footer.rowGroups.map((g) => g.columns.find((c) => c.path === 'order_description')!.statistics!);
    assert.equal(descriptions[1]!.nullCount, 2n, 'the all-null group counts its nulls');
    assert.equal(descriptions[2]!.isMaxValueExact, false, 'the 100 KB max is truncated and says so');
    assert.equal(await assertReadersAgree(db, file, bytes, columns), rows.length);
    await assertStatisticsMatch(db, file, footer, columns);
  });
});
