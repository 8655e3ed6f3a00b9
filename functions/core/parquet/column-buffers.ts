import { ByteBuffer, bitWidth, int64Of } from './pages.js';
import type { WireColumn } from './row-group-buffer.js';

/**
 * A row group's columns, filled batch by batch as the batches arrive (encoder.ts), in the typed
 * forms the pages are written from: INT64 values as 32-bit word pairs, dates as an Int32Array, strings as
 * one UTF-8 buffer with the end of each value, or as a dictionary merged from the batches' own small
 * dictionaries with an index per value. Nulls are taken out as they come (the rows' definition levels are
 * kept beside). The buffers are reused from group to group, so a group costs no allocation per value and
 * little garbage: only what the batches themselves are.
 */

/** The non-null values of a column chunk, with the rows' definition levels (1 = a value, 0 = null; null for a required column). */
export interface Int64Values {
  kind: 'int64';
  /** Little-endian word pairs (low, high) of the non-null values. */
  words: Int32Array;
  count: number;
  defined: Uint8Array | null;
}
export interface Int32Values {
  kind: 'int32';
  values: Int32Array;
  count: number;
  defined: Uint8Array | null;
}
export interface Utf8Values {
  kind: 'utf8';
  /**
   * The values as a PLAIN page holds them: each a 4-byte little-endian length, then its UTF-8 bytes. Value
   * k ends at ends[k] and starts 4 bytes after the end of value k-1 (after 0 for the first).
   */
  data: Uint8Array;
  ends: Int32Array;
  count: number;
  defined: Uint8Array | null;
}
/** boolean values, one byte each (1 true, 0 false): bit-packed when a page is written. */
export interface BoolValues {
  kind: 'bool';
  values: Uint8Array;
  count: number;
  defined: Uint8Array | null;
}
export type ChunkValues = Int64Values | Int32Values | Utf8Values | BoolValues;

/** A dictionary, each non-null value's index into it, and the rows' definition levels. */
export interface Dictionary {
  entries: ChunkValues;
  indexes: Int32Array;
  defined: Uint8Array | null;
}

/** How a chunk is written: a dictionary and its indexes, or the values themselves. */
export type ChunkPlan = { dictionary: Dictionary; values?: undefined } | { values: ChunkValues; dictionary?: undefined };

