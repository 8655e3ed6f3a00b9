import { showCount as count } from '../args/display.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import { windowName, type BackfillSummary, type WindowReport } from './backfill-runner.js';

/**
 * What `reports reparse` prints at the end, and on Ctrl-C. The windows run through backfill's runner
 * (backfill-runner.ts), where a window without a raw file is "skipped" with its reason.
 */

export interface ReparseTotals {
  rowsWritten: number;
  rowsRejected: number;
}

export function reparseSummaryLines(summary: BackfillSummary, reportId: string, totals: ReparseTotals): string[] {
  const lines = [
    `Reparse of "${reportId}": ${summary.reports.length} window(s) in ${(summary.ms / 1000).toFixed(1)} s: ` +
      `${summary.done} rebuilt, ${summary.failed.length} failed, ${summary.skipped} without a raw file` +
      `${summary.notTried ? `, ${summary.notTried} not tried` : ''}; ${count(totals.rowsWritten)} rows written, ${count(totals.rowsRejected)} rejected. ` +
      'No gateway request was made.',
  ];
  if (summary.stoppedBy) {
    lines.push(`Stopped after ${windowName(summary.stoppedBy.window)} failed with ${summary.stoppedBy.code}: every other window would fail the same way. Fix that first.`);
  }
  if (summary.failed.length) {
    lines.push('Failed windows (each keeps the table file it had, if any; its manifest and the typed error say why):');
    for (const f of summary.failed) lines.push(`  ${windowName(f.window)}  ${f.code}: ${f.message}`);
  }
  const missing = summary.reports.filter((r) => r.status === 'skipped');
  if (missing.length) {
    lines.push('Windows without a raw file (never fetched, or deleted): nothing to rebuild; load them with `npm start` or `backfill`:');
    lines.push(`  ${missing.map((r) => windowName(r.window)).join(', ')}`);
  }
  return lines;
}

/** Ctrl-C: what is done, and that a re-run rebuilds every window again (a reparse skips nothing). */
export function reparseInterruptedLines(state: {
  windows: readonly ReportWindow[];
  ended: readonly WindowReport[];
  inFlight: readonly ReportWindow[];
  abandoned: readonly ReportWindow[];
  deployed: boolean;
}): string[] {
  const done = state.ended.filter((r) => r.status === 'done').length;
  const names = (ws: readonly ReportWindow[]) => ws.map(windowName).join(', ');
  const lines = [
    '',
    `Interrupted: ${state.windows.length} window(s) asked: ${done} rebuilt, ${state.ended.length - done} failed or without a raw file, ` +
      `${state.inFlight.length} stopped in flight${state.inFlight.length ? ` (${names(state.inFlight)})` : ''}, ` +
      `${state.windows.length - state.ended.length - state.inFlight.length} not started.`,
  ];
  if (state.abandoned.length) lines.push(`Removed the half-written table file of ${names(state.abandoned)} and its manifest: nothing partial is left to query.`);
  if (state.deployed && state.inFlight.length) lines.push(`The ${state.inFlight.length} invocation(s) in flight carry on in AWS and rebuild their windows.`);
  lines.push('Re-run the same command to finish: it rebuilds every window of the range again from its raw file (a re-run overwrites, never duplicates).');
  return lines;
}
