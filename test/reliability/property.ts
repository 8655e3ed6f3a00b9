import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe } from 'node:test';
import fc from 'fast-check';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };
import type { ByteSink } from '../../functions/core/byte-sink.js';
import { convertCsvToParquet } from '../../functions/core/convert/csv-to-parquet.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { duckdbType } from '../../functions/core/definitions/table-schema.js';
import { daysInMonth } from '../../functions/core/csv/value-parsers.js';
import { REPORT_HEADER, writeReportCsv } from '../../local/simulator/index.js';
import pkg from '../../package.json' with { type: 'json' };
import { PIPELINE_NAME } from '../../functions/core/build-info.js';
import { openDuckDb, type TestDb } from '../helpers/duckdb.js';
import { expectedTypes, readColumnsOf, readingDifferences, readWithArrowRs, readWithDuckDb, readWithPolars } from '../helpers/independent-readers.js';
import { parquetProblems } from '../helpers/parquet-checks.js';
import { counts, it } from './harness.js';

/**
 * Property: for any report the gateway could send (any text in the text columns: delimiters, quotes, CR, LF,
 * CRLF, NUL, BOM, astral characters, empty values; any int64 id; any decimal(18,3) amount; any calendar
 * timestamp and date), written by the simulator's CSV writer and converted by our converter, the Parquet file
 * holds exactly the rows DuckDB's own CSV reader finds in the same raw file, typed the same, and the rows we
 * reject are exactly those with an empty value in a column that is not nullable (DuckDB reads NULL there).
 *
 * Every Parquet file is also read by two readers that share no code with DuckDB or our writer, arrow-rs
 * (parquet-wasm) and polars (nodejs-polars): each must see the same types and every value exactly as DuckDB
 * reads it from the same file. And each file's footer and page headers pass the checks of issue 11
 * (test/helpers/parquet-checks.ts: created_by, TIMESTAMP_MILLIS, v1 pages, no DELTA_BYTE_ARRAY, statistics).
 *
 * Fast by batching: every case is converted in memory (inline encoder) and both files go to a temporary
 * directory; DuckDB then compares a few hundred cases per query, by file name. PROPERTY_RUNS (default 2,000)
 * and PROPERTY_SEED reproduce or extend a run; a divergence names its case, its seed and its CSV.
 */

const RUNS = Number(process.env.PROPERTY_RUNS ?? 2_000);
const BATCH = 400;
const DELIMITERS = [',', ';', '\t', '|'] as const;
type Delimiter = (typeof DELIMITERS)[number];
const DELIMITER_NAMES: Record<Delimiter, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

const definitions = new Map<Delimiter, ReportDefinition>(
  DELIMITERS.map((d) => [
    d,
    parseReportDefinition(
      // The sample's columns and a boolean one (the sample has none): every kind is covered.
      { ...transactionsJson, delimiter: d, bodyTemplate: { ...transactionsJson.bodyTemplate, reportCsvDelimiter: d }, rejects: { maxShare: 1 }, columns: [...transactionsJson.columns, { header: 'Is_test', name: 'is_test', type: 'boolean', nullable: true }] },
      `property (${JSON.stringify(d)})`,
    ),
  ]),
);
const columns = definitions.get(',')!.columns;
const HEADER = [...REPORT_HEADER, 'Is_test'];

