import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { functionS3Client } from '../../functions/aws/env.js';
import { logger, metrics } from '../../functions/aws/powertools.js';
import { parseRawObject, type ParseResult } from '../../functions/parse-report/parse-object.js';
import { REPORT_HEADER, generateTransactions, writeReportCsv } from '../../local/simulator/index.js';
import { metricPoints } from '../helpers/handler-harness.js';
import { objectExists } from '../helpers/lake-inspect.js';
import { curatedKeysOf, failedParse, lineAt, loadedParse, logLine, recordStarts } from './expect.js';
import { buckets, CSV, day, ENVIRONMENT, getWorld, it, keysOf, type Run, type World } from './harness.js';

/**
 * Bad data in an otherwise good report, through the real chain: the raw object lands in the raw bucket,
 * its ObjectCreated event reaches the parse handler. Every bad value is either quarantined (the rejects file
 * names its physical line, its column and why) or the whole file is refused with a typed error; nothing is
 * loaded that is not exactly what the gateway sent. The shipped definition allows no rejected row
 * (rejects.maxShare 0), so a quarantined row also refuses the file; the "tolerant" variant shows the rows
 * beside it being published while the bad ones wait in rejected/.
 */

const LOGIN = 'reliability-bad-data';
const COL = Object.fromEntries(REPORT_HEADER.map((h, i) => [h, i])) as Record<(typeof REPORT_HEADER)[number], number>;
const rowsOf = (date: string, n = 20) => generateTransactions(LOGIN, day(date), n);
const csvOf = (rows: string[][]) => writeReportCsv(REPORT_HEADER, rows, CSV);
const withValue = (row: string[], column: keyof typeof COL, value: string) => row.map((v, i) => (i === COL[column] ? value : v));

/** The same report definition with another setting: what the user would change to get past the fault. */
function variant(extra: Record<string, unknown>) {
  // The body asks the gateway for what the definition reads (the catalog checks they agree).
  const body = { ...transactionsJson.bodyTemplate, ...(typeof extra.encoding === 'string' ? { reportEncode: extra.encoding } : {}) };
  return ReportCatalog.fromSources([{ file: 'reliability variant', raw: { ...transactionsJson, bodyTemplate: body, ...extra } }]);
}

/** The parse handler's core with a variant definition, on a day's raw object (the handler has the shipped one). */
async function parseWith(w: World, date: string, catalog: ReportCatalog): Promise<Run<ParseResult>> {
  return w.capture(`parseRawObject ${date}`, () =>
    parseRawObject(
      { bucket: buckets.raw, key: keysOf(date).raw },
      { s3: functionS3Client(), curatedBucket: buckets.curated, catalog, environment: ENVIRONMENT, logger, metrics },
      `variant-${date}`,
    ),
  );
}

/** The rejects file of a day as [line, column, reason, record fields]. */
async function rejectsOf(w: World, date: string): Promise<Array<{ line: number; column: string; reason: string; record: string[] }>> {
  const text = (await w.read('curated', keysOf(date).rejected)).toString('utf8');
  const rows = parseCsv(text, { columns: true }) as Array<Record<string, string>>;
  return rows.map((r) => ({ line: Number(r.line), column: r.column!, reason: r.reason!, record: (parseCsv(r.record!, { relax_column_count: true }) as string[][])[0] ?? [] }));
}

/** The physical line each data record starts on, counted on the bytes (header = line 1). */
const dataLines = (csv: Buffer) => recordStarts(csv).slice(1).map((at) => lineAt(csv, at));

/** A refused file: the typed error on the failed message and in the manifest, no table file. */
async function assertRefused(w: World, run: Run<void>, date: string, code: string) {
  const { error } = failedParse(run, date);
  assert.equal(error.name, code);
  const m = await w.manifest(date);
  assert.deepEqual([m.outcome, m.error?.code], ['failed', code]);
  assert.equal(logLine(run, 'Load failed: nothing was written to the table').code, code);
  assert.equal(await objectExists(w.lake.client, buckets.curated, keysOf(date).table), false, 'no table file');
  assert.deepEqual(await w.incomplete(), { raw: [], curated: [] });
  return m;
}

/**
 * Bad rows at `bad` (index -> replacement row), in a report of `n` rows: refused with the shipped definition,
 * each rejected row listed with its line, column and reason; then loaded with a tolerant definition, the
 * good rows in the table and the bad ones in rejected/, none lost.
 */
