import { ConfigurationError, isPipelineError, RUN_STOPPING_CODES } from '../../functions/core/errors.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { formatLocalDateTime, windowsStartingIn, type ReportWindow } from '../../functions/core/time/window.js';
import { flagDateTime } from '../args/windows.js';
import { mapWithConcurrency } from '../../functions/core/concurrency.js';

/**
 * The scheduling of `reports backfill`, with no I/O of its own: which windows, how many at once, what
 * became of each. The per-window work (a local pipeline run, or a Lambda invocation) and the "already
 * loaded?" check are injected, so test/unit/backfill.test.ts drives this with plain functions.
 */

/**
 * What one window's work came to. A thrown error counts as failed too (errorCodeOf names it). `findings`: what
 * the data checks found in a window that loaded (it still counts as done).
 */
export type WindowResult = { ok: true; detail?: string; findings?: string[] } | { ok: false; code: string; message: string };

/** not-tried: never started, because an earlier window failed in a way every window would (STOP_CODES). */
export type WindowStatus = 'done' | 'failed' | 'skipped' | 'not-tried';

export interface WindowReport {
  window: ReportWindow;
  status: WindowStatus;
  /** For done: what was loaded ("120 rows"); for skipped: why. */
  detail?: string;
  /** For done: what the data checks found (the window loaded; someone should look). */
  findings?: string[];
  /** For failed: the typed error code (AuthenticationRefused, GatewayUnavailable, …) or the SDK error's name. */
  code?: string;
  message?: string;
  ms: number;
}

export interface BackfillSummary {
  reports: WindowReport[];
  done: number;
  failed: WindowReport[];
  skipped: number;
  notTried: number;
  /** The failure that stopped the backfill early, if one did. */
  stoppedBy?: WindowReport;
  ms: number;
}

/**
 * Failures no window gets past: the same credentials, configuration or function for every window. The
 * backfill stops starting windows after one of them, as the fetch function does (fetch-windows.ts): a
 * refused login repeated for a year of windows risks the merchant account being locked. The AWS names
 * are the deployed mode's: the function does not exist, or the caller may not invoke it.
 */
export const STOP_CODES: ReadonlySet<string> = new Set([
  ...RUN_STOPPING_CODES,
  'ResourceNotFoundException',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'ExpiredTokenException',
  'CredentialsProviderError',
]);

/**
 * The windows of a backfill or a reparse (both bounds required): each one starting in [from, to), oldest first. An
 * empty range is a mistake, not a no-op.
 */
export function backfillWindows(
  report: Pick<ReportDefinition, 'id' | 'window'>,
  from: string,
  to: string,
  command: 'backfill' | 'reparse' = 'backfill',
): ReportWindow[] {
  const windows = windowsStartingIn(report, { from: flagDateTime('--from', from), to: flagDateTime('--to', to) });
  if (windows.length === 0) {
    throw new ConfigurationError(
      `reports ${command} --report ${report.id}: [${from}, ${to}) holds no ${report.window} window: --from must be before --to (--to is exclusive).`,
    );
  }
  return windows;
}

/** The stable name of a failure: a pipeline error's code, an AWS SDK error's name (TooManyRequestsException, …), else "Error". */
export function errorCodeOf(error: unknown): string {
  if (isPipelineError(error)) return error.code;
  if (error instanceof Error && error.name && error.name !== 'Error') return error.name;
  return 'Error';
}

export interface BackfillOptions {
  windows: readonly ReportWindow[];
  concurrency: number;
  /** The work for one window. Re-running a window overwrites its keys, so a retry of a failed backfill is safe. */
  runWindow: (window: ReportWindow) => Promise<WindowResult>;
  /**
   * Whether a window is already loaded, so it is skipped; omitted (the deployed mode) means nothing is.
   * Returns the reason to print, or false. A check that throws does not skip: the window runs.
   */
  isLoaded?: (window: ReportWindow) => Promise<string | false>;
  /** Run every window, loaded or not. */
  force?: boolean;
  /** Whether a failure ends the backfill: windows not yet started are reported not-tried (default: STOP_CODES). */
  stopOn?: (code: string) => boolean;
  /** Called as each window ends, in completion order (progress output). */
  onWindow?: (report: WindowReport) => void;
  now?: () => number;
}

