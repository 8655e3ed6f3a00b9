import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnSchema, type ColumnDefinition } from '../../functions/core/definitions/report-definition.js';
import { BATCH_ROWS, RowBatchBuilder, writeUtf8, type RowBatch, type WireColumn } from '../../functions/core/parquet/row-group-buffer.js';

/**
 * The parsing thread's typed batches (functions/core/parquet/row-group-buffer.ts): each CSV field typed into its
 * wire form, checked against values worked out by hand, JavaScript's Date for epoch milliseconds and days, and
 * Node's Buffer for UTF-8 and Parquet's PLAIN layout of strings (a 4-byte little-endian length, then the bytes).
 */

const column = (type: string, extra: Record<string, unknown> = {}): ColumnDefinition => columnSchema.parse({ header: type, name: 'c', type, ...extra });
const bigint = (extra = {}) => column('bigint', extra);
const decimal = (type: string, extra = {}) => column(type, extra);
const timestamp = (extra = {}) => column('timestamp', { pattern: 'yyyy-MM-dd HH:mm:ss', ...extra });
const date = (extra = {}) => column('date', { pattern: 'dd.MM.yyyy', ...extra });
const boolean = (extra = {}) => column('boolean', extra);
const string = (extra = {}) => column('string', extra);
const nullable = { nullable: true };

const ms = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => BigInt(Date.UTC(y, mo - 1, d, h, mi, s));
const days = (y: number, mo: number, d: number) => Date.UTC(y, mo - 1, d) / 86_400_000;

