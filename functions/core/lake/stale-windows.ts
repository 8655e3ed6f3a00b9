import { classifyChange, type ChangeVerdict, type DefinitionChange } from '../definitions/change.js';
import { definitionRecord, type DefinitionRecord } from '../definitions/fingerprint.js';
import type { ColumnDefinition } from '../definitions/report-definition.js';
import { formatLocalDateTime, parseLocalDateTime, windowsBetween, type WindowSize } from '../time/window.js';

/**
 * Which windows of a report hold a table file written under another definition than the current one, what that
 * does to them (definitions/change.ts), and the `reports reparse` command that rebuilds them from their raw files.
 * Pure: the readers (the local run and `query`, `reports status` for a deployment) gather the windows from the
 * manifests and print what this returns.
 */

export interface RecordedWindow {
  /** Wall-clock date-times in the report's zone ("2026-11-20T00:00:00"), end exclusive, as the manifest has them. */
  start: string;
  end: string;
  /**
   * The definition the window's table file was written with: its record, "unrecorded" when the load predates
   * recorded definitions, or absent when the window has no table file (never loaded, a PDF).
   */
  table?: DefinitionRecord | 'unrecorded';
  /** The latest attempt on the window failed with this code (the table file, if any, is an earlier load's). */
  lastAttemptFailed?: string;
}

export interface StaleGroup {
  fingerprint: string;
  change: DefinitionChange;
  windows: RecordedWindow[];
}

export interface StaleReport {
  reportId: string;
  /** The current definition's fingerprint. */
  fingerprint: string;
  /** Windows with a table file among those given. */
  withTable: number;
  /** One group per other fingerprint, oldest window first. */
  groups: StaleGroup[];
  unrecorded: RecordedWindow[];
  /** The windows a reparse fixes (stale or unreadable groups), oldest first. */
  toReparse: RecordedWindow[];
}

const byStart = (a: RecordedWindow, b: RecordedWindow) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0);

export function staleReport(reportId: string, current: readonly ColumnDefinition[], windows: readonly RecordedWindow[]): StaleReport {
  const now = definitionRecord(current);
  const groups = new Map<string, StaleGroup>();
  const unrecorded: RecordedWindow[] = [];
  let withTable = 0;
  for (const w of [...windows].sort(byStart)) {
    if (!w.table) continue;
    withTable++;
    if (w.table === 'unrecorded') {
      unrecorded.push(w);
      continue;
    }
    if (w.table.fingerprint === now.fingerprint) continue;
    const group = groups.get(w.table.fingerprint) ?? { fingerprint: w.table.fingerprint, change: classifyChange(w.table.columns, now.columns), windows: [] };
    group.windows.push(w);
    groups.set(w.table.fingerprint, group);
  }
  const needs = (v: ChangeVerdict) => v === 'stale' || v === 'unreadable';
  const list = [...groups.values()];
  return {
    reportId,
    fingerprint: now.fingerprint,
    withTable,
    groups: list,
    unrecorded,
    toReparse: list.filter((g) => needs(g.change.verdict)).flatMap((g) => g.windows).sort(byStart),
  };
}

/** "2026-11-20" for a midnight, "2026-11-20T06:00" otherwise: what --from and --to take, as short as still exact. */
export function commandTime(wallClock: string): string {
  const t = wallClock.replace(/:00$/, '');
  return t.endsWith('T00:00') ? t.slice(0, 10) : t;
}

/** The windows' names as a notice lists them: each one when few, else the first and the last. */
export function windowList(windows: readonly RecordedWindow[], most = 6): string {
  const names = windows.map((w) => commandTime(w.start));
  return names.length <= most ? names.join(', ') : `${names[0]} .. ${names.at(-1)}`;
}

/**
 * The command that rebuilds the windows: from the first one's start to the last one's end (exclusive), in the
 * report's zone. Windows between them that are not stale are rebuilt too, which changes nothing in them.
 */
