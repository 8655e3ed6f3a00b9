import type { Json } from '@duckdb/node-api';
import { loadCatalog } from '../config/reports/index.js';
import { bucketNames } from '../config/naming.js';
import type { ReportDefinition } from '../functions/core/report-definition.js';
import { createLakeViews, type LakeView } from './lake-views.js';

/**
 * DuckDB as the local Athena: an in-memory database whose views read the local lake's curated Parquet
 * (lake-views.ts). `npm run query` and the saved queries of `npm start` both go through here.
 */

/** The environment name of local runs: its buckets are `paynet-reports-local-raw` and `-curated`. */
export const LOCAL_ENVIRONMENT = 'local';

export interface LakeQueryColumn {
  name: string;
  /** DuckDB's type name: VARCHAR, BIGINT, DECIMAL(18,3), TIMESTAMP, DATE, DOUBLE, … */
  type: string;
}

export interface LakeQueryResult {
  columns: LakeQueryColumn[];
  /**
   * Rows in DuckDB's JSON form: BIGINT, DECIMAL, TIMESTAMP and DATE values arrive as exact strings
   * ("9007199254740993", "-12.345", "2026-11-20 10:15:30", "2026-11-21"), never through a float;
   * only small integers and DOUBLE/FLOAT are numbers.
   */
  rows: Json[][];
}

/** The SQL was refused by DuckDB (syntax, unknown column, …): the message is DuckDB's, with its LINE pointer. */
export class QueryFailed extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QueryFailed';
  }
}

export interface LakeDatabase {
  views: LakeView[];
  query(sql: string): Promise<LakeQueryResult>;
  close(): void;
}

export interface OpenLakeOptions {
  /** The directory the local lake stores its buckets in (`npm start --lake`, default ./.lake). */
  lakeDir: string;
  /** Names the curated bucket (bucketNames); default LOCAL_ENVIRONMENT. */
  environment?: string;
  /** Default: every report of the catalog. */
  reports?: readonly ReportDefinition[];
}

export async function openLakeDatabase(options: OpenLakeOptions): Promise<LakeDatabase> {
  const reports = options.reports ?? loadCatalog().reports;
  const curatedBucket = bucketNames(options.environment ?? LOCAL_ENVIRONMENT).curated;
  // Loaded here, not at start-up: DuckDB's native library is ~30 MB resident and a quarter second to load,
  // and `npm start` needs it only after the windows are loaded, when the converter's memory is freed.
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const close = () => {
    connection.closeSync();
    instance.closeSync();
  };
  let views: LakeView[];
  try {
    views = await createLakeViews(connection, { lakeDir: options.lakeDir, curatedBucket, reports });
  } catch (e) {
    close();
    throw e;
  }
  return {
    views,
    async query(sql) {
      let reader;
      try {
        reader = await connection.runAndReadAll(sql);
      } catch (e) {
        throw new QueryFailed(e instanceof Error ? e.message : String(e), { cause: e });
      }
      const names = reader.columnNames();
      const types = reader.columnTypes();
      return {
        columns: names.map((name, i) => ({ name, type: String(types[i]) })),
        rows: reader.getRowsJson(),
      };
    },
    close,
  };
}
