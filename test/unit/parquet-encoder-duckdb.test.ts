import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { columnSchema, type ColumnDefinition } from '../../functions/core/definitions/report-definition.js';
import { RowGroupEncoder } from '../../functions/core/parquet/encoder.js';
import { RowBatchBuilder } from '../../functions/core/parquet/row-group-buffer.js';
import { openDuckDb } from '../helpers/duckdb.js';

/**
 * The encoder's file as DuckDB reads it: exact decimals past 2^53, timestamps and dates by their logical types,
 * and each row group's statistics as DuckDB prints them (parquet_metadata). Expectations are worked out by hand.
 */

const define = (name: string, type: string, extra: Record<string, unknown> = {}): ColumnDefinition => columnSchema.parse({ header: name, name, type, ...extra });

describe('RowGroupEncoder read by DuckDB', () => {
  it('types, exact values and per-group statistics', async () => {
    const columns = [
      define('id', 'bigint'),
      define('amount', 'decimal(18,3)', { nullable: true }),
      define('created', 'timestamp', { pattern: 'yyyy-MM-dd HH:mm:ss.SSS' }),
      define('booked', 'date', { pattern: 'dd.MM.yyyy', nullable: true }),
      define('refunded', 'boolean'),
      define('currency', 'string', { nullable: true }),
    ];
    const groups = [
      [
        ['9007199254740993', '123456789012345.678', '2026-11-20 23:59:59.999', '20.11.2026', 'true', 'EUR'],
        ['-1', '', '1969-12-31 23:59:59.001', '', 'false', ''],
        ['42', '-0.005', '2000-02-29 00:00:00.000', '29.02.2000', 'true', 'RUB'],
      ],
      [['7', '-999999999999999.999', '2026-11-21 00:00:00.000', '01.01.1970', 'false', 'USD']],
    ];
    const deliveries: Uint8Array[] = [];
    const encoder = new RowGroupEncoder({ columns }, (bytes) => void deliveries.push(bytes));
    const builder = new RowBatchBuilder(columns);
    for (const rows of groups) {
      for (const row of rows) assert.equal(typeof builder.add(row), 'number');
      encoder.add(builder.take());
      await encoder.writeRowGroup();
    }
    await encoder.finish();
    const dir = await mkdtemp(join(tmpdir(), 'encoder-duckdb-'));
    const db = await openDuckDb();
    try {
      const file = join(dir, 'x.parquet');
      await writeFile(file, Buffer.concat(deliveries));
      const from = `read_parquet('${file}')`;
      assert.deepEqual(await db.types(`SELECT * FROM ${from}`), { id: 'BIGINT', amount: 'DECIMAL(18,3)', created: 'TIMESTAMP', booked: 'DATE', refunded: 'BOOLEAN', currency: 'VARCHAR' });
      assert.deepEqual(await db.query(`SELECT * FROM ${from}`), [
        { id: 9007199254740993n, amount: '123456789012345.678', created: '2026-11-20 23:59:59.999', booked: '2026-11-20', refunded: true, currency: 'EUR' },
        { id: -1n, amount: null, created: '1969-12-31 23:59:59.001', booked: null, refunded: false, currency: null },
        { id: 42n, amount: '-0.005', created: '2000-02-29 00:00:00', booked: '2000-02-29', refunded: true, currency: 'RUB' },
        { id: 7n, amount: '-999999999999999.999', created: '2026-11-21 00:00:00', booked: '1970-01-01', refunded: false, currency: 'USD' },
      ]);
      const stats = await db.query(`SELECT row_group_id AS g, path_in_schema AS p, stats_null_count AS nulls, stats_min_value AS min, stats_max_value AS max FROM parquet_metadata('${file}') ORDER BY g, column_id`);
      assert.deepEqual(stats.map((s) => [Number(s.g), s.p, Number(s.nulls), s.min, s.max]), [
        [0, 'id', 0, '-1', '9007199254740993'],
        [0, 'amount', 1, '-0.005', '123456789012345.678'],
        [0, 'created', 0, '1969-12-31 23:59:59.001', '2026-11-20 23:59:59.999'],
        [0, 'booked', 1, '2000-02-29', '2026-11-20'],
        [0, 'refunded', 0, 'false', 'true'],
        [0, 'currency', 1, 'EUR', 'RUB'],
        [1, 'id', 0, '7', '7'],
        [1, 'amount', 0, '-999999999999999.999', '-999999999999999.999'],
        [1, 'created', 0, '2026-11-21 00:00:00', '2026-11-21 00:00:00'],
        [1, 'booked', 0, '1970-01-01', '1970-01-01'],
        [1, 'refunded', 0, 'false', 'false'],
        [1, 'currency', 0, 'USD', 'USD'],
      ]);
    } finally {
      db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
