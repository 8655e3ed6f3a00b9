import type { LakeQueryHead, LakeQueryResult, LakeQueryStream } from './duckdb.js';

/**
 * Query results for the terminal (`npm run query`, the saved queries of `npm start`): an aligned text
 * table, or JSON lines for scripts. Values are DuckDB's exact JSON forms (duckdb.ts): decimals and
 * 64-bit integers stay strings, so nothing is rounded on the way to the screen.
 */

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL)/;
const MAX_CELL = 40;

const text = (v: unknown): string => (v === null || v === undefined ? 'NULL' : typeof v === 'string' ? v : JSON.stringify(v));

/** One line per value: line breaks inside a value would break the table's rows. */
const cell = (v: unknown, maxCell: number): string => {
  const t = text(v).replace(/\r\n|\r|\n/g, '⏎');
  return t.length > maxCell ? `${t.slice(0, maxCell - 1)}…` : t;
};

const rowCount = (n: number) => `(${n.toLocaleString('en-US')} row${n === 1 ? '' : 's'})`;

/** Lays out rows on column widths that only grow: what a streamed table can do without seeing every row first. */
class TableLayout {
  private readonly widths: number[];
  private readonly right: boolean[];

  constructor(private readonly columns: LakeQueryResult['columns'], private readonly maxCell: number) {
    this.widths = columns.map((c) => c.name.length);
    this.right = columns.map((c) => NUMERIC.test(c.type));
  }

  /** The cells of some rows, widening the columns to fit them. */
  cells(rows: readonly unknown[][]): string[][] {
    const shown = rows.map((row) => this.columns.map((_, i) => cell(row[i], this.maxCell)));
    for (const r of shown) for (const [i, v] of r.entries()) if (v.length > this.widths[i]!) this.widths[i] = v.length;
    return shown;
  }

  line(values: readonly string[]): string {
    return values.map((v, i) => (this.right[i] ? v.padStart(this.widths[i]!) : v.padEnd(this.widths[i]!))).join('  ').trimEnd();
  }

  header(): string[] {
    return [this.line(this.columns.map((c) => c.name)), this.widths.map((w) => '─'.repeat(w)).join('  ')];
  }
}

/**
 * An aligned table: numbers right-aligned, long values cut at `maxCell` characters (default 40), at most
 * `maxRows` rows. A head() result (`more`) says that the query has rows beyond those shown.
 */
export function formatTable(result: LakeQueryResult | LakeQueryHead, maxRows = 50, maxCell = MAX_CELL): string {
  if (result.columns.length === 0) return '(no columns)';
  const layout = new TableLayout(result.columns, maxCell);
  const shown = layout.cells(result.rows.slice(0, maxRows));
  const out = [...layout.header(), ...shown.map((r) => layout.line(r))];
  if (result.rows.length > maxRows) out.push(`… ${result.rows.length - maxRows} more row(s)`);
  if ('more' in result && result.more) out.push(`(the first ${shown.length} rows; the query has more)`);
  else out.push(rowCount(result.rows.length));
  return out.join('\n');
}

/** Where streamed output goes: text of one or more whole lines, no trailing newline; may wait (backpressure). */
export type Emit = (text: string) => void | Promise<void>;

/**
 * Streams a result as an aligned table, every value whole: one block of lines per DuckDB chunk, so memory
 * holds one chunk. The header is aligned on the first chunk; a later, wider value widens its column from
 * that chunk on (as psql does with FETCH_COUNT). Returns the row count, also printed last.
 */
export async function streamTable(result: LakeQueryStream, emit: Emit, maxCell = Infinity): Promise<number> {
  if (result.columns.length === 0) {
    await emit('(no columns)');
    return 0;
  }
  const layout = new TableLayout(result.columns, maxCell);
  let rows = 0;
  for await (const batch of result.batches) {
    const cells = layout.cells(batch);
    const lines = cells.map((r) => layout.line(r));
    await emit((rows === 0 ? [...layout.header(), ...lines] : lines).join('\n'));
    rows += batch.length;
  }
  await emit(rows === 0 ? [...layout.header(), rowCount(0)].join('\n') : rowCount(rows));
  return rows;
}

/** One JSON object per row, keyed by column name. */
export function jsonLines(result: Pick<LakeQueryResult, 'columns' | 'rows'>): string[] {
  const names = result.columns.map((c) => c.name);
  return result.rows.map((row) => JSON.stringify(Object.fromEntries(names.map((name, i) => [name, row[i] ?? null]))));
}

/** Streams a result as JSON lines, one chunk's lines at a time. Returns the row count. */
export async function streamJsonLines(result: LakeQueryStream, emit: Emit): Promise<number> {
  let rows = 0;
  for await (const batch of result.batches) {
    await emit(jsonLines({ columns: result.columns, rows: batch }).join('\n'));
    rows += batch.length;
  }
  return rows;
}
