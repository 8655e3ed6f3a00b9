import { readdir } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet';
import { definitionRecord, fingerprintOf, type DefinitionRecord, type RecordedColumn } from '../../functions/core/definitions/fingerprint.js';
import type { ColumnDefinition } from '../../functions/core/definitions/report-definition.js';
import { parseCuratedKey, parseRawKey, reportAreaPrefix } from '../../functions/core/lake/s3-keys.js';
import type { RecordedWindow } from '../../functions/core/lake/stale-windows.js';
import { formatLocalDateTime, type LocalDateTime } from '../../functions/core/time/window.js';
import { objectFileKeyPath, S3RVER_OBJECT_SUFFIX } from './s3rver-files.js';

/**
 * The local lake's windows as its files have them, besides what the manifests say (manifest-windows.ts). A load
 * stopped between its table file and its manifest (Ctrl-C, a killed process) leaves a table file no manifest
 * describes: the views read it, so the banner must count it too, or the banner, a query's error and `--list`
 * give three numbers. Such a file's definition is read from its own Parquet schema: the recorded definition
 * with the same column names and types (usually the one its neighbours were loaded under), else one made from
 * the footer.
 */

/** Window start ("2026-11-20T00:00:00") -> the object file, for every object of a report's `prefix` in a bucket on disk. */
async function filesByStart(bucketDir: string, prefix: string, parse: (key: string) => { start: LocalDateTime } | null): Promise<Map<string, string>> {
  const dir = join(bucketDir, prefix);
  const files = (await readdir(dir, { recursive: true }).catch(() => [] as string[])).filter((f) => f.endsWith(S3RVER_OBJECT_SUFFIX));
  const out = new Map<string, string>();
  for (const f of files) {
    const parsed = parse(`${prefix}${objectFileKeyPath(f).split(sep).join('/')}`);
    if (parsed) out.set(formatLocalDateTime(parsed.start), join(dir, f));
  }
  return out;
}

/** The table files of a report in the lake, by window start. */
export function tableFiles(lakeDir: string, curatedBucket: string, reportId: string): Promise<Map<string, string>> {
  return filesByStart(join(resolve(lakeDir), curatedBucket), reportAreaPrefix('tables', reportId), (key) => {
    const k = parseCuratedKey(key);
    return k?.area === 'tables' ? k : null;
  });
}

/** The window starts that have a raw file in the lake: what a reparse can rebuild. */
export async function rawStarts(lakeDir: string, rawBucket: string, reportId: string): Promise<Set<string>> {
  return new Set((await filesByStart(join(resolve(lakeDir), rawBucket), reportAreaPrefix('raw', reportId), parseRawKey)).keys());
}

/** A Parquet leaf's type as the definitions spell it (table-schema.ts COLUMN_TYPES, read back). */
function typeOf(e: { type?: string; converted_type?: string; precision?: number; scale?: number }): string {
  if (e.converted_type === 'DECIMAL') return `decimal(${e.precision},${e.scale})`;
  if (e.converted_type === 'TIMESTAMP_MILLIS') return 'timestamp';
  if (e.converted_type === 'DATE') return 'date';
  if (e.converted_type === 'UTF8') return 'string';
  return e.type === 'INT64' ? 'bigint' : e.type === 'BOOLEAN' ? 'boolean' : `${e.type ?? '?'}`;
}

const shape = (columns: ReadonlyArray<Pick<RecordedColumn, 'name' | 'type'>>) => JSON.stringify(columns.map((c) => [c.name, c.type]).sort());

async function footerRecord(file: string, known: readonly DefinitionRecord[]): Promise<DefinitionRecord | 'unrecorded'> {
  let schema;
  try {
    schema = (await parquetMetadataAsync(await asyncBufferFromFile(file))).schema;
  } catch {
    return 'unrecorded'; // cut short: the view's query reports it
  }
  const leaves = schema.slice(1).map((e) => ({ name: e.name, type: typeOf(e), nullable: e.repetition_type === 'OPTIONAL' }));
  const same = known.find((r) => shape(r.columns) === shape(leaves));
  if (same) return same;
  const alike = (name: string) => known.flatMap((r) => r.columns).find((c) => c.name === name);
  const columns = leaves.map((l) => {
    const c = alike(l.name);
    return { header: c?.header ?? l.name, name: l.name, type: l.type, ...(c?.pattern && c.type === l.type ? { pattern: c.pattern } : {}), nullable: l.nullable };
  });
  return { fingerprint: fingerprintOf(columns), columns };
}

/**
 * The manifests' windows made to agree with the table files on disk: a window whose manifest names a table file
 * that is gone has none, and a table file no manifest describes is added with the definition its footer shows.
 */
export async function withTableFiles(
  windows: readonly RecordedWindow[],
  files: ReadonlyMap<string, string>,
  current: readonly ColumnDefinition[],
  windowEnd: (start: string) => string,
): Promise<RecordedWindow[]> {
  const out: RecordedWindow[] = windows.map((w) => {
    if (!w.table || files.has(w.start)) return w;
    const { table: _gone, ...rest } = w;
    return rest;
  });
  const described = new Set(out.filter((w) => w.table).map((w) => w.start));
  const known = [definitionRecord(current), ...out.flatMap((w) => (w.table && w.table !== 'unrecorded' ? [w.table] : []))];
  for (const [start, file] of files) {
    if (described.has(start)) continue;
    const table = await footerRecord(file, known);
    const i = out.findIndex((w) => w.start === start);
    if (i >= 0) out[i] = { ...out[i]!, table };
    else out.push({ start, end: windowEnd(start), table });
  }
  return out;
}
