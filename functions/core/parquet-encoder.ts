import type { Encoding, RowGroup, SchemaElement, Statistics } from 'hyparquet';
import { ByteWriter, ParquetWriter, type ColumnSource } from 'hyparquet-writer';
import type { ColumnDefinition } from './report-definition.js';
import type { RowBatch, WireColumn } from './row-group-buffer.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createdBy } from './build-info.js';
import { parquetSchema } from './table-schema.js';

/**
 * Row groups to Parquet bytes with hyparquet-writer. The same code runs on the parsing thread
 * (inline mode) or in parquet-worker.ts; batches arrive in order and a row group is closed by the
 * caller, who decides its bounds (rows and bytes).
 */

export interface EncoderSettings {
  columns: ColumnDefinition[];
  /** Target uncompressed page size in bytes (hyparquet-writer's default is 1 MiB). */
  pageSize?: number;
}

/**
 * Per-column encodings, chosen for the engines that read the files (docs/parquet.md) first and size
 * second. INT64 ids and timestamps: DELTA_BINARY_PACKED, because the gateway's ids rise and rows come in
 * time order (on the benchmark transaction_id 8 -> 0.1 bytes a row, created_date 1 -> 0.16); every
 * engine in the compatibility table reads it on v1 pages. Everything else is left to hyparquet-writer's
 * dictionary (RLE_DICTIONARY pages, PLAIN dictionary page) when it at least halves the chunk, and PLAIN
 * otherwise. Never DELTA_BYTE_ARRAY: fastparquet cannot read it and parquet-java refuses it from writers
 * whose created_by it does not know (PARQUET-246).
 */
function fixedEncoding(column: ColumnDefinition): Encoding | undefined {
  return column.kind === 'bigint' || column.kind === 'timestamp' ? 'DELTA_BINARY_PACKED' : undefined;
}

/**
 * Whether a string column chunk should be offered for dictionary encoding, from a sample of its values:
 * few distinct values (currency, type, merchant) go as JS strings, which hyparquet-writer dictionary-
 * encodes by value; mostly distinct values (order ids, free text) go PLAIN without trying.
 */
function dictionaryWorthTrying(sample: ReadonlyArray<string | null>): boolean {
  const seen = new Set<string>();
  let count = 0;
  for (const v of sample) {
    if (v === null) continue;
    count++;
    seen.add(v);
  }
  return count < 16 || seen.size <= count / 2;
}

const SAMPLE = 512;

/**
 * A string column chunk. Few distinct values go as JS strings: hyparquet-writer builds the dictionary
 * with a Map and encodes only the distinct values. Many distinct values go PLAIN as UTF-8 bytes, encoded
 * once per batch (Buffer.from on the joined text) and cut into views of that one buffer: hyparquet-writer
 * would otherwise TextEncoder every value into its own ArrayBuffer, which was the largest cost of
 * encoding (and of garbage collection) on the benchmark. Both get statistics (null_count, min/max
 * truncated to STATS_BYTES): an order-id lookup or an IS NULL can then skip row groups.
 */
function stringColumn(parts: WireColumn[], rows: number): ColumnPlan {
  if (parts.every((p) => p.kind === 'dict')) return { data: () => sliceStrings(parts, rows) };
  if (dictionaryWorthTrying(sliceStrings(parts, Math.min(rows, SAMPLE)))) return { data: () => sliceStrings(parts, rows) };
  return {
    data: (plan) => {
      const views = utf8Views(parts, rows);
      plan.statistics = byteStatistics(views);
      return views;
    },
    encoding: 'PLAIN',
    ownStatistics: true,
  };
}

/**
 * How a column chunk is built: its values (built when hyparquet-writer reads them), its encoding, and,
 * for PLAIN strings, statistics computed here. hyparquet-writer's generic min/max (a JS byte loop per
 * comparison) was the largest cost of encoding such a column; Buffer.compare is native.
 */
interface ColumnPlan {
  data: (plan: ColumnPlan) => ColumnSource['data'];
  encoding?: Encoding;
  /** Statistics are computed while building the values, not by hyparquet-writer. */
  ownStatistics?: boolean;
  statistics?: Statistics;
}