/** Text made of the characters CSV writers and readers get wrong, and any other code point. */
const nasty = fc.constantFrom(',', ';', '\t', '|', '"', '""', '\r', '\n', '\r\n', ' ', '\u0000', '\uFEFF', '\u2028', 'Ж', '€', '«', '𝄞', '🎉', 'e\u0301');
const text = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: nasty },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  ),
  maxLength: 16,
});
/** Sometimes empty: then the row is rejected (not nullable) or NULL (nullable), on both sides alike. */
const maybeEmpty = (arb: fc.Arbitrary<string>) => fc.oneof({ weight: 12, arbitrary: arb }, { weight: 1, arbitrary: fc.constant('') });

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const id = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
const amount = fc
  .tuple(fc.bigInt({ min: -(10n ** 18n) + 1n, max: 10n ** 18n - 1n }), fc.integer({ min: 0, max: 3 }))
  .map(([unscaled, shown]) => {
    // decimal(18,3): up to 15 integer digits and 3 fractional ones; written with 0 to 3 of the fractional digits.
    const abs = unscaled < 0n ? -unscaled : unscaled;
    const frac = String(abs % 1000n).padStart(3, '0');
    const cut = frac.slice(shown);
    const kept = /^0*$/.test(cut) ? frac.slice(0, shown) : frac; // only drop zeros: the value stays the same
    return `${unscaled < 0n ? '-' : ''}${abs / 1000n}${kept ? `.${kept}` : ''}`;
  });
const calendarDay = fc
  .record({ y: fc.integer({ min: 1, max: 9999 }), m: fc.integer({ min: 1, max: 12 }), d: fc.integer({ min: 1, max: 31 }) })
  .map(({ y, m, d }) => ({ y, m, d: Math.min(d, daysInMonth(y, m)) }));
const timestamp = fc
  .tuple(calendarDay, fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }))
  .map(([{ y, m, d }, h, mi, s]) => `${pad(y, 4)}-${pad(m)}-${pad(d)} ${pad(h)}:${pad(mi)}:${pad(s)}`);
const date = calendarDay.map(({ y, m, d }) => `${pad(d)}.${pad(m)}.${pad(y, 4)}`);

/** The default boolean tokens in any case (DuckDB's CSV reader takes the same ones). */
const flag = fc.tuple(fc.constantFrom('true', 'false', '1', '0', 'yes', 'no'), fc.constantFrom('lower', 'upper', 'mixed')).map(([t, c]) =>
  c === 'lower' ? t : c === 'upper' ? t.toUpperCase() : t.charAt(0).toUpperCase() + t.slice(1),
);
const row = fc.tuple(maybeEmpty(text), maybeEmpty(id), maybeEmpty(text), maybeEmpty(timestamp), maybeEmpty(amount), maybeEmpty(text), maybeEmpty(text), text, maybeEmpty(date), maybeEmpty(flag));
const reportCase = fc.record({ delimiter: fc.constantFrom(...DELIMITERS), rows: fc.array(row, { maxLength: 16 }) });
type Case = { delimiter: Delimiter; rows: string[][] };

/** The whole file as the converter's input, in one chunk. */
async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

/** A ByteSink in memory. */
function memorySink() {
  const chunks: Uint8Array[] = [];
  const sink: ByteSink = { write: (b) => void chunks.push(b), end: () => undefined, abort: () => undefined };
  return { sink, bytes: () => Buffer.concat(chunks) };
}

/** "yyyy-MM-dd HH:mm:ss" -> "%Y-%m-%d %H:%M:%S", for DuckDB's reader. */
const strptime = (pattern: string) =>
  pattern.replace('yyyy', '%Y').replace('MM', '%m').replace('dd', '%d').replace('HH', '%H').replace('mm', '%M').replace('ss', '%S');

const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

interface Converted {
  index: number;
  csvFile: string;
  parquetFile: string;
  rowsRead: number;
  rowsRejected: number;
  error?: string;
  bytes?: Buffer;
}

