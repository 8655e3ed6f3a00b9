import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import type { RowGroup } from 'hyparquet';
import { columnSchema, type ColumnDefinition } from '../../functions/core/definitions/report-definition.js';
import { RowGroupEncoder, STATS_BYTES } from '../../functions/core/parquet/encoder.js';
import { RowBatchBuilder } from '../../functions/core/parquet/row-group-buffer.js';
import { readParquetFooter, type ColumnChunk } from '../helpers/parquet-footer.js';

/**
 * Parquet files written by the encoder (functions/core/parquet/encoder.ts, column-buffers.ts, pages.ts) from
 * typed batches, read back by hyparquet (values, statistics as its logical types read them) and by
 * test/helpers/parquet-footer.ts, a Thrift reader that shares no code with the writer (page headers, encodings,
 * offsets, raw statistics). Every expectation is worked out by hand from the rows; the file layout is
 * docs/parquet.md's. DuckDB reads the same files in parquet-encoder-duckdb.test.ts.
 */

const define = (name: string, type: string, extra: Record<string, unknown> = {}): ColumnDefinition => columnSchema.parse({ header: name, name, type, ...extra });

interface Written {
  file: Uint8Array;
  /** What `deliver` got, call by call. */
  deliveries: Uint8Array[];
  encoder: RowGroupEncoder;
}

/** Each group's rows typed in batches of `batchRows` (the converter's 4,096 by default), one row group per group. */
async function write(columns: ColumnDefinition[], groups: string[][][], options: { pageSize?: number; batchRows?: number } = {}): Promise<Written> {
  const deliveries: Uint8Array[] = [];
  const encoder = new RowGroupEncoder({ columns, ...(options.pageSize ? { pageSize: options.pageSize } : {}) }, (bytes) => {
    deliveries.push(bytes);
  });
  const builder = new RowBatchBuilder(columns);
  for (const rows of groups) {
    rows.forEach((row, i) => {
      const typed = builder.add(row);
      assert.equal(typeof typed, 'number', `row ${JSON.stringify(row)} types: ${JSON.stringify(typed)}`);
      if ((i + 1) % (options.batchRows ?? 4096) === 0) encoder.add(builder.take());
    });
    if (builder.rows > 0) encoder.add(builder.take(true));
    await encoder.writeRowGroup();
  }
  await encoder.finish();
  return { file: Buffer.concat(deliveries), deliveries, encoder };
}

const arrayBuffer = (file: Uint8Array) => file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer;
const readRows = (file: Uint8Array) => parquetReadObjects({ file: arrayBuffer(file) });
const day = (iso: string) => new Date(`${iso}T00:00:00Z`);
const at = (iso: string) => new Date(`${iso}Z`);
/** A chunk's pages as type:encoding:values (rows, nulls included). */
const pages = (chunk: ColumnChunk) => chunk.pages.map((p) => `${p.type}:${p.encoding}:${p.numValues}`);
const hex = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('hex') : undefined);

describe('RowGroupEncoder: values read back', () => {
  const columns = [
    define('id', 'bigint'),
    define('amount', 'decimal(12,2)', { nullable: true }),
    define('created', 'timestamp', { pattern: 'yyyy-MM-dd HH:mm:ss' }),
    define('booked', 'date', { pattern: 'yyyy-MM-dd', nullable: true }),
    define('refunded', 'boolean', { nullable: true }),
    define('currency', 'string'),
    define('memo', 'string', { nullable: true }),
  ];

  it('every kind, nulls, ids past 2^53, across batches and row groups', async () => {
    const { file, encoder } = await write(columns, [
      [
        ['1', '12.34', '2026-11-20 23:59:59', '2026-11-20', 'true', 'EUR', 'first'],
        ['9007199254740993', '', '2026-11-21 00:00:00', '', '', 'USD', ''],
        ['-5', '-0.01', '1969-12-31 23:59:59', '1969-12-31', 'false', 'EUR', 'Оплата №1'],
      ],
      [
        ['9223372036854775807', '9999999999.99', '2000-02-29 12:00:00', '2000-02-29', 'no', 'EUR', ''],
        ['-9223372036854775808', '', '2026-11-20 00:00:00', '', '', 'RUB', 'last 😀'],
      ],
    ], { batchRows: 2 });
    assert.deepEqual(await readRows(file), [
      { id: 1n, amount: 12.34, created: at('2026-11-20T23:59:59'), booked: day('2026-11-20'), refunded: true, currency: 'EUR', memo: 'first' },
      { id: 9007199254740993n, amount: null, created: at('2026-11-21T00:00:00'), booked: null, refunded: null, currency: 'USD', memo: null },
      { id: -5n, amount: -0.01, created: at('1969-12-31T23:59:59'), booked: day('1969-12-31'), refunded: false, currency: 'EUR', memo: 'Оплата №1' },
      { id: 9223372036854775807n, amount: 9999999999.99, created: at('2000-02-29T12:00:00'), booked: day('2000-02-29'), refunded: false, currency: 'EUR', memo: null },
      { id: -9223372036854775808n, amount: null, created: at('2026-11-20T00:00:00'), booked: null, refunded: null, currency: 'RUB', memo: 'last 😀' },
    ]);
    assert.equal(encoder.rowGroups, 2);
    const footer = readParquetFooter(file);
    assert.deepEqual(footer.rowGroups.map((g) => g.numRows), [3n, 2n]);
    assert.equal(footer.numRows, 5n);
  });

  it('a file with no row group is a valid, empty Parquet file with the schema', async () => {
    const { file, encoder, deliveries } = await write(columns, []);
    assert.equal(encoder.rowGroups, 0);
    assert.equal(deliveries.length, 1, 'magic and footer in one delivery, at finish()');
    const footer = readParquetFooter(file);
    assert.equal(footer.numRows, 0n);
    assert.deepEqual(footer.columns.map((c) => c.name), ['id', 'amount', 'created', 'booked', 'refunded', 'currency', 'memo']);
    assert.deepEqual(await readRows(file), []);
  });
});

