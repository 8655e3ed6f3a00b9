import type { SchemaElement } from 'hyparquet';
import type { ColumnDefinition, ColumnKind } from './report-definition.js';

/**
 * One schema, three uses (docs/architecture.md "One schema, three uses"): a report's column definitions alone generate
 *  1. the Parquet schema hyparquet-writer writes into every file's footer,
 *  2. the Glue table's columns (Athena type strings),
 *  3. the local DuckDB view over the same files.
 * Each use maps one column definition through one table keyed by its kind here (COLUMN_TYPES); no other file spells a type. A fourth reads
 * them back: the aggregates `reports status` runs through Athena to decode every column (valueAggregates).
 * test/unit/table-schema.test.ts writes a file of every type and proves the three agree.
 */

/**
 * The partition keys of every table, in order: the feed's connection, then the window date, as in
 * `tables/<report>/connection=acme/dt=2026-11-20/…`. Declared here only: the key layout (s3-keys.ts) names its
 * partition directories after them, the Glue table and the DuckDB view declare them, and a data column may not take
 * their names (athena-names.ts). Their type is a column kind, so the column table types them (duckdbType).
 */
export const PARTITION_KEYS = [
  { name: 'connection', type: 'string' },
  { name: 'dt', type: 'string' },
] as const satisfies ReadonlyArray<{ name: string; type: ColumnKind }>;
export const CONNECTION_KEY = PARTITION_KEYS[0].name;
/** The window date's partition key. */
export const PARTITION_KEY = PARTITION_KEYS[1].name;

type Decimal = { precision: number; scale: number };

/**
 * Per kind, its types in the three uses: the Athena (Glue) type, the DuckDB type that reads what the Parquet
 * schema writes and matches the Athena type, and the Parquet schema element (physical type, logical and
 * converted types, set explicitly as docs/architecture.md "Parquet" lists them; docs/parquet.md has the
 * compatibility table). `d` is the column's precision and scale (decimalOf: only decimal reads it).
 */
const COLUMN_TYPES = {
  string: { athena: () => 'string', duckdb: () => 'VARCHAR', parquet: () => ({ type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } }) },
  bigint: { athena: () => 'bigint', duckdb: () => 'BIGINT', parquet: () => ({ type: 'INT64' }) },
  decimal: {
    athena: (d) => `decimal(${d().precision},${d().scale})`,
    duckdb: (d) => `DECIMAL(${d().precision},${d().scale})`,
    // INT64-backed: the definition validator caps precision at 18, the most digits an int64 holds.
    parquet: (d) => {
      const { precision, scale } = d();
      return { type: 'INT64', converted_type: 'DECIMAL', precision, scale, logical_type: { type: 'DECIMAL', precision, scale } };
    },
  },
  timestamp: {
    athena: () => 'timestamp',
    // TIMESTAMP (without time zone): the gateway's wall clock, as Parquet's isAdjustedToUTC=false says.
    duckdb: () => 'TIMESTAMP',
    // Both annotations, as LogicalTypes.md asks of writers: readers that know only converted types
    // (older parquet-java, Hive, Redshift Spectrum) need TIMESTAMP_MILLIS to see a timestamp at all.
    // Readers that know logical types take isAdjustedToUTC=false from it: the gateway's wall clock.
    parquet: () => ({ type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' } }),
  },
  date: { athena: () => 'date', duckdb: () => 'DATE', parquet: () => ({ type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } }) },
  // BOOLEAN is a physical type with no annotation: every engine reads it as its boolean.
  boolean: { athena: () => 'boolean', duckdb: () => 'BOOLEAN', parquet: () => ({ type: 'BOOLEAN' }) },
} satisfies Record<
  ColumnKind,
  {
    athena: (d: () => Decimal) => string;
    duckdb: (d: () => Decimal) => string;
    parquet: (d: () => Decimal) => Omit<SchemaElement, 'name' | 'repetition_type'>;
  }
