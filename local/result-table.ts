import type { LakeQueryResult } from './lake-query.js';

/**
 * Query results for the terminal (`npm run query`, the saved queries of `npm start`): an aligned text
 * table, or JSON lines for scripts. Values are DuckDB's exact JSON forms (lake-query.ts): decimals and
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

/**
 * An aligned table: numbers right-aligned, long values cut at `maxCell` characters (default 40), at most
 * `maxRows` rows. `npm run query` passes Infinity for both: what an analyst asked for is printed whole.
 */
export function formatTable(result: LakeQueryResult, maxRows = 50, maxCell = MAX_CELL): string {
  if (result.columns.length === 0) return '(no columns)';
  const shown = result.rows.slice(0, maxRows).map((row) => row.map((v) => cell(v, maxCell)));
  const widths = result.columns.map((c, i) => Math.max(c.name.length, ...shown.map((r) => r[i]!.length)));
  const right = result.columns.map((c) => NUMERIC.test(c.type));
  const line = (values: string[]) => values.map((v, i) => (right[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  const out = [line(result.columns.map((c) => c.name)), widths.map((w) => '─'.repeat(w)).join('  '), ...shown.map(line)];
  if (result.rows.length > maxRows) out.push(`… ${result.rows.length - maxRows} more row(s)`);
  out.push(`(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`);
  return out.join('\n');
}

/** One JSON object per row, keyed by column name. */
export function jsonLines(result: LakeQueryResult): string[] {
  return result.rows.map((row) => JSON.stringify(Object.fromEntries(result.columns.map((c, i) => [c.name, row[i] ?? null]))));
}