describe('RowGroupEncoder: pages, encodings and statistics of each chunk', () => {
  const columns = [
    define('id', 'bigint'),
    define('amount', 'decimal(12,2)', { nullable: true }),
    define('currency', 'string'),
    define('memo', 'string', { nullable: true }),
    define('refunded', 'boolean', { nullable: true }),
    define('booked', 'date', { pattern: 'yyyy-MM-dd', nullable: true }),
  ];
  // 20 rows: amount null every third row (0, 3, ...), currency USD every fourth (0, 4, ...), memo null every fifth,
  // refunded null on even rows, booked always the same day.
  const rows = Array.from({ length: 20 }, (_, i) => [
    String(1000 + i),
    i % 3 === 0 ? '' : `${i}.05`,
    i % 4 ? 'EUR' : 'USD',
    i % 5 ? `memo-${String(i).padStart(5, '0')}` : '',
    i % 2 ? 'true' : '',
    '2026-11-20',
  ]);

  it('pages of 32 bytes of values: a page closes before the value that reaches 32 bytes; nulls weigh nothing; an index 4 bytes', async () => {
    const { file } = await write(columns, [rows], { pageSize: 32, batchRows: 7 });
    const chunks = readParquetFooter(file).rowGroups[0]!.columns;
    const [id, amount, currency, memo, refunded, booked] = chunks;
    // 8-byte ids: 3 a page
    assert.deepEqual(pages(id!), [...Array<string>(6).fill('DATA_PAGE:DELTA_BINARY_PACKED:3'), 'DATA_PAGE:DELTA_BINARY_PACKED:2']);
    // 8-byte amounts, 3 values a page, the nulls of rows 0, 3, 6, ... in between: rows [0,5) [5,10) [10,14) [14,19) [19,20)
    assert.deepEqual(pages(amount!), ['DATA_PAGE:PLAIN:5', 'DATA_PAGE:PLAIN:5', 'DATA_PAGE:PLAIN:4', 'DATA_PAGE:PLAIN:5', 'DATA_PAGE:PLAIN:1']);
    // two currencies: a dictionary page, then 4-byte indexes, 7 a page
    assert.deepEqual(pages(currency!), ['DICTIONARY_PAGE:PLAIN:2', 'DATA_PAGE:RLE_DICTIONARY:7', 'DATA_PAGE:RLE_DICTIONARY:7', 'DATA_PAGE:RLE_DICTIONARY:6']);
    // 10-byte memos, 3 a page, nulls at rows 0, 5, 10, 15: rows [0,4) [4,8) [8,12) [12,16) [16,19) [19,20)
    assert.deepEqual(pages(memo!), ['DATA_PAGE:PLAIN:4', 'DATA_PAGE:PLAIN:4', 'DATA_PAGE:PLAIN:4', 'DATA_PAGE:PLAIN:4', 'DATA_PAGE:PLAIN:3', 'DATA_PAGE:PLAIN:1']);
    // 10 booleans of 1 byte: one page
    assert.deepEqual(pages(refunded!), ['DATA_PAGE:PLAIN:20']);
    // one date: a dictionary of one entry, indexes 7 a page
    assert.deepEqual(pages(booked!), ['DICTIONARY_PAGE:PLAIN:1', 'DATA_PAGE:RLE_DICTIONARY:7', 'DATA_PAGE:RLE_DICTIONARY:7', 'DATA_PAGE:RLE_DICTIONARY:6']);
    assert.deepEqual(chunks.map((c) => c.encodings), [['DELTA_BINARY_PACKED'], ['PLAIN', 'RLE'], ['PLAIN', 'RLE_DICTIONARY'], ['PLAIN', 'RLE'], ['PLAIN', 'RLE'], ['PLAIN', 'RLE_DICTIONARY', 'RLE']]);
    assert.deepEqual(chunks.map((c) => c.encodingStats.map((s) => `${s.pageType}:${s.encoding}:${s.count}`)), [
      ['DATA_PAGE:DELTA_BINARY_PACKED:7'],
      ['DATA_PAGE:PLAIN:5'],
      ['DICTIONARY_PAGE:PLAIN:1', 'DATA_PAGE:RLE_DICTIONARY:3'],
      ['DATA_PAGE:PLAIN:6'],
      ['DATA_PAGE:PLAIN:1'],
      ['DICTIONARY_PAGE:PLAIN:1', 'DATA_PAGE:RLE_DICTIONARY:3'],
    ]);
    // and every value reads back, page by page
    const read = await readRows(file);
    assert.deepEqual(read.map((r) => [r.id, r.amount, r.currency, r.memo, r.refunded]), rows.map((r) => [BigInt(r[0]!), r[1] ? Number(r[1]) : null, r[2], r[3] || null, r[4] ? true : null]));
    assert.ok(read.every((r) => (r.booked as Date).getTime() === day('2026-11-20').getTime()));
  });

  it('null counts, min and max of each chunk, as hyparquet reads them and as bytes', async () => {
    const { file } = await write(columns, [rows]);
    const stats = parquetMetadata(arrayBuffer(file)).row_groups[0]!.columns.map((c) => c.meta_data!.statistics!);
    assert.deepEqual(stats.map((s) => [s.null_count, s.min_value, s.max_value]), [
      [0n, 1000n, 1019n],
      [7n, 1.05, 19.05],
      [0n, 'EUR', 'USD'],
      [4n, 'memo-00001', 'memo-00019'],
      [10n, true, true],
      [0n, day('2026-11-20'), day('2026-11-20')],
    ]);
    const raw = readParquetFooter(file).rowGroups[0]!.columns.map((c) => [hex(c.statistics?.minValue), hex(c.statistics?.maxValue)]);
    // little-endian 1000 and 1019; 105 and 1905 cents; day 20777 (2026-11-20)
    assert.deepEqual(raw[0], ['e803000000000000', 'fb03000000000000']);
    assert.deepEqual(raw[1], ['6900000000000000', '7107000000000000']);
    assert.deepEqual(raw[5], ['29510000', '29510000']);
  });

  it('each chunk in the footer: offsets, sizes and value counts that lead to its pages', async () => {
    const { file } = await write(columns, [rows, rows.slice(0, 5)], { pageSize: 32 });
    const footer = readParquetFooter(file); // walks each chunk's pages from its first to exactly its end
    const meta = parquetMetadata(arrayBuffer(file));
    let end = 4; // after PAR1; then each chunk where the one before it ended
    footer.rowGroups.forEach((group, g) => {
      const hyGroup = meta.row_groups[g]!;
      for (const [c, chunk] of group.columns.entries()) {
        const first = chunk.pages[0]!;
        assert.equal(first.offset, end, `group ${g} column ${chunk.path}: starts where the previous chunk ended`);
        assert.equal(Number(hyGroup.columns[c]!.file_offset), end);
        const dictionary = chunk.pages.find((p) => p.type === 'DICTIONARY_PAGE');
        assert.equal(chunk.dictionaryPageOffset, dictionary ? BigInt(dictionary.offset) : undefined);
        assert.equal(chunk.dataPageOffset, BigInt(chunk.pages.find((p) => p.type === 'DATA_PAGE')!.offset));
        assert.equal(chunk.numValues, group.numRows);
        assert.equal(chunk.codec, 'SNAPPY');
        const headerBytes = chunk.pages.map((p, i) => (chunk.pages[i + 1]?.offset ?? end + Number(chunk.totalCompressedSize)) - p.offset - p.compressedSize);
        assert.equal(chunk.totalUncompressedSize, BigInt(chunk.pages.reduce((n, p, i) => n + p.uncompressedSize + headerBytes[i]!, 0)), `${chunk.path}: headers and uncompressed pages`);
        end += Number(chunk.totalCompressedSize);
      }
      assert.equal(group.totalByteSize, group.columns.reduce((n, c) => n + c.totalUncompressedSize, 0n));
      assert.equal(hyGroup.total_compressed_size, group.columns.reduce((n, c) => n + c.totalCompressedSize, 0n));
      assert.equal(hyGroup.num_rows, BigInt(g === 0 ? 20 : 5));
    });
  });
});

