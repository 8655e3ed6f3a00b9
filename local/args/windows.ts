import type { ReportDefinition } from '../../functions/core/report-definition.js';
import {
  parseLocalDateTime,
  parseWindowSize,
  wallClockIn,
  windowStartOf,
  windowsBetween,
  lastCompleteWindow,
  type ReportWindow,
} from '../../functions/core/window.js';

/**
 * The windows a command-line run covers: --from inclusive, --to exclusive, both wall-clock dates in the
 * report's time zone; without them, the last complete window (yesterday for a daily report).
 */
export function windowsForRun(report: ReportDefinition, from?: string, to?: string, now: Date = new Date()): ReportWindow[] {
  const size = parseWindowSize(report.window);
  if (!from && !to) return [lastCompleteWindow(now, report.schedule.timeZone, size)];
  const start = from ? parseLocalDateTime(from) : lastCompleteWindow(now, report.schedule.timeZone, size).start;
  const end = to ? parseLocalDateTime(to) : windowStartOf(wallClockIn(now, report.schedule.timeZone), size);
  return windowsBetween(start, end, size);
}
