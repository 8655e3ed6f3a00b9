import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import { readParquet } from 'parquet-wasm';
import type { ColumnDefinition, ColumnKind } from '../../functions/core/definitions/report-definition.js';
import type { TestDb } from './duckdb.js';

/**
 * Parquet readers that share no code with DuckDB or with our writer: arrow-rs (the Rust `parquet` crate,
 * compiled to WebAssembly as parquet-wasm, handed over as Arrow IPC to apache-arrow) and polars (its own
 * Rust Parquet reader, through nodejs-polars). Each returns every value in one canonical text form, so
 * the three readings compare exactly:
 *   string -> the text; bigint -> decimal digits; decimal -> the unscaled integer's digits;
 *   timestamp -> epoch milliseconds; date -> epoch days; NULL -> null.
 * Each also reports the type it read a column as: a reader that sees a decimal as a float, or a wall-clock
 * timestamp as UTC, must not pass for one that reads the file right.
 */

export interface ReadColumn {
  name: string;
  kind: ColumnKind;
  precision?: number;
  scale?: number;
}
export type Canonical = string | null;

/** The columns of a report definition, as the readers here take them. */
export const readColumnsOf = (columns: readonly ColumnDefinition[]): ReadColumn[] =>
  columns.map((c) => ({ name: c.name, kind: c.kind, ...(c.kind === 'decimal' ? { precision: c.precision!, scale: c.scale! } : {}) }));
export interface Reading {
  /** Column name -> the reader's type, in a form the reader prints. */
  types: Record<string, string>;
  rows: Canonical[][];
}

const DAY_MS = 86_400_000;

/** "-1234.5" at scale 3 -> "-1234500": the decimal's unscaled value, whatever digits the reader printed. */
export function unscaledDigits(text: string, scale: number): string {
  const m = /^([-+]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m || (m[2] === '' && !m[3])) throw new Error(`not a decimal: ${JSON.stringify(text)}`);
  const frac = m[3] ?? '';
  if (frac.length > scale && !/^0*$/.test(frac.slice(scale))) throw new Error(`${text} has more than ${scale} fractional digits`);
  const value = BigInt(`${m[2] || '0'}${frac.slice(0, scale).padEnd(scale, '0')}`);
  return String(m[1] === '-' ? -value : value);
}

/** The type each reader must report for each kind of column (how it prints them). */
export function expectedTypes(columns: readonly ReadColumn[]): { arrow: Record<string, string>; polars: Record<string, string> } {
  const arrow: Record<string, string> = {};
  const polars: Record<string, string> = {};
  for (const c of columns) {
    arrow[c.name] = { string: 'Utf8', bigint: 'Int64', decimal: `Decimal[${c.precision}e+${c.scale}]`, timestamp: 'Timestamp<MILLISECOND> (no time zone)', date: 'Date32<DAY>', boolean: 'Bool' }[c.kind];
    polars[c.name] = { string: 'String', bigint: 'Int64', decimal: `Decimal(${c.precision},${c.scale})`, timestamp: 'Datetime(ms,)', date: 'Date', boolean: 'Bool' }[c.kind];
  }
  return { arrow, polars };
}

/** arrow-rs, through parquet-wasm. */
export function readWithArrowRs(file: Uint8Array, columns: readonly ReadColumn[]): Reading {
  const table = tableFromIPC(readParquet(file).intoIPCStream());
  const types: Record<string, string> = {};
  const vectors = columns.map((c) => {
    const field = table.schema.fields.find((f) => f.name === c.name);
    const vector = table.getChild(c.name);
    if (!field || !vector) throw new Error(`arrow-rs: no column ${c.name}`);
    const type = field.type as { timezone?: string | null };
    types[c.name] = `${String(field.type)}${c.kind === 'timestamp' ? (type.timezone ? ` (${type.timezone})` : ' (no time zone)') : ''}`;
    return vector;
  });
  // Column by column through each vector's iterator (null for a null slot): much faster than get(i).
  const values = columns.map((c, i) => {
    const out: Canonical[] = [];
    if (c.kind === 'string') return arrowStrings(vectors[i]!);
    for (const v of vectors[i]! as Iterable<unknown>) out.push(v === null || v === undefined ? null : arrowCanonical(c, v));
    return out;
  });
  return { types, rows: transpose(values, table.numRows) };
}

/**
 * Utf8 values from the vector's own offsets and bytes: apache-arrow decodes with a TextDecoder that drops a
 * leading U+FEFF, which would hide (or fake) a difference in exactly the values this test is about.
 */
function arrowStrings(vector: { data: ReadonlyArray<{ length: number; offset: number; nullCount: number; nullBitmap?: Uint8Array; valueOffsets: Int32Array; values: Uint8Array }> }): Canonical[] {
  const out: Canonical[] = [];
  for (const d of vector.data) {
    for (let i = 0; i < d.length; i++) {
      const bit = d.offset + i;
      const valid = d.nullCount === 0 || !d.nullBitmap || ((d.nullBitmap[bit >> 3]! >> (bit & 7)) & 1) === 1;
      if (!valid) out.push(null);
      else out.push(Buffer.from(d.values.buffer, d.values.byteOffset + d.valueOffsets[bit]!, d.valueOffsets[bit + 1]! - d.valueOffsets[bit]!).toString('utf8'));
    }
  }
  return out;
}

