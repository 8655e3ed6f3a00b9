import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { Feed } from '../../functions/core/connections/feed.js';
import { ConfigurationError } from '../../functions/core/errors.js';

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

/**
 * `--report ID` and `--connection NAME`, both repeatable: the feeds (report, connection) of the reports named (none:
 * every report) over the connections named (none: every one of theirs). A connection no selected report uses is
 * refused with the ones they do use.
 */
export function selectFeeds(
  catalog: ReportCatalog,
  ids: string | readonly string[] | undefined,
  connections: string | readonly string[] | undefined,
): Feed[] {
  const reports = selectReports(catalog, ids);
  const asked = connections === undefined ? [] : typeof connections === 'string' ? [connections] : connections;
  const feeds = reports.flatMap((r) => catalog.feeds().filter((f) => f.reportId === r.id));
  if (asked.length === 0) return feeds;
  const used = [...new Set(feeds.map((f) => f.connection))];
  const unknown = asked.filter((c) => !used.includes(c));
  if (unknown.length) {
    throw new ConfigurationError(
      `--connection ${unknown.map((c) => `"${c}"`).join(', ')}: no report ${ids === undefined || asked.length === 0 ? '' : 'named '}is fetched over ${unknown.length === 1 ? 'it' : 'them'}; ` +
        `the connections are ${used.join(', ')}.`,
    );
  }
  return feeds.filter((f) => asked.includes(f.connection));
}

/** A repeatable option's values as commander collects them (`.option('--report <id>', …, collect, [])`). */
export const collect = (value: string, previous: readonly string[] = []): string[] => [...previous, value];
