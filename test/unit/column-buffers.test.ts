import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoolBuffer, Int32Buffer, Int64Buffer, StringBuffer, minMax, type ChunkPlan, type ChunkValues } from '../../functions/core/parquet/column-buffers.js';
import type { WireColumn } from '../../functions/core/parquet/row-group-buffer.js';

/**
 * A row group's column buffers (functions/core/parquet/column-buffers.ts): batches in their wire form appended,
 * then the chunk's plan, a dictionary and its indexes or the values, with the rows' definition levels; checked
 * against values worked out by hand and Node's Buffer for PLAIN strings.
 */

const int64 = (values: bigint[], nulls?: number[]): WireColumn => ({ kind: 'int64', values: BigInt64Array.from(values), ...(nulls ? { nulls: Uint8Array.from(nulls) } : {}) });
const int32 = (values: number[], nulls?: number[]): WireColumn => ({ kind: 'int32', values: Int32Array.from(values), ...(nulls ? { nulls: Uint8Array.from(nulls) } : {}) });
const bool = (values: number[], nulls?: number[]): WireColumn => ({ kind: 'bool', values: Uint8Array.from(values), ...(nulls ? { nulls: Uint8Array.from(nulls) } : {}) });
const dict = (values: string[], codes: number[]): WireColumn => ({ kind: 'dict', values, codes: Int32Array.from(codes) });

