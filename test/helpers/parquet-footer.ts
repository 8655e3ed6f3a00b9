/**
 * A small reader of a Parquet file's Thrift structures (the footer's FileMetaData and every page header),
 * written from parquet.thrift and the Thrift compact protocol spec, with no Parquet library: the tests
 * check what the pipeline writes with something that shares no code with the writer (hyparquet-writer)
 * or the readers (DuckDB, arrow-rs, polars).
 *
 * Field numbers and enum values: https://github.com/apache/parquet-format/blob/master/src/main/thrift/parquet.thrift
 * Compact protocol: https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md
 */

/** A decoded Thrift struct: field id -> value. */
export type ThriftStruct = Map<number, ThriftValue>;
export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftValue[] | ThriftStruct;

class CompactReader {
  pos: number;
  constructor(
    private readonly bytes: Uint8Array,
    start: number,
  ) {
    this.pos = start;
  }

  private byte(): number {
    if (this.pos >= this.bytes.length) throw new Error(`Thrift: read past the end at ${this.pos}`);
    return this.bytes[this.pos++]!;
  }

  private varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new Error('Thrift: varint too long');
    }
  }

  private zigzag(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }

  private value(type: number): ThriftValue {
    switch (type) {
      case 1:
        return true;
      case 2:
        return false;
      case 3: {
        const b = this.byte();
        return b > 127 ? b - 256 : b;
      }
      case 4:
      case 5:
        return Number(this.zigzag());
      case 6:
        return this.zigzag();
      case 7: {
        const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.pos, 8);
        this.pos += 8;
        return view.getFloat64(0, true);
      }
      case 8: {
        const length = Number(this.varint());
        const out = this.bytes.subarray(this.pos, this.pos + length);
        if (out.length !== length) throw new Error('Thrift: binary past the end');
        this.pos += length;
        return out;
      }
      case 9:
      case 10: {
        const header = this.byte();
        const size = header >> 4 === 15 ? Number(this.varint()) : header >> 4;
        const elementType = header & 0x0f;
        const list: ThriftValue[] = [];
        // In a container a boolean is one byte: 1 is true (the compact protocol's BOOLEAN_TRUE).
        for (let i = 0; i < size; i++) list.push(elementType === 1 || elementType === 2 ? this.byte() === 1 : this.value(elementType));
        return list;
      }
      case 11: {
        const size = Number(this.varint());
        if (size === 0) return [];
        const kv = this.byte();
        const entries: ThriftValue[] = [];
        for (let i = 0; i < size; i++) entries.push([this.value(kv >> 4), this.value(kv & 0x0f)]);
        return entries;
      }
      case 12:
        return this.struct();
      default:
        throw new Error(`Thrift: unknown compact type ${type} at ${this.pos - 1}`);
    }
  }

  struct(): ThriftStruct {
    const fields: ThriftStruct = new Map();
    let last = 0;
    for (;;) {
      const header = this.byte();
      if (header === 0) return fields;
      const delta = header >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      fields.set(id, this.value(header & 0x0f));
      last = id;
    }
  }
}

/** Decodes one compact-protocol struct at `start`; returns it and where it ended. */
export function readThriftStruct(bytes: Uint8Array, start: number): { struct: ThriftStruct; end: number } {
  const reader = new CompactReader(bytes, start);
  const struct = reader.struct();
  return { struct, end: reader.pos };
}

// Enums of parquet.thrift, by value.
export const PHYSICAL_TYPES = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'] as const;
export const CONVERTED_TYPES = ['UTF8', 'MAP', 'MAP_KEY_VALUE', 'LIST', 'ENUM', 'DECIMAL', 'DATE', 'TIME_MILLIS', 'TIME_MICROS', 'TIMESTAMP_MILLIS', 'TIMESTAMP_MICROS'] as const;
export const ENCODINGS = ['PLAIN', 'GROUP_VAR_INT', 'PLAIN_DICTIONARY', 'RLE', 'BIT_PACKED', 'DELTA_BINARY_PACKED', 'DELTA_LENGTH_BYTE_ARRAY', 'DELTA_BYTE_ARRAY', 'RLE_DICTIONARY', 'BYTE_STREAM_SPLIT'] as const;
export const PAGE_TYPES = ['DATA_PAGE', 'INDEX_PAGE', 'DICTIONARY_PAGE', 'DATA_PAGE_V2'] as const;
export const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'] as const;
/** LogicalType union members, by field id. */
const LOGICAL_TYPES: Record<number, string> = { 1: 'STRING', 2: 'MAP', 3: 'LIST', 4: 'ENUM', 5: 'DECIMAL', 6: 'DATE', 7: 'TIME', 8: 'TIMESTAMP', 10: 'INTEGER', 11: 'UNKNOWN', 12: 'JSON', 13: 'BSON', 14: 'UUID' };