>;

/** The Athena (Glue) type of a column: string, bigint, decimal(p,s), timestamp, date, boolean. */
export function athenaType(column: ColumnDefinition): string {
  return COLUMN_TYPES[column.kind].athena(() => decimalOf(column));
}

/** The DuckDB type that reads what the Parquet schema writes and matches the Athena type. */
export function duckdbType(column: Pick<ColumnDefinition, 'kind' | 'precision' | 'scale'>): string {
  return COLUMN_TYPES[column.kind].duckdb(() => decimalOf(column));
}

/** A partition key's DuckDB type, by the same table as a column's. */
export const partitionKeyDuckdbType = (key: (typeof PARTITION_KEYS)[number]): string => duckdbType({ kind: key.type, precision: undefined, scale: undefined });

/** The Parquet schema element of a column (COLUMN_TYPES), required unless the column is nullable. */
export function parquetElement(column: ColumnDefinition): SchemaElement {
  const repetition_type = column.nullable ? 'OPTIONAL' : 'REQUIRED';
  return { name: column.name, repetition_type, ...COLUMN_TYPES[column.kind].parquet(() => decimalOf(column)) };
}

/**
 * A Parquet column's type as messages say it, in the words of the footer (and of DuckDB's parquet_schema and
 * Athena's errors): "INT64", "BYTE_ARRAY UTF8", "INT64 DECIMAL(18,3)", "INT32 DATE".
 */
export function parquetTypeLabel(e: { type?: string | null; converted_type?: string | null; precision?: number | bigint | null; scale?: number | bigint | null }): string {
  const annotation = e.converted_type === 'DECIMAL' ? `DECIMAL(${e.precision},${e.scale})` : (e.converted_type ?? '');
  return [e.type ?? '?', annotation].filter(Boolean).join(' ');
}

/** The whole Parquet schema: a root element, then one flat leaf per column in definition order. */
export function parquetSchema(columns: readonly ColumnDefinition[]): SchemaElement[] {
  return [{ name: 'root', num_children: columns.length }, ...columns.map(parquetElement)];
}

/** The Glue table's columns, in file order. Partition keys are separate (PARTITION_KEYS). */
export function glueColumns(columns: readonly ColumnDefinition[]): Array<{ name: string; type: string; comment?: string }> {
  return columns.map((c) => ({ name: c.name, type: athenaType(c), ...(c.description ? { comment: c.description } : {}) }));
}

/** A double-quoted identifier and a single-quoted string literal, as Trino (Athena) and DuckDB both read them. */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * Files of one table written under other columns than the current definition's (a lake whose definition changed),
 * and how the view reads them as Athena would: Athena reads Parquet columns by name, so a column a file lacks
 * reads NULL, and a column whose Parquet type differs from the table's fails every query that reads it in that
 * file (change.ts).
 */
export interface ViewEvolution {
  /** Columns of the definition that no file has yet: NULL everywhere. */
  absent: ReadonlySet<string>;
  /** Per column, the files whose Parquet type is not the definition's, and what a query reading it there fails with. */
  unreadable: ReadonlyMap<string, { files: readonly string[]; message: string }>;
}

/** The column read_parquet names each row's file in, when the view needs it: no definition's column starts with "_". */
const FILE_COLUMN = '_paynet_file';

/**
 * The DuckDB view that plays the Glue table locally: every column cast to the type Athena sees, so a
 * query that works here works in Athena. `glob` is the table's files, e.g. `.lake/tables/transactions/*\/*.parquet`,
 * laid out as `dt=<date>/` directories (hive partitioning gives the dt column). With `evolution` (files written
 * under other columns), the files are read by name (union_by_name: a missing column is NULL, as in Athena) and a
 * column of a file whose type differs raises `error()` for its rows only, so, as in Athena, a query fails only
 * when it reads that column in such a file (a count, or a filter on other partitions, still runs).
 */
