import type { ColumnChunk, Encoding, RowGroup, SchemaElement, Statistics } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { writePageHeader } from 'hyparquet-writer/src/datapage.js';
import { snappyCompressShared } from 'hyparquet-writer/src/snappy.js';
import { createdBy } from '../build-info.js';
import { BoolBuffer, Int32Buffer, Int64Buffer, StringBuffer, minMax, type ChunkPlan, type ChunkValues, type ColumnBuffer, type Int64Values } from './column-buffers.js';
import { ByteBuffer, bitWidth, writeDefinitionLevels, writeDeltaInt64, writeRleHybrid } from './pages.js';
import type { ColumnDefinition, ColumnKind } from '../definitions/report-definition.js';
import type { RowBatch } from './row-group-buffer.js';
import { parquetSchema } from '../definitions/table-schema.js';

/**
 * Row groups to Parquet bytes. The same code runs on the parsing thread (inline mode) or in
 * parquet-worker.ts; batches arrive in order and a row group is closed by the caller, who decides its
 * bounds (rows and bytes).
 *
 * Each column chunk is encoded here from the batches' typed arrays (pages.ts writes the bytes):
 * INT64 values stay 32-bit word pairs, strings stay ranges of one UTF-8 buffer per chunk, a dictionary is
 * merged from the batches' own small dictionaries, and statistics are taken over the dictionary's
 * entries rather than every row where there is one. hyparquet-writer still writes the file around the
 * chunks (the PAR1 magic, the Thrift page headers and the footer) and compresses the pages (Snappy).
 * docs/benchmarks.md has the profile this came from; the file layout is docs/parquet.md's, unchanged:
 * DATA_PAGE v1, RLE definition levels, SNAPPY, dictionary or PLAIN strings, DELTA_BINARY_PACKED ids and
 * timestamps, statistics on every chunk.
 */

export interface EncoderSettings {
  columns: ColumnDefinition[];
  /** Target uncompressed page size in bytes (default 1 MiB, hyparquet-writer's). */
  pageSize?: number;
}

const DEFAULT_PAGE_SIZE = 1 << 20;

/**
 * Per-column encodings, chosen for the engines that read the files (docs/parquet.md) first and size
 * second. INT64 ids and timestamps: DELTA_BINARY_PACKED, because the gateway's ids rise and rows come in
 * time order (on the benchmark transaction_id 8 -> 0.1 bytes a row, created_date 1 -> 0.16); every
 * engine in the compatibility table reads it on v1 pages. Everything else is dictionary-encoded
 * (RLE_DICTIONARY pages, a PLAIN dictionary page) when that at least halves the chunk, and PLAIN
 * otherwise. Never DELTA_BYTE_ARRAY: fastparquet cannot read it and parquet-java refuses it from writers
 * whose created_by it does not know (PARQUET-246).
 */
function usesDelta(column: ColumnDefinition): boolean {
  return column.kind === 'bigint' || column.kind === 'timestamp';
}

/**
 * Per kind, the buffer its row group's values gather in (column-buffers.ts). Booleans are PLAIN: bit-packed,
 * 1 bit a value, which every engine reads on v1 pages (RLE for BOOLEAN data is a v2-page encoding to some).
 */
const BUFFERS = {
  string: (c) => new StringBuffer(c.nullable),
  date: (c) => new Int32Buffer(c.nullable),
  bigint: (c) => new Int64Buffer(c.nullable, !usesDelta(c)),
  decimal: (c) => new Int64Buffer(c.nullable, !usesDelta(c)),
  timestamp: (c) => new Int64Buffer(c.nullable, !usesDelta(c)),
  boolean: (c) => new BoolBuffer(c.nullable),
} satisfies Record<ColumnKind, (column: ColumnDefinition) => ColumnBuffer>;

