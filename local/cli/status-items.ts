/**
 * What every check of `reports status` (local/cli/status.ts, local/cli/status-connections.ts) returns, and the
 * wording they share: a verdict, and for a check that could not be made, the permission it needs.
 */

export type Verdict = 'OK' | 'TODO' | 'UNKNOWN';

export interface StatusItem {
  /** What is checked, e.g. "secret default", "newest load transactions". */
  item: string;
  verdict: Verdict;
  /** What was found, and for TODO or UNKNOWN what to do. */
  detail: string;
}

export const DOCS = 'docs/deploy.md';
export const OPERATIONS = 'docs/operations.md';

export const errorName = (e: unknown) => (e instanceof Error ? e.name : 'Error');
export const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/** A check that could not be made (no permission, a throttled call): it says so, and the others still run. */
export const unknown = (item: string, e: unknown, need: string): StatusItem => ({
  item,
  verdict: 'UNKNOWN',
  detail: `could not check (${errorText(e)}); your credentials need ${need}`,
});

export function formatAge(ms: number): string {
  const hours = ms / 3_600_000;
  if (hours < 1) return `${Math.max(0, Math.round(ms / 60_000))} min`;
  if (hours < 48) return `${Math.round(hours)} h`;
  return `${Math.round(hours / 24)} days`;
}
