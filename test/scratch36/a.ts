import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { columnSchema } from '../../functions/core/definitions/report-definition.js';
import { RowGroupEncoder } from '../../functions/core/parquet/encoder.js';
import { RowBatchBuilder } from '../../functions/core/parquet/row-group-buffer.js';
import { readParquetFooter } from '../helpers/parquet-footer.js';

const columns = [
  { header: 'a', name: 'id', type: 'bigint' },
  { header: 'b', name: 'amount', type: 'decimal(12,2)', nullable: true },
  { header: 'c', name: 'at', type: 'timestamp', pattern: 'yyyy-MM-dd HH:mm:ss' },
  { header: 'd', name: 'day', type: 'date', pattern: 'yyyy-MM-dd', nullable: true },
  { header: 'e', name: 'ok', type: 'boolean', nullable: true },
  { header: 'f', name: 'cur', type: 'string', nullable: true },
].map((c) => columnSchema.parse(c));
const parts: Uint8Array[] = [];
const enc = new RowGroupEncoder({ columns, pageSize: 64 }, (b) => { parts.push(b); });
const b = new RowBatchBuilder(columns);
const rows = [
  ['1', '12.34', '2026-11-20 23:59:59', '2026-11-20', 'true', 'EUR'],
  ['9007199254740993', '', '2026-11-20 23:59:59', '', '', ''],
  ['-5', '-0.01', '2000-02-29 00:00:00', '2000-02-29', 'false', 'USD'],
];
for (const r of rows) console.log(b.add(r));
enc.add(b.take(true));
await enc.writeRowGroup();
await enc.finish();
const file = Buffer.concat(parts);
const ab = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
console.log(await parquetReadObjects({ file: ab }));
const md = parquetMetadata(ab);
console.dir(md.row_groups[0].columns.map(c => c.meta_data), { depth: 5 });
console.dir(readParquetFooter(file), { depth: 6 });