async function quarantineCase(date: string, bad: Map<number, { row: string[]; column: string; reason: string }>, n = 20) {
  const w = await getWorld();
  const good = rowsOf(date, n);
  const rows = good.map((r, i) => bad.get(i)?.row ?? r);
  const csv = csvOf(rows);
  const lines = dataLines(csv);
  const expected = [...bad].sort(([a], [b]) => a - b).map(([i, b]) => ({ line: lines[i]!, column: b.column, reason: b.reason, record: b.row }));

  const run = await w.putRaw(date, csv);
  const m = await assertRefused(w, run, date, 'TooManyRejectedRows');
  assert.deepEqual(m.rows, { read: n, written: n - bad.size, rejected: bad.size, emptyLines: 0 });
  assert.match(m.error!.message, new RegExp(`^Report "transactions": ${bad.size} of ${n} row\\(s\\) failed typing, above the allowed share 0\\.`));
  assert.deepEqual(await rejectsOf(w, date), expected);
  assert.deepEqual(metricPoints(run.lines, 'RowsRejected').map((p) => p.value), [bad.size], 'the rejected-rows alarm sees them');

  // What to do, if the rows are to be loaded anyway: allow a share of rejects (or fix the definition).
  const tolerant = await parseWith(w, date, variant({ rejects: { maxShare: 0.5 } }));
  assert.equal(tolerant.error, undefined, String(tolerant.error));
  assert.equal(tolerant.result!.outcome, 'loaded');
  assert.deepEqual(await rejectsOf(w, date), expected);
  const table = await w.table(date);
  const goodIds = rows.filter((_, i) => !bad.has(i)).map((r) => r[COL.Transaction_id]!);
  assert.deepEqual(table.ids.sort(), [...goodIds].sort(), 'every good row, once');
  assert.equal(table.rows + expected.length, n, 'nothing lost: written + rejected = read');
}