describe('RowGroupEncoder: statistics at their edges', () => {
  it('strings in byte order (multi-byte after ASCII), truncated past 64 bytes and then flagged inexact', async () => {
    const long = `${'m'.repeat(70)}`;
    const { file } = await write([define('s', 'string'), define('t', 'string')], [[
      ['b', long],
      ['é', 'a'],
      ['a', `${long}z`],
      ['ab', 'A'],
      ['Z', 'b'],
    ]]);
    const [s, t] = readParquetFooter(file).rowGroups[0]!.columns.map((c) => c.statistics!);
    assert.deepEqual([Buffer.from(s!.minValue!).toString(), Buffer.from(s!.maxValue!).toString()], ['Z', 'é']);
    assert.equal(STATS_BYTES, 64);
    assert.equal(Buffer.from(t!.minValue!).toString(), 'A');
    // the max, 71 bytes, kept as its first 64 with the last one raised: still at or above every value
    assert.deepEqual([Buffer.from(t!.maxValue!).toString(), t!.isMaxValueExact], [`${'m'.repeat(63)}n`, false]);
  });

  it('booleans: all false, all true, both; a chunk of nulls only has a null count and no min or max', async () => {
    const columns = [define('f', 'boolean'), define('t', 'boolean'), define('both', 'boolean'), define('none', 'boolean', { nullable: true }), define('s', 'string', { nullable: true })];
    const { file } = await write(columns, [[['false', 'true', 'true', '', ''], ['0', '1', 'false', '', ''], ['no', 'yes', 'true', '', '']]]);
    const stats = parquetMetadata(arrayBuffer(file)).row_groups[0]!.columns.map((c) => c.meta_data!.statistics!);
    assert.deepEqual(stats.map((s) => [s.null_count, s.min_value, s.max_value]), [[0n, false, false], [0n, true, true], [0n, false, true], [3n, undefined, undefined], [3n, undefined, undefined]]);
    assert.deepEqual(await readRows(file), [
      { f: false, t: true, both: true, none: null, s: null },
      { f: false, t: true, both: false, none: null, s: null },
      { f: false, t: true, both: true, none: null, s: null },
    ]);
  });

  it('int64, decimals and dates that fall and rise: min and max wherever they are in the chunk', async () => {
    const columns = [define('id', 'bigint'), define('amount', 'decimal(18,2)'), define('booked', 'date', { pattern: 'yyyy-MM-dd' }), define('created', 'timestamp', { pattern: 'yyyy-MM-dd HH:mm:ss' })];
    const { file } = await write(columns, [[
      ['5', '0.10', '2026-11-20', '2026-11-20 10:00:00'],
      ['-4294967296', '-99999999.99', '2026-11-19', '1970-01-01 00:00:00'],
      ['4294967296', '1.00', '2026-11-22', '2026-11-21 00:00:00'],
      ['-1', '9999999999999999.99', '1969-12-31', '1969-12-31 23:59:59'],
      ['4294967295', '0', '2026-11-21', '2026-11-20 10:00:01'],
    ]]);
    const stats = parquetMetadata(arrayBuffer(file)).row_groups[0]!.columns.map((c) => c.meta_data!.statistics!);
    assert.deepEqual(stats.map((s) => [s.min_value, s.max_value]), [
      [-4294967296n, 4294967296n],
      [-99999999.99, Number('9999999999999999.99')],
      [day('1969-12-31'), day('2026-11-22')],
      [at('1969-12-31T23:59:59'), at('2026-11-21T00:00:00')],
    ]);
    const raw = readParquetFooter(file).rowGroups[0]!.columns.map((c) => [hex(c.statistics?.minValue), hex(c.statistics?.maxValue)]);
    // decimal(18,2) as unscaled int64: -9999999999 and 999999999999999999, little-endian
    assert.deepEqual(raw[1], ['011cf4abfdffffff', 'ffff63a7b3b6e00d']);
  });
});

