import { ConfigurationError } from '../core/errors.js';
import type { ReportDefinition } from '../core/definitions/report-definition.js';
import {
  formatLocalDateTime,
  lastCompleteWindow,
  parseWindowSize,
  windowsStartingIn,
  withLookback,
  type ReportWindow,
} from '../core/time/window.js';
import type { FetchRequest } from './fetch-event.js';

/**
 * Most windows one invocation fetches. One gateway call per window, each up to the client's total
 * time-out: a month of daily windows fits a 15-minute Lambda; longer backfills are split by the caller
 * (`reports backfill` does it), so no invocation runs into its time-out half done.
 */
export const MAX_WINDOWS_PER_INVOCATION = 31;

export interface WindowPlan {
  windows: ReportWindow[];
  /** The instant the scheduled window was computed from (scheduled runs only). */
  basis?: { scheduledTime: Date; fromInvocationTime: boolean };
}

/**
 * The windows a request covers, newest first.
 *
 * - Scheduled: the last complete window before the scheduled time, in the report's zone (pure in the time,
 *   so every retry of one firing fetches the same window), then its `lookback` predecessors, which are
 *   fetched again because transaction statuses change after the fact. Newest first: if the invocation dies
 *   part-way, the window nobody has fetched yet is the one that was done.
 * - Backfill: every window starting in [from, to), also newest first, no lookback (the range says it all).
 */
export function planWindows(request: FetchRequest, report: ReportDefinition, now: Date): WindowPlan {
  const size = parseWindowSize(report.window);
  if (request.kind === 'scheduled') {
    const scheduledTime = request.scheduledTime ?? now;
    const current = lastCompleteWindow(scheduledTime, report.schedule.timeZone, size);
    return {
      windows: withLookback(current, size, report.lookback).reverse(),
      basis: { scheduledTime, fromInvocationTime: request.scheduledTime === undefined },
    };
  }
  const windows = windowsStartingIn(report, { from: request.from, to: request.to });
  const range = `[${formatLocalDateTime(request.from)}, ${formatLocalDateTime(request.to)})`;
  if (windows.length === 0) {
    throw new ConfigurationError(`Backfill of report "${report.id}": ${range} holds no ${report.window} window: "from" must be before "to" (to is exclusive).`);
  }
  if (windows.length > MAX_WINDOWS_PER_INVOCATION) {
    throw new ConfigurationError(
      `Backfill of report "${report.id}": ${range} holds ${windows.length} ${report.window} windows, more than the ` +
        `${MAX_WINDOWS_PER_INVOCATION} one invocation fetches. Split the range (reports backfill does this for you).`,
    );
  }
  return { windows: windows.reverse() };
}
