/**
 * The byte-level pieces of a Parquet column chunk, written from typed arrays: PLAIN values, the
 * RLE/bit-packed hybrid (definition levels, dictionary indexes) and DELTA_BINARY_PACKED for INT64, as the
 * Parquet format specification (Encodings.md) defines them. encoder.ts puts them together into
 * pages and chunks.
 *
 * Why not hyparquet-writer's own encoders: they take one JS value per row (a BigInt per int64, a
 * Uint8Array or string per text value) and append them one DataView call per byte. On the 1M-row
 * benchmark that was most of the encoding time and most of the garbage (docs/benchmarks.md). Here an
 * INT64 is two 32-bit words of a typed array (no BigInt), a string is a range of one UTF-8 buffer, and
 * every page is written into one reused buffer.
 */

/** A growable byte buffer, reused from page to page: write at `pos` after `ensure(n)`. */
export class ByteBuffer {
  bytes: Uint8Array;
  pos = 0;

  constructor(size = 1 << 16) {
    this.bytes = new Uint8Array(size);
  }

  /** Room for `extra` more bytes; returns the (possibly new) array. */
  ensure(extra: number): Uint8Array {
    const need = this.pos + extra;
    // Stryker disable next-line EqualityOperator: growing when the bytes fit exactly only grows sooner
    if (need > this.bytes.length) {
      const grown = new Uint8Array(Math.max(need, this.bytes.length * 2));
      // Stryker disable next-line MethodExpression: copying the unwritten rest as well copies bytes nothing reads
      grown.set(this.bytes.subarray(0, this.pos));
      this.bytes = grown;
    }
    return this.bytes;
  }

  /** The bytes written so far (a view: valid until the next write). */
  view(): Uint8Array {
    return this.bytes.subarray(0, this.pos);
  }

  u8(v: number): void {
    this.ensure(1)[this.pos++] = v;
  }

  u32(v: number): void {
    const b = this.ensure(4);
    const p = this.pos;
    b[p] = v;
    b[p + 1] = v >>> 8;
    b[p + 2] = v >>> 16;
    b[p + 3] = v >>> 24;
    this.pos = p + 4;
  }

  /** ULEB128 of a non-negative 32-bit integer. */
  varint(v: number): void {
    const b = this.ensure(5);
    let p = this.pos;
    while (v > 0x7f) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p++] = v;
    this.pos = p;
  }

  /** ULEB128 of the zigzag form of the int64 (hi, lo): what DELTA_BINARY_PACKED stores for signed values. */
  zigzag64(lo: number, hi: number): void {
    const sign = hi >> 31;
    let zlo = ((lo << 1) ^ sign) >>> 0;
    let zhi = ((hi << 1) | (lo >>> 31)) ^ sign;
    const b = this.ensure(10);
    let p = this.pos;
    while (zhi !== 0 || zlo > 0x7f) {
      b[p++] = (zlo & 0x7f) | 0x80;
      zlo = ((zlo >>> 7) | (zhi << 25)) >>> 0;
      zhi >>>= 7;
    }
    b[p++] = zlo;
    this.pos = p;
  }

  /** Appends src[from, to). */
  copy(src: Uint8Array, from: number, to: number): void {
    const n = to - from;
    const b = this.ensure(n);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the loop and set() copy the same bytes; the loop is faster for short copies
    if (n < 32) {
      let p = this.pos;
      for (let i = from; i < to; i++) b[p++] = src[i]!;
    } else {
      b.set(src.subarray(from, to), this.pos);
    }
    this.pos += n;
  }
}

/** Bits needed for values up to `max` (0 for 0), as Parquet's bit widths are defined. */
export function bitWidth(max: number): number {
  return max === 0 ? 0 : 32 - Math.clz32(max);
}

/**
 * The RLE/bit-packed hybrid of dictionary indexes values[from, to) at `width` bits (Encodings.md "RLE"): runs
 * of 8 or more equal values as RLE runs, the rest in bit-packed groups of 8 (the last group padded with
 * zeros). The same choices as hyparquet-writer's writeRleBitPackedHybrid, without a call per byte.
 * Definition levels have a copy of this loop of their own (writeDefinitionLevels): one loop reading both
 * an Int32Array and a Uint8Array is compiled for one and deoptimized by the other, every row group.
 */
export function writeRleHybrid(out: ByteBuffer, values: Int32Array, from: number, to: number, width: number): void {
  let i = from;
  let packedStart = from;
  let packedGroups = 0;
  while (i < to) {
    const v = values[i]!;
    let run = 1;
    while (i + run < to && values[i + run] === v) run++;
    const repeated = run >= 8;
    if (!repeated) {
      if (packedGroups === 0) packedStart = i;
      packedGroups++;
      i += 8;
    }
    // Pending groups are written from one place, in the loop: a call after a long loop has no type
    // feedback when the loop is compiled on-stack, and deoptimizes it on every exit.
    if (packedGroups && (repeated || i >= to)) {
      out.pos = writeBitPacked(out, values, packedStart, packedGroups, to, width);
      packedGroups = 0;
    }
    if (repeated) {
      writeRun(out, v, run, (width + 7) >> 3);
      i += run;
    }
  }
}

