import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { refuseUnprojectedWindows } from '../../functions/core/lake/partition-projection.js';
import { formatLocalDate, formatLocalDateTime, parseWindowSize, windowsStartingIn, type ReportWindow } from '../../functions/core/time/window.js';
import { localProjectionSetting } from '../args/projection-setting.js';
import { selectFeeds } from '../args/report-selection.js';
import type { Feed } from '../../functions/core/connections/feed.js';
import { windowRangeOf } from '../args/windows.js';
import { refuseIncompleteWindows } from '../pipeline/incomplete-window.js';

/**
 * What a local run over many feeds will do, decided before anything starts: the feeds (`--report` and `--connection`,
 * each repeatable; none: every report over every one of its connections), each one's windows of [--from, --to)
 * (default: its latest complete window), and the order they run and are shown in: connection by connection, report
 * by report, window by window.
 */

export interface RunPlanOptions {
  report?: string | readonly string[];
  connection?: string | readonly string[];
  from?: string;
  to?: string;
  allowIncomplete?: boolean;
}

/** One window of one feed: a row of the summary table. `report` is the feed's, for the many readers that need only it. */
export interface RunItem {
  readonly feed: Feed;
  readonly report: ReportDefinition;
  readonly window: ReportWindow;
}

export interface RunPlan {
  reports: ReportDefinition[];
  /** The feeds run, every one with a window in the range. */
  feeds: Feed[];
  /** The connections of those feeds, in the order the table shows them. */
  connections: string[];
  items: RunItem[];
  /** Reports left out because no window of theirs starts in the range (only when no --report named them). */
  notes: string[];
}

/** A window as the table, the summary and the resume command name it: the date alone for a report of whole days. */
export const windowLabel = (report: Pick<ReportDefinition, 'window'>, w: ReportWindow): string =>
  parseWindowSize(report.window).unit === 'day' ? formatLocalDate(w.start) : formatLocalDateTime(w.start);

/** The end of a window as --to gives it (exclusive), alike in form to windowLabel. */
export const windowEndLabel = (report: Pick<ReportDefinition, 'window'>, w: ReportWindow): string =>
  parseWindowSize(report.window).unit === 'day' ? formatLocalDate(w.end) : formatLocalDateTime(w.end);

export function planRun(catalog: ReportCatalog, opts: RunPlanOptions): RunPlan {
  const named = opts.report !== undefined && opts.report.length > 0;
  const feeds = selectFeeds(catalog, opts.report, opts.connection);
  const selected = [...new Set(feeds.map((f) => f.report))];
  const notes: string[] = [];
  const windowsOf = new Map<ReportDefinition, ReportWindow[]>();
  for (const report of selected) {
    const windows = windowsStartingIn(report, windowRangeOf(opts.from, opts.to));
    // A report someone named must run; among every report, one whose windows are longer than the range is only noted.
    if (windows.length === 0 && (named || selected.length === 1)) throw noWindowError(report, opts);
    if (windows.length === 0) {
      notes.push(`Report "${report.id}": no ${report.window} window starts in the range, so it is not run.`);
      continue;
    }
    refuseIncompleteWindows(report, windows, { allowIncomplete: opts.allowIncomplete });
    // Athena would never show a window outside its projected dates: refuse it before anything is fetched.
    refuseUnprojectedWindows(report.id, windows, localProjectionSetting(), new Date());
    windowsOf.set(report, windows);
  }
  const reports = [...windowsOf.keys()];
  if (reports.length === 0) throw new ConfigurationError(`No report has a window starting in the range: ${notes.join(' ')}`);
  const planned = feeds.filter((f) => windowsOf.has(f.report));
  const connections = [...new Set(planned.map((f) => f.connection))];
  const items = connections.flatMap((c) =>
    planned.filter((f) => f.connection === c).flatMap((feed) => windowsOf.get(feed.report)!.map((window) => ({ feed, report: feed.report, window }))),
  );
  return { reports, feeds: planned, connections, items, notes };
}

function noWindowError(report: ReportDefinition, opts: RunPlanOptions): ConfigurationError {
  return new ConfigurationError(
    opts.to
      ? `No ${report.window} window of report "${report.id}" starts in [--from, --to): --from must be before --to (to is exclusive).`
      : `No ${report.window} window of report "${report.id}" starts in [--from, now): without --to the run ends where the current window starts, ` +
          'since that window is not complete yet. To load it anyway, give --to (the end, exclusive) and --allow-incomplete.',
  );
}
