import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { deltaBinaryUnpack } from 'hyparquet/src/delta.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { snappyUncompress } from 'hyparquet';
import { snappyCompress, snappyCompressShared } from 'hyparquet-writer/src/snappy.js';
import { minMax } from '../../functions/core/parquet/column-buffers.js';
import { ByteBuffer, writeDefinitionLevels, writeDeltaInt64, writeRleHybrid } from '../../functions/core/parquet/pages.js';
import { pageStartPairs } from '../../functions/core/parquet/encoder.js';
import { SafeIntegerSet } from '../../functions/core/quality/row-tally.js';

/**
 * The byte-level encoders the converter writes pages with (parquet/pages.ts) and the patched Snappy
 * compressor, read back by hyparquet's own decoders: every value exact, whatever its width. The files
 * themselves are read by DuckDB, arrow-rs and polars in parquet-engines.test.ts and test/reliability.
 */

const reader = (bytes: Uint8Array) => ({ view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 });

function deltaRoundTrip(values: bigint[]): bigint[] {
  const words = new Int32Array(new BigInt64Array(values).buffer);
  const out = new ByteBuffer(16);
  writeDeltaInt64(out, words, 0, values.length);
  const decoded = new BigInt64Array(values.length);
  deltaBinaryUnpack(reader(out.view()), values.length, decoded);
  return [...decoded];
}

