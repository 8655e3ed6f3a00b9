import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { parquetMetadata } from 'hyparquet';
import iconv from 'iconv-lite';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };
import type { ByteSink } from '../../functions/core/byte-sink.js';
import { convertCsvToParquet, manifestOf, type ConvertOptions, type Manifest } from '../../functions/core/convert/csv-to-parquet.js';
import { MalformedReport, SchemaDrift, TooManyRejectedRows } from '../../functions/core/errors.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { duckdbViewSql } from '../../functions/core/definitions/table-schema.js';
import { openDuckDb, type TestDb } from '../helpers/duckdb.js';

const sample = loadCatalog().get('transactions');
const HEADER = sample.columns.map((c) => c.header);
const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
const line = (fields: readonly string[]) => fields.map(q).join(',') + '\r\n';

function reportWith(extra: Record<string, unknown>): ReportDefinition {
  // The body asks the gateway for what the definition reads (the definition checks they agree).
  const body = { ...transactionsJson.bodyTemplate, ...(typeof extra.encoding === 'string' ? { reportEncode: extra.encoding } : {}), ...(typeof extra.delimiter === 'string' ? { reportCsvDelimiter: extra.delimiter } : {}) };
  return parseReportDefinition({ ...transactionsJson, bodyTemplate: body, ...extra }, 'test');
}

/** Parquet footer of bytes in memory. */
const footer = (bytes: Buffer) => parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);

/** A ByteSink in memory that remembers what happened to it. */
class MemorySink implements ByteSink {
  chunks: Uint8Array[] = [];
  ended = false;
  aborted: Error | undefined;
  write(bytes: Uint8Array) {
    this.chunks.push(bytes);
  }
  end() {
    this.ended = true;
  }
  abort(reason?: Error) {
    this.aborted = reason ?? new Error('aborted');
  }
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
  get text(): string {
    return this.bytes.toString('utf8');
  }
}

/** Splits input into awkward chunks (1 to 97 bytes), so every boundary case of the reader is crossed. */
function chunked(bytes: Buffer, seed = 7): Readable {
  const parts: Buffer[] = [];
  let x = seed;
  for (let i = 0; i < bytes.length; ) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const n = 1 + (x % 97);
    parts.push(bytes.subarray(i, i + n));
    i += n;
  }
  return Readable.from(parts);
}

/** The hard cases of a real report, one per row, then `n` ordinary rows. Returns the CSV rows and what each must read back as. */
function hardRows(n: number) {
  const descriptions = [
    'comma, inside',
    'quote " inside and "" doubled',
    'LF\ninside',
    'CRLF\r\ninside',
    'CR\rinside',
    'Оплата заказа №1, «ёлка»',
    '', // empty nullable -> null
    '  spaces kept  ',
    'emoji 🎉 and tab\tend',
  ];
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const id = i % 5 === 0 ? (9007199254740993n + BigInt(i)).toString() : String(1000 + i);
    const cents = BigInt(((i * 7919) % 2_000_003) - 1_000_000); // negative and positive
    const amount = `${cents < 0n ? '-' : ''}${(cents < 0n ? -cents : cents) / 1000n}.${String((cents < 0n ? -cents : cents) % 1000n).padStart(3, '0')}`;
    const sec = i % 86400;
    const created = `2026-11-20 ${String(Math.floor(sec / 3600)).padStart(2, '0')}:${String(Math.floor(sec / 60) % 60).padStart(2, '0')}:${String(sec % 60).padStart(2, '0')}`;
    rows.push([
      i % 3 === 0 ? 'ООО "Ромашка", Москва' : 'Acme, Inc.',
      id,
      `ORD-${i}`,
      created,
      amount,
      i % 2 ? 'RUB' : 'USD',
      i % 4 ? 'SALE' : 'REFUND',
      descriptions[i % descriptions.length]!,
      i % 7 ? '21.11.2026' : '01.01.2026',
    ]);
  }
  return rows;
}

/** Decimal text at scale 3 <-> unscaled bigint, independently of the code under test. */
const unscaled = (text: string) => {
  const [int, frac = ''] = text.replace(/^-/, '').split('.');
  const v = BigInt(int!) * 1000n + BigInt(frac.padEnd(3, '0'));
  return text.startsWith('-') ? -v : v;
};
const decimalText = (v: bigint) => {
  const abs = v < 0n ? -v : v;
  return `${v < 0n ? '-' : ''}${abs / 1000n}.${String(abs % 1000n).padStart(3, '0')}`;
};

