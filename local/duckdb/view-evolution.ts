import type { DuckDBConnection } from '@duckdb/node-api';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { reparseAdvice, windowList, type RawCoverage, type RecordedWindow } from '../../functions/core/lake/stale-windows.js';
import { athenaType, literal, parquetElement, parquetTypeLabel, type ViewEvolution } from '../../functions/core/definitions/table-schema.js';
import { parseCuratedKey } from '../../functions/core/lake/s3-keys.js';
import { formatLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { objectFileKeyPath } from '../lake/s3rver-files.js';

/**
 * How a report's view must read its files when some were written under other columns than the current
 * definition's (functions/core/definitions/table-schema.ts, ViewEvolution): from the files' own Parquet schemas, read by DuckDB
 * from their footers, so the local view behaves as Athena does over the same files whatever the manifests say.
 * Undefined when every file has exactly the definition's columns and types: the plain view then reads them.
 */

/** The window a table file holds, from the key its path ends in (the local lake's file of `tables/<report>/dt=<date>/<start>.parquet`). */
function windowOfFile(file: string, report: Pick<ReportDefinition, 'window'>): RecordedWindow | undefined {
  const key = parseCuratedKey(objectFileKeyPath(file));
  if (key?.area !== 'tables') return undefined;
  const window = windowAt(key.start, parseWindowSize(report.window));
  return { start: formatLocalDateTime(window.start), end: formatLocalDateTime(window.end) };
}

/** The error a query gets when it reads `column` in files whose Parquet type is not the definition's. */
function unreadableMessage(report: ReportDefinition, column: ReportDefinition['columns'][number], files: Map<string, string>, flags: readonly string[], raw?: RawCoverage): string {
  const windows = [...files.keys()].map((f) => windowOfFile(f, report)).filter((w): w is RecordedWindow => w !== undefined);
  const written = [...new Set(files.values())].join(' or ');
  return (
    `Column ${column.name} of "${report.id}" is ${written} in the Parquet files of ${windows.length} window(s) (${windowList(windows)}), ` +
    `but the definition now says ${athenaType(column)} (${parquetTypeLabel(parquetElement(column))}): Athena fails a query that reads it there ` +
    `(HIVE_BAD_DATA: … incompatible with type ${athenaType(column)} defined in table schema), and so does this view. ` +
    `Rebuild those windows from their raw files: ${reparseAdvice(report.id, windows, flags, raw)}`
  );
}

export async function viewEvolution(
  connection: DuckDBConnection,
  glob: string,
  report: ReportDefinition,
  flags: readonly string[],
  raw?: RawCoverage,
): Promise<ViewEvolution | undefined> {
  const read = await connection.runAndReadAll(
    `SELECT file_name, name, type, converted_type, precision, scale FROM parquet_schema(${literal(glob)}) WHERE type IS NOT NULL`,
  );
  // Per file, each column's Parquet type as messages spell it.
  const files = new Map<string, Map<string, string>>();
  for (const [file, name, type, converted, precision, scale] of read.getRows() as Array<[string, string, string, string | null, bigint | null, bigint | null]>) {
    const columns = files.get(file) ?? new Map<string, string>();
    columns.set(name, parquetTypeLabel({ type, converted_type: converted, precision, scale }));
    files.set(file, columns);
  }
  const wanted = new Map(report.columns.map((c) => [c.name, parquetTypeLabel(parquetElement(c))]));
  const sameAsDefinition = (columns: Map<string, string>) => columns.size === wanted.size && [...wanted].every(([name, type]) => columns.get(name) === type);
  if ([...files.values()].every(sameAsDefinition)) return undefined;

  const absent = new Set(report.columns.filter((c) => ![...files.values()].some((f) => f.has(c.name))).map((c) => c.name));
  const unreadable = new Map<string, { files: string[]; message: string }>();
  for (const column of report.columns) {
    const differing = new Map<string, string>();
    for (const [file, columns] of files) {
      const type = columns.get(column.name);
      if (type !== undefined && type !== wanted.get(column.name)) differing.set(file, type);
    }
    if (differing.size) unreadable.set(column.name, { files: [...differing.keys()], message: unreadableMessage(report, column, differing, flags, raw) });
  }
  return { absent, unreadable };
}