/** Bytes a string statistic keeps; longer min/max values are truncated and flagged inexact. */
export const STATS_BYTES = 64;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Snappy for every page: hyparquet-writer's, made ~3x faster by the project's patch (it writes into one
 * reused array instead of a byte at a time through a DataView, reads each word with one load, and extends
 * matches a word at a time). hysnappy (the same authors' snappy in
 * WebAssembly) compresses ~2x faster still, but growing its WebAssembly memory detaches the old
 * ArrayBuffer, and the first detach in a thread makes every typed-array access of that thread check for
 * detachment from then on, csv-parse's reading of its input included: on the benchmark that cost ~0.6 s
 * of parsing for ~0.3 s saved on compression (docs/benchmarks.md).
 */
const compress = snappyCompressShared;

/* ------------------------------------------------------------------ pages */

/** The uncompressed page being built, reused for every page of this thread. */
const pageBuffer = new ByteBuffer(1 << 20);

/** PLAIN values[from, to) (also a dictionary page's body). */
function writePlain(out: ByteBuffer, values: ChunkValues, from: number, to: number): void {
  if (values.kind === 'int64') {
    const bytes = new Uint8Array(values.words.buffer, values.words.byteOffset, values.words.byteLength);
    out.copy(bytes, from * 8, to * 8);
  } else if (values.kind === 'bool') {
    // bit-packed, least significant bit first; a page's values start at bit 0
    const bytes = out.ensure((to - from + 7) >> 3);
    let at = out.pos;
    for (let k = from; k < to; k += 8) {
      let b = 0;
      const end = Math.min(k + 8, to);
      for (let j = k; j < end; j++) b |= values.values[j]! << (j - k);
      bytes[at++] = b;
    }
    out.pos = at;
  } else if (values.kind === 'int32') {
    if (!LITTLE_ENDIAN) throw new Error('PLAIN INT32 needs a little-endian machine');
    const bytes = new Uint8Array(values.values.buffer, values.values.byteOffset, values.values.byteLength);
    out.copy(bytes, from * 4, to * 4);
  } else if (to > from) {
    // already in the PLAIN layout (column-buffers.ts): one copy
    out.copy(values.data, from ? values.ends[from - 1]! : 0, values.ends[to - 1]!);
  }
}

/** Writes pages into the file and keeps what the chunk's metadata needs. */
class ChunkWriter {
  readonly start: number;
  uncompressed = 0;
  pages = 0;
  dictionaryOffset: bigint | undefined;
  dataOffset: bigint | undefined;

  constructor(private readonly file: ByteWriter) {
    this.start = file.offset;
  }

  /**
   * Compresses the page in pageBuffer and writes its header and bytes. The compressed bytes are a view of
   * the compressor's reused buffer (`snappyCompressShared`), copied into the file here: no new buffer per
   * page, which was ~28 MB of ArrayBuffers per million rows and half the old-generation collections they
   * triggered (external memory).
   */
  private put(header: Parameters<typeof writePageHeader>[1]): void {
    const raw = pageBuffer.view();
    const compressed = compress(raw);
    const at = this.file.offset;
    writePageHeader(this.file, { ...header, uncompressed_page_size: raw.length, compressed_page_size: compressed.length });
    this.uncompressed += this.file.offset - at + raw.length;
    this.file.appendBytes(compressed);
  }

  dictionaryPage(entries: ChunkValues): void {
    this.dictionaryOffset = BigInt(this.file.offset);
    pageBuffer.pos = 0;
    writePlain(pageBuffer, entries, 0, entries.count);
    this.put({ type: 'DICTIONARY_PAGE', uncompressed_page_size: 0, compressed_page_size: 0, dictionary_page_header: { num_values: entries.count, encoding: 'PLAIN' } });
  }