describe('RowGroupEncoder: a dictionary only where it halves the chunk', () => {
  const encodingsOf = async (columns: ColumnDefinition[], rows: string[][], batchRows?: number) =>
    readParquetFooter((await write(columns, [rows], batchRows ? { batchRows } : {})).file).rowGroups[0]!.columns.map((c) => c.encodings.join(','));

  it('dates: two equal ones halve (4 + 0 bits of index against 8 bytes); one alone or all distinct stay PLAIN', async () => {
    const booked = [define('booked', 'date', { pattern: 'yyyy-MM-dd' })];
    assert.deepEqual(await encodingsOf(booked, [['2026-11-20'], ['2026-11-20']]), ['PLAIN,RLE_DICTIONARY']);
    assert.deepEqual(await encodingsOf(booked, [['2026-11-20']]), ['PLAIN']);
    assert.deepEqual(await encodingsOf(booked, [['2026-11-20'], ['2026-11-21'], ['2026-11-20']]), ['PLAIN']);
  });

  it('decimals: few distinct values make a dictionary; ids and timestamps stay DELTA_BINARY_PACKED however they repeat', async () => {
    const columns = [define('amount', 'decimal(12,2)'), define('id', 'bigint'), define('created', 'timestamp', { pattern: 'yyyy-MM-dd HH:mm:ss' })];
    const rows = Array.from({ length: 40 }, (_, i) => [i % 2 ? '10.00' : '25.50', '7', '2026-11-20 10:00:00']);
    assert.deepEqual(await encodingsOf(columns, rows), ['PLAIN,RLE_DICTIONARY', 'DELTA_BINARY_PACKED', 'DELTA_BINARY_PACKED']);
    const { file } = await write(columns, [rows]);
    const read = await readRows(file);
    assert.deepEqual(read.slice(0, 3).map((r) => r.amount), [25.5, 10, 25.5]);
  });

  it('decimals whose sampled values are over 90% distinct stay PLAIN, though a dictionary would halve them', async () => {
    // 3,000 values, each repeated 3 times: the 1,000 sampled (every third) are all distinct, so no dictionary is tried
    const rows = Array.from({ length: 3000 }, (_, i) => [`${Math.floor(i / 3)}.00`]);
    assert.deepEqual(await encodingsOf([define('amount', 'decimal(12,2)')], rows), ['PLAIN']);
  });

  it('strings: dictionary batches merged into one dictionary; text batches turned into one when their first values repeat', async () => {
    const columns = [define('currency', 'string'), define('memo', 'string', { nullable: true })];
    // 300 distinct memos in batches of 100: merged, their dictionary does not halve them; then two values repeated
    const rows = Array.from({ length: 600 }, (_, i) => [['EUR', 'USD', 'RUB'][i % 3]!, i < 300 ? `memo ${i}` : i % 7 ? 'same' : '']);
    const { file } = await write(columns, [rows.slice(0, 300)], { batchRows: 100 });
    assert.deepEqual(readParquetFooter(file).rowGroups[0]!.columns.map((c) => c.encodings.join(',')), ['PLAIN,RLE_DICTIONARY', 'PLAIN,RLE']);
    const repeated = rows.slice(300).concat(rows.slice(300));
    const again = await write(columns, [repeated], { batchRows: 300 });
    assert.deepEqual(readParquetFooter(again.file).rowGroups[0]!.columns.map((c) => c.encodings.join(',')), ['PLAIN,RLE_DICTIONARY', 'PLAIN,RLE_DICTIONARY,RLE']);
    const read = await readRows(again.file);
    assert.deepEqual(read.slice(0, 9).map((r) => [r.currency, r.memo]), [['EUR', 'same'], ['USD', null], ['RUB', 'same'], ['EUR', 'same'], ['USD', 'same'], ['RUB', 'same'], ['EUR', 'same'], ['USD', 'same'], ['RUB', null]]);
    assert.deepEqual(read.map((r) => [r.currency, r.memo]), repeated.map((r) => [r[0], r[1] || null]));
  });

  it('strings: a dictionary that does not halve the chunk is written as text', async () => {
    // 4 distinct values, each twice: 4 entries of 9 bytes and a byte of indexes against 8 values of 9 bytes
    const rows = ['aaaaa', 'bbbbb', 'ccccc', 'ddddd', 'aaaaa', 'bbbbb', 'ccccc', 'ddddd'].map((v) => [v]);
    const { file } = await write([define('s', 'string')], [rows]);
    assert.deepEqual(readParquetFooter(file).rowGroups[0]!.columns.map((c) => c.encodings.join(',')), ['PLAIN']);
    assert.deepEqual((await readRows(file)).map((r) => r.s), rows.map((r) => r[0]));
  });

  it('a column that turns into text in a later batch keeps the values of the batches before it', async () => {
    const rows = [...Array.from({ length: 10 }, (_, i) => [i % 2 ? 'a' : 'b']), ...Array.from({ length: 300 }, (_, i) => [`v${i}`]), ['a'], ['']];
    const { file } = await write([define('s', 'string', { nullable: true })], [rows], { batchRows: 10 });
    assert.deepEqual((await readRows(file)).map((r) => r.s), rows.map((r) => r[0] || null));
  });

  it('strings: a batch sent as text makes a dictionary again when the first 512 values repeat and the chunk halves', async () => {
    // 600 times "a", then 257 distinct values (the builder turns the batch into text), then 3,000 times "a"
    const rows = [...Array<string>(600).fill('a'), ...Array.from({ length: 257 }, (_, i) => `v${i}`), ...Array<string>(3000).fill('a')].map((v) => [v]);
    const { file } = await write([define('s', 'string')], [rows]);
    const chunk = readParquetFooter(file).rowGroups[0]!.columns[0]!;
    assert.deepEqual([chunk.encodings, chunk.pages[0]!.type, chunk.pages[0]!.numValues], [['PLAIN', 'RLE_DICTIONARY'], 'DICTIONARY_PAGE', 258]);
    assert.deepEqual((await readRows(file)).map((r) => r.s), rows.map((r) => r[0]));
  });

  it('a dictionary batch after a text batch of the same group is appended as text', async () => {
    const encoder = (deliveries: Uint8Array[]) => new RowGroupEncoder({ columns: [define('s', 'string', { nullable: true })] }, (bytes) => void deliveries.push(bytes));
    const deliveries: Uint8Array[] = [];
    const e = encoder(deliveries);
    const plainBytes = Buffer.from([2, 0, 0, 0, 0x68, 0x69, 3, 0, 0, 0, 0xc3, 0xa9, 0x21]); // "hi", "é!"
    e.add({ rows: 3, columns: [{ kind: 'utf8', bytes: plainBytes, lengths: new Int32Array([2, -1, 3]) }] });
    e.add({ rows: 4, columns: [{ kind: 'dict', values: ['x', 'yz'], codes: new Int32Array([1, -1, 0, 1]) }] });
    await e.writeRowGroup();
    await e.finish();
    const file = Buffer.concat(deliveries);
    assert.deepEqual((await readRows(file)).map((r) => r.s), ['hi', null, 'é!', 'yz', null, 'x', 'yz']);
    assert.equal(readParquetFooter(file).rowGroups[0]!.columns[0]!.statistics!.nullCount, 2n);
  });
});

