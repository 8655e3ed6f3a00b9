import type { RecordedColumn } from './fingerprint.js';
import { columnSchema } from './report-definition.js';
import { parquetElement, parquetTypeLabel } from './table-schema.js';

/**
 * What a change of a report's columns does to the partitions written before it, as Athena reads them
 * (docs/add-a-report.md, "Changing a report"). Athena reads a Parquet table's columns by name (the default for
 * Parquet; AWS's "Handle schema updates" table), so, for a file written under the old columns:
 *
 *  - added column: the file does not have it; Athena reads NULL. Nothing to do: the old raw files do not have it
 *    either (the header check is exact), so a reparse could not fill it;
 *  - removed column: the file still holds it; Athena ignores columns the table does not have. Nothing to do;
 *  - renamed column (same CSV header, new name): the new name reads NULL in the file and the values sit unseen
 *    under the old name. Stale: a reparse of the raw file (whose header still matches) writes the new name;
 *  - pattern changed: the file reads, but its values were read from the text with the old pattern (another date,
 *    or rows rejected that would load now). Stale;
 *  - type changed: the file's Parquet type no longer matches the table's. AWS documents only a few widenings as
 *    readable (int to bigint, float to double: "Change a column data type"), none of which this pipeline writes:
 *    it writes INT64 for bigint, decimal and timestamp, INT32 for date and BYTE_ARRAY for text. Every query that
 *    reads the column in such a partition fails (HIVE_BAD_DATA: "… incompatible with type … defined in table
 *    schema"). Unreadable until a reparse rewrites the file.
 * Order, headers alone and nullability do not change what a reader sees (fingerprint.ts).
 */

/** From least to most serious: what the partitions written under the old columns are now. */
export type ChangeVerdict = 'same' | 'compatible' | 'stale' | 'unreadable';

export type ColumnChange =
  | { change: 'added'; column: string; type: string; nullable: boolean }
  | { change: 'removed'; column: string; type: string }
  | { change: 'renamed'; from: string; to: string; header: string; fromType: string; toType: string }
  | { change: 'retyped'; column: string; from: string; to: string; fromParquet: string; toParquet: string }
  | { change: 'pattern'; column: string; from?: string; to?: string };

export interface ClassifiedChange {
  change: ColumnChange;
  verdict: Exclude<ChangeVerdict, 'same'>;
  /** What it does to the older partitions, in a sentence a notice can quote. */
  effect: string;
}

export interface DefinitionChange {
  /** The worst verdict of the changes ("same" when there are none). */
  verdict: ChangeVerdict;
  changes: ClassifiedChange[];
}

const RANK: Record<ChangeVerdict, number> = { same: 0, compatible: 1, stale: 2, unreadable: 3 };
export const worstVerdict = (verdicts: Iterable<ChangeVerdict>): ChangeVerdict => {
  let worst: ChangeVerdict = 'same';
  // Stryker disable next-line EqualityOperator: each verdict has its own rank, so >= replaces worst only with itself
  for (const v of verdicts) if (RANK[v] > RANK[worst]) worst = v;
  return worst;
};

/**
 * The Parquet type this pipeline writes for an Athena type ("decimal(18,3)" -> "INT64 DECIMAL(18,3)"), from the
 * one mapping there is (table-schema.ts); the type itself when it is not one a definition allows.
 */
export function parquetTypeFor(type: string): string {
  // A pattern only to satisfy the validator: the Parquet type does not depend on it.
  const pattern = (type === 'timestamp' ? 'yyyy-MM-dd HH:mm:ss' : type === 'date' ? 'yyyy-MM-dd' : undefined);
  const column = columnSchema.safeParse({ header: 'x', name: 'x', type, ...(pattern ? { pattern } : {}) });
  return column.success ? parquetTypeLabel(parquetElement(column.data)) : type;
}

function classify(change: ColumnChange): ClassifiedChange {
  switch (change.change) {
    case 'added':
      return {
        change,
        verdict: 'compatible',
        effect: change.nullable
          ? `column ${change.column} was added: it reads NULL there (their raw files do not have it); nothing to do`
          : `column ${change.column} was added: it reads NULL there although it is not nullable, since their raw files do not have it ` +
            '(a reparse cannot fill it; a backfill re-fetches them, if the gateway now sends it for those dates)',
      };
    case 'removed':
      return { change, verdict: 'compatible', effect: `column ${change.column} was removed: their files keep its values, which no query sees; nothing to do` };
    case 'renamed':
      return {
        change,
        verdict: 'stale',
        effect: `column ${change.from} was renamed ${change.to}: ${change.to} reads NULL there (Athena reads Parquet columns by name) and the values sit unseen under ${change.from}`,
      };
    case 'pattern':
      return {
        change,
        verdict: 'stale',
        effect: `the pattern of ${change.column} changed from ${JSON.stringify(change.from ?? '')} to ${JSON.stringify(change.to ?? '')}: their values were read from the text with the old one`,
      };
    case 'retyped':
      return {
        change,
        verdict: 'unreadable',
        effect:
          `column ${change.column} was retyped ${change.from} -> ${change.to}: their files hold ${change.fromParquet} where the table now says ${change.to} ` +
          `(${change.toParquet}), which Athena does not read as another type, so every query reading ${change.column} there fails (HIVE_BAD_DATA)`,
      };
  }
}

/**
 * What changed from `recorded` (the columns a partition was written with) to `current`, and what each change does
 * to that partition. Columns match by name; a column of `current` whose name is new but whose CSV header belonged
 * to a column no longer there is that column renamed.
 */
export function classifyChange(recorded: readonly RecordedColumn[], current: readonly RecordedColumn[]): DefinitionChange {
  const oldByName = new Map(recorded.map((c) => [c.name, c]));
  const newNames = new Set(current.map((c) => c.name));
  const gone = recorded.filter((c) => !newNames.has(c.name));
  const renamedFrom = new Set<string>();
  const changes: ColumnChange[] = [];
  for (const c of current) {
    const old = oldByName.get(c.name);
    if (!old) {
      const before = gone.find((g) => g.header === c.header && !renamedFrom.has(g.name));
      if (before) {
        renamedFrom.add(before.name);
        changes.push({ change: 'renamed', from: before.name, to: c.name, header: c.header, fromType: before.type, toType: c.type });
      } else {
        changes.push({ change: 'added', column: c.name, type: c.type, nullable: c.nullable });
      }
      continue;
    }
    if (old.type !== c.type) {
      changes.push({ change: 'retyped', column: c.name, from: old.type, to: c.type, fromParquet: parquetTypeFor(old.type), toParquet: parquetTypeFor(c.type) });
    } else if ((old.pattern ?? '') !== (c.pattern ?? '')) {
      changes.push({ change: 'pattern', column: c.name, ...(old.pattern ? { from: old.pattern } : {}), ...(c.pattern ? { to: c.pattern } : {}) });
    }
  }
  for (const g of gone) if (!renamedFrom.has(g.name)) changes.push({ change: 'removed', column: g.name, type: g.type });
  const classified = changes.map(classify);
  return { verdict: worstVerdict(classified.map((c) => c.verdict)), changes: classified };
}