describe('Parquet page encoders (parquet/pages.ts)', () => {
  it('DELTA_BINARY_PACKED: any int64, deltas of every width up to 64 bits', () => {
    const max = 2n ** 63n - 1n;
    const min = -(2n ** 63n);
    const cases: bigint[][] = [
      [1n],
      [min, max, min, 0n, max, -1n, 1n],
      Array.from({ length: 1000 }, (_, i) => 4_100_000_000n + BigInt(i) * 3n), // rising ids: width 0 after the minimum
      Array.from({ length: 300 }, (_, i) => (i % 100 === 99 ? 9007199254740993n + BigInt(i) : 4_100_000_000n + BigInt(i))), // ids beyond 2^53 now and then
      Array.from({ length: 129 }, (_, i) => BigInt(i) ** 9n * (i % 2 ? 1n : -1n)),
    ];
    for (const values of cases) assert.deepEqual(deltaRoundTrip(values), values);
    fc.assert(fc.property(fc.array(fc.bigInt({ min, max }), { minLength: 1, maxLength: 400 }), (values) => assert.deepEqual(deltaRoundTrip(values), values)), { numRuns: 300 });
  });

  it('RLE/bit-packed hybrid: runs and bit-packed groups, widths 0 to 20', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.array(fc.tuple(fc.nat(1000), fc.integer({ min: 1, max: 40 })), { maxLength: 60 }), (width, runs) => {
        const values = Int32Array.from(runs.flatMap(([v, n]) => Array<number>(n).fill(width === 0 ? 0 : v % 2 ** width)));
        const out = new ByteBuffer(16);
        writeRleHybrid(out, values, 0, values.length, width);
        const decoded = new Int32Array(values.length);
        readRleBitPackedHybrid(reader(out.view()), width, decoded, out.pos);
        assert.deepEqual([...decoded], [...values]);
      }),
      { numRuns: 400 },
    );
  });

  it("definition levels: writeRleHybrid's bytes at width 1, after their 4-byte length", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 40 })), { maxLength: 60 }), fc.nat(20), (runs, skip) => {
        const levels = Uint8Array.from(runs.flatMap(([v, n]) => Array<number>(n).fill(v ? 1 : 0)));
        const from = Math.min(skip, levels.length);
        const out = new ByteBuffer(16);
        writeDefinitionLevels(out, levels, from, levels.length);
        const expected = new ByteBuffer(16);
        writeRleHybrid(expected, Int32Array.from(levels), from, levels.length, 1);
        const body = expected.view();
        assert.deepEqual([...out.view()], [...new Uint8Array(new Uint32Array([body.length]).buffer), ...body]);
      }),
      { numRuns: 400 },
    );
  });

  it('statistics: min and max of strings in byte order and of int64 values, as a sort finds them', () => {
    // Values short enough to read into the length before them (and longer than 255 bytes, whose length's
    // second byte is not 0), equal up to their last bytes, multi-byte UTF-8.
    const unit = fc.constantFrom('a', 'b', 'ab', 'é', 'я', '😀', '\u0000', 'z');
    const text = fc.oneof({ arbitrary: fc.string({ unit, maxLength: 12 }), weight: 4 }, { arbitrary: fc.string({ unit, minLength: 256, maxLength: 300 }), weight: 1 });
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 60 }), (strings) => {
        const parts = strings.map((t) => Buffer.from(t, 'utf8'));
        const data = Buffer.concat(parts.flatMap((p) => [Buffer.from(new Uint32Array([p.length]).buffer), p]));
        let end = 0;
        const ends = Int32Array.from(parts, (p) => (end += 4 + p.length));
        const stats = minMax({ kind: 'utf8', data, ends, count: parts.length, defined: null });
        const sorted = [...parts].sort(Buffer.compare);
        assert.deepEqual(Buffer.from(stats.min_value as Uint8Array), sorted[0]);
        assert.deepEqual(Buffer.from(stats.max_value as Uint8Array), sorted.at(-1));
      }),
      { numRuns: 500 },
    );
    const int64 = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -5n, max: 5n }));
    fc.assert(
      fc.property(fc.array(int64, { minLength: 1, maxLength: 60 }), (values) => {
        const words = new Int32Array(new BigInt64Array(values).buffer);
        const stats = minMax({ kind: 'int64', words, count: values.length, defined: null });
        const sorted = [...values].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
        assert.deepEqual([stats.min_value, stats.max_value], [sorted[0], sorted.at(-1)]);
      }),
      { numRuns: 500 },
    );
  });

  it("the patched Snappy compressor round-trips through hyparquet's decompressor", () => {
    const text = Buffer.from('"ORD-1A2B3C4D","Оплата заказа №1","2026-11-20 00:00:00"\r\n'.repeat(3000));
    const random = Uint8Array.from({ length: 200_000 }, (_, i) => (Math.imul(i, 2654435761) >>> 13) & 0xff);
    for (const input of [new Uint8Array(0), text.subarray(0, 7), text.subarray(0, 20), text, random, Buffer.concat([text, random, text])]) {
      const out = new Uint8Array(input.length);
      snappyUncompress(snappyCompress(input), out);
      assert.deepEqual(Buffer.from(out), Buffer.from(input));
    }
  });

  it('page starts without nulls: the shortcuts find the pages the row scans find', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(300), { maxLength: 3000 }), fc.integer({ min: 1, max: 5000 }), fc.constantFrom(1, 4, 8), (lengths, pageSize, size) => {
        const ends = new Int32Array(lengths.length);
        lengths.reduce((end, len, i) => (ends[i] = end + 4 + len), 0);
        const rows = lengths.length;
        assert.deepEqual(pageStartPairs(ends, rows, 0, pageSize, true), pageStartPairs(ends, rows, 0, pageSize, false));
        assert.deepEqual(pageStartPairs(null, rows, size, pageSize, true), pageStartPairs(null, rows, size, pageSize, false));
      }),
      { numRuns: 500 },
    );
    // the converter's page size over 8-byte values: a page closes at 131,071 rows
    assert.deepEqual(pageStartPairs(null, 131_072, 8, 1 << 20, true).slice(0, 2), [131_071, 131_071]);
  });

  it('snappyCompressShared gives the same bytes as a view the next call overwrites; snappyCompress a copy of its own', () => {
    const a = Buffer.from('"ORD-1A2B3C4D","Оплата заказа №1"\r\n'.repeat(500));
    const b = Buffer.from('"ORD-FFFFFFFF","Top-up #1, client 9"\r\n'.repeat(500));
    const copy = snappyCompress(a);
    const shared = snappyCompressShared(a);
    assert.deepEqual(Buffer.from(shared), Buffer.from(copy));
    const before = Buffer.from(shared);
    const other = snappyCompressShared(b);
    assert.equal(other.buffer, shared.buffer, 'one reused buffer');
    assert.notDeepEqual(Buffer.from(shared), before, 'the earlier view now shows the later call');
    assert.deepEqual(Buffer.from(copy), before, 'the copy stays');
    const out = new Uint8Array(b.length);
    snappyUncompress(other, out);
    assert.deepEqual(Buffer.from(out), b);
  });

  it('the patched Snappy compressor round-trips matches of every length and offset, ending anywhere, from any byte offset', () => {
    // Bytes from a small alphabet (differing in their lowest or highest bit) with copied runs: matches that end inside a word, at the input's end,
    // or run up to it; inputs that start inside a larger buffer (the compressor reads words through a DataView).
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.uint8Array({ maxLength: 40 }).map((b) => b.map((x) => [0x00, 0x80, 0x01, 0xff][x % 4]!)), fc.tuple(fc.nat(300), fc.integer({ min: 1, max: 200 }))), { maxLength: 40 }),
        fc.nat(7),
        (pieces, shift) => {
          const bytes: number[] = [];
          for (const p of pieces) {
            if (p instanceof Uint8Array) bytes.push(...p);
            else for (let i = 0, from = Math.max(0, bytes.length - 1 - p[0]); i < p[1] && bytes.length > 0; i++) bytes.push(bytes[from + i]!);
          }
          const backing = new Uint8Array(shift + bytes.length + 5).fill(0xaa);
          backing.set(bytes, shift);
          const input = backing.subarray(shift, shift + bytes.length);
          const out = new Uint8Array(input.length);
          snappyUncompress(snappyCompress(input), out);
          assert.deepEqual(Buffer.from(out), Buffer.from(input));
        },
      ),
      { numRuns: 600 },
    );
  });

  it('a set of safe integers: rising values without hashing, late ones beside them', () => {
    const set = new SafeIntegerSet();
    for (let i = 0; i < 10_000; i++) assert.equal(set.add(1000 + i * 7), true);
    assert.equal(set.values().length, 10_000);
    assert.equal(set.add(1000 + 70), false, 'a value not above the last one: found among the rising ones');
    assert.deepEqual([set.add(5), set.add(5), set.add(1000 + 9999 * 7), set.add(2 ** 52)], [true, false, false, true]);
    assert.deepEqual([set.add(1001), set.add(1001), set.add(2 ** 52 + 1), set.add(1001)], [true, false, true, false], 'a late value, then rising ones again');
    assert.equal(set.size, 10_004);
    assert.deepEqual([...set.values()].sort((a, b) => a - b).slice(0, 3), [5, 1000, 1001]);
  });

  it('a set of safe integers answers as a Set does, whatever the order of its values', () => {
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const base = 2 ** 40;
    const shapes: Record<string, (i: number) => number> = {
      rising: (i) => base + i * 3,
      'rising, a few late': (i) => (random() < 0.01 ? base + Math.floor(random() * i * 3) : base + i * 3),
      'rising, with repeats': (i) => base + Math.floor(i / 2) + (random() < 0.05 ? -5 : 0),
      descending: (i) => base - i,
      random: () => Math.floor(random() * 50_000) - 25_000,
      'two interleaved runs': (i) => (i % 2 ? base + i : i),
      'a huge first value': (i) => (i === 0 ? Number.MAX_SAFE_INTEGER : -Number.MAX_SAFE_INTEGER + i),
    };
    for (const [shape, value] of Object.entries(shapes)) {
      const set = new SafeIntegerSet();
      const reference = new Set<number>();
      for (let i = 0; i < 30_000; i++) {
        const v = value(i);
        const fresh = !reference.has(v);
        reference.add(v);
        assert.equal(set.add(v), fresh, `${shape}: add(${v}) at ${i}`);
      }
      assert.equal(set.size, reference.size, shape);
      assert.deepEqual([...set.values()].sort((a, b) => a - b), [...reference].sort((a, b) => a - b), shape);
    }
  });
});