// Stryker disable next-line ConditionalExpression,EqualityOperator,ArrayDeclaration: false only takes littleEndianWords(), which gives the same words
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function grownI32(a: Int32Array, need: number): Int32Array {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: growing with room to spare only copies the same values into a new array
  if (need <= a.length) return a;
  // Stryker disable next-line ArithmeticOperator: with half the length instead of double, max() still gives the room needed
  const b = new Int32Array(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}
function grownU8(a: Uint8Array, need: number): Uint8Array {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: growing with room to spare only copies the same values into a new array
  if (need <= a.length) return a;
  // Stryker disable next-line ArithmeticOperator: with half the length instead of double, max() still gives the room needed
  const b = new Uint8Array(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

/**
 * Keeps a dictionary only when it at least halves the chunk, the rule hyparquet-writer applies: the
 * dictionary's values (plus 4 bytes a string) and the bit-packed indexes against the PLAIN values.
 */
function halves(entryBytes: number, entries: number, plainBytes: number, count: number): boolean {
  if (entries === 0) return false;
  const indexBytes = Math.ceil((count * bitWidth(entries - 1)) / 8);
  return 2 * (entryBytes + indexBytes) <= plainBytes;
}

/** A column buffer: append the batches of a group, then plan() its chunk, then reset() for the next group. */
export interface ColumnBuffer {
  append(part: WireColumn): void;
  plan(): ChunkPlan;
  reset(): void;
}

abstract class NullableBuffer {
  protected rows = 0;
  protected count = 0;
  protected defined: Uint8Array;

  constructor(protected readonly nullable: boolean) {
    // Stryker disable next-line ConditionalExpression: a first buffer of another size only grows sooner or later
    this.defined = new Uint8Array(nullable ? 4096 : 0);
  }

  protected definedLevels(): Uint8Array | null {
    return this.nullable ? this.defined.subarray(0, this.rows) : null;
  }

  reset(): void {
    this.rows = 0;
    this.count = 0;
  }
}

/* ------------------------------------------------------------------ numbers */

/** hyparquet-writer's sample test for numbers: no dictionary when over 90% of 1,000 values spread over the chunk are distinct. */
function mostlyDistinct(count: number, key: (k: number) => number | string): boolean {
  const n = Math.min(count, 1000);
  // Stryker disable next-line ConditionalExpression,BooleanLiteral: no values: no entries, and halves() refuses a dictionary of none
  if (n === 0) return true;
  const seen = new Set<number | string>();
  // Stryker disable next-line ConditionalExpression: with one value (false: read at index NaN) the sample still holds one distinct value
  for (let i = 0; i < n; i++) seen.add(key(n === 1 ? 0 : Math.floor((i * (count - 1)) / (n - 1))));
  return seen.size / n > 0.9;
}

/*
 * Each value's entry in a dictionary of the distinct values, in order of first appearance: indexes[k] is value
 * k's entry; `first` gets, for each entry, where it was first seen. Keys compare exactly. One loop per kind
 * of values, each with its own Map, and nothing after the loop: a chunk's loop is compiled on-stack, and one
 * loop shared by the kinds (through a key function) was compiled again for each kind, then again for the
 * object it built after the loop.
 */

function indexInt64(words: Int32Array, count: number, indexes: Int32Array, first: number[]): void {
  const index = new Map<number | string, number>();
  for (let k = 0; k < count; k++) {
    const v = int64Key(words, k);
    let i = index.get(v);
    if (i === undefined) {
      i = first.length;
      index.set(v, i);
      first.push(k);
    }
    indexes[k] = i;
  }
}

function indexInt32(values: Int32Array, count: number, indexes: Int32Array, first: number[]): void {
  const index = new Map<number, number>();
  for (let k = 0; k < count; k++) {
    const v = values[k]!;
    let i = index.get(v);
    if (i === undefined) {
      i = first.length;
      index.set(v, i);
      first.push(k);
    }
    indexes[k] = i;
  }
}

function indexLatin1(buf: Buffer, ends: Int32Array, count: number, indexes: Int32Array, first: number[]): void {
  const index = new Map<string, number>();
  for (let k = 0; k < count; k++) {
    const v = latin1Key(buf, ends, k);
    let i = index.get(v);
    if (i === undefined) {
      i = first.length;
      index.set(v, i);
      first.push(k);
    }
    indexes[k] = i;
  }
}

/** An exact Map key for int64 value k: the number when it is safe, else the two words. */
function int64Key(words: Int32Array, k: number): number | string {
  const lo = words[2 * k]! >>> 0;
  const hi = words[2 * k + 1]!;
  return hi >= -0x200000 && hi < 0x200000 ? hi * 4294967296 + lo : `${hi}:${lo}`;
}

/** String k's bytes read as latin1 (one character a byte: an exact key). */
function latin1Key(buf: Buffer, ends: Int32Array, k: number): string {
  return buf.toString('latin1', (k ? ends[k - 1]! : 0) + 4, ends[k]!);
}

/** A dictionary of numbers when it pays, built with exact keys; `take` copies entry k's value out. */
function numberDictionary(values: Int64Values | Int32Values, key: (k: number) => number | string): Dictionary | undefined {
  const count = values.count;
  if (mostlyDistinct(count, key)) return undefined;
  const indexes = new Int32Array(count);
  const first: number[] = [];
  if (values.kind === 'int64') indexInt64(values.words, count, indexes, first);
  else indexInt32(values.values, count, indexes, first);
  const width = values.kind === 'int64' ? 8 : 4;
  if (!halves(first.length * width, first.length, count * width, count)) return undefined;
  let entries: ChunkValues;
  if (values.kind === 'int64') {
    const words = new Int32Array(first.length * 2);
    first.forEach((k, i) => {
      words[2 * i] = values.words[2 * k]!;
      words[2 * i + 1] = values.words[2 * k + 1]!;
    });
    entries = { kind: 'int64', words, count: first.length, defined: null };
  } else {
    entries = { kind: 'int32', values: Int32Array.from(first, (k) => values.values[k]!), count: first.length, defined: null };
  }
  return { entries, indexes, defined: values.defined };
}

/** bigint, decimal and timestamp columns: INT64. */
export class Int64Buffer extends NullableBuffer implements ColumnBuffer {
  // Stryker disable next-line ArithmeticOperator: a first buffer of another size only grows sooner or later
  private words: Int32Array = new Int32Array(2 * 4096);

  /** `dictionary`: whether a dictionary may be tried (not for DELTA_BINARY_PACKED columns). */
  constructor(nullable: boolean, private readonly dictionary: boolean) {
    super(nullable);
  }

  append(part: WireColumn): void {
    if (part.kind !== 'int64') throw new Error('batch columns out of order');
    const n = part.values.length;
    // Stryker disable next-line ConditionalExpression: false only takes littleEndianWords(), which gives the same words
    const src = LITTLE_ENDIAN ? new Int32Array(part.values.buffer, part.values.byteOffset, 2 * n) : littleEndianWords(part.values);
    this.words = grownI32(this.words, 2 * (this.count + n));
    const nulls = part.nulls;
    if (!this.nullable || !nulls) {
      this.words.set(src, 2 * this.count);
      this.count += n;
      // Stryker disable next-line ConditionalExpression: true only grows and fills a required column's levels, which it never reads
      if (this.nullable) {
        this.defined = grownU8(this.defined, this.rows + n);
        this.defined.fill(1, this.rows, this.rows + n);
      }
      this.rows += n;
      return;
    }
    this.defined = grownU8(this.defined, this.rows + n);
    const words = this.words;
    const defined = this.defined;
    let count = this.count;
    for (let i = 0; i < n; i++) {
      if (nulls[i] === 1) {
        defined[this.rows + i] = 0;
        continue;
      }
      defined[this.rows + i] = 1;
      words[2 * count] = src[2 * i]!;
      words[2 * count + 1] = src[2 * i + 1]!;
      count++;
    }
    this.count = count;
    this.rows += n;
  }

  values(): Int64Values {
    return { kind: 'int64', words: this.words.subarray(0, 2 * this.count), count: this.count, defined: this.definedLevels() };
  }

  plan(): ChunkPlan {
    const values = this.values();
    const words = values.words;
    const dictionary = this.dictionary ? numberDictionary(values, (k) => int64Key(words, k)) : undefined;
    return dictionary ? { dictionary } : { values };
  }
}

function littleEndianWords(values: BigInt64Array): Int32Array {
  const words = new Int32Array(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    words[2 * i] = Number(BigInt.asIntN(32, values[i]!));
    words[2 * i + 1] = Number(BigInt.asIntN(32, values[i]! >> 32n));
  }
  return words;
}

/**
 * Fixed-width values in one typed array, a null kept only as a definition level: INT32 dates and BOOLEAN.
 * The two differ in their array, their wire kind and what a chunk plan makes of them.
 */
abstract class FixedWidthBuffer<K extends 'int32' | 'bool', A extends Int32Array | Uint8Array> extends NullableBuffer {
  protected abstract data: A;
  protected abstract readonly kind: K;
  protected abstract grown(a: A, need: number): A;

  append(part: WireColumn): void {
    if (part.kind !== this.kind || (part.kind !== 'int32' && part.kind !== 'bool')) throw new Error('batch columns out of order');
    const { values, nulls } = part;
    const n = values.length;
    this.data = this.grown(this.data, this.count + n);
    // Stryker disable next-line ConditionalExpression: true only grows a required column's levels, which it never reads
    if (this.nullable) this.defined = grownU8(this.defined, this.rows + n);
    if (!this.nullable || !nulls) {
      this.data.set(values, this.count);
      this.count += n;
      // Stryker disable next-line ConditionalExpression: true only fills a required column's levels (empty: a no-op), which it never reads
      if (this.nullable) this.defined.fill(1, this.rows, this.rows + n);
      this.rows += n;
      return;
    }
    for (let i = 0; i < n; i++) {
      const present = nulls[i] === 1 ? 0 : 1;
      this.defined[this.rows + i] = present;
      if (present) this.data[this.count++] = values[i]!;
    }
    this.rows += n;
  }
}

/** date columns: INT32 days. */
export class Int32Buffer extends FixedWidthBuffer<'int32', Int32Array> implements ColumnBuffer {
  protected data = new Int32Array(4096);
  protected readonly kind = 'int32';
  protected grown = grownI32;

  plan(): ChunkPlan {
    const values: Int32Values = { kind: 'int32', values: this.data.subarray(0, this.count), count: this.count, defined: this.definedLevels() };
    const dictionary = numberDictionary(values, (k) => values.values[k]!);
    return dictionary ? { dictionary } : { values };
  }
}

/** boolean columns: PLAIN (bit-packed) BOOLEAN, never a dictionary (Parquet has none for BOOLEAN). */
export class BoolBuffer extends FixedWidthBuffer<'bool', Uint8Array> implements ColumnBuffer {
  protected data = new Uint8Array(4096);
  protected readonly kind = 'bool';
  protected grown = grownU8;

  plan(): ChunkPlan {
    return { values: { kind: 'bool', values: this.data.subarray(0, this.count), count: this.count, defined: this.definedLevels() } };
  }
}

/* ------------------------------------------------------------------ strings */

/** Distinct values among a text chunk's first SAMPLE that make a dictionary worth building: at most half (or fewer than 16 values). */
const SAMPLE = 512;

/**
 * string columns. While every batch comes as a dictionary (few distinct values: currency, type,
 * merchant) the batches' dictionaries are merged and their codes remapped once per batch; the chunk then
 * goes to a dictionary page if that halves it. Text batches (UTF-8 and byte lengths) are appended as
 * they are; a chunk of text still becomes a dictionary when its first values repeat enough and the
 * whole chunk halves.
 */
export class StringBuffer extends NullableBuffer implements ColumnBuffer {
  /** 'dict' while only dictionary batches came. */
  private mode: 'dict' | 'text' = 'dict';
  // dictionary state
  private index = new Map<string, number>();
  private entries: string[] = [];
  private entryBytes: Uint8Array[] = [];
  private uses: Int32Array = new Int32Array(64);
  private indexes: Int32Array = new Int32Array(4096);
  // text state
  private readonly text = new ByteBuffer(1 << 16);
  private ends: Int32Array = new Int32Array(4096);

  append(part: WireColumn): void {
    if (part.kind === 'dict') {
      if (this.mode === 'dict') this.appendCodes(part.values, part.codes);
      else this.appendDictAsText(part.values, part.codes);
      return;
    }
    if (part.kind !== 'utf8') throw new Error('batch columns out of order');
    if (this.mode === 'dict') this.toText();
    const { bytes, lengths } = part;
    const n = lengths.length;
    this.ends = grownI32(this.ends, this.count + n);
    // Stryker disable next-line ConditionalExpression: true only grows a required column's levels, which it never reads
    if (this.nullable) this.defined = grownU8(this.defined, this.rows + n);
    // already in the PLAIN layout: one copy
    let at = this.text.pos;
    this.text.copy(bytes, 0, bytes.length);
    const ends = this.ends;
    let count = this.count;
    for (let i = 0; i < n; i++) {
      const len = lengths[i]!;
      if (len < 0) {
        // Stryker disable next-line ConditionalExpression: true only writes past the end of a required column's empty levels: a no-op
        if (this.nullable) this.defined[this.rows + i] = 0;
        continue;
      }
      // Stryker disable next-line ConditionalExpression: true only writes past the end of a required column's empty levels: a no-op
      if (this.nullable) this.defined[this.rows + i] = 1;
      at += 4 + len;
      ends[count++] = at;
    }
    this.count = count;
    this.rows += n;
  }

  private appendCodes(values: readonly string[], codes: Int32Array): void {
    const remap = new Int32Array(values.length);
    for (let j = 0; j < values.length; j++) {
      const v = values[j]!;
      let i = this.index.get(v);
      if (i === undefined) {
        i = this.entries.length;
        this.index.set(v, i);
        this.entries.push(v);
        this.entryBytes.push(Buffer.from(v, 'utf8'));
      }
      remap[j] = i;
    }
    this.uses = grownI32(this.uses, this.entries.length);
    const n = codes.length;
    this.indexes = grownI32(this.indexes, this.count + n);
    // Stryker disable next-line ConditionalExpression: true only grows a required column's levels, which it never reads
    if (this.nullable) this.defined = grownU8(this.defined, this.rows + n);
    const indexes = this.indexes;
    const uses = this.uses;
    let count = this.count;
    for (let k = 0; k < n; k++) {
      const code = codes[k]!;
      if (code < 0) {
        this.defined[this.rows + k] = 0;
        continue;
      }
      // Stryker disable next-line ConditionalExpression: true only writes past the end of a required column's empty levels: a no-op
      if (this.nullable) this.defined[this.rows + k] = 1;
      const i = remap[code]!;
      indexes[count++] = i;
      uses[i]!++;
    }
    this.count = count;
    this.rows += n;
  }

  private appendDictAsText(values: readonly string[], codes: Int32Array): void {
    const encoded = values.map((v) => Buffer.from(v, 'utf8'));
    const n = codes.length;
    this.ends = grownI32(this.ends, this.count + n);
    // Stryker disable next-line ConditionalExpression: true only grows a required column's levels, which it never reads
    if (this.nullable) this.defined = grownU8(this.defined, this.rows + n);
    for (let k = 0; k < n; k++) {
      const code = codes[k]!;
      if (code < 0) {
        this.defined[this.rows + k] = 0;
        continue;
      }
      // Stryker disable next-line ConditionalExpression: true only writes past the end of a required column's empty levels: a no-op
      if (this.nullable) this.defined[this.rows + k] = 1;
      this.ends[this.count++] = appendPrefixed(this.text, encoded[code]!);
    }
    this.rows += n;
  }

  /** The values so far, from dictionary indexes to text. */
  private toText(): void {
    this.mode = 'text';
    this.ends = grownI32(this.ends, this.count);
    for (let k = 0; k < this.count; k++) this.ends[k] = appendPrefixed(this.text, this.entryBytes[this.indexes[k]!]!);
  }

  private textValues(): Utf8Values {
    return { kind: 'utf8', data: this.text.bytes, ends: this.ends.subarray(0, this.count), count: this.count, defined: this.definedLevels() };
  }

  plan(): ChunkPlan {
    if (this.mode === 'dict') {
      let entryBytes = 0;
      let plainBytes = 0;
      this.entryBytes.forEach((b, i) => {
        entryBytes += b.length + 4;
        plainBytes += (b.length + 4) * this.uses[i]!;
      });
      if (halves(entryBytes, this.entries.length, plainBytes, this.count)) {
        return { dictionary: { entries: utf8Entries(this.entryBytes), indexes: this.indexes.subarray(0, this.count), defined: this.definedLevels() } };
      }
      this.toText();
      return { values: this.textValues() };
    }
    const values = this.textValues();
    return textDictionary(values) ?? { values };
  }

  override reset(): void {
    super.reset();
    this.mode = 'dict';
    this.index.clear();
    // emptied, not replaced: a new [] holds small integers until its first push, and the loops that push
    // strings and buffers into it were compiled for the arrays they had seen ("not a Smi" on every group)
    this.entries.length = 0;
    this.entryBytes.length = 0;
    this.uses.fill(0);
    this.text.pos = 0;
  }
}

/** Appends a value in the PLAIN layout (4-byte length, bytes); returns where it ends. */
function appendPrefixed(out: ByteBuffer, bytes: Uint8Array): number {
  out.u32(bytes.length);
  out.copy(bytes, 0, bytes.length);
  return out.pos;
}

function utf8Entries(encoded: readonly Uint8Array[]): Utf8Values {
  const out = new ByteBuffer(encoded.reduce((n, b) => n + 4 + b.length, 0));
  const ends = new Int32Array(encoded.length);
  encoded.forEach((b, i) => (ends[i] = appendPrefixed(out, b)));
  return { kind: 'utf8', data: out.bytes, ends, count: encoded.length, defined: null };
}

/**
 * A dictionary for a chunk of text when its first values say it may pay (few distinct among them) and the
 * whole chunk then halves. Values are keyed by their bytes read as latin1 (one character a byte: exact).
 */
function textDictionary(values: Utf8Values): { dictionary: Dictionary } | undefined {
  const { data, ends, count } = values;
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const sampled = Math.min(count, SAMPLE);
  const seen = new Set<string>();
  for (let k = 0; k < sampled; k++) seen.add(latin1Key(buf, ends, k));
  if (!(sampled < 16 || seen.size <= sampled / 2)) return undefined;
  const indexes = new Int32Array(count);
  const first: number[] = [];
  indexLatin1(buf, ends, count, indexes, first);
  // An entry is its bytes (one latin1 character each) and PLAIN's 4-byte length.
  let entryBytes = 0;
  for (const k of first) entryBytes += ends[k]! - (k ? ends[k - 1]! : 0);
  const plainBytes = count ? ends[count - 1]! : 0;
  if (!halves(entryBytes, first.length, plainBytes, count)) return undefined;
  const entries = first.map((k) => data.subarray((k ? ends[k - 1]! : 0) + 4, ends[k]!));
  return { dictionary: { entries: utf8Entries(entries), indexes, defined: values.defined } };
}

/* ------------------------------------------------------------------ statistics */

type MinMax = { min_value?: number | bigint | boolean | Uint8Array; max_value?: number | bigint | boolean | Uint8Array };

/**
 * min/max of the non-null values (all of them, or a dictionary's entries), as hyparquet-writer's footer takes
 * them. One loop per kind, each in a function of its own: a loop shared by the kinds is compiled for the
 * first kind it meets and deoptimized by each next one, a compile of ~5 ms each time, per thread.
 */
export function minMax(values: ChunkValues): MinMax {
  if (values.count === 0) return {};
  switch (values.kind) {
    case 'bool':
      return minMaxBool(values.values, values.count);
    case 'int32':
      return minMaxInt32(values.values, values.count);
    case 'int64':
      return minMaxInt64(values.words, values.count);
    case 'utf8':
      return minMaxUtf8(values.data, values.ends, values.count);
  }
}

function minMaxBool(values: Uint8Array, count: number): MinMax {
  // false < true, as Parquet orders BOOLEAN
  let trues = 0;
  for (let k = 0; k < count; k++) trues += values[k]!;
  return { min_value: trues === count, max_value: trues > 0 };
}

function minMaxInt32(values: Int32Array, count: number): MinMax {
  let min = values[0]!;
  let max = min;
  for (let k = 1; k < count; k++) {
    const v = values[k]!;
    // Stryker disable next-line EqualityOperator: a value equal to the minimum leaves it as it is
    if (v < min) min = v;
    // Stryker disable next-line EqualityOperator: a value equal to the maximum leaves it as it is
    else if (v > max) max = v;
  }
  return { min_value: min, max_value: max };
}

/**
 * Where the scans below found the smallest value (0) and the largest (1). They store into it from the
 * loop, every row, and build nothing after it: a chunk's loop is compiled on-stack, and code after the
 * loop that had never run (building the statistics) deoptimized it on every chunk. The branches only move
 * locals: a store in the branch of a new minimum had never run on rising values (ids, timestamps) when
 * the loop was compiled, and deoptimized it at the first column whose values fall.
 */
const extremes = new Int32Array(2);

function minMaxInt64(w: Int32Array, count: number): MinMax {
  findExtremesInt64(w, count);
  const min = extremes[0]!;
  const max = extremes[1]!;
  return { min_value: int64Of(w[2 * min]!, w[2 * min + 1]!), max_value: int64Of(w[2 * max]!, w[2 * max + 1]!) };
}

function findExtremesInt64(w: Int32Array, count: number): void {
  let minLo = w[0]! >>> 0;
  let minHi = w[1]!;
  let maxLo = minLo;
  let maxHi = minHi;
  let minK = 0;
  let maxK = 0;
  extremes[0] = 0;
  extremes[1] = 0;
  for (let k = 1; k < count; k++) {
    const lo = w[2 * k]! >>> 0;
    const hi = w[2 * k + 1]!;
    if (hi < minHi || (hi === minHi && lo < minLo)) {
      minHi = hi;
      minLo = lo;
      minK = k;
    } else if (hi > maxHi || (hi === maxHi && lo > maxLo)) {
      maxHi = hi;
      maxLo = lo;
      maxK = k;
    }
    extremes[0] = minK;
    extremes[1] = maxK;
  }
}

function minMaxUtf8(data: Uint8Array, ends: Int32Array, count: number): MinMax {
  findExtremesUtf8(data, ends, count);
  const min = extremes[0]!;
  const max = extremes[1]!;
  // Copies: the footer keeps them until the end, and the buffer is reused by the next group.
  return { min_value: data.slice(min ? ends[min - 1]! + 4 : 4, ends[min]!), max_value: data.slice(max ? ends[max - 1]! + 4 : 4, ends[max]!) };
}

function findExtremesUtf8(data: Uint8Array, ends: Int32Array, count: number): void {
  // Byte order, compared 4 bytes at a time as big-endian words (most values differ in their first bytes).
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let minFrom = 4;
  let minTo = ends[0]!;
  let maxFrom = minFrom;
  let maxTo = minTo;
  let minK = 0;
  let maxK = 0;
  extremes[0] = 0;
  extremes[1] = 0;
  for (let k = 1; k < count; k++) {
    const from = ends[k - 1]! + 4;
    const to = ends[k]!;
    if (compareUtf8(view, from, to, minFrom, minTo) < 0) {
      minFrom = from;
      minTo = to;
      minK = k;
    } else if (compareUtf8(view, from, to, maxFrom, maxTo) > 0) {
      maxFrom = from;
      maxTo = to;
      maxK = k;
    }
    extremes[0] = minK;
    extremes[1] = maxK;
  }
}

/**
 * Unsigned byte order of the values at [a, aTo) and [b, bTo) (Parquet's order for UTF8 min/max), 4 bytes at a
 * time as big-endian words. The last word of the shorter length is the one that ends there, its first bytes
 * (compared already, or the 4-byte length before a value shorter than 4) masked off: one path for every
 * word, because a tail loop of single bytes, first reached when two values were equal up to their last
 * word, deoptimized the scan that had inlined this. Every value follows its 4-byte length, so a + n - 4 >= 0.
 */
function compareUtf8(view: DataView, a: number, aTo: number, b: number, bTo: number): number {
  const n = Math.min(aTo - a, bTo - b);
  for (let i = 0; i < n; i += 4) {
    const at = Math.min(i, n - 4);
    const mask = 0xffffffff >>> ((i - at) << 3);
    const x = (view.getUint32(a + at) & mask) >>> 0;
    const y = (view.getUint32(b + at) & mask) >>> 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return aTo - a - (bTo - b);
}
