import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

/**
 * DuckDB for tests: an in-memory database, queries as plain row objects. Values come back as strings
 * and bigints (never floats), so decimals, int64 ids and timestamps compare exactly:
 * DECIMAL -> "-1234.500", BIGINT -> 9007199254740993n, TIMESTAMP -> "2026-11-20 23:59:59", DATE -> "2026-11-20".
 */
export type Plain = string | bigint | number | boolean | null;

export interface TestDb {
  query(sql: string): Promise<Array<Record<string, Plain>>>;
  /** Column name -> DuckDB type as DuckDB prints it (DECIMAL(18,3), BIGINT, VARCHAR, TIMESTAMP, DATE). */
  types(sql: string): Promise<Record<string, string>>;
  close(): void;
}

export async function openDuckDb(): Promise<TestDb> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection: DuckDBConnection = await instance.connect();
  return {
    async query(sql) {
      const reader = await connection.runAndReadAll(sql);
      const names = reader.columnNames();
      return reader.getRows().map((row) =>
        Object.fromEntries(names.map((name, i) => [name, plain(row[i])])),
      );
    },
    async types(sql) {
      const reader = await connection.runAndReadAll(`SELECT * FROM (${sql}) LIMIT 0`);
      const types = reader.columnTypes();
      return Object.fromEntries(reader.columnNames().map((name, i) => [name, String(types[i])]));
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

function plain(value: unknown): Plain {
  if (value === null || value === undefined) return null;
  // A number stays a number (INTEGER, DOUBLE): a float where a decimal was expected must stay visible.
  if (typeof value === 'bigint' || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') return value;
  // DuckDB value objects (DECIMAL, TIMESTAMP, DATE, ...) print exactly, in DuckDB's own text form.
  return String(value);
}