  /**
   * A DATA_PAGE (v1) of rows [r0, r1) holding values [v0, v1): the definition levels, then the values as
   * dictionary indexes, DELTA_BINARY_PACKED or PLAIN.
   */
  dataPage(plan: ChunkPlan, encoding: Encoding, r0: number, r1: number, v0: number, v1: number): void {
    this.dataOffset ??= BigInt(this.file.offset);
    const out = pageBuffer;
    out.pos = 0;
    const defined = plan.dictionary ? plan.dictionary.defined : plan.values.defined;
    if (defined) writeDefinitionLevels(out, defined, r0, r1);
    if (plan.dictionary) {
      const indexes = plan.dictionary.indexes;
      const width = bitWidth(largest(indexes, v0, v1));
      out.u8(width);
      writeRleHybrid(out, indexes, v0, v1, width);
    } else if (encoding === 'DELTA_BINARY_PACKED') {
      writeDeltaInt64(out, (plan.values as Int64Values).words, v0, v1);
    } else {
      writePlain(out, plan.values, v0, v1);
    }
    this.put({
      type: 'DATA_PAGE',
      uncompressed_page_size: 0,
      compressed_page_size: 0,
      data_page_header: { num_values: r1 - r0, encoding, definition_level_encoding: 'RLE', repetition_level_encoding: 'RLE' },
    });
    this.pages++;
  }
}

/**
 * The largest of indexes[from, to) (0 if none): a loop of its own, so that this page's loop, compiled
 * on-stack, has no code after it that it never ran.
 */
function largest(indexes: Int32Array, from: number, to: number): number {
  let max = 0;
  // Stryker disable next-line EqualityOperator: taking an index equal to the largest leaves the largest as it is
  for (let k = from; k < to; k++) if (indexes[k]! > max) max = indexes[k]!;
  return max;
}

/**
 * Where pages start: rows split into pages of about `pageSize` bytes of values, as hyparquet-writer
 * splits them (a page closes before the value that takes it to pageSize; nulls weigh nothing; a
 * dictionary index weighs 4 bytes). Returns [row, value] pairs: each page's first row and first
 * non-null value, then [rows, nonNull] at the end.
 */
function pageStarts(plan: ChunkPlan, rows: number, nonNull: number, pageSize: number): Int32Array {
  const defined = plan.dictionary ? plan.dictionary.defined : plan.values.defined;
  const values = plan.values;
  // One scan per kind of size, each returning a count: the scans are compiled on-stack (a chunk is
  // one call), and a scan shared by fixed sizes and string lengths, or one that built the result after
  // its loop, was compiled again for each.
  const size = values === undefined ? 4 : values.kind === 'int64' ? 8 : values.kind === 'int32' ? 4 : 1;
  const n = findPageStarts(defined, values?.kind === 'utf8' ? values.ends : null, rows, size, pageSize, defined === null);
  const out = new Int32Array(n + 4);
  out.set(found.subarray(0, n), 2);
  out[n + 2] = rows;
  out[n + 3] = nonNull;
  return out;
}

/**
 * Puts the page starts in `found` (strings when `ends` is given, else values of `size` bytes) and returns how
 * many entries: by a scan of the rows, or without nulls by the shortcuts (`shortcut`; tests compare the two).
 */
function findPageStarts(defined: Uint8Array | null, ends: Int32Array | null, rows: number, size: number, pageSize: number, shortcut: boolean): number {
  if (ends) return shortcut ? utf8PageStartsNoNulls(ends, rows, pageSize) : utf8PageStarts(defined, ends, rows, pageSize);
  return shortcut ? fixedPageStartsNoNulls(rows, size, pageSize) : fixedPageStarts(defined, rows, size, pageSize);
}

/** The page starts after the first that the scans below found, [row, value] pairs; reused from chunk to chunk. */
let found = new Int32Array(64);

/** Room in `found` for one more pair after n entries. */
function roomForPage(n: number): void {
  if (n + 2 <= found.length) return;
  const grown = new Int32Array(found.length * 2);
  grown.set(found);
  found = grown;
}

// Both scans test `r > first` first: the loop runs both comparisons every row, so both have type
// feedback when it is compiled on-stack (the other way round, `r > first` first ran at the first page
// break, and deoptimized the loop there).

