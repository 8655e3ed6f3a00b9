import { findingsOf, type QualityCheck } from '../../functions/core/quality/checks.js';

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