describe('convertCsvToParquet', () => {
  let dir: string;
  let db: TestDb;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'converter-'));
    db = await openDuckDb();
  });
  after(async () => {
    db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Converts into `<dir>/<name>/connection=default/dt=2026-11-20/part.parquet` and returns the manifest and the view name. */
  async function convert(name: string, input: Buffer | Readable, extra: Partial<ConvertOptions> = {}) {
    const table = join(dir, name, 'connection=default', 'dt=2026-11-20');
    await mkdir(table, { recursive: true });
    const file = join(table, 'part.parquet');
    const rejects = new MemorySink();
    const manifest = await convertCsvToParquet({
      input: Buffer.isBuffer(input) ? chunked(input) : input,
      output: createWriteStream(file),
      rejects,
      report: sample,
      ...extra,
    });
    await db.query(duckdbViewSql(name, join(dir, name, '*', '*', '*.parquet'), (extra.report ?? sample).columns));
    return { manifest, file, rejects };
  }

  for (const encoder of ['inline', 'worker'] as const) {
    it(`reads back every hard case exactly (${encoder} encoder, several row groups and batches)`, async () => {
      const rows = hardRows(9_000);
      const csv = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(line(HEADER) + rows.map(line).join(''))]);
      const name = `hard_${encoder}`;
      const { manifest, file } = await convert(name, csv, { encoder, rowGroupRows: 4_000 });

      assert.equal(manifest.encoder, encoder);
      assert.deepEqual([manifest.rowsRead, manifest.rowsWritten, manifest.rowsRejected], [9_000, 9_000, 0]);
      assert.equal(manifest.bytesIn, csv.length);
      assert.equal(manifest.rowGroups, 3);
      const bytes = await readFile(file);
      assert.equal(manifest.bytesOut, bytes.length);
      const meta = footer(bytes);
      assert.deepEqual(meta.row_groups.map((g) => Number(g.num_rows)), [4_000, 4_000, 1_000]);

      const [agg] = await db.query(
        `SELECT count(*) AS n, CAST(sum(amount) AS VARCHAR) AS total, min(amount)::VARCHAR AS lo, max(amount)::VARCHAR AS hi,
                min(created_date)::VARCHAR AS first, max(created_date)::VARCHAR AS last,
                min(date_of_report)::VARCHAR AS d0, max(date_of_report)::VARCHAR AS d1,
                max(transaction_id) AS big, count(order_description) AS described FROM ${name}`,
      );
      const amounts = rows.map((r) => unscaled(r[4]!));
      assert.deepEqual(agg, {
        n: 9000n,
        total: decimalText(amounts.reduce((a, b) => a + b, 0n)),
        lo: decimalText(amounts.reduce((a, b) => (b < a ? b : a))),
        hi: decimalText(amounts.reduce((a, b) => (b > a ? b : a))),
        first: '2026-11-20 00:00:00',
        last: '2026-11-20 02:29:59',
        d0: '2026-01-01',
        d1: '2026-11-21',
        big: 9007199254740993n + 8995n,
        described: BigInt(rows.filter((r) => r[7] !== '').length),
      });

      // Every value of every row, byte for byte, keyed by the id.
      const back = await db.query(
        `SELECT merchant_name, transaction_id::VARCHAR AS id, merchant_oid, strftime(created_date, '%Y-%m-%d %H:%M:%S') AS created,
                amount::VARCHAR AS amount, currency, transaction_type, order_description, strftime(date_of_report, '%d.%m.%Y') AS day
         FROM ${name} ORDER BY transaction_id`,
      );
      const expected = [...rows].sort((a, b) => (BigInt(a[1]!) < BigInt(b[1]!) ? -1 : 1));
      assert.equal(back.length, expected.length);
      for (const [i, r] of back.entries()) {
        const e = expected[i]!;
        assert.deepEqual(
          [r.merchant_name, r.id, r.merchant_oid, r.created, r.amount, r.currency, r.transaction_type, r.order_description, r.day],
          [e[0], e[1], e[2], e[3], decimalText(unscaled(e[4]!)), e[5], e[6], e[7] === '' ? null : e[7], e[8]],
          `row with id ${e[1]}`,
        );
      }
    });
  }

  it('reads windows-1251 reports', async () => {
    const rows = hardRows(50).map((r) => r.map((f) => f.replace('🎉', ':)'))); // windows-1251 has no emoji
    const csv = iconv.encode(line(HEADER) + rows.map(line).join(''), 'windows-1251');
    assert.ok(!csv.includes(Buffer.from('Ромашка')), 'the input really is not UTF-8');
    const { manifest } = await convert('cp1251', csv, { report: reportWith({ encoding: 'windows-1251' }) });
    assert.equal(manifest.rowsWritten, 50);
    const names = await db.query(`SELECT DISTINCT merchant_name FROM cp1251 ORDER BY 1`);
    assert.deepEqual(names.map((r) => r.merchant_name), ['Acme, Inc.', 'ООО "Ромашка", Москва']);
    const [d] = await db.query(`SELECT order_description FROM cp1251 WHERE merchant_oid = 'ORD-5'`);
    assert.equal(d!.order_description, 'Оплата заказа №1, «ёлка»');
  });

  it('turns a header-only report into a valid file with zero rows', async () => {
    const { manifest, file } = await convert('empty', Buffer.from(line(HEADER)));
    assert.deepEqual([manifest.rowsRead, manifest.rowsWritten, manifest.rowsRejected, manifest.rowGroups], [0, 0, 0, 0]);
    const [row] = await db.query('SELECT count(*) AS n FROM empty');
    assert.equal(row!.n, 0n);
    const types = await db.types(`SELECT * FROM read_parquet('${file}', hive_partitioning = false)`);
    assert.equal(types.amount, 'DECIMAL(18,3)');
  });

  it('refuses a drifted header before writing a byte, naming missing, extra and moved columns', async () => {
    const drifted = ['Transaction_id', 'Merchant_Name', ...HEADER.slice(2, -1), 'Status']; // swapped, one gone, one new
    const output = new MemorySink();
    const rejects = new MemorySink();
    const input = Buffer.from(line(drifted) + line(hardRows(1)[0]!));
    await assert.rejects(convertCsvToParquet({ input: chunked(input), output, rejects, report: sample }), (e: unknown) => {
      assert.ok(e instanceof SchemaDrift);
      assert.deepEqual(e.missing, ['Date_of_report']);
      assert.deepEqual(e.extra, ['Status']);
      assert.deepEqual(e.moved, ['Merchant_Name', 'Transaction_id']);
      return true;
    });
    assert.equal(output.bytes.length, 0);
    assert.ok(output.aborted && !output.ended, 'the output is aborted, never completed');
    assert.equal(rejects.bytes.length, 0);
    await assert.rejects(convertCsvToParquet({ input: chunked(Buffer.alloc(0)), output: new MemorySink(), report: sample }), SchemaDrift);
  });

  /** Rows with one bad value each, after rows whose values span lines (LF, CRLF, CR), to prove line numbers are physical. */
  function badReport() {
    const good = hardRows(6); // rows 2..7 of the file; descriptions 2, 3, 4 hold LF, CRLF, CR
    const bad = (i: number, col: number, value: string) => {
      const r = [...hardRows(7 + i)[6 + i]!];
      r[col] = value;
      return r;
    };
    const rows = [
      ...good,
      bad(1, 4, '12.3456'), // too many fractional digits
      bad(2, 1, '12a'), // not an integer
      bad(3, 3, '2026-02-30 10:00:00'), // no such day
      bad(4, 0, ''), // empty, not nullable
      ['only', 'three', 'fields'],
      bad(5, 8, '2026-11-21'), // wrong date pattern
    ];
    return { csv: Buffer.from(line(HEADER) + rows.map(line).join('')), good: good.length, rows };
  }

  it('quarantines bad rows with their line and reason, then fails the run (no rejects allowed)', async () => {
    const { csv } = badReport();
    const output = new MemorySink();
    const rejects = new MemorySink();
    let error: unknown;
    await convertCsvToParquet({ input: chunked(csv), output, rejects, report: sample }).catch((e: unknown) => (error = e));
    assert.ok(error instanceof TooManyRejectedRows, String(error));
    assert.deepEqual([error.rejected, error.read, error.maxShare], [6, 12, 0]);
    const m = manifestOf(error)!;
    assert.deepEqual([m.rowsRead, m.rowsWritten, m.rowsRejected], [12, 6, 6]);
    assert.ok(output.aborted && !output.ended, 'the Parquet output is aborted');
    assert.ok(rejects.ended, 'the rejects file is complete');

    const lines = rejects.text.split('\r\n');
    assert.equal(lines[0], '"line","column","reason","record"');
    // Header on line 1; rows 1-6 take lines 2-10 (three of them span two lines), so the first bad row starts on line 11.
    assert.match(lines[1]!, /^"11","Amount","more than 3 fractional digits for decimal\(18,3\): ""12.3456""","/);
    assert.match(lines[2]!, /^"12","Transaction_id","not an integer: ""12a""","/);
    assert.match(lines[3]!, /^"13","Created_date","day 30 does not exist in 2026-02: /);
    assert.match(lines[4]!, /^"14","Merchant_Name","empty, and the column is not nullable","/);
    assert.equal(lines[5], '"15","","has 3 field(s), the header has 9","""only"",""three"",""fields"""');
    assert.match(lines[6]!, /^"16","Date_of_report","does not match the pattern ""dd.MM.yyyy"": ""2026-11-21""","/);
    // The record column is the original record, re-serialised: parse it back.
    const { parse } = await import('csv-parse/sync');
    const [row] = parse(rejects.text, { columns: true, relax_quotes: false }) as Array<Record<string, string>>;
    const [record] = parse(row!.record!) as string[][];
    assert.equal(record![4], '12.3456');
    assert.equal(lines.length, 8); // six rows and the final CRLF
  });

  it('publishes when the rejected share is within the allowed one, with counts', async () => {
    const { csv } = badReport();
    const { manifest, rejects } = await convert('tolerant', csv, { maxRejectShare: 0.5 });
    assert.deepEqual([manifest.rowsRead, manifest.rowsWritten, manifest.rowsRejected], [12, 6, 6]);
    assert.equal(manifest.rejectBytes, rejects.bytes.length);
    const [row] = await db.query('SELECT count(*) AS n FROM tolerant');
    assert.equal(row!.n, 6n);
    await assert.rejects(convertCsvToParquet({ input: chunked(csv), output: new MemorySink(), report: sample, maxRejectShare: 0.49 }), TooManyRejectedRows);
  });

  it('fails on a file that is not CSV or not its encoding, instead of guessing', async () => {
    const unclosed = Buffer.from(line(HEADER) + '"a","1","o","2026-11-20 00:00:00","1.000","RUB","SALE","never closed,"21.11.2026"\r\n');
    await assert.rejects(convertCsvToParquet({ input: chunked(unclosed), output: new MemorySink(), report: sample }), MalformedReport);
    const latin = Buffer.concat([Buffer.from(line(HEADER)), iconv.encode(line(hardRows(6)[5]!), 'windows-1251')]);
    await assert.rejects(convertCsvToParquet({ input: chunked(latin), output: new MemorySink(), report: sample }), /not UTF-8/);
  });

  it('skips blank lines and counts them, and does not count the final line break', async () => {
    const rows = hardRows(3);
    const csv = Buffer.from(line(HEADER) + '\r\n' + line(rows[0]!) + '\r\n\r\n' + line(rows[1]!) + line(rows[2]!).trimEnd());
    const { manifest } = await convert('blanks', csv);
    assert.deepEqual([manifest.rowsWritten, manifest.emptyLines], [3, 3]);
  });

  it('waits for a slow sink (backpressure) and bounds row groups by bytes', async () => {
    let pending = 0;
    let maxPending = 0;
    const chunks: Uint8Array[] = [];
    const slow: ByteSink = {
      async write(bytes) {
        pending++;
        maxPending = Math.max(maxPending, pending);
        await new Promise((r) => setTimeout(r, 5));
        chunks.push(bytes);
        pending--;
      },
      end() {},
    };
    const big = 'x'.repeat(300_000);
    const rows = hardRows(40).map((r, i) => (i % 2 ? r : r.map((f, c) => (c === 7 ? big : f))));
    const manifest = await convertCsvToParquet({
      input: chunked(Buffer.from(line(HEADER) + rows.map(line).join('')), 3),
      output: slow,
      report: sample,
      rowGroupBytes: 1_000_000,
    });
    assert.equal(maxPending, 1, 'never writes while a write is pending');
    assert.ok(manifest.rowGroups >= 6, `row groups bounded by bytes: ${manifest.rowGroups}`);
    assert.equal(Number(footer(Buffer.concat(chunks)).num_rows), 40);
  });

  it('keeps rowsRead = rowsWritten + rowsRejected for any mix of good and bad rows', async () => {
    const good = hardRows(30);
    const field = fc.oneof(fc.constantFrom('', 'x', '1', '-1.5', '9223372036854775808', '2026-11-20 00:00:00', '21.11.2026', '1e3', '"', '\r\n'), fc.string({ maxLength: 5 }));
    const record = fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 29 }).map((i) => good[i]!) },
      { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 0, max: 29 }), fc.integer({ min: 0, max: 8 }), field).map(([i, c, v]) => good[i]!.map((f, k) => (k === c ? v : f))) },
      { weight: 1, arbitrary: fc.array(field, { minLength: 1, maxLength: 12 }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(record, { maxLength: 60 }), fc.integer({ min: 1, max: 7 }), async (records, groupRows) => {
        const csv = Buffer.from(line(HEADER) + records.map(line).join(''));
        const output = new MemorySink();
        const rejects = new MemorySink();
        const m: Manifest = await convertCsvToParquet({ input: chunked(csv, groupRows), output, rejects, report: sample, maxRejectShare: 1, rowGroupRows: groupRows, encoder: 'inline' });
        assert.equal(m.rowsRead, records.length); // a lone empty field is written as "", so no record is a blank line
        assert.equal(m.rowsRead, m.rowsWritten + m.rowsRejected);
        assert.equal(Number(footer(output.bytes).num_rows), m.rowsWritten);
        const rejectLines = m.rowsRejected ? rejects.text.split('\r\n').length - 2 : 0;
        assert.ok(rejectLines >= m.rowsRejected, 'one rejects row (or more physical lines) per rejected record');
      }),
      { numRuns: 40 },
    );
  });
});