export async function runBackfill(options: BackfillOptions): Promise<BackfillSummary> {
  const now = options.now ?? (() => performance.now());
  const stopOn = options.stopOn ?? ((code: string) => STOP_CODES.has(code));
  const started = now();
  let stoppedBy: WindowReport | undefined;
  const one = async (window: ReportWindow): Promise<WindowReport> => {
    const t0 = now();
    const finish = (r: Omit<WindowReport, 'window' | 'ms'>): WindowReport => {
      const report = { window, ...r, ms: Math.round(now() - t0) };
      if (report.status === 'failed' && !stoppedBy && stopOn(report.code!)) stoppedBy = report;
      options.onWindow?.(report);
      return report;
    };
    if (stoppedBy) return finish({ status: 'not-tried', detail: `stopped after ${stoppedBy.code}` });
    if (!options.force && options.isLoaded) {
      const loaded = await options.isLoaded(window).catch(() => false as const);
      if (loaded) return finish({ status: 'skipped', detail: loaded });
    }
    let result: WindowResult;
    try {
      result = await options.runWindow(window);
    } catch (e) {
      result = { ok: false, code: errorCodeOf(e), message: e instanceof Error ? e.message : String(e) };
    }
    return result.ok
      ? finish({ status: 'done', detail: result.detail, ...(result.findings?.length ? { findings: result.findings } : {}) })
      : finish({ status: 'failed', code: result.code, message: result.message });
  };
  const reports = await mapWithConcurrency(options.windows, options.concurrency, one);
  return {
    reports,
    done: reports.filter((r) => r.status === 'done').length,
    failed: reports.filter((r) => r.status === 'failed'),
    skipped: reports.filter((r) => r.status === 'skipped').length,
    notTried: reports.filter((r) => r.status === 'not-tried').length,
    stoppedBy,
    ms: Math.round(now() - started),
  };
}

/** "2026-11-20" for day windows, "2026-11-20T06:00:00" for hour windows: as short as still unambiguous. */
export function windowName(window: ReportWindow): string {
  const start = formatLocalDateTime(window.start);
  return start.endsWith('T00:00:00') && window.end.hour === 0 ? start.slice(0, 10) : start;
}

/** One line per window, for logs and non-interactive output. */
export function windowLine(report: WindowReport): string {
  const what =
    report.status === 'failed'
      ? `${report.code}: ${report.message}`
      : `${report.detail ?? ''}${report.findings?.length ? `; FLAGGED: ${report.findings.join('; ')}` : ''}`;
  return `  ${windowName(report.window).padEnd(19)}  ${report.status.padEnd(7)}  ${String(report.ms).padStart(6)} ms  ${what}`.trimEnd();
}

/** The closing lines: counts, then every failed window with its code, so the re-run command is easy to write. */
export function summaryLines(summary: BackfillSummary, reportId: string): string[] {
  const lines = [
    `Backfill of "${reportId}": ${summary.reports.length} window(s) in ${(summary.ms / 1000).toFixed(1)} s: ` +
      `${summary.done} done, ${summary.failed.length} failed, ${summary.skipped} skipped` +
      (summary.notTried ? `, ${summary.notTried} not tried.` : '.'),
  ];
  if (summary.stoppedBy) {
    lines.push(`Stopped after ${windowName(summary.stoppedBy.window)} failed with ${summary.stoppedBy.code}: every other window would fail the same way. Fix that first.`);
  }
  if (summary.failed.length) {
    lines.push('Failed windows (re-run them with --from/--to; a re-run overwrites, never duplicates):');
    for (const f of summary.failed) lines.push(`  ${windowName(f.window)}  ${f.code}: ${f.message}`);
  }
  const flagged = summary.reports.filter((r) => r.findings?.length);
  if (flagged.length) {
    // On lines of their own: these windows loaded (they do not change the exit code), but their data looks wrong.
    lines.push(`Data checks FLAGGED ${flagged.length} window(s) that loaded; the data is kept as sent; what to do: docs/operations.md, "Data checks":`);
    for (const f of flagged) for (const finding of f.findings!) lines.push(`  ${windowName(f.window)}  ${finding}`);
  }
  return lines;
}