/** pageStarts for values of `size` bytes each: the number of entries it put in `found`. */
function fixedPageStarts(defined: Uint8Array | null, rows: number, size: number, pageSize: number): number {
  let n = 0;
  let v = 0;
  let acc = 0;
  let first = 0;
  for (let r = 0; r < rows; r++) {
    const present = defined === null || defined[r] === 1;
    const s = present ? size : 0;
    acc += s;
    if (r > first && acc >= pageSize) {
      roomForPage(n);
      found[n++] = r;
      found[n++] = v;
      first = r;
      acc = s;
    }
    if (present) v++;
  }
  return n;
}

/**
 * fixedPageStarts without nulls, where every row weighs `size`: the scan closes a page at the row that
 * takes it to pageSize (that row starts the next page), so every page has the same number of rows.
 */
function fixedPageStartsNoNulls(rows: number, size: number, pageSize: number): number {
  const perPage = Math.max(1, Math.ceil(pageSize / size) - 1);
  let n = 0;
  for (let r = perPage; r < rows; r += perPage) {
    roomForPage(n);
    found[n++] = r;
    found[n++] = r;
  }
  return n;
}

/**
 * utf8PageStarts without nulls: a binary search per page instead of a scan per row. Bytes of values [0, r]
 * are ends[r] - 4(r + 1), which never falls as r grows; a page from row `first` closes at the first row
 * r > first whose bytes since `first` reach pageSize.
 */
function utf8PageStartsNoNulls(ends: Int32Array, rows: number, pageSize: number): number {
  let n = 0;
  let first = 0;
  for (;;) {
    const base = first ? ends[first - 1]! - 4 * first : 0;
    let lo = first + 1;
    let hi = rows; // rows: no row closes the page
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ends[mid]! - 4 * (mid + 1) - base >= pageSize) hi = mid;
      else lo = mid + 1;
    }
    if (lo >= rows) return n;
    roomForPage(n);
    found[n++] = lo;
    found[n++] = lo;
    first = lo;
  }
}

/** pageStarts for strings, each weighing its UTF-8 length (`ends` as in Utf8Values): the number of entries it put in `found`. */
function utf8PageStarts(defined: Uint8Array | null, ends: Int32Array, rows: number, pageSize: number): number {
  let n = 0;
  let v = 0;
  let acc = 0;
  let first = 0;
  for (let r = 0; r < rows; r++) {
    const present = defined === null || defined[r] === 1;
    const s = present ? ends[v]! - (v ? ends[v - 1]! : 0) - 4 : 0;
    acc += s;
    if (r > first && acc >= pageSize) {
      roomForPage(n);
      found[n++] = r;
      found[n++] = v;
      first = r;
      acc = s;
    }
    if (present) v++;
  }
  return n;
}

/** One column chunk: its pages written to `file`, its metadata returned. */
function writeColumnChunk(file: ByteWriter, column: ColumnDefinition, element: SchemaElement, plan: ChunkPlan, rows: number, pageSize: number): ColumnChunk {
  const chunk = new ChunkWriter(file);
  let statistics: Pick<Statistics, 'min_value' | 'max_value'>;
  let nonNull: number;
  let encoding: Encoding;
  if (plan.dictionary) {
    // min/max over the distinct values: the same as over the rows
    statistics = minMax(plan.dictionary.entries);
    nonNull = plan.dictionary.indexes.length;
    encoding = 'RLE_DICTIONARY';
    chunk.dictionaryPage(plan.dictionary.entries);
  } else {
    statistics = minMax(plan.values);
    nonNull = plan.values.count;
    encoding = plan.values.kind === 'int64' && usesDelta(column) ? 'DELTA_BINARY_PACKED' : 'PLAIN';
  }
  const starts = pageStarts(plan, rows, nonNull, pageSize);
  // Every page has a row: a page closes only at a row after its first, and a group has rows (writeRowGroup).
  for (let p = 0; p + 2 < starts.length; p += 2) chunk.dataPage(plan, encoding, starts[p]!, starts[p + 2]!, starts[p + 1]!, starts[p + 3]!);

  const encodings: Encoding[] = plan.dictionary ? ['PLAIN', 'RLE_DICTIONARY'] : [encoding];
  if (column.nullable) encodings.push('RLE'); // v1 pages carry their definition levels RLE-encoded
  return {
    file_offset: BigInt(chunk.start),
    meta_data: {
      type: element.type!,
      encodings,
      path_in_schema: [element.name],
      codec: 'SNAPPY',
      num_values: BigInt(rows),
      total_uncompressed_size: BigInt(chunk.uncompressed),
      total_compressed_size: BigInt(file.offset - chunk.start),
      data_page_offset: chunk.dataOffset ?? BigInt(file.offset),
      ...(chunk.dictionaryOffset !== undefined ? { dictionary_page_offset: chunk.dictionaryOffset } : {}),
      statistics: { null_count: BigInt(rows - nonNull), ...statistics },
      encoding_stats: [
        ...(plan.dictionary ? [{ page_type: 'DICTIONARY_PAGE' as const, encoding: 'PLAIN' as const, count: 1 }] : []),
        { page_type: 'DATA_PAGE', encoding, count: chunk.pages },
      ],
    },
  };
}

