import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { parquetMetadata } from 'hyparquet';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { convertCsvToParquet } from '../../functions/core/convert/csv-to-parquet.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { duckdbType, duckdbViewSql, glueColumns, parquetSchema, PARTITION_KEYS, valueAggregates } from '../../functions/core/definitions/table-schema.js';
import { openDuckDb, type TestDb } from '../helpers/duckdb.js';

/** One column of every type, required and nullable. */
const columns = [
  { header: 'S', name: 's', type: 'string' },
  { header: 'B', name: 'b', type: 'bigint' },
  { header: 'D', name: 'd', type: 'decimal(18,3)' },
  { header: 'D2', name: 'd2', type: 'decimal(9,2)' },
  { header: 'T', name: 't', type: 'timestamp', pattern: 'yyyy-MM-dd HH:mm:ss' },
  { header: 'DT', name: 'day', type: 'date', pattern: 'dd.MM.yyyy' },
  { header: 'SN', name: 's_n', type: 'string', nullable: true },
  { header: 'BN', name: 'b_n', type: 'bigint', nullable: true },
  { header: 'DN', name: 'd_n', type: 'decimal(18,3)', nullable: true },
  { header: 'TN', name: 't_n', type: 'timestamp', pattern: 'yyyy-MM-dd HH:mm:ss', nullable: true },
  { header: 'DTN', name: 'day_n', type: 'date', pattern: 'dd.MM.yyyy', nullable: true },
  { header: 'F', name: 'f', type: 'boolean' },
  { header: 'FN', name: 'f_n', type: 'boolean', nullable: true, values: { true: ['Y'], false: ['N'] } },
];

function reportWith(cols: unknown[], extra: Record<string, unknown> = {}): ReportDefinition {
  const base = loadCatalog().get('transactions');
  // Columns of its own: the sample's key column (transaction_id) is not among them.
  return parseReportDefinition({ ...base, id: 'every_type', columns: cols, keys: undefined, ...extra }, 'test');
}

/** Athena type -> the type DuckDB reports for the same Parquet column. */
const duckdbOfAthena = (t: string) => t.replace(/^string$/, 'VARCHAR').replace(/^decimal/, 'DECIMAL').toUpperCase();