/**
 * What a Ctrl-C leaves, said plainly: each window's state, and how to carry on. Locally a re-run of the
 * same command resumes (loaded windows are skipped); deployed, the invocations in flight finish in AWS,
 * and nothing is skipped, so the command to carry on starts at the first window not done.
 */
export function interruptedLines(state: {
  windows: readonly ReportWindow[];
  ended: readonly WindowReport[];
  inFlight: readonly ReportWindow[];
  abandoned: readonly ReportWindow[];
  deployed: boolean;
}): string[] {
  const n = (s: WindowStatus) => state.ended.filter((r) => r.status === s).length;
  const notStarted = state.windows.length - state.ended.length - state.inFlight.length;
  const names = (ws: readonly ReportWindow[]) => ws.map(windowName).join(', ');
  const lines = [
    '',
    `Interrupted: ${state.windows.length} window(s) asked: ${n('done')} done, ${n('skipped')} skipped, ${n('failed')} failed, ` +
      `${state.inFlight.length} stopped in flight${state.inFlight.length ? ` (${names(state.inFlight)})` : ''}, ${notStarted + n('not-tried')} not started.`,
  ];
  if (state.abandoned.length) lines.push(`Removed the half-written table file of ${names(state.abandoned)}: nothing partial is left to query.`);
  if (!state.deployed) {
    lines.push('Re-run the same command to resume: windows already loaded are skipped, the others load (a re-run never duplicates).');
    return lines;
  }
  if (state.inFlight.length) lines.push(`The ${state.inFlight.length} invocation(s) in flight carry on in AWS and load their windows.`);
  const done = new Set(state.ended.filter((r) => r.status === 'done').map((r) => windowName(r.window)));
  const first = state.windows.find((w) => !done.has(windowName(w)) && !state.inFlight.includes(w));
  if (first) lines.push(`A deployed backfill skips nothing: to carry on, re-run it with --from ${windowName(first)} (a re-run overwrites, never duplicates).`);
  return lines;
}

/** Several reports' backfills (or reparses) as one: every window, with each report's own summary kept. */
export interface MultiReportSummary extends BackfillSummary {
  /** Each report's own summary, in the order they ran. */
  perReport: Array<{ reportId: string; summary: BackfillSummary }>;
}

export function combineSummaries(summaries: ReadonlyArray<{ reportId: string; summary: BackfillSummary }>): MultiReportSummary {
  const all = summaries.map((s) => s.summary);
  const total = (f: (s: BackfillSummary) => number) => all.reduce((n, s) => n + f(s), 0);
  return {
    reports: all.flatMap((s) => s.reports),
    done: total((s) => s.done),
    failed: all.flatMap((s) => s.failed),
    skipped: total((s) => s.skipped),
    notTried: total((s) => s.notTried),
    stoppedBy: all.find((s) => s.stoppedBy)?.stoppedBy,
    ms: total((s) => s.ms),
    perReport: [...summaries],
  };
}

/** The closing line of a command over several reports (none for one: its own summary says it all). */
export function multiReportLine(verb: string, s: MultiReportSummary): string[] {
  if (s.perReport.length < 2) return [];
  return [
    '',
    `${verb} of ${s.perReport.length} reports: ${s.reports.length} window(s): ${s.done} done, ${s.failed.length} failed, ${s.skipped} skipped` +
      `${s.notTried ? `, ${s.notTried} not tried` : ''}.`,
  ];
}