/**
 * The bytes themselves, worked out by hand from the Parquet format's Encodings.md: the decoders above accept
 * other bytes for the same values (a run of 8 bit-packed instead of run-length encoded), so these hold the
 * writer to the choices it documents. The DELTA_BINARY_PACKED cases are Encodings.md's own examples.
 */
describe('Parquet page encoders: the bytes, by hand', () => {
  const rle = (values: number[], width: number, from = 0, to = values.length) => {
    const out = new ByteBuffer(1);
    writeRleHybrid(out, Int32Array.from(values), from, to, width);
    return [...out.view()];
  };
  const levels = (values: number[], from = 0, to = values.length) => {
    const out = new ByteBuffer(1);
    writeDefinitionLevels(out, Uint8Array.from(values), from, to);
    return [...out.view()];
  };
  const delta = (values: bigint[]) => {
    const out = new ByteBuffer(1);
    writeDeltaInt64(out, new Int32Array(new BigInt64Array(values).buffer), 0, values.length);
    return [...out.view()];
  };

  it('RLE/bit-packed hybrid: a run of 8 is run-length encoded, 7 are bit-packed, a run after a packed group follows it', () => {
    assert.deepEqual(rle([5, 5, 5, 5, 5, 5, 5, 5], 3), [0x10, 0x05]); // header 8 << 1, the value in 1 byte
    assert.deepEqual(rle([5, 5, 5, 5, 5, 5, 5], 3), [0x03, 0x6d, 0xdb, 0x16]); // 1 group: 101 x 7, then 000
    assert.deepEqual(rle([1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4], 3), [0x05, 0xd1, 0x48, 0x92, 0x24, 0x09, 0x00]); // 2 groups, zeros past the end
    assert.deepEqual(rle([1, ...Array<number>(16).fill(7)], 3), [0x03, 0xf9, 0xff, 0xff, 0x12, 0x07]); // a group, then a run of 9
    assert.deepEqual(rle([9, 9, 5, 5, 5, 5, 5, 5, 5, 5, 9], 3, 2, 10), [0x10, 0x05]); // values[2, 10)
    assert.deepEqual(rle(Array<number>(8).fill(300), 9), [0x10, 0x2c, 0x01]); // a 9-bit value takes 2 bytes
    assert.deepEqual(rle([0, 1, 2, 3, 4, 5, 6, 7], 3), [0x03, 0x88, 0xc6, 0xfa]); // a group ending exactly at the end
    assert.deepEqual(rle([0, 0, 0], 0), [0x03]); // width 0: a group of no bytes
    assert.deepEqual(rle(Array<number>(8).fill(0x12345678), 32), [0x10, 0x78, 0x56, 0x34, 0x12]);
  });

  it('bit-packed groups wider than 24 bits', () => {
    assert.deepEqual(rle([0x1000001, 3], 25), [0x03, 0x01, 0x00, 0x00, 0x07, ...Array<number>(21).fill(0)]);
    assert.deepEqual(rle([-1, 0, 0x7fffffff], 32), [0x03, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, ...Array<number>(20).fill(0)]);
    assert.deepEqual(rle([0x0abcdef1, 5], 28), [0x03, 0xf1, 0xde, 0xbc, 0x5a, ...Array<number>(24).fill(0)]);
    // (hyparquet's decoder reads widths up to 24 only, so these are checked by hand alone)
  });

  it('definition levels: their length in 4 bytes, then the hybrid at width 1', () => {
    assert.deepEqual(levels(Array<number>(10).fill(1)), [0x02, 0, 0, 0, 0x14, 0x01]);
    assert.deepEqual(levels([1, 0, 1, 1, 0, 0, 0, 0, 0]), [0x03, 0, 0, 0, 0x05, 0x0d, 0x00]);
    assert.deepEqual(levels([1, 0, 0, 0, 0, 0, 0, 0, ...Array<number>(8).fill(1)]), [0x04, 0, 0, 0, 0x03, 0x01, 0x10, 0x01]);
    assert.deepEqual(levels([0, 0, 0, 0, ...Array<number>(8).fill(1), 0], 4, 12), [0x02, 0, 0, 0, 0x10, 0x01]);
    assert.deepEqual(levels([1, 0, 1, 0, 1, 0, 1, 0]), [0x02, 0, 0, 0, 0x03, 0x55]);
    assert.deepEqual(levels([]), [0, 0, 0, 0]);
    // 2,100 alternating levels: 263 groups (a 2-byte header) of 0xaa, the last 0x0a; 265 bytes, so the length's second byte is 1
    const long = levels(Array.from({ length: 2100 }, (_, k) => k % 2));
    assert.deepEqual(long.slice(0, 6), [0x09, 0x01, 0, 0, 0x8f, 0x04]);
    assert.deepEqual(long.slice(6), [...Array<number>(262).fill(0xaa), 0x0a]);
  });

  it("DELTA_BINARY_PACKED: Encodings.md's examples, and a page of no values", () => {
    // 1..5: header (block 128, 4 miniblocks, 5 values, first 1), min delta 1, every width 0
    assert.deepEqual(delta([1n, 2n, 3n, 4n, 5n]), [0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0]);
    // 7 5 3 1 2 3 4 5: min delta -2, deltas from it 0 0 0 3 3 3 3 at 2 bits in the first miniblock
    assert.deepEqual(delta([7n, 5n, 3n, 1n, 2n, 3n, 4n, 5n]), [0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 0x02, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(delta([]), [0x80, 0x01, 0x04, 0x00, 0x00]);
    assert.deepEqual(delta([-1n]), [0x80, 0x01, 0x04, 0x01, 0x01]);
    // 40 values 3 apart: one block, min delta 3, nothing to pack
    assert.deepEqual(delta(Array.from({ length: 40 }, (_, i) => BigInt(i * 3))), [0x80, 0x01, 0x04, 0x28, 0x00, 0x06, 0, 0, 0, 0]);
  });

  it('ByteBuffer: varints, zigzag int64s, little-endian words, copies, growth', () => {
    const bytes = (write: (b: ByteBuffer) => void) => {
      const b = new ByteBuffer(1);
      write(b);
      return [...b.view()];
    };
    assert.deepEqual(bytes((b) => b.varint(300)), [0xac, 0x02]);
    assert.deepEqual(bytes((b) => b.varint(127)), [0x7f]);
    assert.deepEqual(bytes((b) => b.varint(128)), [0x80, 0x01]);
    assert.deepEqual(bytes((b) => b.varint(0xffffffff)), [0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert.deepEqual(bytes((b) => b.zigzag64(-1, -1)), [0x01]); // -1 -> 1
    assert.deepEqual(bytes((b) => b.zigzag64(63, 0)), [0x7e]);
    assert.deepEqual(bytes((b) => b.zigzag64(64, 0)), [0x80, 0x01]);
    assert.deepEqual(bytes((b) => b.zigzag64(0, 1)), [0x80, 0x80, 0x80, 0x80, 0x20]); // 2^32 -> 2^33
    assert.deepEqual(bytes((b) => b.zigzag64(0x80000000 | 0, 0)), [0x80, 0x80, 0x80, 0x80, 0x10]); // 2^31 -> 2^32
    assert.deepEqual(bytes((b) => b.zigzag64(0, 0x80000000 | 0)), [...Array<number>(9).fill(0xff), 0x01]); // -2^63 -> 2^64 - 1
    assert.deepEqual(bytes((b) => b.u32(0x01020304)), [4, 3, 2, 1]);
    assert.deepEqual(bytes((b) => b.u32(0xfffffffe)), [0xfe, 0xff, 0xff, 0xff]);
    const src = Uint8Array.from({ length: 100 }, (_, i) => i);
    assert.deepEqual(bytes((b) => {
      b.u8(0xee);
      b.copy(src, 3, 6);
      b.copy(src, 10, 90);
      b.copy(src, 0, 0);
    }), [0xee, 3, 4, 5, ...src.subarray(10, 90)]);
    const b = new ByteBuffer(4);
    b.u8(1);
    const grown = b.ensure(10);
    assert.ok(grown.length >= 11);
    assert.equal(b.bytes, grown);
    assert.equal(grown[0], 1, 'what was written stays');
    assert.equal(b.pos, 1);
  });
});
