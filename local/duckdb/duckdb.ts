import type { DuckDBResult, Json } from '@duckdb/node-api';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { createLakeViews, type LakeView } from './duckdb-views.js';
import { defineTrinoFunctions } from './trino-functions.js';
import { rawStarts } from '../lake/footer-windows.js';
import { parseWindowSize } from '../../functions/core/time/window.js';
import { lakeReparseFlags, lakeStaleNotices } from '../lake/stale-notice.js';

/**
 * DuckDB as the local Athena: an in-memory database whose views read the local lake's curated Parquet
 * (duckdb-views.ts). `npm run query` and the saved queries of `npm start` both go through here.
 */

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

/** A result read chunk by chunk: memory holds one chunk (DuckDB's vector, ≤ 2048 rows) at a time, whatever the size. */
export interface LakeQueryStream {
  columns: LakeQueryColumn[];
  /** Row batches as DuckDB produces them, in the JSON form of LakeQueryResult.rows. Read once. */
  batches: AsyncIterable<Json[][]>;
}

/** The first rows of a result and whether it has more: what a summary prints. */
export interface LakeQueryHead extends LakeQueryResult {
  /** The query returns more rows than `limit`. */
  more: boolean;
}

export interface LakeDatabase {
  views: LakeView[];
  /**
   * What to tell the user before any query: windows whose table file was written under another definition than
   * the current one, and the `reports reparse` command that rebuilds them (stale-notice.ts). Empty when none.
   */
  notices: string[];
  /** The whole result in memory: for small results (DESCRIBE, aggregates). Use stream() or head() otherwise. */
  query(sql: string): Promise<LakeQueryResult>;
  stream(sql: string): Promise<LakeQueryStream>;
  /** At most `limit` rows, asked of DuckDB in SQL (LIMIT limit+1, the one more saying there are more). */
  head(sql: string, limit: number): Promise<LakeQueryHead>;
  close(): void;
}

/** A statement as a subquery: without its closing semicolon, and on lines of its own so a trailing `--` comment ends. */
export function limitedSql(sql: string, limit: number): string {
  const body = sql.trim().replace(/;\s*$/, '');
  return `SELECT * FROM (\n${body}\n) AS limited LIMIT ${limit}`;
}

export interface OpenLakeOptions {
  /** The directory the local lake stores its buckets in (`npm start --lake`, default ./.lake). */
  lakeDir: string;
  /** Names the curated bucket (bucketNames); default LOCAL_ENVIRONMENT. */
  environment?: string;
  /** Default: every report of the catalog. */
  reports?: readonly ReportDefinition[];
  /** Read the manifests for `notices` (default true); `npm start` has printed them already. */
  staleNotices?: boolean;
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
  let notices: string[];
  try {
    await defineTrinoFunctions(connection);
    const rawBucket = bucketNames(options.environment ?? LOCAL_ENVIRONMENT).raw;
    const raw = new Map(
      await Promise.all(reports.map(async (r) => [r.id, { starts: await rawStarts(options.lakeDir, rawBucket, r.id), size: parseWindowSize(r.window) }] as const)),
    );
    views = await createLakeViews(connection, { lakeDir: options.lakeDir, curatedBucket, reports, reparseFlags: lakeReparseFlags(options.lakeDir), raw });
    notices = options.staleNotices === false ? [] : await lakeStaleNotices({ lakeDir: options.lakeDir, buckets: bucketNames(options.environment ?? LOCAL_ENVIRONMENT), reports });
  } catch (e) {
    close();
    throw e;
  }
  const failed = (e: unknown) => new QueryFailed(e instanceof Error ? e.message : String(e), { cause: e });
  const stream = async (sql: string): Promise<LakeQueryStream> => {
    let result: DuckDBResult;
    try {
      result = await connection.stream(sql);
    } catch (e) {
      throw failed(e);
    }
    const names = result.columnNames();
    const types = result.columnTypes();
    async function* batches() {
      const rows = result.yieldRowsJson();
      while (true) {
        let next;
        try {
          next = await rows.next();
        } catch (e) {
          // A value DuckDB cannot produce (a failed cast, …) surfaces while reading, not when the query starts.
          throw failed(e);
        }
        if (next.done) return;
        if (next.value.length) yield next.value;
      }
    }
    return { columns: names.map((name, i) => ({ name, type: String(types[i]) })), batches: batches() };
  };
  return {
    views,
    notices,
    async query(sql) {
      let reader;
      try {
        reader = await connection.runAndReadAll(sql);
      } catch (e) {
        throw failed(e);
      }
      const names = reader.columnNames();
      const types = reader.columnTypes();
      return {
        columns: names.map((name, i) => ({ name, type: String(types[i]) })),
        rows: reader.getRowsJson(),
      };
    },
    stream,
    async head(sql, limit) {
      const { columns, batches } = await stream(limitedSql(sql, limit + 1));
      const rows: Json[][] = [];
      for await (const batch of batches) rows.push(...batch);
      return { columns, rows: rows.slice(0, limit), more: rows.length > limit };
    },
    close,
  };
}