/** null_count and min/max in unsigned byte order (Parquet's order for UTF8) of UTF-8 values. */
function byteStatistics(values: ReadonlyArray<Uint8Array | null>): Statistics {
  let nulls = 0;
  let min: Uint8Array | undefined;
  let max: Uint8Array | undefined;
  for (const v of values) {
    if (v === null) {
      nulls++;
      continue;
    }
    if (!min || Buffer.compare(v, min) < 0) min = v;
    if (!max || Buffer.compare(v, max) > 0) max = v;
  }
  return { null_count: BigInt(nulls), ...(min ? { min_value: min.slice(), max_value: max!.slice() } : {}) };
}

/** The first `rows` values as JS strings (slices of the batch's joined text: no copy for long values). */
function sliceStrings(parts: WireColumn[], rows: number): Array<string | null> {
  const out = new Array<string | null>(rows);
  let r = 0;
  for (const part of parts) {
    if (part.kind === 'dict') {
      const { values, codes } = part;
      for (let i = 0; i < codes.length && r < rows; i++) out[r++] = codes[i]! < 0 ? null : values[codes[i]!]!;
      if (r >= rows) break;
      continue;
    }
    if (part.kind !== 'string') throw new Error('batch columns out of order');
    const { text, lengths } = part;
    let pos = 0;
    for (let i = 0; i < lengths.length && r < rows; i++) {
      const len = lengths[i]!;
      if (len < 0) out[r++] = null;
      else {
        out[r++] = text.slice(pos, pos + len);
        pos += len;
      }
    }
    if (r >= rows) break;
  }
  return out;
}

/** Every value as a Uint8Array view into its batch's UTF-8 buffer. */
function utf8Views(parts: WireColumn[], rows: number): Array<Uint8Array | null> {
  const out = new Array<Uint8Array | null>(rows);
  let r = 0;
  for (const part of parts) {
    if (part.kind === 'dict') {
      const encoded = part.values.map((v) => Buffer.from(v, 'utf8'));
      for (const code of part.codes) out[r++] = code < 0 ? null : encoded[code]!;
      continue;
    }
    if (part.kind !== 'string') throw new Error('batch columns out of order');
    const { text, lengths } = part;
    const bytes = Buffer.from(text, 'utf8');
    const base = bytes.byteOffset;
    const buffer = bytes.buffer;
    const ascii = bytes.length === text.length; // then byte offsets are char offsets
    let chars = 0;
    let at = 0;
    for (let i = 0; i < lengths.length; i++) {
      const len = lengths[i]!;
      if (len < 0) {
        out[r++] = null;
        continue;
      }
      const size = ascii ? len : utf8Length(text, chars, chars + len);
      out[r++] = new Uint8Array(buffer, base + at, size);
      chars += len;
      at += size;
    }
  }
  return out;
}

