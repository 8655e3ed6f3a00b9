import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { PeriodToReading } from '../../functions/core/definitions/period-check.js';
import { compilePattern, parseDate, parseTimestamp } from '../../functions/core/csv/value-parsers.js';
import { addSeconds, parseWindowSize, windowAt, type LocalDateTime, type ReportWindow } from '../../functions/core/time/window.js';
import { delimiterProblem, isSupportedEncoding } from './report-csv.js';

/**
 * Reads and checks a report request body (the spec's "Report request body"). Fields the simulator needs
 * are required; the rest (reportName, configurationReportParameters, outputReportParameters, filters) are
 * accepted and ignored, because their meaning is not documented. Each problem is one sentence that the
 * server sends back as a plain-text 400.
 */

export const SIMULATED_REPORT_IDENTIFIER = 'custom-transactions-report';

/** The provider's older transaction report refuses longer periods (docs/architecture.md, "Facts about the real gateway"); so does the simulator. */
export const MAX_WINDOW_DAYS = 31;

/**
 * How the simulated gateway reads a period's "to": each definition's `periodTo` (functions/core/definitions/
 * period-check.ts), unless the simulator was started with another (`--period-to`), to show how a definition fares
 * at a provider that reads it otherwise.
 */
export { DEFAULT_PERIOD_TO, PERIOD_TO_READINGS, type PeriodToReading } from '../../functions/core/definitions/period-check.js';

export interface ReportRequest {
  reportIdentifier: string;
  reportName: string;
  format: 'CSV' | 'PDF';
  encoding: string;
  delimiter: string;
  window: ReportWindow;
  dateFrom: string;
  dateTo: string;
  /** The catalog definition the request was recognised as (by reportIdentifier), when one matched. */
  definition?: ReportDefinition;
}

export type ParsedRequest = { ok: true; request: ReportRequest } | { ok: false; problem: string };

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** Strict "yyyy-MM-dd HH:mm:ss" and a real calendar time, or null. */
function parseDateTime(text: string): LocalDateTime | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const d = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const real =
    d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day &&
    d.getUTCHours() === hour && d.getUTCMinutes() === minute && d.getUTCSeconds() === second;
  return real ? { year, month, day, hour, minute, second } : null;
}

const epochMs = (t: LocalDateTime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);

/** A value quoted for an error sentence, cut so a huge value cannot bloat the answer. */
const show = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

const fail = (problem: string): ParsedRequest => ({ ok: false, problem });

/**
 * `definitions`: the reports of the catalog the simulator serves. A request whose reportIdentifier is one of
 * theirs is read by that definition's body template (the window where its {{window.*}} placeholders are,
 * in their patterns); otherwise only the spec's sample report is known, read as the spec's sample body, unless
 * `onlyDefinitions` (a simulator standing for one connection serves that connection's reports and nothing else).
 */
export function parseReportRequest(
  contentType: string | undefined,
  body: string,
  definitions: readonly ReportDefinition[] = [],
  { onlyDefinitions = false, periodTo }: { onlyDefinitions?: boolean; periodTo?: PeriodToReading } = {},
): ParsedRequest {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    return fail(`The request Content-Type must be application/json (got ${show(contentType ?? 'none')}).`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return fail('The request body is not valid JSON.');
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return fail('The request body must be a JSON object.');
  const b = raw as Record<string, unknown>;

  if (typeof b.reportIdentifier !== 'string' || !b.reportIdentifier) return fail('The field reportIdentifier is missing.');
  const definition = definitions.find((d) => d.reportIdentifier === b.reportIdentifier);
  if (!definition && (onlyDefinitions || b.reportIdentifier !== SIMULATED_REPORT_IDENTIFIER)) {
    const known = [...(onlyDefinitions ? [] : [SIMULATED_REPORT_IDENTIFIER]), ...definitions.map((d) => d.reportIdentifier)];
    return fail(`Unknown reportIdentifier ${show(b.reportIdentifier)}; this simulator serves ${[...new Set(known)].join(', ')}.`);
  }

  const requestedFormat = b.reportFormat ?? definition?.format;
  if (typeof requestedFormat !== 'string' || !requestedFormat) return fail('The field reportFormat is missing.');
  const format = requestedFormat.toUpperCase();
  if (format !== 'CSV' && format !== 'PDF') return fail(`Unsupported reportFormat ${show(b.reportFormat)}; use CSV or PDF.`);

  const encoding = b.reportEncode ?? definition?.encoding ?? 'UTF-8';
  if (typeof encoding !== 'string' || !isSupportedEncoding(encoding)) {
    return fail(`Unsupported reportEncode ${show(encoding)}; use for example UTF-8 or windows-1251.`);
  }
  const delimiter = b.reportCsvDelimiter ?? definition?.delimiter ?? ',';
  if (typeof delimiter !== 'string') return fail('The field reportCsvDelimiter must be a string.');
  const delimiterIssue = delimiterProblem(delimiter, encoding);
  if (delimiterIssue) return fail(`The reportCsvDelimiter ${show(delimiter)} ${delimiterIssue}.`);

  const reportName = typeof b.reportName === 'string' && b.reportName ? b.reportName : (definition?.description ?? 'Custom transactions report');
  if (definition) {
    const found = windowByTemplate(definition, b, periodTo ?? definition.periodTo);
    if (!found.ok) return fail(found.problem);
    const { window, dateFrom, dateTo } = found;
    if (epochMs(window.start) >= epochMs(window.end)) return fail('The window start must be before its end.');
    if (epochMs(window.end) - epochMs(window.start) > MAX_WINDOW_DAYS * 86_400_000) {
      return fail(`The period must not exceed ${MAX_WINDOW_DAYS} days.`);
    }
    return { ok: true, request: { reportIdentifier: b.reportIdentifier, reportName, format, encoding, delimiter, window, dateFrom, dateTo, definition } };
  }

  if (!Array.isArray(b.inputReportParameters)) return fail('The field inputReportParameters is missing or not an array.');
  const input = (name: string): unknown =>
    (b.inputReportParameters as unknown[]).find(
      (p): p is { value: unknown } => !!p && typeof p === 'object' && (p as { name?: unknown }).name === name,
    )?.value;
  const from = input('dateFrom');
  const to = input('dateTo');
  if (typeof from !== 'string') return fail('The input parameter dateFrom is missing.');
  if (typeof to !== 'string') return fail('The input parameter dateTo is missing.');
  const start = parseDateTime(from);
  if (!start) return fail(`The input parameter dateFrom ${show(from)} is not a date-time of the form yyyy-MM-dd HH:mm:ss.`);
  const end = parseDateTime(to);
  if (!end) return fail(`The input parameter dateTo ${show(to)} is not a date-time of the form yyyy-MM-dd HH:mm:ss.`);
  if (epochMs(start) >= epochMs(end)) return fail('The input parameter dateFrom must be before dateTo.');
  if (epochMs(end) - epochMs(start) > MAX_WINDOW_DAYS * 86_400_000) {
    return fail(`The period from dateFrom to dateTo must not exceed ${MAX_WINDOW_DAYS} days.`);
  }

  return {
    ok: true,
    request: {
      reportIdentifier: b.reportIdentifier,
      reportName,
      format,
      encoding,
      delimiter,
      window: { start, end },
      dateFrom: from,
      dateTo: to,
    },
  };
}

/* ------------------------------------------------ the window of a catalog report, found by its template */

const PLACEHOLDER = /\{\{\s*window\.(start|end|last)\s*:\s*([^}]*?)\s*\}\}/g;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Where the template has placeholders: the path, and the string with them. */
function placeholderStrings(v: unknown, path: Array<string | number> = []): Array<{ path: Array<string | number>; text: string }> {
  if (typeof v === 'string') return v.match(PLACEHOLDER) ? [{ path, text: v }] : [];
  if (Array.isArray(v)) return v.flatMap((x, i) => placeholderStrings(x, [...path, i]));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => placeholderStrings(x, [...path, k]));
  return [];
}

