import { findingsOf, type QualityCheck } from '../../functions/core/quality/checks.js';
import { describePeriod } from '../../functions/core/definitions/period-check.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { ReportWindow } from '../../functions/core/time/window.js';

/**
 * What `run` and `backfill` say about a window's data checks (functions/core/quality/checks.ts), from its
 * load manifest: a short mark for the window's line, the findings to print under it, and the closing line.
 * A finding never fails a command: the data loaded as the provider sent it, and the exit code says so.
 */

/** FLAGGED: a check found something; not judged: the volume check had too little history (or a skipped date); —: no checks (not loaded, PDF). */
export type CheckMark = 'ok' | 'FLAGGED' | 'not judged' | '—';

export function checkMark(checks: readonly QualityCheck[] | undefined): CheckMark {
  if (!checks?.length) return '—';
  if (checks.some((c) => c.outcome === 'anomaly')) return 'FLAGGED';
  return checks.some((c) => c.check === 'volume-rows' && c.outcome === 'skipped') ? 'not judged' : 'ok';
}

export { findingsOf };

/** Where the on-call page says what each finding means and what to do. */
export const CHECKS_DOC = 'docs/operations.md, "Data checks"';

/**
 * The closing lines about the checks of every window loaded: each flagged window with what was off, or that
 * nothing was; and how many were not judged, with the first reason (usually too little history yet).
 */
export function checkSummaryLines(windows: ReadonlyArray<{ name: string; checks?: readonly QualityCheck[] }>): string[] {
  const checked = windows.filter((w) => w.checks?.length);
  if (!checked.length) return [];
  const flagged = checked.filter((w) => checkMark(w.checks) === 'FLAGGED');
  const unjudged = checked.filter((w) => checkMark(w.checks) === 'not judged');
  const why = unjudged[0]?.checks?.find((c) => c.check === 'volume-rows' && c.outcome === 'skipped')?.message.replace(/^volume not judged: /, '');
  const notJudged = unjudged.length ? `; ${unjudged.length} not judged (${unjudged.length > 1 ? 'the first: ' : ''}${why})` : '';
  if (!flagged.length) return [`Data checks: no finding in ${checked.length} window(s) loaded${notJudged}.`];
  return [
    `Data checks: ${flagged.length} window(s) FLAGGED of ${checked.length} loaded${notJudged}. The data loaded as sent; what to do: ${CHECKS_DOC}.`,
    ...flagged.flatMap((w) => findingsOf(w.checks).map((f) => `  ${w.name}  ${f}`)),
  ];
}

/** Where the docs say how the period's "to" is read. */
export const PERIOD_DOC = 'docs/add-a-report.md, "The period a body asks for"';

/**
 * A window that loaded no record, said at once: the volume check speaks only after weeks of history, and a
 * template whose period holds nothing (an inclusive "to" without its time) otherwise loads as success every day.
 * Silent once the volume check judged the window: its finding, or its band holding 0, has said it.
 */
export function emptyWindowNote(
  report: Pick<ReportDefinition, 'bodyTemplate' | 'periodTo'>,
  window: ReportWindow,
  records: number | undefined,
  checks?: readonly QualityCheck[],
): string | undefined {
  // History that judged the window (a finding, or a band that holds 0) has said what there is to say.
  const judged = checks?.some((c) => c.check === 'volume-rows' && c.outcome !== 'skipped');
  if (records !== 0 || judged || checkMark(checks) === 'FLAGGED') return undefined;
  return `0 records: is the period right? The body asked for ${describePeriod(report.bodyTemplate, window, report.periodTo)} (${PERIOD_DOC}).`;
}
