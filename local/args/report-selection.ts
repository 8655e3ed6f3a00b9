import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';

/**
 * `--report ID` of `run`, `backfill`, `reparse` and `query`: it may repeat, and none means every report of the
 * catalog. The reports come in catalog order, each once, whatever order or repeats the flags had; an unknown id is
 * refused with the ids the catalog has.
 */
export function selectReports(catalog: ReportCatalog, ids: string | readonly string[] | undefined): ReportDefinition[] {
  const asked = ids === undefined ? [] : typeof ids === 'string' ? [ids] : ids;
  if (asked.length === 0) return [...catalog.reports];
  for (const id of asked) catalog.get(id);
  return catalog.reports.filter((r) => asked.includes(r.id));
}

/** A repeatable option's values as commander collects them (`.option('--report <id>', …, collect, [])`). */
export const collect = (value: string, previous: readonly string[] = []): string[] => [...previous, value];