describe('one schema, three uses', () => {
  const report = reportWith(columns);
  let dir: string;
  let file: string;
  let db: TestDb;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'table-schema-'));
    await mkdir(join(dir, 'every_type', 'dt=2026-11-20'), { recursive: true });
    file = join(dir, 'every_type', 'dt=2026-11-20', 'w.parquet');
    const csv =
      columns.map((c) => c.header).join(',') +
      '\r\nx,9007199254740993,-1234.5,12.34,2026-11-20 23:59:59,21.11.2026,y,1,0.001,2026-01-01 00:00:00,01.01.2026,Yes,n' +
      '\r\nz,-1,0,-0.01,1970-01-01 00:00:00,01.01.1970,,,,,,FALSE,\r\n';
    await convertCsvToParquet({ input: Readable.from([Buffer.from(csv)]), output: createWriteStream(file), report, encoder: 'inline' });
    db = await openDuckDb();
  });
  after(async () => {
    db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('maps each type the way docs/architecture.md says', () => {
    const byName = Object.fromEntries(glueColumns(report.columns).map((c) => [c.name, c.type]));
    assert.deepEqual(byName, {
      s: 'string', b: 'bigint', d: 'decimal(18,3)', d2: 'decimal(9,2)', t: 'timestamp', day: 'date',
      s_n: 'string', b_n: 'bigint', d_n: 'decimal(18,3)', t_n: 'timestamp', day_n: 'date', f: 'boolean', f_n: 'boolean',
    });
    assert.deepEqual(PARTITION_KEYS, [{ name: 'dt', type: 'string' }]);
    const sample = loadCatalog().get('transactions');
    assert.deepEqual(glueColumns(sample.columns).map((c) => `${c.name} ${c.type}`), [
      'merchant_name string', 'transaction_id bigint', 'merchant_oid string', 'created_date timestamp', 'amount decimal(18,3)',
      'currency string', 'transaction_type string', 'order_description string', 'date_of_report date',
    ]);
  });

  it('writes the Parquet footer with the physical and logical types of the schema', async () => {
    const bytes = await readFile(file);
    const meta = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    const expected = parquetSchema(report.columns);
    assert.equal(meta.schema.length, expected.length);
    for (const [i, want] of expected.entries()) {
      const got = meta.schema[i]!;
      assert.equal(got.name, want.name);
      assert.equal(got.type, want.type, `${want.name} physical type`);
      assert.equal(got.repetition_type, want.repetition_type, `${want.name} repetition`);
      assert.equal(got.converted_type, want.converted_type, `${want.name} converted type`);
      assert.deepEqual(got.logical_type, want.logical_type, `${want.name} logical type`);
    }
    const el = (n: string) => meta.schema.find((e) => e.name === n)!;
    assert.deepEqual([el('s').type, el('s').logical_type], ['BYTE_ARRAY', { type: 'STRING' }]);
    assert.deepEqual([el('b').type, el('b').logical_type, el('b').repetition_type], ['INT64', undefined, 'REQUIRED']);
    assert.deepEqual([el('d').type, el('d').logical_type], ['INT64', { type: 'DECIMAL', precision: 18, scale: 3 }]);
    assert.deepEqual([el('t').type, el('t').logical_type], ['INT64', { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' }]);
    assert.deepEqual([el('day').type, el('day').logical_type], ['INT32', { type: 'DATE' }]);
    assert.deepEqual([el('f').type, el('f').logical_type, el('f').converted_type], ['BOOLEAN', undefined, undefined]);
    // Statistics: false < true, and the null count.
    const stats = (n: string) => meta.row_groups[0]!.columns[report.columns.findIndex((c) => c.name === n)]!.meta_data!.statistics!;
    assert.deepEqual([stats('f').min_value, stats('f').max_value, stats('f').null_count], [false, true, 0n]);
    assert.deepEqual([stats('f_n').min_value, stats('f_n').max_value, stats('f_n').null_count], [false, false, 1n]);
    assert.equal(el('s_n').repetition_type, 'OPTIONAL');
    assert.equal(Number(meta.num_rows), 2);
  });

  it('is read by DuckDB, without any cast, as the types Glue declares', async () => {
    const raw = await db.types(`SELECT * FROM read_parquet('${file}', hive_partitioning = false)`);
    const glue = Object.fromEntries(glueColumns(report.columns).map((c) => [c.name, duckdbOfAthena(c.type)]));
    assert.deepEqual(raw, glue);
    for (const c of report.columns) assert.equal(raw[c.name], duckdbType(c));
  });

  it('gives the DuckDB view the same columns and types, plus the dt partition', async () => {
    await db.query(duckdbViewSql('every_type', join(dir, 'every_type', '*', '*.parquet'), report.columns));
    const view = await db.types('SELECT * FROM every_type');
    assert.deepEqual(view, { ...Object.fromEntries(glueColumns(report.columns).map((c) => [c.name, duckdbOfAthena(c.type)])), dt: 'VARCHAR' });
    const rows = await db.query('SELECT * FROM every_type ORDER BY b DESC');
    assert.deepEqual(rows[0], {
      s: 'x', b: 9007199254740993n, d: '-1234.500', d2: '12.34', t: '2026-11-20 23:59:59', day: '2026-11-21',
      s_n: 'y', b_n: 1n, d_n: '0.001', t_n: '2026-01-01 00:00:00', day_n: '2026-01-01', f: true, f_n: false, dt: '2026-11-20',
    });
    assert.deepEqual(rows[1], {
      s: 'z', b: -1n, d: '0.000', d2: '-0.01', t: '1970-01-01 00:00:00', day: '1970-01-01',
      s_n: null, b_n: null, d_n: null, t_n: null, day_n: null, f: false, f_n: null, dt: '2026-11-20',
    });
    // `reports status` decodes a boolean by counting its trues (Trino and DuckDB both have count_if).
    const [aggregate] = valueAggregates(report.columns.find((c) => c.name === 'f')!);
    assert.deepEqual(aggregate, { kind: 'trues', sql: 'count_if("f")' });
    assert.deepEqual(await db.query(`SELECT ${aggregate!.sql} AS trues FROM every_type`), [{ trues: 1n }]);
  });

  it('quotes identifiers and the glob in the view SQL', () => {
    const sql = duckdbViewSql('transactions', "/tmp/it's/*/*.parquet", loadCatalog().get('transactions').columns);
    assert.match(sql, /^CREATE OR REPLACE VIEW "transactions" AS SELECT/);
    assert.match(sql, /CAST\("amount" AS DECIMAL\(18,3\)\) AS "amount"/);
    assert.match(sql, /CAST\("created_date" AS TIMESTAMP\) AS "created_date"/);
    assert.match(sql, /read_parquet\('\/tmp\/it''s\/\*\/\*\.parquet', hive_partitioning = true\)/);
  });
});