/** UTF-8 bytes of text[from, to): what Buffer.from wrote for it (lone surrogates become 3-byte U+FFFD). */
function utf8Length(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * A row group's batches as the column sources hyparquet-writer takes, each column's array built only when
 * hyparquet-writer reads its `data` (it writes the columns one after another) and not kept: one column's
 * values exist at a time besides the compact batches, instead of the whole row group as JS values.
 * hyparquet-writer 0.17 reads column 0's data twice (the row count, then the column), so column 0 keeps
 * its array until the second read.
 */
function assembleColumns(columns: readonly ColumnDefinition[], batches: readonly RowBatch[]): { sources: ColumnSource[]; plans: ColumnPlan[] } {
  let rows = 0;
  for (const b of batches) rows += b.rows;
  const plans = columns.map((column, c): ColumnPlan => {
    const parts = batches.map((b) => b.columns[c]!);
    if (column.kind === 'string') return stringColumn(parts, rows);
    const encoding = fixedEncoding(column);
    return { data: () => joinNumbers(parts, rows, column.nullable), ...(encoding ? { encoding } : {}) };
  });
  const sources = plans.map((plan, c) => lazySource(columns[c]!.name, plan, c === 0 ? 2 : 1));
  return { sources, plans };
}

function lazySource(name: string, plan: ColumnPlan, reads: number): ColumnSource {
  let kept: ColumnSource['data'] | undefined;
  let left = reads;
  return {
    name,
    ...(plan.encoding ? { encoding: plan.encoding } : {}),
    // statistics computed here are put in the footer after the row group is written (writeRowGroup)
    ...(plan.ownStatistics ? { statistics: false } : {}),
    get data() {
      const data = kept ?? plan.data(plan);
      kept = --left > 0 ? data : undefined;
      return data;
    },
  };
}

function joinNumbers(parts: WireColumn[], rows: number, nullable: boolean): BigInt64Array | Int32Array | Array<bigint | number | null> {
  const first = parts[0];
  const joined = first?.kind === 'int32' ? new Int32Array(rows) : new BigInt64Array(rows);
  let r = 0;
  for (const part of parts) {
    if (part.kind === 'string' || part.kind === 'dict') throw new Error('batch columns out of order');
    (joined as Int32Array).set(part.values as Int32Array, r);
    r += part.values.length;
  }
  if (!nullable) return joined;
  // hyparquet-writer marks nulls by null values, which typed arrays cannot hold.
  const out = Array.from(joined as ArrayLike<number | bigint>) as Array<bigint | number | null>;
  r = 0;
  for (const part of parts) {
    if (part.kind === 'string' || part.kind === 'dict') continue;
    const nulls = part.nulls;
    if (nulls) for (let i = 0; i < nulls.length; i++) if (nulls[i]) out[r + i] = null;
    r += part.values.length;
  }
  return out;
}

/**
 * A hyparquet-writer Writer that hands its bytes out at every row-group boundary instead of keeping the
 * file in memory. hyparquet-writer calls flush() after each row group and awaits it when it returns a
 * promise, which is how a slow sink (an S3 multipart upload) slows the encoder down.
 */
export class ChunkedWriter extends ByteWriter {
  constructor(private readonly deliver: (bytes: Uint8Array) => void | Promise<void>) {
    super(1 << 20);
  }

  /** Copies the pending bytes out (the buffer is reused) and resets the buffer index, not the file offset. */
  private take(): Uint8Array {
    const bytes = new Uint8Array(this.buffer.slice(0, this.index));
    this.index = 0;
    return bytes;
  }

  flush(): void | Promise<void> {
    if (this.index === 0) return;
    return this.deliver(this.take());
  }

  override finish(): void | Promise<void> {
    return this.flush();
  }
}

/**
 * The schema data pages are encoded with: the same physical types, without the DECIMAL, TIMESTAMP and
 * DATE annotations. Our values already are the physical values (unscaled int64, epoch millis, epoch
 * days), and with the annotations hyparquet-writer would first "unconvert" every value into a new
 * array (Array.from + a function call each), ~0.3 s per million rows for nothing. Data pages and
 * statistics carry physical values either way (the bytes are the same); the footer, written by
 * finish(), gets the annotated schema, which is what readers use. UTF8 stays: it makes hyparquet-writer
 * cut string statistics on character boundaries. test/unit/table-schema.test.ts reads the footer back.
 */
function physicalSchema(schema: readonly SchemaElement[]): SchemaElement[] {
  return schema.map((e) => {
    if (e.converted_type === 'UTF8' || (!e.converted_type && !e.logical_type)) return e;
    const { converted_type: _c, logical_type: _l, precision: _p, scale: _s, ...physical } = e;
    return physical;
  });
}

/** Bytes a string statistic keeps; longer min/max values are truncated and flagged inexact. */
export const STATS_BYTES = 64;

/** Encodes row groups into one Parquet file as they come. */
export class RowGroupEncoder {
  private readonly writer: ParquetWriter;
  private readonly columns: ColumnDefinition[];
  private readonly pageSize: number | undefined;
  private readonly schema: SchemaElement[];
  private readonly physical: SchemaElement[];
  /** Milliseconds spent encoding (not waiting for the sink), for the manifest's timings. */
  encodeMs = 0;
  rowGroups = 0;

  constructor(settings: EncoderSettings, deliver: (bytes: Uint8Array) => void | Promise<void>) {
    this.columns = settings.columns;
    this.pageSize = settings.pageSize;
    this.schema = parquetSchema(settings.columns);
    this.physical = physicalSchema(this.schema);
    // Nothing reaches `deliver` before the first row group or finish(): the PAR1 magic waits in the buffer.
    // v1 data pages: what parquet-java, Spark's vectorized reader before 3.3, fastparquet, Hive and Impala
    // read (pageVersion is the project's patch to hyparquet-writer, patches/hyparquet-writer+*.patch).
    this.writer = new ParquetWriter({
      writer: new ChunkedWriter(deliver),
      schema: this.physical,
      codec: 'SNAPPY',
      createdBy: createdBy(),
      pageVersion: 1,
      statisticsTruncateLength: STATS_BYTES,
    });
    // Without the patch the option is ignored and every page would silently be DATA_PAGE_V2.
    if ((this.writer as { pageVersion?: number }).pageVersion !== 1) {
      throw new Error('hyparquet-writer is missing the project\'s pageVersion patch: run `npm ci` (its postinstall applies patches/)');
    }
  }

  /** Encodes the batches as one row group; resolves once its bytes are delivered. */
  async writeRowGroup(batches: readonly RowBatch[]): Promise<void> {
    const rows = batches.reduce((n, b) => n + b.rows, 0);
    if (rows === 0) return;
    const t = performance.now();
    const { sources, plans } = assembleColumns(this.columns, batches);
    const written = this.writer.write({ columnData: sources, rowGroupSize: rows, ...(this.pageSize ? { pageSize: this.pageSize } : {}) });
    // write() encodes the group before it returns (only the sink's flush may be pending).
    const group = this.writer.row_groups.at(-1)!;
    plans.forEach((plan, c) => {
      const meta = group.columns[c]!.meta_data!;
      if (plan.ownStatistics) meta.statistics = plan.statistics!;
    });
    detachStatistics(group);
    if (batchBytes(batches) >= GC_AFTER_BYTES) collectGarbage();
    this.encodeMs += performance.now() - t;
    this.rowGroups++;
    await written;
  }

  /** Writes the footer. A file with no row group is a valid, empty Parquet file (header-only reports). */
  async finish(): Promise<void> {
    const t = performance.now();
    this.writer.schema = this.schema; // the footer declares the logical types (see physicalSchema)
    const done = this.writer.finish();
    this.encodeMs += performance.now() - t;
    await done;
  }
}

/**
 * The footer keeps every row group's statistics until finish(). A string min/max is a view into (or a
 * slice of) its whole batch's text, which would keep every batch of the file alive: copy them out.
 */
function detachStatistics(group: RowGroup | undefined): void {
  for (const chunk of group?.columns ?? []) {
    const stats = chunk.meta_data?.statistics;
    if (!stats) continue;
    for (const key of ['min_value', 'max_value'] as const) {
      const v = stats[key];
      if (v instanceof Uint8Array) stats[key] = v.slice();
      else if (typeof v === 'string') stats[key] = new Uint8Array(Buffer.from(v, 'utf8'));
    }
  }
}

/** Below this a group's garbage is small, and a full collection would cost more than it frees (many small files). */
const GC_AFTER_BYTES = 8 * 1024 * 1024;

/** The bytes a group's batches hold: text (one byte a character as V8 stores Latin-1, a fair estimate) and typed arrays. */
function batchBytes(batches: readonly RowBatch[]): number {
  let n = 0;
  for (const b of batches) {
    for (const col of b.columns) {
      if (col.kind === 'string') n += col.text.length + col.lengths.byteLength;
      else if (col.kind === 'dict') n += col.codes.byteLength;
      else n += col.values.byteLength;
    }
  }
  return n;
}

let gc: (() => void) | undefined;
/**
 * A full garbage collection after each row group of some size. Encoding a group leaves tens of MB of garbage (the
 * column arrays, page buffers and BigInts of DELTA_BINARY_PACKED) in a heap whose live set is a few
 * groups' batches; V8 lets the old generation grow to several times the live set before it collects,
 * which on the benchmark put the process at ~310 MB RSS with 128k-row groups. Collecting here costs a
 * few tens of ms per group (~1% of encoding) and keeps the heap near its live set. V8 only hands out
 * gc() with --expose-gc; setting the flag at run time and taking gc() from a new context is the
 * documented way to get it without a command-line flag (Lambda's NODE_OPTIONS stay as they are).
 */
function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}