describe('RowGroupEncoder: delivering bytes, fragments and appended groups', () => {
  const columns = [define('id', 'bigint'), define('currency', 'string'), define('amount', 'decimal(12,2)', { nullable: true })];
  const typed = (rows: string[][]) => {
    const builder = new RowBatchBuilder(columns);
    for (const row of rows) builder.add(row);
    return builder.take();
  };

  it('nothing before the first row group; then each column chunk as it is written; a slow sink holds writeRowGroup back', async () => {
    const deliveries: Uint8Array[] = [];
    let release: () => void = () => {};
    const encoder = new RowGroupEncoder({ columns }, (bytes) => {
      deliveries.push(bytes);
      return new Promise<void>((resolve) => (release = resolve));
    });
    encoder.add(typed([['1', 'EUR', '1.00'], ['2', 'USD', '']]));
    assert.equal(deliveries.length, 0, 'the PAR1 magic waits for the first chunk');
    let written = false;
    const group = encoder.writeRowGroup().then(() => (written = true));
    assert.equal(deliveries.length, 3, 'one delivery a column chunk');
    assert.equal(Buffer.from(deliveries[0]!.subarray(0, 4)).toString(), 'PAR1');
    await Promise.resolve();
    assert.equal(written, false, 'waits for the sink');
    release();
    await group;
    assert.equal(written, true);
    const finished = encoder.finish();
    release();
    await finished;
    const file = Buffer.concat(deliveries);
    const footer = readParquetFooter(file);
    // each delivery ends where a chunk ends
    let end = 0;
    const ends = deliveries.slice(0, 3).map((d) => (end += d.length));
    assert.deepEqual(ends, footer.rowGroups[0]!.columns.map((c) => Number((c.dictionaryPageOffset ?? c.dataPageOffset) + c.totalCompressedSize)));
    assert.deepEqual(await readRows(file), [{ id: 1n, currency: 'EUR', amount: 1 }, { id: 2n, currency: 'USD', amount: null }]);
  });

  it('writeRowGroup with no rows added writes no group', async () => {
    const deliveries: Uint8Array[] = [];
    const encoder = new RowGroupEncoder({ columns }, (bytes) => void deliveries.push(bytes));
    await encoder.writeRowGroup();
    assert.equal(encoder.rowGroups, 0);
    assert.equal(deliveries.length, 0);
    encoder.add(typed([['1', 'EUR', '']]));
    await encoder.writeRowGroup();
    await encoder.writeRowGroup();
    await encoder.finish();
    assert.equal(encoder.rowGroups, 1);
    assert.equal(readParquetFooter(Buffer.concat(deliveries)).rowGroups.length, 1);
  });

  it('a fragment: row groups from offset 0, no footer; appended to a file, its offsets move to where it lands', async () => {
    const fragmentBytes: Uint8Array[] = [];
    const fragment = new RowGroupEncoder({ columns }, (bytes) => void fragmentBytes.push(bytes), { fragment: true });
    fragment.add(typed([['3', 'RUB', '3.00'], ['4', 'RUB', '']]));
    await fragment.writeRowGroup();
    fragment.add(typed([['5', 'EUR', '5.55']]));
    await fragment.writeRowGroup();
    await assert.rejects(fragment.finish(), { message: 'a fragment has no footer: append its row groups to a file' });
    assert.equal(fragment.groups.length, 2);
    assert.equal(fragment.groups[0]!.columns[0]!.file_offset, 0n, 'from offset 0, no PAR1 before it');
    assert.notEqual(Buffer.from(fragmentBytes[0]!.subarray(0, 4)).toString(), 'PAR1');
    const second = fragment.groups[1]!;
    const firstLength = Number(second.columns[0]!.file_offset);
    const bytes = Buffer.concat(fragmentBytes);

    const deliveries: Uint8Array[] = [];
    const file = new RowGroupEncoder({ columns }, (b) => void deliveries.push(b));
    file.add(typed([['1', 'EUR', '1.00'], ['2', 'USD', '2.00']]));
    await file.writeRowGroup();
    file.releaseBuffers();
    await file.appendRowGroup([bytes.subarray(0, firstLength)], structuredClone(fragment.groups[0]!) as RowGroup);
    await file.appendRowGroup([bytes.subarray(firstLength, firstLength + 10), bytes.subarray(firstLength + 10)], structuredClone(second) as RowGroup);
    await file.finish();
    assert.equal(file.rowGroups, 3);
    // three chunks of the first group, the fragment's three pieces as they came, the footer: no empty delivery between
    assert.deepEqual(deliveries.slice(3, 6).map((d) => d.length), [firstLength, 10, bytes.length - firstLength - 10]);
    assert.equal(deliveries.length, 7);
    const whole = Buffer.concat(deliveries);
    const footer = readParquetFooter(whole); // each chunk's pages where its offsets say
    assert.deepEqual(footer.rowGroups.map((g) => g.numRows), [2n, 2n, 1n]);
    assert.equal(footer.numRows, 5n);
    assert.deepEqual(await readRows(whole), [
      { id: 1n, currency: 'EUR', amount: 1 },
      { id: 2n, currency: 'USD', amount: 2 },
      { id: 3n, currency: 'RUB', amount: 3 },
      { id: 4n, currency: 'RUB', amount: null },
      { id: 5n, currency: 'EUR', amount: 5.55 },
    ]);
  });

  it('releaseBuffers keeps the rows of a group still open', async () => {
    const deliveries: Uint8Array[] = [];
    const encoder = new RowGroupEncoder({ columns }, (b) => void deliveries.push(b));
    encoder.add(typed([['1', 'EUR', '1.00']]));
    encoder.releaseBuffers();
    encoder.add(typed([['2', 'USD', '']]));
    await encoder.writeRowGroup();
    encoder.releaseBuffers();
    encoder.add(typed([['3', 'RUB', '3.00']]));
    await encoder.writeRowGroup();
    await encoder.finish();
    assert.deepEqual((await readRows(Buffer.concat(deliveries))).map((r) => r.id), [1n, 2n, 3n]);
  });

  it('times its encoding, in all and per column', async () => {
    const { encoder } = await write(columns, [[['1', 'EUR', '1.00']]]);
    assert.equal(encoder.columnMs.length, 3);
    assert.ok(encoder.encodeMs > 0);
    assert.ok([...encoder.columnMs].every((ms) => ms > 0));
    assert.ok(encoder.encodeMs >= encoder.columnMs.reduce((a, b) => a + b, 0));
  });
});