/** PLAIN strings as Buffer writes them: each a 4-byte little-endian length, then its UTF-8. */
function plain(values: readonly string[]): number[] {
  return [...Buffer.concat(values.flatMap((v) => {
    const bytes = Buffer.from(v, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    return [length, bytes];
  }))];
}

function added(builder: RowBatchBuilder, ...records: string[][]): Array<number | object> {
  return records.map((record) => builder.add(record));
}

/** The batch's columns as plain arrays, so a comparison shows values rather than typed-array dumps. */
function shown(batch: RowBatch): unknown[] {
  return batch.columns.map((c: WireColumn) => {
    switch (c.kind) {
      case 'utf8':
        return { kind: c.kind, bytes: [...c.bytes], lengths: [...c.lengths] };
      case 'dict':
        return { kind: c.kind, values: [...c.values], codes: [...c.codes] };
      default:
        return { kind: c.kind, values: [...c.values], ...('nulls' in c ? { nulls: c.nulls ? [...c.nulls] : c.nulls } : {}) };
    }
  });
}

describe('writeUtf8: the bytes Buffer.from(text, "utf8") gives', () => {
  it('at every width boundary, surrogate pairs, and lone surrogates as U+FFFD', () => {
    const texts = [
      '', 'abc', '\u0000\u007f', '\u0080', 'é', '\u07ff', '\u0800', 'я€', '\ud7ff', '\ue000', '\uffff', '😀', '\ud800\udc00', '\udbff\udfff',
      '\ud800', 'x\ud800', '\ud800a', '\udc00', '\udfffz', '\udbff\ud800\udc00', '\ud83d\ue000', '\ud83d\udbff', 'a😀é\u0800z',
    ];
    for (const text of texts) {
      const out = new Uint8Array(3 + text.length * 3 + 2).fill(0xee);
      const end = writeUtf8(text, out, 3);
      const expected = Buffer.from(text, 'utf8');
      assert.deepEqual([...out.subarray(3, end)], [...expected], JSON.stringify(text));
      assert.equal(end, 3 + expected.length, `${JSON.stringify(text)}: returns the end`);
      assert.deepEqual([...out.subarray(0, 3)], [0xee, 0xee, 0xee], 'nothing before `at`');
    }
  });

  it('literal bytes for a few characters', () => {
    const bytes = (text: string) => {
      const out = new Uint8Array(text.length * 3);
      return [...out.subarray(0, writeUtf8(text, out, 0))];
    };
    assert.deepEqual(bytes('A'), [0x41]);
    assert.deepEqual(bytes('é'), [0xc3, 0xa9]);
    assert.deepEqual(bytes('€'), [0xe2, 0x82, 0xac]);
    assert.deepEqual(bytes('😀'), [0xf0, 0x9f, 0x98, 0x80]);
    assert.deepEqual(bytes('\ud800'), [0xef, 0xbf, 0xbd]);
  });
});

describe('RowBatchBuilder: a batch of typed rows', () => {
  it('types each kind into its wire form: int64, int32 days, booleans, dictionaries, with their nulls', () => {
    const columns = [bigint(), decimal('decimal(12,2)', nullable), timestamp(), date(nullable), boolean(nullable), string(), string(nullable)];
    const builder = new RowBatchBuilder(columns);
    assert.equal(builder.fixedRowBytes, 8 + 8 + 8 + 4 + 1, 'int64 8 bytes, a date 4, a boolean 1, a string nothing fixed');
    const sizes = added(builder,
      ['1', '12.34', '2026-11-20 23:59:59', '20.11.2026', 'true', 'EUR', 'hello'],
      ['9007199254740993', '', '2026-11-20 23:59:59', '', '', 'USD', ''],
      ['-4294967297', '-0.01', '1969-12-31 23:59:59', '31.12.1969', 'NO', 'EUR', 'é😀'],
      ['4294967296', '0', '2000-02-29 12:00:00', '29.02.2000', '1', 'USD', 'hello'],
    );
    // fixed 29, then each non-empty string's length in UTF-16 units + 4
    assert.deepEqual(sizes, [29 + 7 + 9, 29 + 7, 29 + 7 + 7, 29 + 7 + 9]);
    assert.equal(builder.rows, 4);
    const batch = builder.take();
    assert.equal(batch.rows, 4);
    const [id, amount, at, day, ok, currency, memo] = batch.columns;
    assert.deepEqual(id, { kind: 'int64', values: new BigInt64Array([1n, 9007199254740993n, -4294967297n, 4294967296n]) }, 'no nulls array for a required column');
    assert.equal(amount!.kind, 'int64');
    assert.deepEqual([...(amount as { nulls: Uint8Array }).nulls], [0, 1, 0, 0]);
    const amounts = (amount as { values: BigInt64Array }).values;
    assert.deepEqual([amounts[0], amounts[2], amounts[3]], [1234n, -1n, 0n]);
    assert.deepEqual(at, { kind: 'int64', values: new BigInt64Array([ms(2026, 11, 20, 23, 59, 59), ms(2026, 11, 20, 23, 59, 59), -1000n, ms(2000, 2, 29, 12)]) });
    assert.equal(day!.kind, 'int32');
    const dayValues = (day as { values: Int32Array }).values;
    assert.deepEqual([dayValues[0], dayValues[2], dayValues[3]], [days(2026, 11, 20), -1, days(2000, 2, 29)]);
    assert.deepEqual([...(day as { nulls: Uint8Array }).nulls], [0, 1, 0, 0]);
    assert.equal(ok!.kind, 'bool');
    const okValues = (ok as { values: Uint8Array }).values;
    assert.deepEqual([okValues[0], okValues[2], okValues[3]], [1, 0, 1]);
    assert.deepEqual([...(ok as { nulls: Uint8Array }).nulls], [0, 1, 0, 0]);
    assert.deepEqual(currency, { kind: 'dict', values: ['EUR', 'USD'], codes: new Int32Array([0, 1, 0, 1]) });
    assert.deepEqual(memo, { kind: 'dict', values: ['hello', 'é😀'], codes: new Int32Array([0, -1, 1, 0]) });
  });

  it('a value of a nullable column after a null is marked present again', () => {
    const builder = new RowBatchBuilder([bigint(nullable), date(nullable), boolean(nullable)]);
    added(builder, ['', '', ''], ['7', '02.01.1970', 'false'], ['', '', ''], ['8', '03.01.1970', 'yes']);
    assert.deepEqual(shown(builder.take()), [
      { kind: 'int64', values: [0n, 7n, 0n, 8n], nulls: [1, 0, 1, 0] },
      { kind: 'int32', values: [0, 1, 0, 2], nulls: [1, 0, 1, 0] },
      { kind: 'bool', values: [0, 0, 0, 1], nulls: [1, 0, 1, 0] },
    ]);
  });

  it('int64 values either side of 2^32 and 2^53, negative too, through the two 32-bit halves or a BigInt', () => {
    const values = ['0', '-1', '4294967295', '4294967296', '-4294967296', '-4294967295', '9007199254740991', '-9007199254740991', '9007199254740992',
      '9223372036854775807', '-9223372036854775808', '+42', '007'];
    const expected = [0n, -1n, 4294967295n, 4294967296n, -4294967296n, -4294967295n, 9007199254740991n, -9007199254740991n, 9007199254740992n,
      9223372036854775807n, -9223372036854775808n, 42n, 7n];
    const typed = (definition: ColumnDefinition, texts: string[]) => {
      const builder = new RowBatchBuilder([definition]);
      for (const v of texts) assert.equal(typeof builder.add([v]), 'number', v);
      return [...(builder.take().columns[0] as { values: BigInt64Array }).values];
    };
    assert.deepEqual(typed(bigint(), values), expected);
    // decimal(18,0) holds 18 digits: the int64 extremes have 19
    const decimals = [...values.slice(0, 9), '999999999999999999', '-999999999999999999', '+42', '007'];
    assert.deepEqual(typed(decimal('decimal(18,0)'), decimals), [...expected.slice(0, 9), 999999999999999999n, -999999999999999999n, 42n, 7n]);
  });

  it('decimals scale to their unscaled int64, past 2^53 by the BigInt path', () => {
    const builder = new RowBatchBuilder([decimal('decimal(18,2)'), decimal('decimal(18,3)')]);
    added(builder, ['1234567890123456.78', '123456789012345.678'], ['-1234567890123456.7', '5'], ['0.5', '-0.001']);
    const [two, three] = builder.take().columns as Array<{ values: BigInt64Array }>;
    assert.deepEqual([...two!.values], [123456789012345678n, -123456789012345670n, 50n]);
    assert.deepEqual([...three!.values], [123456789012345678n, 5000n, -1n]);
  });

  it("safeValues holds the last row's bigint and decimal as safe numbers, NaN past 2^53, untouched by a null", () => {
    const builder = new RowBatchBuilder([bigint(nullable), decimal('decimal(18,2)', nullable), string()]);
    builder.add(['42', '-1.5', 'x']);
    assert.deepEqual([...builder.safeValues], [42, -150, 0]);
    builder.add(['9007199254740993', '1234567890123456.78', 'x']);
    assert.deepEqual([...builder.safeValues], [NaN, NaN, 0]);
    builder.add(['-7', '3', 'x']);
    assert.deepEqual([...builder.safeValues], [-7, 300, 0]);
    builder.add(['', '', 'x']);
    assert.deepEqual([...builder.safeValues], [-7, 300, 0]);
  });

  it('a repeated timestamp or date types to the same value, a new one to its own, after a failed one too', () => {
    const builder = new RowBatchBuilder([timestamp(), date()]);
    const rows = [
      ['2026-11-20 10:00:00', '20.11.2026'],
      ['2026-11-20 10:00:00', '20.11.2026'],
      ['2026-11-20 10:00:01', '21.11.2026'],
      ['2026-11-20 10:00:01', '21.11.2026'],
      ['2026-11-20 10:00:00', '20.11.2026'],
    ];
    added(builder, ...rows.slice(0, 3));
    assert.equal(typeof builder.add(['2026-11-20 25:00:00', '21.11.2026']), 'object');
    assert.equal(typeof builder.add(['2026-11-20 10:00:01', '32.11.2026']), 'object');
    added(builder, ...rows.slice(3));
    assert.deepEqual(shown(builder.take()), [
      { kind: 'int64', values: [ms(2026, 11, 20, 10), ms(2026, 11, 20, 10), ms(2026, 11, 20, 10, 0, 1), ms(2026, 11, 20, 10, 0, 1), ms(2026, 11, 20, 10)] },
      { kind: 'int32', values: [days(2026, 11, 20), days(2026, 11, 20), days(2026, 11, 21), days(2026, 11, 21), days(2026, 11, 20)] },
    ]);
  });

  it("booleans read the column's own tokens, in any case", () => {
    const builder = new RowBatchBuilder([boolean({ values: { true: ['Y'], false: ['N'] } })]);
    added(builder, ['Y'], ['n'], ['y'], ['N']);
    assert.deepEqual(builder.add(['true']), { column: 0, reason: 'not a boolean: "true" (the column reads "y", "n", in any case)' });
    assert.deepEqual(shown(builder.take()), [{ kind: 'bool', values: [1, 0, 1, 0] }]);
  });
});

describe('RowBatchBuilder: values that do not type', () => {
  it('names the column and why, for each kind', () => {
    const columns = [bigint(), decimal('decimal(12,2)'), timestamp(), date(), boolean(), string()];
    const ok = ['1', '1.00', '2026-11-20 10:00:00', '20.11.2026', 'true', 'x'];
    const refused = (c: number, text: string) => new RowBatchBuilder(columns).add(ok.map((v, i) => (i === c ? text : v)));
    assert.deepEqual(refused(0, 'abc'), { column: 0, reason: 'not an integer: "abc"' });
    assert.deepEqual(refused(0, '0x1F'), { column: 0, reason: 'not an integer: "0x1F"' });
    assert.deepEqual(refused(0, '9223372036854775808'), { column: 0, reason: 'integer out of the bigint (int64) range: "9223372036854775808"' });
    assert.deepEqual(refused(1, '1.234'), { column: 1, reason: 'more than 2 fractional digits for decimal(12,2): "1.234"' });
    assert.deepEqual(refused(1, '12,5'), { column: 1, reason: 'not a decimal: "12,5"' });
    assert.deepEqual(refused(2, '2026-11-20'), { column: 2, reason: 'does not match the pattern "yyyy-MM-dd HH:mm:ss": "2026-11-20"' });
    assert.deepEqual(refused(3, '31.02.2026'), { column: 3, reason: 'day 31 does not exist in 2026-02: "31.02.2026"' });
    assert.deepEqual(refused(4, 'maybe'), { column: 4, reason: 'not a boolean: "maybe" (the column reads "true", "1", "yes", "false", "0", "no", in any case)' });
    for (let c = 0; c < columns.length; c++) assert.deepEqual(refused(c, ''), { column: c, reason: 'empty, and the column is not nullable' }, `column ${c}`);
  });

  it('a refused row leaves the batch as it was: the next row takes its place, and none of its strings is kept', () => {
    const builder = new RowBatchBuilder([string(nullable), bigint(), decimal('decimal(12,2)'), string()]);
    assert.equal(builder.add(['kept', '1', '1.00', 'a']), 8 + 8 + (4 + 4) + (1 + 4));
    assert.deepEqual(builder.add(['lost', '2', 'x', 'b']), { column: 2, reason: 'not a decimal: "x"' });
    assert.deepEqual(builder.add(['lost too', '3', '3.00', '']), { column: 3, reason: 'empty, and the column is not nullable' });
    assert.equal(builder.rows, 1);
    assert.equal(builder.add(['', '4', '4.00', 'd']), 16 + 5);
    assert.deepEqual(shown(builder.take()), [
      { kind: 'dict', values: ['kept'], codes: [0, -1] },
      { kind: 'int64', values: [1n, 4n] },
      { kind: 'int64', values: [100n, 400n] },
      { kind: 'dict', values: ['a', 'd'], codes: [0, 1] },
    ]);
  });
});

describe('RowBatchBuilder: string columns', () => {
  const distinct = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `value ${i + from} ${'é'.repeat((i + from) % 3)}`);

  it('up to 256 distinct values a batch cross as a dictionary, each repeat with its first code', () => {
    const builder = new RowBatchBuilder([string()]);
    const values = distinct(256);
    for (const v of [...values, ...[...values].reverse(), values[7]!]) builder.add([v]);
    const batch = builder.take();
    assert.deepEqual(shown(batch), [{ kind: 'dict', values, codes: [...values.keys(), ...[...values.keys()].reverse(), 7] }]);
  });

  it('the 257th distinct value turns the column into text: the batch so far rewritten, nulls kept, and text from then on', () => {
    const builder = new RowBatchBuilder([string(nullable)]);
    const values = distinct(257);
    const rows = [values[0]!, '', ...values.slice(1, 256), values[3]!, '', values[256]!, values[5]!];
    for (const v of rows) builder.add([v]);
    const present = rows.filter((v) => v !== '');
    assert.deepEqual(shown(builder.take()), [{ kind: 'utf8', bytes: plain(present), lengths: rows.map((v) => (v === '' ? -1 : Buffer.byteLength(v))) }]);
    // The next batch, with a single value, is text too: a column turns into text for the rest of the run.
    builder.add(['EUR']);
    builder.add(['EUR']);
    assert.deepEqual(shown(builder.take()), [{ kind: 'utf8', bytes: plain(['EUR', 'EUR']), lengths: [3, 3] }]);
  });

  it('each batch starts a dictionary of its own', () => {
    const builder = new RowBatchBuilder([string(), string()]);
    added(builder, ['a', 'x'], ['b', 'x']);
    assert.deepEqual(shown(builder.take()), [{ kind: 'dict', values: ['a', 'b'], codes: [0, 1] }, { kind: 'dict', values: ['x'], codes: [0, 0] }]);
    added(builder, ['b', 'y'], ['c', 'x']);
    assert.deepEqual(shown(builder.take()), [{ kind: 'dict', values: ['b', 'c'], codes: [0, 1] }, { kind: 'dict', values: ['y', 'x'], codes: [0, 1] }]);
  });

  it('text batches: each starts at byte 0, and a value longer than the buffer grows it', () => {
    const builder = new RowBatchBuilder([string(), bigint()]);
    const many = distinct(257);
    many.forEach((v, i) => builder.add([v, String(i)]));
    builder.take();
    // 600,003 bytes of UTF-8, 3 a character: past twice the first buffer's 256 KiB, so it grows to the worst case
    const long = `${'€'.repeat(200_000)}end`;
    builder.add(['short', '0']);
    builder.add([long, '1']);
    builder.add(['tail', '2']);
    const text = builder.take().columns[0] as { kind: string; bytes: Uint8Array; lengths: Int32Array };
    assert.equal(text.kind, 'utf8');
    assert.deepEqual([...text.lengths], [5, 600_003, 4]);
    assert.ok(Buffer.from(text.bytes).equals(Buffer.from(plain(['short', long, 'tail']))));
  });

  it('a value whose worst case passes the end of the buffer by 2 bytes grows it', () => {
    const builder = new RowBatchBuilder([string()]);
    // 257 values of 3 bytes turn the batch into text: 1,799 bytes with their lengths; then 4 + 3 x 86,781 more is 262,146, 2 past 256 KiB
    for (let i = 0; i < 257; i++) builder.add([String(i).padStart(3, '0')]);
    const long = '€'.repeat(86_781);
    builder.add([long]);
    const text = builder.take().columns[0] as { bytes: Uint8Array };
    assert.equal(text.bytes.length, 262_146);
    assert.ok(Buffer.from(text.bytes).equals(Buffer.from(plain([...Array.from({ length: 257 }, (_, i) => String(i).padStart(3, '0')), long]))));
  });
});