/** An RLE run: its length, then the value in `valueBytes` little-endian bytes. */
function writeRun(out: ByteBuffer, v: number, run: number, valueBytes: number): void {
  out.varint(run << 1);
  const b = out.ensure(valueBytes);
  for (let k = 0; k < valueBytes; k++) b[out.pos++] = (v >>> (k << 3)) & 0xff;
}

/**
 * `groups` bit-packed groups of 8 values from `start`; values at or past `end` are written as 0. Returns
 * the new position: the caller stores it (a store after a long first loop, compiled on-stack, had no type
 * feedback and deoptimized on every call).
 */
function writeBitPacked(out: ByteBuffer, values: Int32Array, start: number, groups: number, end: number, width: number): number {
  out.varint((groups << 1) | 1);
  // Stryker disable next-line ConditionalExpression: at width 0 the loop below writes no byte either
  if (width === 0) return out.pos;
  const b = out.ensure(groups * width);
  let p = out.pos;
  const count = groups * 8;
  const full = Math.min(count, end - start);
  if (width <= 24) {
    // Up to 24 bits of a value plus at most 7 pending bits fit a 32-bit integer.
    const mask = (1 << width) - 1;
    let acc = 0;
    let bits = 0;
    for (let k = 0; k < count; k++) {
      const v = k < full ? values[start + k]! & mask : 0;
      acc |= v << bits;
      bits += width;
      while (bits >= 8) {
        b[p++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
  } else {
    let acc = 0; // a double: at most 7 + 32 bits, exact
    let bits = 0;
    for (let k = 0; k < count; k++) {
      const v = k < full ? (values[start + k]! >>> 0) % 2 ** width : 0;
      acc += v * 2 ** bits;
      bits += width;
      while (bits >= 8) {
        const low = acc % 256;
        b[p++] = low;
        acc = (acc - low) / 256;
        bits -= 8;
      }
    }
  }
  return p;
}

/** Definition levels of a flat optional column (1 = value, 0 = null) as v1 pages carry them: a 4-byte length, then the hybrid at bit width 1. */
export function writeDefinitionLevels(out: ByteBuffer, defined: Uint8Array, from: number, to: number): void {
  const at = out.pos;
  out.u32(0);
  writeLevelsHybrid(out, defined, from, to);
  const length = out.pos - at - 4;
  const b = out.bytes;
  b[at] = length;
  b[at + 1] = length >>> 8;
  b[at + 2] = length >>> 16;
  b[at + 3] = length >>> 24;
}

/** writeRleHybrid's choices for levels (0 or 1, one byte each) at bit width 1. */
function writeLevelsHybrid(out: ByteBuffer, levels: Uint8Array, from: number, to: number): void {
  let i = from;
  let packedStart = from;
  let packedGroups = 0;
  while (i < to) {
    const v = levels[i]!;
    let run = 1;
    while (i + run < to && levels[i + run] === v) run++;
    const repeated = run >= 8;
    if (!repeated) {
      if (packedGroups === 0) packedStart = i;
      packedGroups++;
      i += 8;
    }
    if (packedGroups && (repeated || i >= to)) {
      out.pos = packLevels(out, levels, packedStart, packedGroups, to);
      packedGroups = 0;
    }
    if (repeated) {
      writeRun(out, v, run, 1);
      i += run;
    }
  }
}

/** `groups` bit-packed groups of 8 levels from `start`, a byte each, least significant bit first; levels at or past `end` are 0. */
function packLevels(out: ByteBuffer, levels: Uint8Array, start: number, groups: number, end: number): number {
  out.varint((groups << 1) | 1);
  const b = out.ensure(groups);
  let p = out.pos;
  for (let g = 0; g < groups; g++) {
    const from = start + 8 * g;
    const to = Math.min(from + 8, end);
    let byte = 0;
    for (let k = from; k < to; k++) byte |= levels[k]! << (k - from);
    b[p++] = byte;
  }
  return p;
}

const BLOCK = 128;
const MINIBLOCKS = 4;
const PER_MINIBLOCK = BLOCK / MINIBLOCKS;
const dLo = new Int32Array(BLOCK);
const dHi = new Int32Array(BLOCK);
const widths = new Uint8Array(MINIBLOCKS);

/**
 * DELTA_BINARY_PACKED of the int64 values words[2*from .. 2*to) (little-endian pairs: low word, high word),
 * in blocks of 128 values and 4 miniblocks, deltas wrapping at 64 bits as the format defines them. All in
 * 32-bit halves: no BigInt, whatever the values (ids beyond 2^53 included).
 */
export function writeDeltaInt64(out: ByteBuffer, words: Int32Array, from: number, to: number): void {
  const count = to - from;
  out.varint(BLOCK);
  out.varint(MINIBLOCKS);
  out.varint(count);
  if (count === 0) {
    out.zigzag64(0, 0);
    return;
  }
  out.zigzag64(words[2 * from]!, words[2 * from + 1]!);
  // A block per call: a page is a few calls of this function but a thousand blocks, so the block's loops
  // are compiled once, with the feedback of many whole blocks, instead of on-stack in the middle of the
  // first page and again for each branch they had not yet taken.
  for (let b = from + 1; b < to; b += BLOCK) writeDeltaBlock(out, words, b, Math.min(BLOCK, to - b));
}

/** One block: the `n` deltas of the values from `b` on (each from the value before it), packed. */
function writeDeltaBlock(out: ByteBuffer, words: Int32Array, b: number, n: number): void {
  let prevLo = words[2 * (b - 1)]!;
  let prevHi = words[2 * (b - 1) + 1]!;
  let minLo = 0;
  let minHi = 0;
  for (let i = 0; i < n; i++) {
    const lo = words[2 * (b + i)]!;
    const hi = words[2 * (b + i) + 1]!;
    const borrow = lo >>> 0 < prevLo >>> 0 ? 1 : 0;
    const xLo = (lo - prevLo) | 0;
    const xHi = (hi - prevHi - borrow) | 0;
    dLo[i] = xLo;
    dHi[i] = xHi;
    if (i === 0 || xHi < minHi || (xHi === minHi && xLo >>> 0 < minLo >>> 0)) {
      minLo = xLo;
      minHi = xHi;
    }
    prevLo = lo;
    prevHi = hi;
  }
  out.zigzag64(minLo, minHi);
  // deltas minus the block's minimum: unsigned, so each miniblock's width comes from the OR of its values
  for (let m = 0; m < MINIBLOCKS; m++) {
    let orLo = 0;
    let orHi = 0;
    const end = Math.min((m + 1) * PER_MINIBLOCK, n);
    for (let i = m * PER_MINIBLOCK; i < end; i++) {
      const xLo = dLo[i]!;
      const borrow = xLo >>> 0 < minLo >>> 0 ? 1 : 0;
      const aLo = (xLo - minLo) | 0;
      const aHi = (dHi[i]! - minHi - borrow) | 0;
      dLo[i] = aLo;
      dHi[i] = aHi;
      orLo |= aLo;
      orHi |= aHi;
    }
    // not bitWidth(): its Math.clz32 had no feedback yet while every block so far had width 0
    widths[m] = orHi !== 0 ? 64 - Math.clz32(orHi) : 32 - Math.clz32(orLo);
  }
  const wb = out.ensure(MINIBLOCKS);
  for (let m = 0; m < MINIBLOCKS; m++) wb[out.pos++] = widths[m]!;
  for (let m = 0; m < MINIBLOCKS; m++) {
    const width = widths[m]!;
    if (width === 0) continue;
    out.pos = packMiniblock(out, m * PER_MINIBLOCK, n, width);
  }
}

/** 32 adjusted deltas from dLo/dHi[start], zero past `n`, at `width` bits (1..64), LSB first; returns the new position. */
function packMiniblock(out: ByteBuffer, start: number, n: number, width: number): number {
  const b = out.ensure(width * 4);
  let p = out.pos;
  // Each value in 16-bit pieces (the last one narrower), through an int accumulator: at most 7 pending
  // bits + 16 stay within 32. A double accumulator's `2 ** bits`, `%` and `/` (a Math.pow per value) made
  // the benchmark's transaction_id (a wide block around each id beyond 2^53) cost ~45 ms per million rows
  // to encode instead of ~25; the bytes are the same. One loop for every width: a separate one for narrow
  // widths was first run by the second DELTA column, after the first (whose only non-zero blocks are
  // wide) had got this compiled without it, and deoptimized it there every run.
  let acc = 0;
  let bits = 0;
  for (let k = 0; k < PER_MINIBLOCK; k++) {
    const i = start + k;
    const lo = i < n ? dLo[i]! : 0;
    const hi = i < n ? dHi[i]! : 0;
    for (let at = 0; at < width; at += 16) {
      const piece = Math.min(16, width - at);
      const word = at < 32 ? lo : hi;
      acc |= ((word >>> (at & 31)) & ((1 << piece) - 1)) << bits;
      bits += piece;
      while (bits >= 8) {
        b[p++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
  }
  return p;
}

/** The int64 (hi, lo) as a bigint. */
export function int64Of(lo: number, hi: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo >>> 0);
}