describe('RowGroupEncoder: pages that hold only nulls', () => {
  it('a value wider than the page closes a page of the nulls before it; a null after a full page closes one too', async () => {
    const columns = [
      define('amount', 'decimal(12,2)', { nullable: true }),
      define('memo', 'string', { nullable: true }),
      define('id', 'bigint', { nullable: true }),
      define('booked', 'date', { pattern: 'yyyy-MM-dd', nullable: true }),
      define('flag', 'boolean', { nullable: true }),
    ];
    const rows = [
      ['', '', '', '', ''],
      ['1.00', 'aaaaa1', '1', '2026-11-20', 'true'],
      ['2.00', 'aaaaa2', '2', '2026-11-20', 'false'],
      ['', '', '', '', ''],
      ['4.00', 'aaaaa4', '4', '2026-11-20', 'true'],
    ];
    // 4-byte pages: rows [0,1) (nulls only), [1,2), [2,3), [3,4) (the null after a full page), [4,5)
    const { file } = await write(columns, [rows], { pageSize: 4 });
    const chunks = readParquetFooter(file).rowGroups[0]!.columns;
    assert.deepEqual(pages(chunks[0]!), Array<string>(5).fill('DATA_PAGE:PLAIN:1'));
    assert.deepEqual(pages(chunks[1]!), Array<string>(5).fill('DATA_PAGE:PLAIN:1'));
    assert.deepEqual(pages(chunks[2]!), Array<string>(5).fill('DATA_PAGE:DELTA_BINARY_PACKED:1'));
    assert.deepEqual(pages(chunks[3]!), ['DICTIONARY_PAGE:PLAIN:1', ...Array<string>(5).fill('DATA_PAGE:RLE_DICTIONARY:1')]);
    assert.deepEqual(pages(chunks[4]!), ['DATA_PAGE:PLAIN:5']);
    assert.deepEqual(await readRows(file), [
      { amount: null, memo: null, id: null, booked: null, flag: null },
      { amount: 1, memo: 'aaaaa1', id: 1n, booked: day('2026-11-20'), flag: true },
      { amount: 2, memo: 'aaaaa2', id: 2n, booked: day('2026-11-20'), flag: false },
      { amount: null, memo: null, id: null, booked: null, flag: null },
      { amount: 4, memo: 'aaaaa4', id: 4n, booked: day('2026-11-20'), flag: true },
    ]);
  });

  it('booleans bit-packed across bytes: 19 values, and pages of 8 and 3', async () => {
    const values = Array.from({ length: 19 }, (_, i) => (i % 3 === 0 || i === 17 ? 'true' : 'false'));
    const { file } = await write([define('flag', 'boolean')], [values.map((v) => [v])], { pageSize: 9 });
    // 1 byte a value: a page closes before the 9th byte, so 8 rows a page
    assert.deepEqual(pages(readParquetFooter(file).rowGroups[0]!.columns[0]!), ['DATA_PAGE:PLAIN:8', 'DATA_PAGE:PLAIN:8', 'DATA_PAGE:PLAIN:3']);
    assert.deepEqual((await readRows(file)).map((r) => r.flag), values.map((v) => v === 'true'));
  });
});