describe('reliability: bad data through the parse handler', () => {
  it('unparsable numbers: each row quarantined with its line, column and reason', async () => {
    const date = '2026-03-01';
    const g = rowsOf(date);
    const cases: Array<[number, keyof typeof COL, string, string]> = [
      [1, 'Amount', '12,50', 'not a decimal: "12,50"'],
      [3, 'Amount', '1e3', 'not a decimal: "1e3"'],
      [5, 'Amount', '12.3456', 'more than 3 fractional digits for decimal(18,3): "12.3456"'],
      [6, 'Amount', '1234567890123456.5', 'more than 15 integer digits for decimal(18,3): "1234567890123456.5"'],
      [8, 'Amount', ' 12.500', 'not a decimal: " 12.500"'],
      [9, 'Amount', '', 'empty, and the column is not nullable'],
      [11, 'Transaction_id', '12a', 'not an integer: "12a"'],
      [13, 'Transaction_id', '9223372036854775808', 'integer out of the bigint (int64) range: "9223372036854775808"'],
      [15, 'Transaction_id', '0x1F', 'not an integer: "0x1F"'],
    ];
    await quarantineCase(date, new Map(cases.map(([i, column, value, reason]) => [i, { row: withValue(g[i]!, column, value), column, reason }])));
  });

  it('unparsable dates and times: each row quarantined with its line, column and reason', async () => {
    const date = '2026-03-02';
    const g = rowsOf(date);
    const cases: Array<[number, keyof typeof COL, string, string]> = [
      [0, 'Created_date', '2026-02-30 10:00:00', 'day 30 does not exist in 2026-02: "2026-02-30 10:00:00"'],
      [2, 'Created_date', '2026-03-02T10:00:00', 'does not match the pattern "yyyy-MM-dd HH:mm:ss": "2026-03-02T10:00:00"'],
      [4, 'Created_date', '2026-03-02 24:00:00', 'hour 24 out of range: "2026-03-02 24:00:00"'],
      [7, 'Created_date', '2026-03-02 10:00', 'does not match the pattern "yyyy-MM-dd HH:mm:ss": "2026-03-02 10:00"'],
      [10, 'Date_of_report', '2026-03-02', 'does not match the pattern "dd.MM.yyyy": "2026-03-02"'],
      [12, 'Date_of_report', '32.01.2026', 'day 32 does not exist in 2026-01: "32.01.2026"'],
      [14, 'Date_of_report', '02.13.2026', 'month 13 out of range: "02.13.2026"'],
    ];
    await quarantineCase(date, new Map(cases.map(([i, column, value, reason]) => [i, { row: withValue(g[i]!, column, value), column, reason }])));
  });

  it('wrong column counts: too few and too many fields, quarantined whole', async () => {
    const date = '2026-03-03';
    const g = rowsOf(date);
    await quarantineCase(
      date,
      new Map([
        [4, { row: g[4]!.slice(0, 3), column: '', reason: 'has 3 field(s), the header has 9' }],
        [9, { row: [...g[9]!, 'APPROVED'], column: '', reason: 'has 10 field(s), the header has 9' }],
        [16, { row: [''], column: '', reason: 'has 1 field(s), the header has 9' }],
      ]),
    );
  });

  it('a 1 MB text field: loaded exactly (commas, quotes, line breaks, Cyrillic and astral characters kept)', async () => {
    const w = await getWorld();
    const date = '2026-03-04';
    const piece = 'Заказ №1, "VIP"\r\nline 2\rline 3\n🎉 ';
    const big = piece.repeat(Math.ceil(1_000_000 / piece.length));
    const rows = rowsOf(date).map((r, i) => (i === 7 ? withValue(r, 'Order_description', big) : r));
    const run = await w.putRaw(date, csvOf(rows));
    loadedParse(run, date);
    const [[length, md5]] = (await w.query(
      `SELECT length(order_description), md5(order_description) FROM transactions WHERE dt = '${date}' AND transaction_id = ${rows[7]![COL.Transaction_id]}`,
    )) as [[number, string]];
    assert.equal(Number(length), [...big].length);
    assert.equal(md5, createHash('md5').update(big).digest('hex'));
    assert.equal((await w.table(date)).rows, 20);
  });

  it('a 1 MB value in a number column: quarantined with a short reason, the whole record kept in rejects', async () => {
    const w = await getWorld();
    const date = '2026-03-05';
    const huge = '9'.repeat(1_000_000);
    const rows = rowsOf(date).map((r, i) => (i === 3 ? withValue(r, 'Amount', huge) : r));
    const run = await w.putRaw(date, csvOf(rows));
    await assertRefused(w, run, date, 'TooManyRejectedRows');
    const [reject] = await rejectsOf(w, date);
    assert.equal(reject!.reason, `more than 15 integer digits for decimal(18,3): "${'9'.repeat(40)}…"`);
    assert.equal(reject!.record[COL.Amount], huge, 'the record is kept whole, to fix and replay');
  });

  it('NUL bytes: kept as they are in a text value, quarantined in a number, and a UTF-16 file refused', async () => {
    const w = await getWorld();
    const date = '2026-03-06';
    const rows = rowsOf(date).map((r, i) => (i === 2 ? withValue(r, 'Order_description', 'before\u0000after') : r));
    loadedParse(await w.putRaw(date, csvOf(rows)), date);
    const [[text]] = (await w.query(`SELECT order_description FROM transactions WHERE dt = '${date}' AND transaction_id = ${rows[2]![COL.Transaction_id]}`)) as [[string]];
    assert.equal(text, 'before\u0000after', 'a text value is the gateway\'s, byte for byte');

    const nulAmount = '2026-03-07';
    const g = rowsOf(nulAmount);
    await quarantineCase(nulAmount, new Map([[5, { row: withValue(g[5]!, 'Amount', '10\u0000'), column: 'Amount', reason: 'not a decimal: "10\\u0000"' }]]));

    const utf16 = '2026-03-08';
    const run = await w.putRaw(utf16, iconv.encode(csvOf(rowsOf(utf16)).toString('utf8'), 'utf16-le'));
    const m = await assertRefused(w, run, utf16, 'MalformedReport');
    // Cyrillic and « » turn into bytes that are not UTF-8; an ASCII-only file fails one step later, on the NUL before its first quote.
    assert.match(m.error!.message, /^Report "transactions" is not a well-formed CSV file: bytes that are not UTF-8 between byte \d+ and \d+/);
    // What to do: declare the encoding.
    const declared = await parseWith(w, utf16, variant({ encoding: 'UTF-16LE' }));
    assert.equal(declared.result?.outcome, 'loaded', String(declared.error));
    assert.deepEqual((await w.table(utf16)).ids.sort(), rowsOf(utf16).map((r) => r[COL.Transaction_id]!).sort());
  });

  it('a byte order mark: a UTF-8 BOM is dropped and the file loaded; a UTF-16 BOM is refused', async () => {
    const w = await getWorld();
    const date = '2026-03-09';
    const rows = rowsOf(date).map((r, i) => (i === 4 ? withValue(r, 'Order_description', '\uFEFFzero-width no-break space kept') : r));
    const csv = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), csvOf(rows)]);
    loadedParse(await w.putRaw(date, csv), date);
    const m = await w.manifest(date);
    assert.equal(m.source.bytes, csv.length, 'the raw file is kept with its BOM');
    assert.deepEqual(m.rows, { read: 20, written: 20, rejected: 0, emptyLines: 0 });
    // As hex: JavaScript's TextDecoder (DuckDB's and hyparquet's JS bindings) drops a leading U+FEFF when decoding.
    const [[kept]] = (await w.query(`SELECT hex(order_description) FROM transactions WHERE dt = '${date}' AND transaction_id = ${rows[4]![COL.Transaction_id]}`)) as [[string]];
    assert.equal(kept, Buffer.from('\uFEFFzero-width no-break space kept').toString('hex').toUpperCase(), 'a BOM inside a value is data, kept');

    const utf16 = '2026-03-10';
    const run = await w.putRaw(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(csvOf(rowsOf(utf16)).toString('utf8'), 'utf16-le')]));
    const refused = await assertRefused(w, run, utf16, 'MalformedReport');
    assert.match(refused.error!.message, /bytes that are not UTF-8 between byte 0 and \d+/);
  });

  it('mixed line endings (CRLF, LF and CR between records, and inside values): every row loaded, values unchanged', async () => {
    const w = await getWorld();
    const date = '2026-03-11';
    const rows = rowsOf(date);
    const csv = mixedEndings([[...REPORT_HEADER], ...rows]);
    loadedParse(await w.putRaw(date, csv), date);
    const got = (await w.query(`SELECT CAST(transaction_id AS VARCHAR), order_description FROM transactions WHERE dt = '${date}'`)) as Array<[string, string | null]>;
    const want = new Map(rows.map((r) => [r[COL.Transaction_id]!, r[COL.Order_description] || null]));
    assert.equal(got.length, rows.length);
    for (const [id, description] of got) assert.equal(description, want.get(id), `row ${id}`);
  });

  it('mixed line endings: a bad row is reported on the line an editor shows', async () => {
    const date = '2026-03-12';
    const w = await getWorld();
    const rows = rowsOf(date).map((r, i) => (i === 17 ? withValue(r, 'Amount', 'n/a') : r));
    const csv = mixedEndings([[...REPORT_HEADER], ...rows]);
    const run = await w.putRaw(date, csv);
    await assertRefused(w, run, date, 'TooManyRejectedRows');
    const [reject] = await rejectsOf(w, date);
    assert.deepEqual([reject!.line, reject!.column, reject!.reason], [dataLines(csv)[17], 'Amount', 'not a decimal: "n/a"']);
  });

  it('an unescaped quote inside a quoted value: the file is refused (MalformedReport), never split into shifted columns', async () => {
    const w = await getWorld();
    const date = '2026-03-14';
    const rows = rowsOf(date);
    const good = csvOf(rows).toString('utf8');
    // The gateway forgot to double a quote: "Bakery "Mueller", Inc".
    const broken = Buffer.from(good.replace(`"${rows[6]![COL.Merchant_Name]!.replace(/"/g, '""')}"`, '"Bakery "Mueller", Inc"'), 'utf8');
    assert.notEqual(broken.length, Buffer.byteLength(good));
    const run = await w.putRaw(date, broken);
    const m = await assertRefused(w, run, date, 'MalformedReport');
    assert.match(m.error!.message, /^Report "transactions" is not a well-formed CSV file: Invalid Closing Quote: .*the last good record ended on line \d+\)/);
    assert.deepEqual(await curatedKeysOf(w, date), [keysOf(date).manifest]);
  });

  it('windows-1251 text declared as UTF-8: refused (MalformedReport), raw kept; declared as windows-1251 it loads', async () => {
    const w = await getWorld();
    const date = '2026-03-13';
    const rows = rowsOf(date);
    const cp1251 = iconv.encode(csvOf(rows).toString('utf8'), 'windows-1251');
    const run = await w.putRaw(date, cp1251);
    const m = await assertRefused(w, run, date, 'MalformedReport');
    assert.match(m.error!.message, /^Report "transactions" is not a well-formed CSV file: bytes that are not UTF-8 between byte \d+ and \d+\. .*Check the report definition's encoding/);
    assert.deepEqual(await curatedKeysOf(w, date), [keysOf(date).manifest]);

    const fixed = await parseWith(w, date, variant({ encoding: 'windows-1251' }));
    assert.equal(fixed.result?.outcome, 'loaded', String(fixed.error));
    const names = (await w.query(`SELECT CAST(transaction_id AS VARCHAR), merchant_name FROM transactions WHERE dt = '${date}'`)) as Array<[string, string]>;
    const want = new Map(rows.map((r) => [r[COL.Transaction_id]!, r[COL.Merchant_Name]!]));
    assert.equal(names.length, rows.length);
    assert.ok(names.some(([, n]) => /[А-я]/.test(n)), 'Cyrillic names are in the report');
    for (const [id, name] of names) assert.equal(name, want.get(id));
  });
});

/** Records quoted as the gateway quotes them, separated by CRLF, LF and CR in turn. */
function mixedEndings(records: string[][]): Buffer {
  const endings = ['\r\n', '\n', '\r'];
  return Buffer.from(records.map((r, i) => r.map((v) => `"${v.replace(/"/g, '""')}"`).join(',') + endings[i % 3]).join(''), 'utf8');
}
