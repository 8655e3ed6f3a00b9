import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { formatLocalDateTime, wallClockIn, type ReportWindow } from '../../functions/core/time/window.js';

/**
 * A window that has not ended yet in the report's time zone (today, or later) is incomplete: the gateway
 * answers with the transactions so far, and the load looks like any other. `run` and `backfill` refuse
 * such windows before any work unless --allow-incomplete; a later run of the window overwrites it.
 */
export function refuseIncompleteWindows(
  report: Pick<ReportDefinition, 'id' | 'schedule'>,
  windows: readonly ReportWindow[],
  options: { allowIncomplete?: boolean; now?: Date } = {},
): void {
  if (options.allowIncomplete) return;
  const zone = report.schedule.timeZone;
  const now = formatLocalDateTime(wallClockIn(options.now ?? new Date(), zone));
  // Wall-clock "YYYY-MM-DDTHH:mm:ss" strings order as the times do.
  const incomplete = windows.filter((w) => formatLocalDateTime(w.end) > now);
  if (incomplete.length === 0) return;
  const first = incomplete[0]!;
  const which = incomplete.length === 1 ? 'window' : `${incomplete.length} windows, from`;
  throw new ConfigurationError(
    `The ${which} ${formatLocalDateTime(first.start)} of report "${report.id}" ${incomplete.length === 1 ? 'is' : 'are'} not complete yet: ` +
      `${formatLocalDateTime(first.start)} ends at ${formatLocalDateTime(first.end)} and it is ${now} in ${zone}, so the gateway would send only part of it. ` +
      'End the range (--to) at the start of the current window, or pass --allow-incomplete to load what is there now (a later run overwrites it).',
  );
}