export function reparseCommand(reportId: string, windows: readonly RecordedWindow[], flags: readonly string[] = []): string {
  const sorted = [...windows].sort(byStart);
  const last = sorted.reduce((end, w) => (w.end > end ? w.end : end), sorted[0]?.end ?? '');
  return ['npm run reports -- reparse', `--report ${reportId}`, `--from ${commandTime(sorted[0]?.start ?? '')}`, `--to ${commandTime(last)}`, ...flags].join(' ');
}

/** Which windows of a report have a raw file (a reparse rebuilds only those), and the report's window size. */
export interface RawCoverage {
  starts: ReadonlySet<string>;
  size: WindowSize;
}

/** At most this many commands, one per stretch of windows with raw files; past it, one command over the whole range. */
const MOST_COMMANDS = 3;

/**
 * The `reports reparse` advice for windows: with `raw`, commands over the stretches that have raw files only (a
 * window without one has nothing to rebuild), and how many windows of the range lack one; without, one command
 * over the range, as reparseCommand.
 */
export function reparseAdvice(reportId: string, windows: readonly RecordedWindow[], flags: readonly string[] = [], raw?: RawCoverage): string {
  const sorted = [...windows].sort(byStart);
  if (!raw || !sorted.length) return reparseCommand(reportId, sorted, flags);
  const lastEnd = sorted.reduce((end, w) => (w.end > end ? w.end : end), sorted[0]!.end);
  const range = windowsBetween(parseLocalDateTime(sorted[0]!.start), parseLocalDateTime(lastEnd), raw.size).map((w) => ({
    start: formatLocalDateTime(w.start),
    end: formatLocalDateTime(w.end),
  }));
  const missing = range.filter((w) => !raw.starts.has(w.start)).length;
  if (!missing) return reparseCommand(reportId, sorted, flags);
  const wanted = new Set(sorted.map((w) => w.start));
  const stretches: RecordedWindow[][] = [[]];
  for (const w of range) {
    if (!raw.starts.has(w.start)) stretches.push([]);
    else if (wanted.has(w.start)) stretches.at(-1)!.push(w);
  }
  const runs = stretches.filter((r) => r.length);
  const lacking = `${missing} of the ${range.length} windows from ${commandTime(range[0]!.start)} to ${commandTime(lastEnd)} have no raw file, never fetched: nothing to rebuild there, load them with npm start or backfill`;
  if (runs.length && runs.length <= MOST_COMMANDS) return `${runs.map((r) => reparseCommand(reportId, r, flags)).join(' and ')} (${lacking})`;
  return `${reparseCommand(reportId, sorted, flags)} (the reparse skips the windows without a raw file: ${lacking})`;
}

/** What a group's changes do, or that its columns are the same under another fingerprint. */
const effectsOf = (g: StaleGroup) => g.change.changes.map((c) => c.effect).join('; ') || 'the same columns';

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
const were = (n: number) => (n === 1 ? 'was' : 'were');

/**
 * What a reader prints: nothing when every table file is the current definition's; else a paragraph per kind.
 * `flags` end the command (`--lake DIR`, `--environment NAME`).
 */
