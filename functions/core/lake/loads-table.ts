import { CONNECTION_KEY, PARTITION_KEY } from '../definitions/table-schema.js';
import { PREFIX } from './s3-keys.js';

/**
 * The `loads` table: the load manifests (load-manifest.ts), one line of JSON per load attempt under
 * manifests/<report>/connection=<name>/dt=<date>/, read as a table, so an analyst can ask which providers a day's
 * numbers include and join that to any result. In AWS a Glue table with the OpenX JSON SerDe over manifests/ of the
 * curated bucket, partitions projected (lib/constructs/catalog.ts); locally a DuckDB view over the same files
 * (local/duckdb/duckdb-views.ts, createLoadsView). Both show these columns, so a saved query reads alike on either.
 *
 * Only what coverage needs is declared; the SerDe and read_json ignore the manifest's other fields. `window` and
 * `rows` are keywords in some SQL: quote them ("window"."start").
 */

export const LOADS_TABLE = 'loads';

/** The report partition: manifests/<report>/ has no `report=` in its path, so the projection and the view name it. */
export const REPORT_KEY = 'report';

/** The data columns, in order, as Athena (Glue) types and as DuckDB types that read the same JSON. */
export const LOADS_COLUMNS = [
  { name: 'outcome', athena: 'string', duckdb: 'VARCHAR', json: 'outcome' },
  { name: 'window', athena: 'struct<start:string,end:string,timezone:string>', duckdb: 'STRUCT("start" VARCHAR, "end" VARCHAR, timezone VARCHAR)', json: 'window' },
  { name: 'rows', athena: 'struct<read:bigint,written:bigint,rejected:bigint>', duckdb: 'STRUCT("read" BIGINT, written BIGINT, rejected BIGINT)', json: 'rows' },
  { name: 'error', athena: 'struct<code:string,message:string>', duckdb: 'STRUCT(code VARCHAR, message VARCHAR)', json: 'error' },
  { name: 'finishedat', athena: 'string', duckdb: 'VARCHAR', json: 'finishedAt' },
] as const;

/** The partition keys, in order: report, then the feed's connection and the window date as in every table. */
export const LOADS_PARTITION_KEYS = [REPORT_KEY, CONNECTION_KEY, PARTITION_KEY] as const;

/** The Glue table's `storage.location.template` inside the curated bucket. */
export const loadsLocationTemplate = (): string => `${PREFIX.manifests}\${${REPORT_KEY}}/${CONNECTION_KEY}=\${${CONNECTION_KEY}}/${PARTITION_KEY}=\${${PARTITION_KEY}}/`;

/** Every manifest of every feed: `manifests/*\/connection=*\/dt=*\/*.json`, plus a suffix (s3rver's on-disk name). */
export const loadsFilesGlob = (suffix = ''): string => `${PREFIX.manifests}*/${CONNECTION_KEY}=*/${PARTITION_KEY}=*/*.json${suffix}`;

/** The outcomes that count as a feed having loaded a window: the data is in (a PDF is kept raw, as far as it goes). */
export const LOADED_OUTCOMES = ['loaded', 'not-parsed'] as const;
