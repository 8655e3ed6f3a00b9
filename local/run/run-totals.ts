import { showCount as count } from '../args/display.js';
import type { WindowOutcome } from '../pipeline/pipeline.js';
import type { RunPlan } from './run-plan.js';

/**
 * The closing lines of a run over several reports, before its data checks and its "Done:" line: what failed first
 * (a hundred table rows above, a failed window is easy to miss), then each connection's totals. A run of one report
 * has neither: its table is short and its failures are right above.
 */

/** A saved query that failed or was refused, as the closing lines name it. */
export interface QueryFailure {
  report: string;
  name: string;
  /** "Not run: …" or "The query failed on DuckDB: …", as printed under the query. */
  reason: string;
}

/** Windows named per failure at most; the table above shows every one. */
const NAMED_WINDOWS = 5;

/** The first line of a message: a DuckDB error carries its LINE pointer below, which the query's own output shows. */
const firstLine = (text: string) => text.split('\n')[0]!;

/**
 * Every failure once: windows that failed alike (a connection's gateway down fails each of its windows with the
 * same message) on one line with the windows it hit, then each failed saved query.
 */
export function failureLines(windows: ReadonlyArray<{ name: string; outcome: WindowOutcome }>, queries: readonly QueryFailure[]): string[] {
  if (!windows.length && !queries.length) return [];
  const alike = new Map<string, string[]>();
  for (const { name, outcome } of windows) {
    const what = `${outcome.error?.stage} failed: ${outcome.error?.code}: ${firstLine(outcome.error?.message ?? '')}`;
    alike.set(what, [...(alike.get(what) ?? []), name]);
  }
  const windowLines = [...alike].map(([what, names]) => {
    const shown = names.slice(0, NAMED_WINDOWS).join(', ') + (names.length > NAMED_WINDOWS ? ` and ${names.length - NAMED_WINDOWS} more` : '');
    return `  ${names.length === 1 ? shown : `${names.length} windows (${shown})`}: ${what}`;
  });
  const queryLines = queries.map((q) => `  saved query ${q.report}/${q.name}: ${firstLine(q.reason)}`);
  const what = [windows.length ? `${windows.length} window(s)` : '', queries.length ? `${queries.length} saved quer${queries.length === 1 ? 'y' : 'ies'}` : '']
    .filter(Boolean)
    .join(' and ');
  return [`Failed: ${what}:`, ...windowLines, ...queryLines, ''];
}

/** One row per connection: its reports and windows, how they ended, and the rows they wrote. */
export function connectionTotalLines(plan: Pick<RunPlan, 'connections' | 'items'>, outcomes: ReadonlyArray<WindowOutcome | undefined>): string[] {
  const width = Math.max('connection'.length, ...plan.connections.map((c) => c.length));
  const head = `  ${'connection'.padEnd(width)}  reports  windows   loaded   failed  not tried  rows written  rejected`;
  const rows = plan.connections.map((connection) => {
    const indexes = plan.items.flatMap((item, i) => (item.feed.connection === connection ? [i] : []));
    const ended = indexes.map((i) => outcomes[i]).filter((o): o is WindowOutcome => o !== undefined);
    const n = (status: WindowOutcome['status']) => ended.filter((o) => o.status === status).length;
    const reports = new Set(indexes.map((i) => plan.items[i]!.report.id)).size;
    const sum = (f: (o: WindowOutcome) => number) => ended.reduce((a, o) => a + f(o), 0);
    return (
      `  ${connection.padEnd(width)}  ${String(reports).padStart(7)}  ${String(indexes.length).padStart(7)}  ${String(n('loaded')).padStart(7)}  ` +
      `${String(n('failed')).padStart(7)}  ${String(indexes.length - ended.length).padStart(9)}  ${count(sum((o) => o.rowsWritten)).padStart(12)}  ${count(sum((o) => o.rowsRejected)).padStart(8)}`
    );
  });
  return ['Per connection:', head, ...rows, ''];
}