export function staleNotice(report: StaleReport, flags: readonly string[] = [], raw?: RawCoverage): string[] {
  const lines: string[] = [];
  const name = `"${report.reportId}"`;
  const needing = report.groups.filter((g) => g.change.verdict === 'stale' || g.change.verdict === 'unreadable');
  if (needing.length) {
    const n = needing.reduce((sum, g) => sum + g.windows.length, 0);
    lines.push(`Stale: ${count(n, 'partition')} of ${name} ${were(n)} written under another definition than the current one (fingerprint ${report.fingerprint}):`);
    for (const g of needing) {
      lines.push(`  ${count(g.windows.length, 'window')} (${windowList(g.windows)}) under ${g.fingerprint}:`);
      for (const c of g.change.changes) lines.push(`    - ${c.effect}`);
      const failed = g.windows.filter((w) => w.lastAttemptFailed);
      if (failed.length) {
        const codes = [...new Set(failed.map((w) => w.lastAttemptFailed))].join(', ');
        lines.push(
          `    ${count(failed.length, 'window')} of them (${windowList(failed)}) failed ${failed.length === 1 ? 'its' : 'their'} latest load (${codes}): the table file there is the older load's` +
            `${codes.includes('SchemaDrift') ? '; a raw file whose header no longer matches the definition cannot be reparsed (re-fetch it with backfill)' : ''}`,
        );
      }
    }
    lines.push(`  Rebuild them from the raw files already stored (no gateway request): ${reparseAdvice(report.reportId, report.toReparse, flags, raw)}`);
  }
  for (const g of report.groups.filter((x) => x.change.verdict === 'compatible' || x.change.verdict === 'same')) {
    lines.push(`Note: ${count(g.windows.length, 'partition')} of ${name} (${windowList(g.windows)}) ${were(g.windows.length)} written under an earlier definition (${g.fingerprint}): ${effectsOf(g)}.`);
  }
  if (report.unrecorded.length) {
    lines.push(
      `Note: ${count(report.unrecorded.length, 'partition')} of ${name} (${windowList(report.unrecorded)}) ${were(report.unrecorded.length)} loaded before manifests recorded the definition, ` +
        `so whether they match the current one is not known. If the columns changed since, rebuild them: ${reparseCommand(report.reportId, report.unrecorded, flags)}`,
    );
  }
  return lines;
}

/**
 * The one-line verdict `reports status` gives per report, from the deployed manifests: TODO when windows need a
 * reparse (with the command, whose `flags` name the environment), else OK saying what was checked. `checked` of
 * `total` windows were read (the newest ones). The newest window's definition is what the deployed parse function
 * writes: when it is not this checkout's, a reparse there would write the old definition again, so the line says
 * to deploy first.
 */
export function staleStatus(
  report: StaleReport,
  windows: readonly RecordedWindow[],
  flags: readonly string[],
  checked: number,
  total: number,
  { local = false, raw }: { local?: boolean; raw?: RawCoverage } = {},
): { verdict: 'OK' | 'TODO'; detail: string } {
  const scope = checked < total ? `the newest ${checked} of ${total} windows` : `${count(total, 'window')}`;
  const newest = [...windows].filter((w) => w.table && w.table !== 'unrecorded').sort(byStart).at(-1)?.table as DefinitionRecord | undefined;
  // A local reparse parses with this checkout's catalog; only a deployment can still be running an older one.
  const deployedOther = !local && newest && newest.fingerprint !== report.fingerprint;
  const needing = report.groups.filter((g) => g.change.verdict === 'stale' || g.change.verdict === 'unreadable');
  if (needing.length) {
    const effects = [...new Set(needing.flatMap((g) => g.change.changes.map((c) => c.effect)))].join('; ');
    const fix = deployedOther
      ? `the newest load used definition ${newest!.fingerprint}, not this checkout's: deploy this checkout first (npx cdk deploy), then rebuild them: ${reparseAdvice(report.reportId, report.toReparse, flags, raw)}`
      : `rebuild them from their raw files: ${reparseAdvice(report.reportId, report.toReparse, flags, raw)}`;
    return {
      verdict: 'TODO',
      detail: `${count(report.toReparse.length, 'window')} (${windowList(report.toReparse)}) written under another definition than this checkout's (${report.fingerprint}): ${effects}. To fix, ${fix}`,
    };
  }
  const notes = [
    ...report.groups.map((g) => `${count(g.windows.length, 'window')} under an earlier definition (${effectsOf(g)})`),
    ...(report.unrecorded.length ? [`${count(report.unrecorded.length, 'window')} loaded before manifests recorded the definition (not compared)`] : []),
  ];
  return {
    verdict: 'OK',
    detail: `${scope} checked: ${report.withTable - report.unrecorded.length - report.groups.reduce((n, g) => n + g.windows.length, 0)} with a table file written under this checkout's definition (${report.fingerprint})${notes.length ? `; ${notes.join('; ')}` : ''}`,
  };
}
