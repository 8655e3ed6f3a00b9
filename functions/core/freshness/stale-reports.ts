import type { FeedKey } from '../connections/feed.js';
import type { LoadOutcome } from '../lake/load-manifest.js';
import { formatLocalDate, parseWindowSize, wallClockIn } from '../time/window.js';

/**
 * Which reports are late: the rule the no-fresh-data alarms stand on (docs/operations.md). A report is late when no
 * load of it completed within its window plus the environment's freshnessGraceHours: a daily report (P1D) with 6 h of
 * grace is late 30 h after its newest completed load. Completed loads, not rows: a header-only day and a PDF report
 * write none and are not late; a failed load completes nothing and is.
 *
 * The check reads the loads from the manifests the parse function writes (functions/core/lake/load-manifest.ts), the
 * record of every load attempt, and not from a metric: a per-report metric written at every load would cost a report
 * loaded every hour a whole custom metric, $0.30 a month (docs/deploy.md, "What it costs").
 */

/** A feed (a report over one connection) as the freshness check sees it: each feed is late, or not, on its own. */
export interface WatchedReport extends FeedKey {
  /** ISO-8601 window, "P1D" or "PT6H". */
  readonly window: string;
  /** Windows a scheduled run re-fetches before the current one: their loads count as completed loads too. */
  readonly lookback: number;
  /** The report's IANA time zone: its windows, and so its manifests' `dt=` partitions, are dated in it. */
  readonly timeZone: string;
}

const HOUR_MS = 3_600_000;

const windowHours = (window: string): number => {
  const size = parseWindowSize(window);
  return size.unit === 'day' ? size.count * 24 : size.count;
};

/** How far back a report's newest completed load may lie: its window plus the grace, in whole hours. */
export function lookbackHours(window: string, graceHours: number): number {
  return windowHours(window) + graceHours;
}

/** The moment before which a report's newest completed load makes it late, at the check's time `now`. */
export function freshSince(report: WatchedReport, graceHours: number, now: Date): Date {
  return new Date(now.getTime() - lookbackHours(report.window, graceHours) * HOUR_MS);
}

/**
 * A day of slack on the earliest window below: a retried run or a slow queue completes a window hours after its
 * scheduled time, and a partition date read a day early costs one listed key, while one read late misses a load.
 */
const SLACK_MS = 24 * HOUR_MS;

/**
 * The earliest window date (`dt=`, the report's local date) a load completed after `since` can have: a run started
 * then fetches its last complete window and `lookback` windows before it. The listing starts there, so it reads a
 * few keys per report and not the report's whole history.
 */
export function earliestLoadedWindowDate(report: WatchedReport, since: Date): string {
  const earliest = new Date(since.getTime() - (report.lookback + 1) * windowHours(report.window) * HOUR_MS - SLACK_MS);
  return formatLocalDate(wallClockIn(earliest, report.timeZone));
}

/** A load attempt that completed: a CSV converted (zero rows included) or a PDF stored unparsed; never a failed one. */
export const isCompletedLoad = (outcome: LoadOutcome | undefined): boolean => outcome === 'loaded' || outcome === 'not-parsed';
