import { statSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { measure } from './measure.js';

/** The reference: DuckDB's own CSV-to-Parquet on one thread (C++, vectorised), with the same column types. */
const [file = '', out = ''] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:');
const db = await instance.connect();
await db.run('SET threads = 1');
await measure(async () => {
  const columns =
    "{'Merchant_Name': 'VARCHAR', 'Transaction_id': 'BIGINT', 'Merchant_OID': 'VARCHAR', 'Created_date': 'TIMESTAMP', " +
    "'Amount': 'DECIMAL(18,3)', 'Currency': 'VARCHAR', 'Transaction_type': 'VARCHAR', 'Order_description': 'VARCHAR', 'Date_of_report': 'DATE'}";
  await db.run(
    `COPY (SELECT * FROM read_csv('${file}', header = true, quote = '"', escape = '"', columns = ${columns}, dateformat = '%d.%m.%Y', timestampformat = '%Y-%m-%d %H:%M:%S'))` +
      ` TO '${out}' (FORMAT parquet, COMPRESSION snappy)`,
  );
  const reader = await db.runAndReadAll(`SELECT count(*) FROM read_parquet('${out}')`);
  return { rows: Number(reader.getRows()[0]![0]), outBytes: statSync(out).size };
});
db.closeSync();
instance.closeSync();
