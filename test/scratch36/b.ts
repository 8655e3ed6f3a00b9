import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { columnSchema } from '../../functions/core/definitions/report-definition.js';
import { RowGroupEncoder } from '../../functions/core/parquet/encoder.js';
import { RowBatchBuilder } from '../../functions/core/parquet/row-group-buffer.js';
import { readParquetFooter } from '../helpers/parquet-footer.js';

const columns = [
  { header: 'a', name: 'id', type: 'bigint' },
  { header: 'b', name: 'amount', type: 'decimal(12,2)', nullable: true },
  { header: 'f', name: 'cur', type: 'string' },
  { header: 'g', name: 'memo', type: 'string', nullable: true },
  { header: 'e', name: 'ok', type: 'boolean', nullable: true },
  { header: 'd', name: 'day', type: 'date', pattern: 'yyyy-MM-dd', nullable: true },
].map((c) => columnSchema.parse(c));
const parts: Uint8Array[] = [];
const enc = new RowGroupEncoder({ columns, pageSize: 32 }, (b) => { parts.push(b); });
const b = new RowBatchBuilder(columns);
for (let i = 0; i < 20; i++) b.add([String(1000 + i), i % 3 === 0 ? '' : `${i}.05`, i % 4 ? 'EUR' : 'USD', i % 5 ? `memo-${String(i).padStart(5,'0')}` : '', i % 2 ? 'true' : '', '2026-11-20']);
enc.add(b.take());
await enc.writeRowGroup();
await enc.finish();
const file = Buffer.concat(parts);
const f = readParquetFooter(file);
for (const c of f.rowGroups[0]!.columns) console.log(c.path, c.encodings, c.pages.map(p => `${p.type}:${p.encoding}:${p.numValues}`), c.statistics, c.encodingStats);
const ab = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
console.dir(parquetMetadata(ab).row_groups[0]!.columns.map(c => c.meta_data!.statistics), {depth: 4});