function arrowCanonical(c: ReadColumn, v: unknown): string {
  switch (c.kind) {
    case 'string':
      return String(v);
    case 'bigint':
    case 'timestamp':
      return String(v as number | bigint);
    case 'date':
      return String((v as number) / DAY_MS);
    case 'boolean':
      return String(v as boolean);
    case 'decimal': {
      // Decimal128 as four little-endian 32-bit words; an INT64-backed decimal fits the low two.
      const w = v as Uint32Array;
      const low = BigInt.asIntN(64, BigInt(w[0]!) | (BigInt(w[1]!) << 32n));
      const high = low < 0n ? 0xffffffff : 0;
      if (w[2] !== high || w[3] !== high) throw new Error(`arrow-rs: decimal in ${c.name} beyond int64`);
      return String(low);
    }
  }
}

function transpose(values: Canonical[][], rows: number): Canonical[][] {
  const out: Canonical[][] = [];
  for (let r = 0; r < rows; r++) out.push(values.map((col) => col[r] ?? null));
  return out;
}

/**
 * polars, through nodejs-polars, over every file a glob (or a path) names: one scan for many files, since
 * each call into polars costs milliseconds. Int64 and decimals leave polars as text (its JS numbers are
 * doubles). Rows per file, in file order; the types are those of the scan's schema.
 */
export function readWithPolars(glob: string, columns: readonly ReadColumn[]): { types: Record<string, string>; files: Map<string, Canonical[][]> } {
  const FILE = '__file';
  const scan = pl.scanParquet(glob, { includeFilePaths: FILE });
  const head = scan.select(...columns.map((c) => pl.col(c.name))).limit(0).collectSync();
  const types: Record<string, string> = {};
  for (const c of columns) types[c.name] = String(head.getColumn(c.name).dtype).replace(/^DataType\((.*)\)$/, '$1');
  const exprs = columns.map((c) => {
    const col = pl.col(c.name);
    return { string: col, bigint: col.cast(pl.Utf8), decimal: col.cast(pl.Utf8), timestamp: col.cast(pl.Int64), date: col.cast(pl.Int32), boolean: col.cast(pl.Utf8) }[c.kind];
  });
  const records = scan.select(pl.col(FILE), ...exprs).collectSync().toRecords() as Array<Record<string, unknown>>;
  const files = new Map<string, Canonical[][]>();
  for (const rec of records) {
    const file = String(rec[FILE]);
    let rows = files.get(file);
    if (!rows) files.set(file, (rows = []));
    rows.push(
      columns.map((c) => {
        const v = rec[c.name];
        if (v === null || v === undefined) return null;
        return c.kind === 'decimal' ? unscaledDigits(String(v), c.scale ?? 0) : String(v as string | number | bigint);
      }),
    );
  }
  return { types, files };
}

const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** DuckDB's reading of Parquet files, per file in row order, in the same canonical form. */
export async function readWithDuckDb(db: TestDb, files: readonly string[], columns: readonly ReadColumn[]): Promise<Map<string, Canonical[][]>> {
  const exprs = columns.map((c, i) => {
    const col = ident(c.name);
    const e = {
      // as hex: the DuckDB client decodes VARCHAR with a TextDecoder that drops a leading U+FEFF
      string: `hex(encode(${col}))`,
      bigint: `CAST(${col} AS VARCHAR)`,
      decimal: `CAST(${col} AS VARCHAR)`,
      timestamp: `CAST(epoch_ms(${col}) AS VARCHAR)`,
      date: `CAST(date_diff('day', DATE '1970-01-01', ${col}) AS VARCHAR)`,
      boolean: `CAST(${col} AS VARCHAR)`,
    }[c.kind];
    return `${e} AS c${i}`;
  });
  const result = await db.query(
    `SELECT filename AS f, ${exprs.join(', ')} FROM read_parquet([${files.map(sqlString).join(', ')}], filename = true, file_row_number = true) ORDER BY filename, file_row_number`,
  );
  const out = new Map<string, Canonical[][]>(files.map((f) => [f, []]));
  for (const r of result) {
    out.get(String(r.f))!.push(
      columns.map((c, i) => {
        const v = r[`c${i}`];
        if (v === null || v === undefined) return null;
        if (c.kind === 'string') return Buffer.from(String(v), 'hex').toString('utf8');
        return c.kind === 'decimal' ? unscaledDigits(String(v), c.scale ?? 0) : String(v);
      }),
    );
  }
  return out;
}

/** The first differences between two readings of the same file (empty when they agree). */
export function readingDifferences(expected: Canonical[][], got: Canonical[][], columns: readonly ReadColumn[], limit = 3): string[] {
  const out: string[] = [];
  if (expected.length !== got.length) out.push(`${got.length} rows, expected ${expected.length}`);
  const n = Math.min(expected.length, got.length);
  const show = (v: Canonical) => (v !== null && v.length > 80 ? `${JSON.stringify(v.slice(0, 80))}… (${v.length} chars)` : JSON.stringify(v));
  for (let r = 0; r < n && out.length < limit; r++) {
    for (let c = 0; c < columns.length && out.length < limit; c++) {
      if (expected[r]![c] !== got[r]![c]) out.push(`row ${r}, ${columns[c]!.name}: ${show(got[r]![c]!)}, expected ${show(expected[r]![c]!)}`);
    }
  }
  return out;
}