/* ------------------------------------------------------------------ the file */

/**
 * A hyparquet-writer Writer that hands its bytes out after each column chunk instead of keeping the file in
 * memory. `deliver` is called in order; RowGroupEncoder awaits the promise of a row group's last delivery,
 * which is how a slow sink (an S3 multipart upload) slows the encoder down.
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

  /** Delivers bytes written elsewhere as the file's next bytes, as they are (no copy): pending bytes go first. */
  passThrough(bytes: Uint8Array): void | Promise<void> {
    void this.flush();
    this.offset += bytes.length;
    return this.deliver(bytes);
  }

  override finish(): void | Promise<void> {
    return this.flush();
  }
}

/**
 * Encodes row groups into one Parquet file as they come: add() appends each batch to the group's column
 * buffers (column-buffers.ts), writeRowGroup() encodes what was added as one row group.
 *
 * With `fragment` it writes row groups only, no file around them: their bytes from offset 0 and their
 * metadata in `groups`, for a thread that converts the second part of a split file (part-worker.ts);
 * appendRowGroup() then adds such a group to the whole file.
 */
export class RowGroupEncoder {
  private readonly writer: ParquetWriter | undefined;
  private readonly file: ChunkedWriter;
  private readonly columns: ColumnDefinition[];
  private buffers: ColumnBuffer[];
  private readonly pageSize: number;
  private readonly schema: SchemaElement[];
  private rows = 0;
  /** The row groups written so far (a fragment's, or the file's). */
  readonly groups: RowGroup[];
  /** Milliseconds spent encoding (not waiting for the sink), for the manifest's timings. */
  encodeMs = 0;
  /** Of which writing each column's chunks (statistics, pages, compression), by column: where encoding goes. */
  readonly columnMs: Float64Array;
  rowGroups = 0;

  constructor(settings: EncoderSettings, deliver: (bytes: Uint8Array) => void | Promise<void>, options: { fragment?: boolean } = {}) {
    this.columns = settings.columns;
    this.pageSize = settings.pageSize ?? DEFAULT_PAGE_SIZE;
    this.schema = parquetSchema(settings.columns);
    this.columnMs = new Float64Array(settings.columns.length);
    this.buffers = this.newBuffers();
    this.file = new ChunkedWriter(deliver);
    if (options.fragment) {
      this.groups = [];
      return;
    }
    // Nothing reaches `deliver` before the first row group or finish(): the PAR1 magic waits in the buffer.
    // The row groups are written here (writeRowGroup); ParquetWriter writes the magic and the footer.
    this.writer = new ParquetWriter({ writer: this.file, schema: this.schema, codec: 'SNAPPY', createdBy: createdBy(), statisticsTruncateLength: STATS_BYTES });
    this.groups = this.writer.row_groups;
  }

  private newBuffers(): ColumnBuffer[] {
    return this.columns.map((c) => BUFFERS[c.kind](c));
  }