export interface LeafColumn {
  name: string;
  physicalType: string;
  repetition: 'REQUIRED' | 'OPTIONAL' | 'REPEATED';
  convertedType?: string;
  precision?: number;
  scale?: number;
  logicalType?: { type: string; isAdjustedToUTC?: boolean; unit?: string; precision?: number; scale?: number };
}

export interface Statistics {
  nullCount?: bigint;
  minValue?: Uint8Array;
  maxValue?: Uint8Array;
  isMinValueExact?: boolean;
  isMaxValueExact?: boolean;
  /** The deprecated min/max (fields 1 and 2), which old readers use. */
  legacyMin?: Uint8Array;
  legacyMax?: Uint8Array;
}

export interface PageHeader {
  offset: number;
  type: string;
  uncompressedSize: number;
  compressedSize: number;
  numValues?: number;
  encoding?: string;
  definitionLevelEncoding?: string;
  repetitionLevelEncoding?: string;
}

export interface ColumnChunk {
  path: string;
  physicalType: string;
  codec: string;
  encodings: string[];
  numValues: bigint;
  totalCompressedSize: bigint;
  totalUncompressedSize: bigint;
  dataPageOffset: bigint;
  dictionaryPageOffset?: bigint;
  statistics?: Statistics;
  encodingStats: Array<{ pageType: string; encoding: string; count: number }>;
  pages: PageHeader[];
}

export interface RowGroup {
  numRows: bigint;
  totalByteSize: bigint;
  columns: ColumnChunk[];
}

export interface ParquetFooter {
  version: number;
  createdBy?: string;
  numRows: bigint;
  columns: LeafColumn[];
  rowGroups: RowGroup[];
}

const text = (v: ThriftValue | undefined) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : undefined);
const num = (v: ThriftValue | undefined) => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined);
const big = (v: ThriftValue | undefined) => (typeof v === 'bigint' ? v : typeof v === 'number' ? BigInt(v) : undefined);
const struct = (v: ThriftValue | undefined) => (v instanceof Map ? v : undefined);
const list = (v: ThriftValue | undefined) => (Array.isArray(v) ? v : []);
const bytesOf = (v: ThriftValue | undefined) => (v instanceof Uint8Array ? v : undefined);
const bool = (v: ThriftValue | undefined) => (typeof v === 'boolean' ? v : undefined);
const enumName = (names: readonly string[], v: ThriftValue | undefined) => {
  const n = num(v);
  return n === undefined ? undefined : (names[n] ?? `UNKNOWN(${n})`);
};

function logicalType(v: ThriftValue | undefined): LeafColumn['logicalType'] {
  const union = struct(v);
  if (!union || union.size === 0) return undefined;
  const [id, body] = [...union.entries()][0]!;
  const type = LOGICAL_TYPES[id] ?? `UNKNOWN(${id})`;
  const fields = struct(body) ?? new Map();
  if (type === 'DECIMAL') return { type, scale: num(fields.get(1))!, precision: num(fields.get(2))! };
  if (type === 'TIMESTAMP' || type === 'TIME') {
    const unit = struct(fields.get(2));
    const unitName = unit?.has(1) ? 'MILLIS' : unit?.has(2) ? 'MICROS' : unit?.has(3) ? 'NANOS' : undefined;
    return { type, isAdjustedToUTC: bool(fields.get(1))!, ...(unitName ? { unit: unitName } : {}) };
  }
  return { type };
}

/** Every page header of a column chunk, walked from its first page to its end. */
function readPages(bytes: Uint8Array, start: number, length: number): PageHeader[] {
  const pages: PageHeader[] = [];
  let at = start;
  while (at < start + length) {
    const { struct: h, end } = readThriftStruct(bytes, at);
    const data = struct(h.get(5));
    const dict = struct(h.get(7));
    const v2 = struct(h.get(8));
    const compressedSize = num(h.get(3))!;
    pages.push({
      offset: at,
      type: enumName(PAGE_TYPES, h.get(1))!,
      uncompressedSize: num(h.get(2))!,
      compressedSize,
      ...(data ? { numValues: num(data.get(1))!, encoding: enumName(ENCODINGS, data.get(2))!, definitionLevelEncoding: enumName(ENCODINGS, data.get(3))!, repetitionLevelEncoding: enumName(ENCODINGS, data.get(4))! } : {}),
      ...(dict ? { numValues: num(dict.get(1))!, encoding: enumName(ENCODINGS, dict.get(2))! } : {}),
      ...(v2 ? { numValues: num(v2.get(1))!, encoding: enumName(ENCODINGS, v2.get(4))! } : {}),
    });
    at = end + compressedSize;
  }
  if (at !== start + length) throw new Error(`pages run past their column chunk (${at} vs ${start + length})`);
  return pages;
}

