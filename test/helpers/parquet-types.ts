import type { SchemaElement } from 'hyparquet';

/**
 * The Athena type a Parquet leaf holds, read from the physical and logical types alone: an independent
 * reading of what the parse function writes (docs/architecture.md, "Parquet").
 */
export function athenaTypeOfParquet(e: SchemaElement): string {
  const logical = e.logical_type;
  if (e.type === 'BYTE_ARRAY' && logical?.type === 'STRING') return 'string';
  if (e.type === 'INT64' && logical?.type === 'DECIMAL') return `decimal(${logical.precision},${logical.scale})`;
  if (e.type === 'INT64' && logical?.type === 'TIMESTAMP' && logical.unit === 'MILLIS' && !logical.isAdjustedToUTC) return 'timestamp';
  if (e.type === 'INT64' && !logical && !e.converted_type) return 'bigint';
  if (e.type === 'INT32' && logical?.type === 'DATE') return 'date';
  if (e.type === 'BOOLEAN' && !logical && !e.converted_type) return 'boolean';
  throw new Error(`no Athena type for Parquet element ${JSON.stringify(e)}`);
}