/** Cases (by index) where DuckDB's reading of the CSV and ours of it differ, with what differs. */
async function divergences(db: TestDb, batch: Converted[], delimiter: Delimiter): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  const add = (index: number, what: string) => out.set(index, [...(out.get(index) ?? []), what]);
  const ok = batch.filter((c) => {
    if (c.error) add(c.index, `our converter failed: ${c.error}`);
    return !c.error;
  });
  if (ok.length === 0) return out;
  const columnsSql = `{${columns.map((c) => `${sqlString(c.header)}: ${sqlString(duckdbType(c))}`).join(', ')}}`;
  const ts = columns.find((c) => c.kind === 'timestamp')!.pattern!;
  const dt = columns.find((c) => c.kind === 'date')!.pattern!;
  const caseOf = (col: string) => `CAST(regexp_extract(${col}, 'case-(\\d+)\\.', 1) AS INTEGER)`;
  const csv = `read_csv([${ok.map((c) => sqlString(c.csvFile)).join(', ')}], columns = ${columnsSql}, header = true, delim = ${sqlString(delimiter)},
    quote = '"', escape = '"', auto_detect = false, strict_mode = true, filename = true,
    timestampformat = ${sqlString(strptime(ts))}, dateformat = ${sqlString(strptime(dt))})`;
  const names = columns.map((c) => `"${c.header}"`);
  const notNullable = columns.filter((c) => !c.nullable).map((c) => `"${c.header}" IS NOT NULL`).join(' AND ');
  const parquet = `read_parquet([${ok.map((c) => sqlString(c.parquetFile)).join(', ')}], filename = true)`;
  const expected = `SELECT ${caseOf('filename')} AS k, ${names.join(', ')} FROM ${csv} WHERE ${notNullable}`;
  const got = `SELECT ${caseOf('filename')} AS k, ${columns.map((c) => `"${c.name}"`).join(', ')} FROM ${parquet}`;
  let diff;
  try {
    diff = await db.query(`
      WITH e AS (${expected}), g AS (${got})
      SELECT 'in the CSV (DuckDB), not in our Parquet' AS side, * FROM (SELECT * FROM e EXCEPT ALL SELECT * FROM g)
      UNION ALL
      SELECT 'in our Parquet, not in the CSV (DuckDB)', * FROM (SELECT * FROM g EXCEPT ALL SELECT * FROM e)`);
  } catch (e) {
    // DuckDB refused the batch: find the file(s) it cannot read.
    if (ok.length === 1) {
      add(ok[0]!.index, `DuckDB cannot read the CSV we converted: ${(e as Error).message.split('\n')[0]}`);
      return out;
    }
    const half = Math.ceil(ok.length / 2);
    for (const part of [ok.slice(0, half), ok.slice(half)]) for (const [k, v] of await divergences(db, part, delimiter)) out.set(k, v);
    return out;
  }
  for (const r of diff) add(Number(r.k), `${String(r.side)}: ${JSON.stringify(r, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);

  // Nothing lost: every record we read is one DuckDB reads, and we reject exactly the ones with an empty required value.
  const tallies = await db.query(`SELECT ${caseOf('filename')} AS k, count(*) AS n, count(*) FILTER (WHERE NOT (${notNullable})) AS bad FROM ${csv} GROUP BY ALL`);
  const byCase = new Map(tallies.map((r) => [Number(r.k), { n: Number(r.n), bad: Number(r.bad) }]));
  for (const c of ok) {
    const t = byCase.get(c.index) ?? { n: 0, bad: 0 };
    if (t.n !== c.rowsRead) add(c.index, `DuckDB reads ${t.n} record(s), we read ${c.rowsRead}`);
    if (t.bad !== c.rowsRejected) add(c.index, `${t.bad} record(s) have an empty required value, we rejected ${c.rowsRejected}`);
  }
  return out;
}

const readColumns = readColumnsOf(columns);
const readerTypes = expectedTypes(readColumns);

/** Cases whose Parquet file arrow-rs or polars reads differently from DuckDB, or whose footer breaks issue 11's rules. */
async function readerDivergences(db: TestDb, batch: Converted[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  const ok = batch.filter((c) => !c.error);
  if (ok.length === 0) return out;
  const duck = await readWithDuckDb(db, ok.map((c) => c.parquetFile), readColumns);
  // polars reads the batch's directory in one scan; if it cannot, each file alone says which one it is.
  const polarsDir = dirname(ok[0]!.parquetFile);
  let polars: ReturnType<typeof readWithPolars> | undefined;
  try {
    polars = readWithPolars(join(polarsDir, '*.parquet'), readColumns);
    if (JSON.stringify(polars.types) !== JSON.stringify(readerTypes.polars)) for (const c of ok) out.set(c.index, [`polars reads the types as ${JSON.stringify(polars.types)}`]);
  } catch {
    polars = undefined;
  }
  for (const c of ok) {
    const what: string[] = out.get(c.index) ?? [];
    const expected = duck.get(c.parquetFile)!;
    try {
      const arrow = readWithArrowRs(c.bytes!, readColumns);
      if (JSON.stringify(arrow.types) !== JSON.stringify(readerTypes.arrow)) what.push(`arrow-rs reads the types as ${JSON.stringify(arrow.types)}`);
      for (const d of readingDifferences(expected, arrow.rows, readColumns)) what.push(`arrow-rs: ${d}`);
    } catch (e) {
      what.push(`arrow-rs cannot read the file: ${(e as Error).message}`);
    }
    try {
      const rows = polars ? (polars.files.get(c.parquetFile) ?? []) : (readWithPolars(c.parquetFile, readColumns).files.get(c.parquetFile) ?? []);
      for (const d of readingDifferences(expected, rows, readColumns)) what.push(`polars: ${d}`);
    } catch (e) {
      what.push(`polars cannot read the file: ${(e as Error).message}`);
    }
    for (const p of parquetProblems(c.bytes!, { application: PIPELINE_NAME, version: pkg.version })) what.push(`footer: ${p}`);
    if (what.length) out.set(c.index, what);
  }
  return out;
}

/** The oracle must be able to fail: a value changed after conversion, and a row our side lacks, are both reported. */
async function oracleCanSeeDivergence(db: TestDb, dir: string): Promise<void> {
  const good = [
    ['A, "quoted"', '9007199254740993', 'ORD1', '2026-11-20 10:00:00', '-1.500', 'RUB', 'SALE', 'line\r\nbreak', '20.11.2026', 'Yes'],
    ['B', '2', 'ORD2', '2026-11-20 11:00:00', '2.000', 'USD', 'REFUND', '', '20.11.2026', ''],
  ];
  const entries: Converted[] = [];
  for (const [index, [converted, written]] of [
    [good, good.map((r, i) => (i === 0 ? r.map((v, c) => (c === 4 ? '-1.501' : v)) : r))],
    [good.slice(0, 1), good],
  ].entries()) {
    const out = memorySink();
    const m = await convertCsvToParquet({ input: once(writeReportCsv(HEADER, converted!, { delimiter: ',', encoding: 'UTF-8' })), output: out.sink, report: definitions.get(',')!, encoder: 'inline' });
    const entry: Converted = { index, csvFile: join(dir, `case-${index}.canary.csv`), parquetFile: join(dir, `case-${index}.canary.parquet`), rowsRead: m.rowsRead, rowsRejected: m.rowsRejected, bytes: out.bytes() };
    writeFileSync(entry.csvFile, writeReportCsv(HEADER, written!, { delimiter: ',', encoding: 'UTF-8' }));
    writeFileSync(entry.parquetFile, out.bytes());
    entries.push(entry);
  }
  const found = await divergences(db, entries, ',');
  assert.match(found.get(0)?.join('\n') ?? '', /in the CSV \(DuckDB\), not in our Parquet.*-1\.501[\s\S]*in our Parquet, not in the CSV \(DuckDB\).*-1\.500/);
  assert.match(found.get(1)?.join('\n') ?? '', /DuckDB reads 2 record\(s\), we read 1/);
  // arrow-rs reads the bytes given, DuckDB (and polars) the file on disk: hand arrow-rs case 1's bytes for case 0's file.
  const readers = await readerDivergences(db, [{ ...entries[0]!, bytes: entries[1]!.bytes! }]);
  assert.match(readers.get(0)?.join('\n') ?? '', /arrow-rs: 1 rows, expected 2/);
}

describe('reliability: property test, our converter against DuckDB read_csv', () => {
  // Five minutes: 2,000 files read by four readers take ~40 s alone, several times that on a shared machine.
  it(`${RUNS} generated reports: the Parquet file holds exactly what DuckDB reads in the raw CSV`, async (t) => {
    const seed = Number(process.env.PROPERTY_SEED ?? Math.floor(Math.random() * 0x7fffffff));
    t.diagnostic(`fast-check seed ${seed} (PROPERTY_SEED=${seed} PROPERTY_RUNS=${RUNS} reproduces this run)`);
    const dir = await mkdtemp(join(tmpdir(), 'reliability-property-'));
    const db = await openDuckDb();
    const failures: string[] = [];
    let rows = 0;
    const ms = { convert: 0, oracle: 0, readers: 0 };
    try {
      const cases = fc.sample(reportCase, { seed, numRuns: RUNS }) as Case[];
      for (let from = 0; from < cases.length; from += BATCH) {
        const converted = new Map<Delimiter, Converted[]>(DELIMITERS.map((d) => [d, []]));
        const texts = new Map<number, Buffer>();
        let t0 = performance.now();
        for (const [i, c] of cases.slice(from, from + BATCH).entries()) {
          const index = from + i;
          rows += c.rows.length;
          const csv = writeReportCsv(HEADER, c.rows, { delimiter: c.delimiter, encoding: 'UTF-8' });
          texts.set(index, csv);
          const out = memorySink();
          // Each batch's Parquet files in a directory of their own, which polars reads in one scan.
          const entry: Converted = { index, csvFile: join(dir, `case-${index}.csv`), parquetFile: join(dir, `batch-${from}-${DELIMITER_NAMES[c.delimiter]}`, `case-${index}.parquet`), rowsRead: 0, rowsRejected: 0 };
          mkdirSync(dirname(entry.parquetFile), { recursive: true });
          try {
            const m = await convertCsvToParquet({ input: once(csv), output: out.sink, report: definitions.get(c.delimiter)!, encoder: 'inline' });
            Object.assign(entry, { rowsRead: m.rowsRead, rowsRejected: m.rowsRejected });
          } catch (e) {
            entry.error = `${(e as Error).name}: ${(e as Error).message}`;
          }
          writeFileSync(entry.csvFile, csv);
          if (!entry.error) {
            entry.bytes = out.bytes();
            writeFileSync(entry.parquetFile, entry.bytes);
          }
          converted.get(c.delimiter)!.push(entry);
        }
        ms.convert += performance.now() - t0;
        t0 = performance.now();
        for (const [delimiter, batch] of converted) {
          const found = await divergences(db, batch, delimiter);
          const t1 = performance.now();
          for (const [index, what] of await readerDivergences(db, batch)) found.set(index, [...(found.get(index) ?? []), ...what]);
          ms.readers += performance.now() - t1;
          for (const [index, what] of found) {
            failures.push(`case ${index} (seed ${seed}, delimiter ${JSON.stringify(delimiter)}):\n  ${what.join('\n  ')}\n  CSV: ${JSON.stringify(texts.get(index)!.toString('utf8')).slice(0, 2000)}`);
          }
        }
        ms.oracle += performance.now() - t0;
        if (failures.length >= 5) break;
      }
      await oracleCanSeeDivergence(db, dir);
      counts.propertyRuns += RUNS;
      t.diagnostic(`${RUNS} reports, ${rows} rows compared; converting ${Math.round(ms.convert)} ms, DuckDB ${Math.round(ms.oracle - ms.readers)} ms, arrow-rs + polars + footer checks ${Math.round(ms.readers)} ms`);
      assert.equal(failures.length, 0, `divergence between our converter and DuckDB:\n${failures.slice(0, 5).join('\n')}`);
      assert.ok(rows > RUNS, 'the reports had rows');
    } finally {
      db.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, { timeout: 300_000 });
});
