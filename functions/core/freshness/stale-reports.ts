import { parseWindowSize } from '../time/window.js';

/**
 * Which reports are late: the rule the no-fresh-data alarms stand on (docs/operations.md). A report is late when no
 * load of it completed within its window plus the environment's freshnessGraceHours: a daily report (P1D) with 6 h of
 * grace is late 30 h after its newest completed load. Completed loads, not rows: a header-only day and a PDF report
 * write none and are not late; a failed load completes nothing and is.
 */

/** A report as the freshness check sees it. */
export interface WatchedReport {
  readonly id: string;
  readonly connection: string;
  /** ISO-8601 window, "P1D" or "PT6H". */
  readonly window: string;
}

/** How far back a report's newest completed load may lie: its window plus the grace, in whole hours. */
export function lookbackHours(window: string, graceHours: number): number {
  const size = parseWindowSize(window);
  return (size.unit === 'day' ? size.count * 24 : size.count) + graceHours;
}

/** The reports sharing one look-back, so one query (one StartTime) covers them all. */
export interface LookbackGroup {
  readonly hours: number;
  readonly reports: readonly WatchedReport[];
}

/** The reports grouped by look-back, shortest first: a catalog holds few distinct windows, so few queries. */
export function groupByLookback(reports: readonly WatchedReport[], graceHours: number): LookbackGroup[] {
  const groups = new Map<number, WatchedReport[]>();
  for (const report of reports) {
    const hours = lookbackHours(report.window, graceHours);
    groups.set(hours, [...(groups.get(hours) ?? []), report]);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([hours, members]) => ({ hours, reports: members }));
}

/** The reports with no completed load in their look-back (`loads`: completed loads by report id within it). */
export function staleReports(reports: readonly WatchedReport[], loads: ReadonlyMap<string, number>): WatchedReport[] {
  return reports.filter((r) => (loads.get(r.id) ?? 0) < 1);
}