const valueAt = (root: unknown, path: Array<string | number>): unknown =>
  path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined), root);

const showPath = (path: Array<string | number>) => path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');

const fromMs = (ms: number): LocalDateTime => {
  const d = new Date(ms);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
};

/**
 * The window a request asks for, read where the definition's template puts {{window.start|end|last:PATTERN}}:
 * the client renders the template, so the request has the same shape. The end is window.end, else
 * window.last plus a second, else the start plus the report's window length; under the `whole-day` reading a
 * "to" without a time ends at the next day's 00:00 instead.
 */
function windowByTemplate(
  definition: ReportDefinition,
  body: Record<string, unknown>,
  periodTo: PeriodToReading,
): { ok: true; window: ReportWindow; dateFrom: string; dateTo: string } | { ok: false; problem: string } {
  const found: Partial<Record<'start' | 'end' | 'last', { ms: number; text: string; dateOnly: boolean }>> = {};
  for (const { path, text } of placeholderStrings(definition.bodyTemplate)) {
    const sent = valueAt(body, path);
    const where = showPath(path);
    if (typeof sent !== 'string') return { ok: false, problem: `The field ${where} is missing (the report's template has a window there).` };
    const parts = [...text.matchAll(PLACEHOLDER)];
    const re = new RegExp(`^${text.split(PLACEHOLDER).filter((_, i) => i % 3 === 0).map(escape).join('(.*?)')}$`);
    const m = re.exec(sent);
    if (!m) return { ok: false, problem: `The field ${where} ${show(sent)} does not have the form ${show(text)}.` };
    for (const [i, part] of parts.entries()) {
      const which = part[1] as 'start' | 'end' | 'last';
      const pattern = part[2]!;
      const value = m[i + 1]!;
      const kind = /HH/.test(pattern) ? 'timestamp' : 'date';
      let ms: number;
      try {
        const p = compilePattern(pattern, kind);
        ms = kind === 'timestamp' ? parseTimestamp(value, p) : parseDate(value, p) * 86_400_000;
      } catch {
        continue; // a pattern the column parser does not read (e.g. only yyyy): not a window bound to check
      }
      if (Number.isNaN(ms)) return { ok: false, problem: `The field ${where} ${show(value)} is not a date-time of the form ${pattern}.` };
      found[which] ??= { ms, text: value, dateOnly: kind === 'date' };
    }
  }
  if (!found.start) {
    return { ok: false, problem: "The report's template has no {{window.start:PATTERN}} the simulator can read, so it cannot tell the window." };
  }
  const start = fromMs(found.start.ms);
  const to = found.end ?? found.last;
  const end =
    to && to.dateOnly && periodTo === 'whole-day'
      ? fromMs(to.ms + 86_400_000)
      : found.end ? fromMs(found.end.ms) : found.last ? addSeconds(fromMs(found.last.ms), 1) : windowAt(start, parseWindowSize(definition.window)).end;
  return { ok: true, window: { start, end }, dateFrom: found.start.text, dateTo: found.end?.text ?? found.last?.text ?? '' };
}
