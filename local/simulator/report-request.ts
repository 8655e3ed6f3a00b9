import type { LocalDateTime, ReportWindow } from '../../functions/core/window.js';
import { delimiterProblem, isSupportedEncoding } from './report-csv.js';

/**
 * Reads and checks a report request body (the spec's "Report request body"). Fields the simulator needs
 * are required; the rest (reportName, configurationReportParameters, outputReportParameters, filters) are
 * accepted and ignored, because their meaning is not documented. Each problem is one sentence that the
 * server sends back as a plain-text 400.
 */

export const SIMULATED_REPORT_IDENTIFIER = 'custom-transactions-report';

/** The provider's older transaction report refuses longer periods (DESIGN.md); so does the simulator. */
export const MAX_WINDOW_DAYS = 31;

export interface ReportRequest {
  reportIdentifier: string;
  reportName: string;
  format: 'CSV' | 'PDF';
  encoding: string;
  delimiter: string;
  window: ReportWindow;
  dateFrom: string;
  dateTo: string;
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

export function parseReportRequest(contentType: string | undefined, body: string): ParsedRequest {
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
  if (b.reportIdentifier !== SIMULATED_REPORT_IDENTIFIER) return fail(`Unknown reportIdentifier ${show(b.reportIdentifier)}.`);

  if (typeof b.reportFormat !== 'string' || !b.reportFormat) return fail('The field reportFormat is missing.');
  const format = b.reportFormat.toUpperCase();
  if (format !== 'CSV' && format !== 'PDF') return fail(`Unsupported reportFormat ${show(b.reportFormat)}; use CSV or PDF.`);

  const encoding = b.reportEncode ?? 'UTF-8';
  if (typeof encoding !== 'string' || !isSupportedEncoding(encoding)) {
    return fail(`Unsupported reportEncode ${show(encoding)}; use for example UTF-8 or windows-1251.`);
  }
  const delimiter = b.reportCsvDelimiter ?? ',';
  if (typeof delimiter !== 'string') return fail('The field reportCsvDelimiter must be a string.');
  const delimiterIssue = delimiterProblem(delimiter, encoding);
  if (delimiterIssue) return fail(`The reportCsvDelimiter ${show(delimiter)} ${delimiterIssue}.`);

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
      reportName: typeof b.reportName === 'string' && b.reportName ? b.reportName : 'Custom transactions report',
      format,
      encoding,
      delimiter,
      window: { start, end },
      dateFrom: from,
      dateTo: to,
    },
  };
}