/** PLAIN strings: each a 4-byte little-endian length, then its UTF-8. */
function plain(values: readonly string[]): Buffer {
  return Buffer.concat(values.flatMap((v) => {
    const bytes = Buffer.from(v, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    return [length, bytes];
  }));
}
const utf8 = (values: Array<string | null>): WireColumn => ({ kind: 'utf8', bytes: plain(values.filter((v) => v !== null) as string[]), lengths: Int32Array.from(values, (v) => (v === null ? -1 : Buffer.byteLength(v))) });

/** A chunk's values as plain data: numbers, bigints, strings. */
function valuesOf(v: ChunkValues): unknown[] {
  switch (v.kind) {
    case 'int64':
      return [...new BigInt64Array(v.words.buffer.slice(v.words.byteOffset, v.words.byteOffset + v.count * 8))];
    case 'int32':
    case 'bool':
      return [...v.values.subarray(0, v.count)];
    case 'utf8':
      return Array.from({ length: v.count }, (_, k) => Buffer.from(v.data.subarray((k ? v.ends[k - 1]! : 0) + 4, v.ends[k]!)).toString('utf8'));
  }
}
function shown(plan: ChunkPlan) {
  if (plan.dictionary) {
    const d = plan.dictionary;
    return { dictionary: valuesOf(d.entries), indexes: [...d.indexes], defined: d.defined && [...d.defined] };
  }
  return { values: valuesOf(plan.values!), count: plan.values!.count, defined: plan.values!.defined && [...plan.values!.defined] };
}

describe('Int64Buffer', () => {
  it('nulls taken out, definition levels kept; a required column has none', () => {
    const b = new Int64Buffer(true, false);
    b.append(int64([5n, 0n, -4294967297n], [0, 1, 0]));
    b.append(int64([9007199254740993n])); // a batch without nulls: all present
    b.append(int64([0n, 7n], [1, 0]));
    assert.deepEqual(shown(b.plan()), { values: [5n, -4294967297n, 9007199254740993n, 7n], count: 4, defined: [1, 0, 1, 1, 0, 1] });
    const required = new Int64Buffer(false, false);
    required.append(int64([1n, 2n], [0, 0]));
    required.append(int64([3n]));
    assert.deepEqual(shown(required.plan()), { values: [1n, 2n, 3n], count: 3, defined: null });
  });

  it('a dictionary when allowed and the values repeat; never for DELTA columns', () => {
    const values = Array.from({ length: 20 }, (_, i) => [2n ** 60n, -3n, 2n ** 60n + 1n][i % 3]!);
    const withDictionary = new Int64Buffer(true, true);
    withDictionary.append(int64([...values, 0n], [...values.map(() => 0), 1]));
    assert.deepEqual(shown(withDictionary.plan()), {
      dictionary: [2n ** 60n, -3n, 2n ** 60n + 1n],
      indexes: values.map((_, i) => i % 3),
      defined: [...values.map(() => 1), 0],
    });
    const delta = new Int64Buffer(false, false);
    delta.append(int64(values));
    assert.equal(shown(delta.plan()).count, 20);
  });

  it('grows past its first 4,096 values, and starts again at reset()', () => {
    const b = new Int64Buffer(true, false);
    const n = 10_000;
    b.append(int64(Array.from({ length: n }, (_, i) => BigInt(i) * 3n)));
    b.append(int64(Array.from({ length: n }, (_, i) => BigInt(-i)), Array.from({ length: n }, (_, i) => i % 2)));
    const plan = shown(b.plan());
    assert.equal(plan.count, n + n / 2);
    assert.deepEqual([plan.values[0], plan.values[n - 1], plan.values[n], plan.values[n + 1], plan.values.at(-1)], [0n, 29997n, 0n, -2n, -9998n]);
    assert.equal(plan.defined!.length, 2 * n);
    assert.deepEqual([plan.defined![n - 1], plan.defined![n], plan.defined![n + 1], plan.defined!.at(-1)], [1, 1, 0, 0]);
    b.reset();
    b.append(int64([4n], [0]));
    assert.deepEqual(shown(b.plan()), { values: [4n], count: 1, defined: [1] });
  });

  it('refuses a batch column of another kind', () => {
    assert.throws(() => new Int64Buffer(false, false).append(int32([1])), { message: 'batch columns out of order' });
  });
});

describe('Int32Buffer and BoolBuffer', () => {
  it('dates: nulls out, a dictionary only where it halves the chunk', () => {
    const b = new Int32Buffer(true);
    b.append(int32([20777, 0, 20777], [0, 1, 0]));
    b.append(int32([20778]));
    // 2 entries of 4 bytes and 3 one-bit indexes (a byte) against 12 bytes: 2 x 9 > 12, PLAIN
    assert.deepEqual(shown(b.plan()), { values: [20777, 20777, 20778], count: 3, defined: [1, 0, 1, 1] });
    b.reset();
    b.append(int32(Array<number>(12).fill(-1)));
    // 1 entry, indexes of width 0, against 48 bytes
    assert.deepEqual(shown(b.plan()), { dictionary: [-1], indexes: Array<number>(12).fill(0), defined: Array<number>(12).fill(1) });
  });

  it('dates: grow past 4,096 rows; a required column keeps no levels', () => {
    const b = new Int32Buffer(false);
    b.append(int32(Array.from({ length: 9000 }, (_, i) => i)));
    b.append(int32(Array.from({ length: 9000 }, (_, i) => -i), Array<number>(9000).fill(0)));
    const plan = shown(b.plan()) as { values: unknown[]; count: number; defined: number[] | null };
    assert.deepEqual([plan.count, plan.values[8999], plan.values[9001], plan.values.at(-1), plan.defined], [18_000, 8999, -1, -8999, null]);
  });

  it('booleans: never a dictionary, nulls out', () => {
    const b = new BoolBuffer(true);
    b.append(bool([1, 0, 1, 1], [0, 0, 1, 0]));
    b.append(bool(Array<number>(10_000).fill(1)));
    const plan = shown(b.plan()) as { values: unknown[]; count: number; defined: number[] | null };
    assert.deepEqual([plan.count, plan.values.slice(0, 4), plan.defined!.slice(0, 5), plan.defined!.length], [10_003, [1, 0, 1, 1], [1, 1, 0, 1, 1], 10_004]);
    assert.throws(() => b.append(int32([1])), { message: 'batch columns out of order' });
    assert.throws(() => new Int32Buffer(false).append(bool([1])), { message: 'batch columns out of order' });
  });
});

describe('StringBuffer', () => {
  it("merges the batches' dictionaries: each value one entry, in order of first appearance", () => {
    const b = new StringBuffer(true);
    b.append(dict(['EUR', 'USD'], [0, 1, -1, 0, 0]));
    b.append(dict(['RUB', 'EUR'], [1, 0, 0, -1, 1, 1]));
    assert.deepEqual(shown(b.plan()), {
      dictionary: ['EUR', 'USD', 'RUB'],
      indexes: [0, 1, 0, 0, 0, 2, 2, 0, 0],
      defined: [1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1],
    });
  });

  it('a merged dictionary that does not halve the chunk is written as text', () => {
    const b = new StringBuffer(false);
    b.append(dict(['aaaa', 'bbbb', 'cccc'], [0, 1, 2]));
    b.append(dict(['cccc', 'dddd'], [0, 1, 1]));
    assert.deepEqual(shown(b.plan()), { values: ['aaaa', 'bbbb', 'cccc', 'cccc', 'dddd', 'dddd'], count: 6, defined: null });
  });

  it('text batches after dictionary ones, and dictionary ones after text: one chunk of text in row order', () => {
    const b = new StringBuffer(true);
    b.append(dict(['a', 'é'], [0, -1, 1]));
    b.append(utf8(['x1', null, 'x2']));
    b.append(dict(['z'], [0, -1]));
    assert.deepEqual(shown(b.plan()), { values: ['a', 'é', 'x1', 'x2', 'z'], count: 5, defined: [1, 0, 1, 1, 0, 1, 1, 0] });
  });

  it('a text chunk whose first values repeat becomes a dictionary; one of distinct values stays text', () => {
    const b = new StringBuffer(false);
    b.append(utf8(Array.from({ length: 40 }, (_, i) => ['pending', 'settled'][i % 2]!)));
    assert.deepEqual(shown(b.plan()), { dictionary: ['pending', 'settled'], indexes: Array.from({ length: 40 }, (_, i) => i % 2), defined: null });
    b.reset();
    b.append(utf8(Array.from({ length: 40 }, (_, i) => `order ${i}`)));
    assert.equal(shown(b.plan()).count, 40);
    assert.equal(b.plan().dictionary, undefined);
  });

  it('reset() starts the next group afresh: a dictionary again, its own entries, no text before it', () => {
    const b = new StringBuffer(true);
    b.append(utf8(['old 1', 'old 2']));
    b.plan();
    b.reset();
    b.append(dict(['new'], [0, 0, 0, -1]));
    assert.deepEqual(shown(b.plan()), { dictionary: ['new'], indexes: [0, 0, 0], defined: [1, 1, 1, 0] });
    b.reset();
    b.append(dict(['x', 'y'], [0, 1, 1, 0, 1, 1, 0, 1]));
    // counts of uses start at 0 again: 3 x "x", 5 x "y" (5 bytes each) against 2 entries and a byte of indexes
    assert.deepEqual(shown(b.plan()), { dictionary: ['x', 'y'], indexes: [0, 1, 1, 0, 1, 1, 0, 1], defined: Array<number>(8).fill(1) });
  });

  it('grows past 4,096 values and 64 KiB of text', () => {
    const b = new StringBuffer(true);
    const values = Array.from({ length: 9000 }, (_, i) => (i % 10 === 0 ? null : `value number ${i}`));
    b.append(utf8(values));
    b.append(dict(['tail'], [0, -1]));
    const plan = shown(b.plan());
    const present = values.filter((v) => v !== null);
    assert.equal(plan.count, present.length + 1);
    assert.deepEqual([plan.values[0], plan.values[1], plan.values.at(-2), plan.values.at(-1)], ['value number 1', 'value number 2', 'value number 8999', 'tail']);
    assert.deepEqual(plan.values, [...present, 'tail']);
    assert.equal(plan.defined!.length, 9002);
  });

  it('refuses a batch column that is not a string', () => {
    assert.throws(() => new StringBuffer(false).append(int64([1n])), { message: 'batch columns out of order' });
  });
});

describe('minMax of fixed-width values', () => {
  it('dates and booleans; nothing for an empty chunk', () => {
    assert.deepEqual(minMax({ kind: 'int32', values: Int32Array.from([5, -2, 9, 9, -3, 0]), count: 6, defined: null }), { min_value: -3, max_value: 9 });
    assert.deepEqual(minMax({ kind: 'int32', values: Int32Array.from([5, 1, 2]), count: 2, defined: null }), { min_value: 1, max_value: 5 });
    assert.deepEqual(minMax({ kind: 'bool', values: Uint8Array.from([1, 1, 0]), count: 2, defined: null }), { min_value: true, max_value: true });
    assert.deepEqual(minMax({ kind: 'bool', values: Uint8Array.from([0, 1, 0]), count: 3, defined: null }), { min_value: false, max_value: true });
    assert.deepEqual(minMax({ kind: 'bool', values: Uint8Array.from([0, 0]), count: 2, defined: null }), { min_value: false, max_value: false });
    assert.deepEqual(minMax({ kind: 'int64', words: new Int32Array(0), count: 0, defined: null }), {});
  });
});

describe('column buffers: where a dictionary pays, at its edges', () => {
  it('int64 values either side of 2^53 and -2^53 keep their own entries', () => {
    const values = [9007199254740992n, 9007199254740993n, -9007199254740993n, -9007199254740994n, 9007199254740991n];
    const b = new Int64Buffer(false, true);
    b.append(int64(Array.from({ length: 30 }, (_, i) => values[i % 5]!)));
    assert.deepEqual(shown(b.plan()), { dictionary: values, indexes: Array.from({ length: 30 }, (_, i) => i % 5), defined: null });
  });

  it('4 distinct values in 9: a dictionary for 8-byte values, not for 4-byte dates', () => {
    // 4 entries and 9 two-bit indexes (3 bytes): 2 x (4w + 3) against 9w, which holds for w = 8 and not for w = 4
    const pattern = [0, 0, 0, 1, 1, 2, 2, 3, 3];
    const wide = new Int64Buffer(false, true);
    wide.append(int64(pattern.map((i) => BigInt(100 + i))));
    assert.deepEqual(shown(wide.plan()), { dictionary: [100n, 101n, 102n, 103n], indexes: pattern, defined: null });
    const dates = new Int32Buffer(false);
    dates.append(int32(pattern.map((i) => 20000 + i)));
    assert.deepEqual(shown(dates.plan()), { values: pattern.map((i) => 20000 + i), count: 9, defined: null });
  });

  it('a string chunk of nulls only: no dictionary, no values', () => {
    const b = new StringBuffer(true);
    b.append(dict([], [-1, -1, -1]));
    assert.deepEqual(shown(b.plan()), { values: [], count: 0, defined: [0, 0, 0] });
    const dates = new Int32Buffer(true);
    dates.append(int32([0, 0], [1, 1]));
    assert.deepEqual(shown(dates.plan()), { values: [], count: 0, defined: [0, 0] });
  });

  it('more than 4,096 dictionary values turned into text by a text batch', () => {
    const b = new StringBuffer(false);
    b.append(dict(['a', 'b'], Array.from({ length: 5000 }, (_, i) => i % 2)));
    b.append(utf8(Array.from({ length: 300 }, (_, i) => `t${i}`)));
    const plan = b.plan();
    assert.ok(plan.dictionary === undefined || plan.values === undefined);
    const values = plan.dictionary ? valuesOf(plan.dictionary.entries) : valuesOf(plan.values!);
    const rows = plan.dictionary ? [...plan.dictionary.indexes].map((i) => values[i]) : values;
    assert.deepEqual(rows, [...Array.from({ length: 5000 }, (_, i) => (i % 2 ? 'b' : 'a')), ...Array.from({ length: 300 }, (_, i) => `t${i}`)]);
  });

  it('text: exactly half the first 512 values distinct is few enough to try a dictionary', () => {
    // 256 values twice each, then 10,000 times "x": 257 entries of 8 bytes and 9-bit indexes halve the chunk
    const first = Array.from({ length: 512 }, (_, i) => `v${String(i % 256).padStart(3, '0')}`);
    const b = new StringBuffer(false);
    b.append(utf8([...first, ...Array<string>(10_000).fill('xxxx')]));
    const plan = b.plan();
    assert.equal(plan.dictionary?.entries.count, 257);
    const c = new StringBuffer(false);
    const moreDistinct = first.map((v, i) => (i === 300 ? 'other' : v));
    c.append(utf8([...moreDistinct, ...Array<string>(10_000).fill('xxxx')]));
    assert.equal(c.plan().dictionary, undefined, '257 distinct among the first 512: PLAIN');
  });
});