/** Reads a whole Parquet file's footer and page headers. */
export function readParquetFooter(file: Uint8Array): ParquetFooter {
  const magic = (at: number) => Buffer.from(file.subarray(at, at + 4)).toString('latin1');
  if (file.length < 12 || magic(0) !== 'PAR1' || magic(file.length - 4) !== 'PAR1') throw new Error('not a Parquet file (no PAR1 at both ends)');
  const length = new DataView(file.buffer, file.byteOffset + file.length - 8, 4).getUint32(0, true);
  const start = file.length - 8 - length;
  const { struct: meta, end } = readThriftStruct(file, start);
  if (end !== file.length - 8) throw new Error(`footer length says ${length} bytes, the struct took ${end - start}`);

  const schema = list(meta.get(2)).map((e) => struct(e)!);
  const columns: LeafColumn[] = schema
    .filter((e) => e.has(1)) // leaves have a physical type; the root has children instead
    .map((e) => {
      const convertedType = enumName(CONVERTED_TYPES, e.get(6));
      const precision = num(e.get(8));
      const scale = num(e.get(7));
      const lt = logicalType(e.get(10));
      return {
        name: text(e.get(4))!,
        physicalType: enumName(PHYSICAL_TYPES, e.get(1))!,
        repetition: (['REQUIRED', 'OPTIONAL', 'REPEATED'] as const)[num(e.get(3)) ?? 0]!,
        ...(convertedType ? { convertedType } : {}),
        ...(precision !== undefined ? { precision } : {}),
        ...(scale !== undefined ? { scale } : {}),
        ...(lt ? { logicalType: lt } : {}),
      };
    });

  const rowGroups: RowGroup[] = list(meta.get(4)).map((g) => {
    const group = struct(g)!;
    return {
      numRows: big(group.get(3))!,
      totalByteSize: big(group.get(2))!,
      columns: list(group.get(1)).map((c) => {
        const md = struct(struct(c)!.get(3))!;
        const st = struct(md.get(12));
        const dataPageOffset = big(md.get(9))!;
        const dictionaryPageOffset = big(md.get(11));
        const totalCompressedSize = big(md.get(7))!;
        const first = dictionaryPageOffset !== undefined && dictionaryPageOffset < dataPageOffset ? dictionaryPageOffset : dataPageOffset;
        return {
          path: list(md.get(3)).map((p) => text(p)).join('.'),
          physicalType: enumName(PHYSICAL_TYPES, md.get(1))!,
          codec: enumName(CODECS, md.get(4))!,
          encodings: list(md.get(2)).map((e) => enumName(ENCODINGS, e)!),
          numValues: big(md.get(5))!,
          totalUncompressedSize: big(md.get(6))!,
          totalCompressedSize,
          dataPageOffset,
          ...(dictionaryPageOffset !== undefined ? { dictionaryPageOffset } : {}),
          ...(st
            ? {
                statistics: {
                  ...(st.has(3) ? { nullCount: big(st.get(3))! } : {}),
                  ...(st.has(6) ? { minValue: bytesOf(st.get(6))! } : {}),
                  ...(st.has(5) ? { maxValue: bytesOf(st.get(5))! } : {}),
                  ...(st.has(8) ? { isMinValueExact: bool(st.get(8))! } : {}),
                  ...(st.has(7) ? { isMaxValueExact: bool(st.get(7))! } : {}),
                  ...(st.has(2) ? { legacyMin: bytesOf(st.get(2))! } : {}),
                  ...(st.has(1) ? { legacyMax: bytesOf(st.get(1))! } : {}),
                },
              }
            : {}),
          encodingStats: list(md.get(13)).map((s) => {
            const es = struct(s)!;
            return { pageType: enumName(PAGE_TYPES, es.get(1))!, encoding: enumName(ENCODINGS, es.get(2))!, count: num(es.get(3))! };
          }),
          pages: readPages(file, Number(first), Number(totalCompressedSize)),
        };
      }),
    };
  });

  const createdBy = text(meta.get(6));
  return { version: num(meta.get(1))!, ...(createdBy !== undefined ? { createdBy } : {}), numRows: big(meta.get(3))!, columns, rowGroups };
}
