import { ConfigurationError } from '../errors.js';
import { formatLocalDate, formatLocalDateTime, parseLocalDateTime, type ReportWindow } from '../time/window.js';

/**
 * Which `dt` partitions Athena sees. Each Glue table projects `dt` (the window start's wall-clock date in the
 * report's zone, s3-keys.ts) as a date from a configured start to NOW+1DAYS; Athena never looks at a date outside
 * that range, so a file written there loads, reports success, and never appears in a query. Athena evaluates NOW in
 * UTC: a window east of UTC (up to UTC+14) starts on a local date up to one day after today in UTC, hence the day
 * of margin at the end. `run`, `backfill` and the fetch function refuse a window whose dt falls outside.
 */

/** The projection's first date unless an environment says otherwise (athena.projectionStart). */
export const DEFAULT_PROJECTION_START = '2020-01-01';

/** The format of `dt` values and of the range's fixed start (Java DateTimeFormatter pattern, as Athena reads it). */
export const DT_FORMAT = 'yyyy-MM-dd';

/** Days after today in UTC that the range ends: the most any zone's local date runs ahead of UTC's (UTC+14). */
export const PROJECTION_DAYS_AHEAD = 1;

/** The Glue table's projection.dt.range: "<start>,NOW+1DAYS". */
export const projectionRange = (start: string): string => `${start},NOW+${PROJECTION_DAYS_AHEAD}DAYS`;

export function isProjectionDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  try {
    parseLocalDateTime(text);
    return true;
  } catch {
    return false;
  }
}

/** The last dt the projection enumerates at `now`: today in UTC plus PROJECTION_DAYS_AHEAD. */
export function lastProjectedDate(now: Date): string {
  return new Date(now.getTime() + PROJECTION_DAYS_AHEAD * 86_400_000).toISOString().slice(0, 10);
}

/** Where a projection start was set, for the message that names it. */
export interface ProjectionSetting {
  start: string;
  /** E.g. `athena.projectionStart of environment "production" (config/environments/production.json)`. */
  source: string;
}

/**
 * Refuses, before any work, windows whose dt Athena would not show: before the projection's start, or (only with
 * --allow-incomplete, which lets a future window through) after today in UTC plus one day. One line, naming the setting.
 */
export function refuseUnprojectedWindows(reportId: string, windows: readonly ReportWindow[], setting: ProjectionSetting, now: Date): void {
  // Callers list windows newest first or oldest first: name the earliest either way.
  const byStart = [...windows].sort((a, b) => (formatLocalDateTime(a.start) < formatLocalDateTime(b.start) ? -1 : 1));
  const before = byStart.filter((w) => formatLocalDate(w.start) < setting.start);
  if (before.length) {
    const first = formatLocalDate(before[0]!.start);
    throw new ConfigurationError(
      `${plural(before.length, first)} of report "${reportId}" ${before.length === 1 ? 'is' : 'are'} before ${setting.start}, the first date ` +
        `Athena's partition projection shows (${setting.source}): the rows would load and never appear in a query. ` +
        `Start the range at ${setting.start}, or set that start earlier and deploy.`,
    );
  }
  const last = lastProjectedDate(now);
  const after = byStart.filter((w) => formatLocalDate(w.start) > last);
  if (after.length) {
    const first = formatLocalDateTime(after[0]!.start);
    throw new ConfigurationError(
      `${plural(after.length, first)} of report "${reportId}" ${after.length === 1 ? 'starts' : 'start'} after ${last}, the last date ` +
        `Athena's partition projection shows now (today in UTC plus ${PROJECTION_DAYS_AHEAD} day): the rows would stay invisible until then. ` +
        'End the range (--to) before it; a window in the future has nothing to report yet.',
    );
  }
}

const plural = (n: number, first: string) => (n === 1 ? `The window ${first}` : `${n} windows, from ${first},`);