describe('RowBatchBuilder: when a batch is full, and what take() hands over', () => {
  it(`full at ${BATCH_ROWS} rows`, () => {
    const builder = new RowBatchBuilder([bigint()]);
    for (let i = 0; i < 4095; i++) builder.add([String(i)]);
    assert.equal(builder.full, false);
    builder.add(['4095']);
    assert.equal(builder.full, true);
    const batch = builder.take();
    assert.equal(batch.rows, 4096);
    assert.equal((batch.columns[0] as { values: BigInt64Array }).values[4095], 4095n);
    assert.equal(builder.full, false);
    assert.equal(builder.rows, 0);
  });

  it('full at 1 MiB of UTF-8 text, counted from the values rewritten when the column turned into text', () => {
    const builder = new RowBatchBuilder([string()]);
    // 257 distinct values of 3 bytes: 771 bytes of text once the 257th turns the column into text
    for (let i = 0; i < 257; i++) builder.add([String(i).padStart(3, '0')]);
    assert.equal(builder.full, false);
    builder.add(['x'.repeat(1_048_576 - 771 - 3)]);
    builder.add(['é']); // 2 bytes of UTF-8
    assert.equal(builder.full, false, '1 byte short of 1 MiB');
    builder.add(['y']);
    assert.equal(builder.full, true);
    builder.take();
    assert.equal(builder.full, false);
    builder.add(['x'.repeat(1_048_575)]);
    assert.equal(builder.full, false, 'a new batch counts from 0');
    builder.add(['z']);
    assert.equal(builder.full, true);
  });

  it('dictionary text does not count toward the 1 MiB', () => {
    const builder = new RowBatchBuilder([string()]);
    const value = 'v'.repeat(300_000);
    for (let i = 0; i < 5; i++) builder.add([value]);
    assert.equal(builder.full, false);
  });

  it('take() hands over copies the batch owns; take(true) views of the reused buffers', () => {
    const builder = new RowBatchBuilder([bigint(nullable), date(), boolean(), string()]);
    const sizes = (batch: RowBatch) => batch.columns.map((c) => (c.kind === 'dict' ? c.codes.buffer.byteLength : c.kind === 'utf8' ? c.bytes.buffer.byteLength : c.values.buffer.byteLength));
    added(builder, ['1', '01.01.1970', 'true', 'a'], ['', '02.01.1970', 'false', 'b']);
    const owned = builder.take();
    assert.deepEqual(sizes(owned), [16, 8, 2, 8]);
    assert.equal((owned.columns[0] as { nulls: Uint8Array }).nulls.buffer.byteLength, 2);
    added(builder, ['5', '03.01.1970', 'false', 'c']);
    const views = builder.take(true);
    assert.deepEqual(sizes(views), [4096 * 8, 4096 * 4, 4096, 4096 * 4]);
    assert.deepEqual(shown(views), [
      { kind: 'int64', values: [5n], nulls: [0] },
      { kind: 'int32', values: [2] },
      { kind: 'bool', values: [0] },
      { kind: 'dict', values: ['c'], codes: [0] },
    ]);
    // the copies stay as they were
    assert.deepEqual(shown(owned), [
      { kind: 'int64', values: [1n, 0n], nulls: [0, 1] },
      { kind: 'int32', values: [0, 1] },
      { kind: 'bool', values: [1, 0] },
      { kind: 'dict', values: ['a', 'b'], codes: [0, 1] },
    ]);
  });

  it('text: take() copies exactly the bytes used, take(true) a view of them', () => {
    const builder = new RowBatchBuilder([string()]);
    for (let i = 0; i < 257; i++) builder.add([`v${i}`]);
    const owned = builder.take();
    assert.equal(owned.columns[0]!.kind, 'utf8');
    const bytes = (owned.columns[0] as { bytes: Uint8Array }).bytes;
    assert.equal(bytes.buffer.byteLength, bytes.length);
    builder.add(['abc']);
    const view = builder.take(true).columns[0] as { bytes: Uint8Array };
    assert.deepEqual([...view.bytes], plain(['abc']));
    assert.equal(view.bytes.buffer.byteLength, 1 << 18);
  });
});