export function duckdbViewSql(viewName: string, glob: string, columns: readonly ColumnDefinition[], evolution?: ViewEvolution): string {
  const read = (c: ColumnDefinition) => {
    const cast = `CAST(${ident(c.name)} AS ${duckdbType(c)})`;
    if (evolution?.absent.has(c.name)) return `CAST(NULL AS ${duckdbType(c)})`;
    const bad = evolution?.unreadable.get(c.name);
    if (!bad) return cast;
    return `CASE WHEN ${ident(FILE_COLUMN)} IN (${bad.files.map(literal).join(', ')}) THEN error(${literal(bad.message)}) ELSE ${cast} END`;
  };
  const select = [
    ...columns.map((c) => `${read(c)} AS ${ident(c.name)}`),
    ...PARTITION_KEYS.map((k) => `CAST(${ident(k.name)} AS ${partitionKeyDuckdbType(k)}) AS ${ident(k.name)}`),
  ];
  const options = evolution ? `, union_by_name = true, filename = ${literal(FILE_COLUMN)}` : '';
  return (
    `CREATE OR REPLACE VIEW ${ident(viewName)} AS SELECT\n  ${select.join(',\n  ')}\n` +
    `FROM read_parquet(${literal(glob)}, hive_partitioning = true${options})`
  );
}

/** What an aggregate of valueAggregates computes: `longest` is the longest text, in characters; `trues` counts true values. */
export type ValueAggregateKind = 'min' | 'max' | 'sum' | 'longest' | 'trues';

/**
 * Aggregates over one column whose results depend on every value of it, for a query that must decode the
 * column and not only read the files' footers (`reports status`, local/cli/status.ts). A `count(*)` is
 * answered from the row counts in the footers, so a file whose column types disagree with the table still
 * counts; Athena checks a column's Parquet type against the table's when it reads the column, so each
 * column appears in at least one of these. Trino aggregates the values it decodes: it uses the footers'
 * min/max statistics only to skip row groups for a WHERE on the column (this query filters on the
 * partition key alone). Valid in Trino (Athena) and DuckDB alike; identifiers double-quoted.
 *  - string: the longest value (`max(length(...))`), not min/max, which would print free text;
 *  - bigint, timestamp, date: min and max (the range of the window's timestamps is what an operator checks);
 *  - decimal: the sum (exact: Trino sums decimal(p,s) as decimal(38,s));
 *  - boolean: how many are true (`count_if`, in Trino and DuckDB; Trino has no min/max over boolean).
 * One entry per kind a definition allows (report-definition.ts): the table fails to compile when one is added.
 */
const VALUE_AGGREGATES = {
  string: (c) => [{ kind: 'longest', sql: `max(length(${c}))` }],
  decimal: (c) => [{ kind: 'sum', sql: `sum(${c})` }],
  bigint: (c) => minAndMax(c),
  timestamp: (c) => minAndMax(c),
  date: (c) => minAndMax(c),
  boolean: (c) => [{ kind: 'trues', sql: `count_if(${c})` }],
} satisfies Record<ColumnKind, (quoted: string) => Array<{ kind: ValueAggregateKind; sql: string }>>;

function minAndMax(c: string): Array<{ kind: ValueAggregateKind; sql: string }> {
  return [
    { kind: 'min', sql: `min(${c})` },
    { kind: 'max', sql: `max(${c})` },
  ];
}

export function valueAggregates(column: ColumnDefinition): Array<{ kind: ValueAggregateKind; sql: string }> {
  return VALUE_AGGREGATES[column.kind](ident(column.name));
}

function decimalOf(column: Pick<ColumnDefinition, 'precision' | 'scale'>): Decimal {
  if (column.precision === undefined || column.scale === undefined) {
    throw new Error('a decimal column without precision and scale: parse it with parseReportDefinition first');
  }
  return { precision: column.precision, scale: column.scale };
}