  /**
   * Lets the column buffers go (they grew to a row group's size): no more groups are coming from this
   * thread, only groups another thread wrote (appendRowGroup). New, small buffers take their place.
   */
  releaseBuffers(): void {
    // Stryker disable next-line ConditionalExpression: false only keeps the grown buffers (memory); true, dropping an open group's rows, the tests catch
    if (this.rows === 0) this.buffers = this.newBuffers();
  }

  /** Appends a batch to the current row group (its arrays are copied: they may be reused after this returns). */
  add(batch: RowBatch): void {
    const t = performance.now();
    for (let c = 0; c < this.buffers.length; c++) this.buffers[c]!.append(batch.columns[c]!);
    this.rows += batch.rows;
    this.encodeMs += performance.now() - t;
  }

  /**
   * Encodes the rows added since the last group as one row group, synchronously (the buffers are free for
   * the next group's batches when this returns); the promise resolves once its bytes are delivered.
   */
  writeRowGroup(): Promise<void> {
    const rows = this.rows;
    if (rows === 0) return Promise.resolve();
    const t = performance.now();
    const start = this.file.offset;
    const columns = this.columns.map((column, c) => {
      const tc = performance.now();
      const buffer = this.buffers[c]!;
      const chunk = writeColumnChunk(this.file, column, this.schema[c + 1]!, buffer.plan(), rows, this.pageSize);
      buffer.reset();
      this.columnMs[c]! += performance.now() - tc;
      // Each chunk's bytes go out as it is written: the writer's buffer holds one column chunk, not a group.
      if (c < this.columns.length - 1) void this.file.flush();
      return chunk;
    });
    this.rows = 0;
    let totalByteSize = 0n;
    for (const chunk of columns) totalByteSize += chunk.meta_data!.total_uncompressed_size;
    this.push({ columns, total_byte_size: totalByteSize, num_rows: BigInt(rows), total_compressed_size: BigInt(this.file.offset - start) });
    this.encodeMs += performance.now() - t;
    return Promise.resolve(this.file.flush());
  }

  /**
   * Appends a row group another encoder wrote as a fragment (its bytes, its metadata with offsets from the
   * fragment's start), moving its offsets to where it lands in this file.
   */
  appendRowGroup(bytes: readonly Uint8Array[], group: RowGroup): Promise<void> {
    // The group's bytes begin with its first column chunk.
    // Stryker disable next-line OptionalChaining: a row group has a chunk per column, and a schema at least one column
    const base = BigInt(this.file.offset) - (group.columns[0]?.file_offset ?? 0n);
    for (const chunk of group.columns) {
      chunk.file_offset += base;
      const meta = chunk.meta_data!;
      meta.data_page_offset += base;
      if (meta.dictionary_page_offset !== undefined) meta.dictionary_page_offset += base;
    }
    let delivered: void | Promise<void> = undefined;
    for (const chunk of bytes) delivered = this.file.passThrough(chunk);
    this.push(group);
    return Promise.resolve(delivered);
  }

  private push(group: RowGroup): void {
    if (this.writer) {
      this.writer.row_groups.push(group);
      this.writer.num_rows += group.num_rows;
    } else {
      this.groups.push(group);
    }
    this.rowGroups++;
  }

  /** Writes the footer. A file with no row group is a valid, empty Parquet file (header-only reports). */
  async finish(): Promise<void> {
    if (!this.writer) throw new Error('a fragment has no footer: append its row groups to a file');
    const t = performance.now();
    const done = this.writer.finish();
    this.encodeMs += performance.now() - t;
    await done;
  }
}

/** The [row, value] pairs pageStarts finds for a column without nulls, by the row scan or by the shortcut (tests hold them equal). */
export function pageStartPairs(ends: Int32Array | null, rows: number, size: number, pageSize: number, shortcut: boolean): number[] {
  return Array.from(found.subarray(0, findPageStarts(null, ends, rows, size, pageSize, shortcut)));
}
