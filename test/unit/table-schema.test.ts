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
import {
  athenaType,
  duckdbType,
  duckdbViewSql,
  glueColumns,
  ident,
  parquetElement,
  parquetSchema,
  parquetTypeLabel,
  partitionKeyDuckdbType,
  PARTITION_KEYS,
  valueAggregates,
} from '../../functions/core/definitions/table-schema.js';
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
    await mkdir(join(dir, 'every_type', 'connection=default', 'dt=2026-11-20'), { recursive: true });
    file = join(dir, 'every_type', 'connection=default', 'dt=2026-11-20', 'w.parquet');
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
    assert.deepEqual(PARTITION_KEYS, [{ name: 'connection', type: 'string' }, { name: 'dt', type: 'string' }]);
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
    await db.query(duckdbViewSql('every_type', join(dir, 'every_type', '*', '*', '*.parquet'), report.columns));
    const view = await db.types('SELECT * FROM every_type');
    assert.deepEqual(view, { ...Object.fromEntries(glueColumns(report.columns).map((c) => [c.name, duckdbOfAthena(c.type)])), connection: 'VARCHAR', dt: 'VARCHAR' });
    const rows = await db.query('SELECT * FROM every_type ORDER BY b DESC');
    assert.deepEqual(rows[0], {
      s: 'x', b: 9007199254740993n, d: '-1234.500', d2: '12.34', t: '2026-11-20 23:59:59', day: '2026-11-21',
      s_n: 'y', b_n: 1n, d_n: '0.001', t_n: '2026-01-01 00:00:00', day_n: '2026-01-01', f: true, f_n: false, connection: 'default', dt: '2026-11-20',
    });
    assert.deepEqual(rows[1], {
      s: 'z', b: -1n, d: '0.000', d2: '-0.01', t: '1970-01-01 00:00:00', day: '1970-01-01',
      s_n: null, b_n: null, d_n: null, t_n: null, day_n: null, f: false, f_n: null, connection: 'default', dt: '2026-11-20',
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

describe('the schema pieces, written out', () => {
  const report = reportWith(columns);
  const named = (name: string) => report.columns.find((c) => c.name === name)!;

  it('the root element counts the columns; each leaf is required unless nullable', () => {
    const schema = parquetSchema(report.columns);
    assert.deepEqual(schema[0], { name: 'root', num_children: 13 });
    assert.deepEqual(schema.slice(1).map((e) => e.repetition_type), [
      'REQUIRED', 'REQUIRED', 'REQUIRED', 'REQUIRED', 'REQUIRED', 'REQUIRED', 'OPTIONAL', 'OPTIONAL', 'OPTIONAL', 'OPTIONAL', 'OPTIONAL', 'REQUIRED', 'OPTIONAL',
    ]);
    assert.deepEqual(parquetElement(named('d2')), {
      name: 'd2', repetition_type: 'REQUIRED', type: 'INT64', converted_type: 'DECIMAL', precision: 9, scale: 2, logical_type: { type: 'DECIMAL', precision: 9, scale: 2 },
    });
    assert.deepEqual(parquetElement(named('s_n')), { name: 's_n', repetition_type: 'OPTIONAL', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } });
    assert.deepEqual(parquetElement(named('t')), {
      name: 't', repetition_type: 'REQUIRED', type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' },
    });
    assert.deepEqual(parquetElement(named('day')), { name: 'day', repetition_type: 'REQUIRED', type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } });
  });

  it('Athena and DuckDB type of each kind, and of the dt partition', () => {
    assert.deepEqual(['s', 'b', 'd2', 't', 'day', 'f'].map((n) => [athenaType(named(n)), duckdbType(named(n))]), [
      ['string', 'VARCHAR'], ['bigint', 'BIGINT'], ['decimal(9,2)', 'DECIMAL(9,2)'], ['timestamp', 'TIMESTAMP'], ['date', 'DATE'], ['boolean', 'BOOLEAN'],
    ]);
    assert.equal(partitionKeyDuckdbType(PARTITION_KEYS[0]), 'VARCHAR');
  });

  it('a decimal without precision or scale is refused with what to do', () => {
    const message = { message: 'a decimal column without precision and scale: parse it with parseReportDefinition first' };
    assert.throws(() => duckdbType({ kind: 'decimal', precision: undefined, scale: 2 }), message);
    assert.throws(() => duckdbType({ kind: 'decimal', precision: 18, scale: undefined }), message);
  });

  it('a Parquet type as the footer and Athena\'s errors name it', () => {
    assert.equal(parquetTypeLabel({ type: 'INT64', converted_type: 'DECIMAL', precision: 18n, scale: 3n }), 'INT64 DECIMAL(18,3)');
    assert.equal(parquetTypeLabel({ type: 'INT32', converted_type: 'DATE' }), 'INT32 DATE');
    assert.equal(parquetTypeLabel({ type: 'BOOLEAN', converted_type: null }), 'BOOLEAN');
    assert.equal(parquetTypeLabel({}), '?');
  });

  it('a column description becomes the Glue comment', () => {
    const described = reportWith([{ header: 'A', name: 'a', type: 'string', description: 'The merchant' }, { header: 'B', name: 'b', type: 'bigint' }]);
    assert.deepEqual(glueColumns(described.columns), [{ name: 'a', type: 'string', comment: 'The merchant' }, { name: 'b', type: 'bigint' }]);
  });

  it('the aggregates that decode each kind', () => {
    assert.deepEqual(['s', 'b', 'd', 't', 'day', 'f'].map((n) => valueAggregates(named(n))), [
      [{ kind: 'longest', sql: 'max(length("s"))' }],
      [{ kind: 'min', sql: 'min("b")' }, { kind: 'max', sql: 'max("b")' }],
      [{ kind: 'sum', sql: 'sum("d")' }],
      [{ kind: 'min', sql: 'min("t")' }, { kind: 'max', sql: 'max("t")' }],
      [{ kind: 'min', sql: 'min("day")' }, { kind: 'max', sql: 'max("day")' }],
      [{ kind: 'trues', sql: 'count_if("f")' }],
    ]);
    assert.equal(ident('say "hi"'), '"say ""hi"""');
  });

  it('the view over files of other columns: absent ones NULL, unreadable ones an error for their files only, read by name', () => {
    const two = reportWith([{ header: 'A', name: 'a', type: 'string' }, { header: 'B', name: 'b', type: 'decimal(9,2)', nullable: true }, { header: 'C', name: 'c', type: 'bigint' }]);
    const evolution = { absent: new Set(['a']), unreadable: new Map([['b', { files: ['f1.parquet', "it's.parquet"], message: "b can't be read" }]]) };
    assert.equal(
      duckdbViewSql('v', 'g/*.parquet', two.columns, evolution),
      'CREATE OR REPLACE VIEW "v" AS SELECT\n' +
        '  CAST(NULL AS VARCHAR) AS "a",\n' +
        "  CASE WHEN \"_paynet_file\" IN ('f1.parquet', 'it''s.parquet') THEN error('b can''t be read') ELSE CAST(\"b\" AS DECIMAL(9,2)) END AS \"b\",\n" +
        '  CAST("c" AS BIGINT) AS "c",\n' +
        '  CAST("connection" AS VARCHAR) AS "connection",\n' +
        '  CAST("dt" AS VARCHAR) AS "dt"\n' +
        "FROM read_parquet('g/*.parquet', hive_partitioning = true, union_by_name = true, filename = '_paynet_file')",
    );
  });
});