describe('RowGroupEncoder: page sizes and the footer', () => {
  it('PLAIN dates weigh 4 bytes: pages of 2 rows at 12 bytes', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => [`2026-11-${String(i + 1).padStart(2, '0')}`]);
    const { file } = await write([define('booked', 'date', { pattern: 'yyyy-MM-dd' })], [rows], { pageSize: 12 });
    assert.deepEqual(pages(readParquetFooter(file).rowGroups[0]!.columns[0]!), Array<string>(5).fill('DATA_PAGE:PLAIN:2'));
    assert.deepEqual((await readRows(file)).map((r) => r.booked), rows.map((r) => day(r[0]!)));
  });

  it('by default a page holds 1 MiB of values: 131,071 ids, then the rest', async () => {
    const deliveries: Uint8Array[] = [];
    const encoder = new RowGroupEncoder({ columns: [define('id', 'bigint')] }, (bytes) => void deliveries.push(bytes));
    encoder.add({ rows: 140_000, columns: [{ kind: 'int64', values: BigInt64Array.from({ length: 140_000 }, (_, i) => BigInt(i)) }] });
    await encoder.writeRowGroup();
    await encoder.finish();
    const footer = readParquetFooter(Buffer.concat(deliveries));
    assert.deepEqual(pages(footer.rowGroups[0]!.columns[0]!), ['DATA_PAGE:DELTA_BINARY_PACKED:131071', 'DATA_PAGE:DELTA_BINARY_PACKED:8929']);
    assert.match(footer.createdBy ?? '', /^paynet-reports-pipeline version \d+\.\d+\.\d+/);
  });
});
