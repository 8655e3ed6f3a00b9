import { createHash } from 'node:crypto';
import type { ColumnDefinition } from './report-definition.js';
import { athenaType } from './table-schema.js';

/**
 * What a load recorded of the definition it parsed with (the manifest's `definition`): a short fingerprint, and
 * the columns themselves, so a reader can tell what changed since (change.ts) without the old
 * definition file.
 *
 * The fingerprint covers, per column, exactly what decides the table file a reader sees:
 *  - name: Athena reads Parquet columns by name, so a renamed column is another column;
 *  - type (as Athena spells it): the Parquet type written and the type Athena reads it as;
 *  - pattern: it decides the values (which date a text becomes, which rows load and which are rejected).
 * It leaves out, on purpose:
 *  - header: it decides whether a raw file parses at all, not what the file written from it holds. A header
 *    renamed by the provider (the column keeps its name) leaves every older table file exactly what the new
 *    definition would write, and their raw files would not parse under the new header anyway;
 *  - nullable: Parquet's REQUIRED and OPTIONAL read alike in Athena and DuckDB, and a file loaded while a column
 *    was required holds no empty value there, which is also a valid file of the nullable column;
 *  - column order: the CSV header's order, which readers by name never see (the columns are sorted by name).
 * Header and nullable are still recorded in `columns`: the header is how a rename is told from an added column.
 */

/** One column as recorded: CSV order, with what the fingerprint leaves out. */
export interface RecordedColumn {
  header: string;
  name: string;
  /** As Athena spells it: string, bigint, decimal(18,3), timestamp, date. */
  type: string;
  pattern?: string;
  nullable: boolean;
}

export interface DefinitionRecord {
  /** 12 hex digits of SHA-256 over the columns' names, types and patterns, sorted by name. */
  fingerprint: string;
  columns: RecordedColumn[];
}

const FINGERPRINT_HEX_DIGITS = 12;

export const recordColumn = (c: ColumnDefinition): RecordedColumn => ({
  header: c.header,
  name: c.name,
  type: athenaType(c),
  ...(c.pattern !== undefined ? { pattern: c.pattern } : {}),
  nullable: c.nullable,
});

/** The fingerprint of recorded columns: stable across column order, headers and nullability (see above). */
export function fingerprintOf(columns: readonly Pick<RecordedColumn, 'name' | 'type' | 'pattern'>[]): string {
  const canonical = [...columns]
    .map((c) => [c.name, c.type, c.pattern ?? null])
    // Names are distinct (the definition refuses a repeated one), so no two compare equal.
    .sort((a, b) =>
      // Stryker disable next-line EqualityOperator: with distinct names, <= orders exactly as <
      ((a[0] as string) < (b[0] as string) ? -1 : 1));
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, FINGERPRINT_HEX_DIGITS);
}

/** What a manifest records of the definition a load parsed with. */
export function definitionRecord(columns: readonly ColumnDefinition[]): DefinitionRecord {
  const recorded = columns.map(recordColumn);
  return { fingerprint: fingerprintOf(recorded), columns: recorded };
}
