import { join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { tableFilesGlob } from '../../functions/core/lake/s3-keys.js';
import { LOADS_COLUMNS, LOADS_TABLE, loadsFilesGlob, REPORT_KEY } from '../../functions/core/lake/loads-table.js';
import { CONNECTION_KEY, duckdbType, duckdbViewSql, PARTITION_KEY, PARTITION_KEYS, partitionKeyDuckdbType } from '../../functions/core/definitions/table-schema.js';
import { S3RVER_OBJECT_SUFFIX } from '../lake/s3rver-files.js';
import { viewEvolution } from './view-evolution.js';
import type { RawCoverage } from '../../functions/core/lake/stale-windows.js';

/**
 * The local stand-in for the Glue tables: one DuckDB view per report over the Parquet files the local
 * lake (s3rver) keeps on disk. s3rver stores the object `tables/<report>/dt=D/S.parquet` of bucket B as
 * the file `<lakeDir>/B/tables/<report>/dt=D/S.parquet._S3rver_object` (beside `.metadata.json` and
 * `.md5` files), so the `dt=` directories are there for DuckDB's hive partitioning exactly as Athena's
 * partition projection sees them in S3 (s3rver-files.ts).
 */

/** The files of a report's table in a lake directory: every window's Parquet object (the layout's glob, s3-keys.ts). */
export function curatedParquetGlob(lakeDir: string, curatedBucket: string, reportId: string): string {
  return join(resolve(lakeDir), curatedBucket, tableFilesGlob(reportId, S3RVER_OBJECT_SUFFIX));
}

export interface LakeView {
  /** The view's name: the report id, as the Glue table is named, so saved queries run unchanged. */
  name: string;
  /** Parquet files under the view; 0 means the view is empty (no window loaded yet). */
  files: number;
  glob: string;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * A view with the table's columns and types and no rows. read_parquet fails on a glob that matches no
 * file ("No files found that match the pattern"), and a fresh lake has none: an empty view lets the
 * saved queries run (and say "0 rows") instead. The types come from the same duckdbType as the real
 * view's casts; test/integration/query.test.ts checks that both views describe alike.
 */
export function emptyViewSql(viewName: string, columns: ReportDefinition['columns']): string {
  const select = [
    ...columns.map((c) => `CAST(NULL AS ${duckdbType(c)}) AS ${ident(c.name)}`),
    ...PARTITION_KEYS.map((k) => `CAST(NULL AS ${partitionKeyDuckdbType(k)}) AS ${ident(k.name)}`),
  ];
  return `CREATE OR REPLACE VIEW ${ident(viewName)} AS SELECT\n  ${select.join(',\n  ')}\nWHERE false`;
}

/** Creates one view per report on `connection`; returns what each view covers. */
export async function createLakeViews(
  connection: DuckDBConnection,
  options: {
    lakeDir: string;
    curatedBucket: string;
    reports: readonly ReportDefinition[];
    /** Flags that end a `reports reparse` command for this lake (`--lake DIR`), quoted in the errors of stale files. */
    reparseFlags?: readonly string[];
    /** Per report id, the windows with a raw file: a query's error advises a reparse of those only. */
    raw?: ReadonlyMap<string, RawCoverage>;
  },
): Promise<LakeView[]> {
  const views: LakeView[] = [];
  for (const report of options.reports) {
    const glob = curatedParquetGlob(options.lakeDir, options.curatedBucket, report.id);
    // DuckDB's own glob(), so "has files" means exactly what read_parquet would match.
    const counted = await connection.runAndReadAll(`SELECT count(*) FROM glob(${literal(glob)})`);
    const files = Number(counted.getRows()[0]?.[0] ?? 0);
    // Files written under other columns (the definition changed since) are read as Athena reads them (view-evolution.ts).
    // A footer that cannot be read (a file cut short by a killed load) is left to the query to report, as before.
    const evolution = files > 0 ? await viewEvolution(connection, glob, report, options.reparseFlags ?? [], options.raw?.get(report.id)).catch(() => undefined) : undefined;
    await connection.run(files > 0 ? duckdbViewSql(report.id, glob, report.columns, evolution) : emptyViewSql(report.id, report.columns));
    views.push({ name: report.id, files, glob });
  }
  views.push(await createLoadsView(connection, options));
  return views;
}

/**
 * The `loads` view: every load manifest of the lake as a row (functions/core/lake/loads-table.ts), the columns the
 * Glue table `loads` has. The report comes from the path (manifests/<report>/ is not `report=`), connection and dt
 * from the hive directories; a lake without a manifest yet gets the empty view.
 */
async function createLoadsView(connection: DuckDBConnection, options: { lakeDir: string; curatedBucket: string }): Promise<LakeView> {
  const glob = join(resolve(options.lakeDir), options.curatedBucket, loadsFilesGlob(S3RVER_OBJECT_SUFFIX));
  const counted = await connection.runAndReadAll(`SELECT count(*) FROM glob(${literal(glob)})`);
  const files = Number(counted.getRows()[0]?.[0] ?? 0);
  const keys = [REPORT_KEY, CONNECTION_KEY, PARTITION_KEY];
  if (!files) {
    const select = [...LOADS_COLUMNS.map((c) => `CAST(NULL AS ${c.duckdb}) AS ${ident(c.name)}`), ...keys.map((k) => `CAST(NULL AS VARCHAR) AS ${ident(k)}`)];
    await connection.run(`CREATE OR REPLACE VIEW ${ident(LOADS_TABLE)} AS SELECT\n  ${select.join(',\n  ')}\nWHERE false`);
    return { name: LOADS_TABLE, files, glob };
  }
  const columns = `{${LOADS_COLUMNS.map((c) => `${literal(c.json)}: ${literal(c.duckdb)}`).join(', ')}}`;
  const select = [
    ...LOADS_COLUMNS.map((c) => `${ident(c.json)} AS ${ident(c.name)}`),
    `regexp_extract(filename, '/manifests/([a-z][a-z0-9_]*)/${CONNECTION_KEY}=', 1) AS ${ident(REPORT_KEY)}`,
    `CAST(${ident(CONNECTION_KEY)} AS VARCHAR) AS ${ident(CONNECTION_KEY)}`,
    `CAST(${ident(PARTITION_KEY)} AS VARCHAR) AS ${ident(PARTITION_KEY)}`,
  ];
  await connection.run(
    `CREATE OR REPLACE VIEW ${ident(LOADS_TABLE)} AS SELECT\n  ${select.join(',\n  ')}\n` +
      `FROM read_json(${literal(glob)}, format = 'newline_delimited', columns = ${columns}, hive_partitioning = true, hive_types_autocast = false, filename = true)`,
  );
  return { name: LOADS_TABLE, files, glob };
}
