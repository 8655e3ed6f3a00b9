import { ConfigurationError } from './errors.js';
import { formatLocalDate, parseLocalDateTime, windowStamp, type LocalDateTime, type ReportWindow } from './window.js';

/**
 * The S3 layout of DESIGN.md "S3 layout". Every key is a pure function of (report, window start), so
 * re-running a window overwrites its objects instead of adding a second copy beside them:
 *
 *   raw bucket      raw/<report>/dt=<window date>/<window start>.<csv|pdf>
 *   curated bucket  tables/<report>/dt=<window date>/<window start>.parquet
 *                   rejected/<report>/dt=<window date>/<window start>.csv
 *                   manifests/<report>/dt=<window date>/<window start>.json
 *
 * <window date> is the window start's wall-clock date (YYYY-MM-DD) in the report's time zone, and
 * <window start> is windowStamp(start) ("2026-11-20T00-00-00": no colons, which S3 tools and file systems dislike).
 * Only `.parquet` files live under tables/<report>/, the Glue table's location.
 */

export const PREFIX = {
  raw: 'raw/',
  tables: 'tables/',
  rejected: 'rejected/',
  manifests: 'manifests/',
} as const;

/** The report formats of a report definition; the key's extension is the lower-case form. */
export type RawFormat = 'CSV' | 'PDF';
/** Either the definition's format or the gateway client's fileExtension ("csv" | "pdf"). */
export type RawFormatInput = RawFormat | Lowercase<RawFormat>;

/** Only the window's start places an object; accepting `{start}` lets callers pass a window or just its start. */
export type WindowStart = Pick<ReportWindow, 'start'>;

const REPORT_ID = /^[a-z][a-z0-9_]*$/;

function checkReportId(reportId: string): string {
  // Report definitions already enforce this; checking again keeps a bad id from producing a key parseRawKey cannot read back.
  if (!REPORT_ID.test(reportId)) {
    throw new ConfigurationError(`report id "${reportId}" must be lower snake_case (a-z, 0-9, _): it is part of S3 keys.`);
  }
  return reportId;
}

const partition = (reportId: string, start: LocalDateTime) =>
  `${checkReportId(reportId)}/dt=${formatLocalDate(start)}/${windowStamp(start)}`;

export const rawKey = (reportId: string, window: WindowStart, format: RawFormatInput): string =>
  `${PREFIX.raw}${partition(reportId, window.start)}.${format.toLowerCase()}`;

export const tableKey = (reportId: string, window: WindowStart): string =>
  `${PREFIX.tables}${partition(reportId, window.start)}.parquet`;

export const rejectedKey = (reportId: string, window: WindowStart): string =>
  `${PREFIX.rejected}${partition(reportId, window.start)}.csv`;

export const manifestKey = (reportId: string, window: WindowStart): string =>
  `${PREFIX.manifests}${partition(reportId, window.start)}.json`;

/** The Glue table's location inside the curated bucket (ends with "/"). */
export const tablePrefix = (reportId: string): string => `${PREFIX.tables}${checkReportId(reportId)}/`;

/** Every key of one (report, window), for handlers and manifests that need several. */
export function keysFor(reportId: string, window: WindowStart, format: RawFormatInput) {
  return {
    raw: rawKey(reportId, window, format),
    table: tableKey(reportId, window),
    rejected: rejectedKey(reportId, window),
    manifest: manifestKey(reportId, window),
  };
}

export interface RawKeyParts {
  reportId: string;
  /** The partition value, "YYYY-MM-DD". */
  dt: string;
  /** The file name without extension, windowStamp(start). */
  stamp: string;
  format: RawFormat;
  /** The window start; the report definition's window size gives the end (windowAt). */
  start: LocalDateTime;
}

const RAW_KEY = /^raw\/([a-z][a-z0-9_]*)\/dt=(\d{4}-\d{2}-\d{2})\/(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(csv|pdf)$/;

/**
 * Reads a raw key back into its parts. Keys outside raw/ give null: the parse handler ignores them
 * (the bucket may hold other things; S3 also sends a test event when a notification is configured).
 * A key under raw/ that does not follow the layout throws a ConfigurationError: only the fetch
 * function writes there, so such a key means someone put a file by hand, and silently skipping it would hide that.
 * Pass S3 event keys through decodeS3EventKey first.
 */
export function parseRawKey(key: string): RawKeyParts | null {
  if (!key.startsWith(PREFIX.raw)) return null;
  const m = RAW_KEY.exec(key);
  const bad = (why: string) =>
    new ConfigurationError(
      `S3 key "${key}" is under raw/ but ${why}. Expected raw/<report>/dt=YYYY-MM-DD/YYYY-MM-DDTHH-mm-ss.<csv|pdf>, ` +
        'as the fetch function writes it; move the object elsewhere or delete it.',
    );
  if (!m) throw bad('does not follow the layout');
  const [, reportId, dt, date, hh, mm, ss, ext] = m as unknown as [string, string, string, string, string, string, string, string];
  let start: LocalDateTime;
  try {
    // parseLocalDateTime rejects what does not round-trip through the calendar: 2026-02-30, 25:00, 12:61.
    start = parseLocalDateTime(`${date}T${hh}:${mm}:${ss}`);
  } catch {
    throw bad(`names no real date-time ("${date}T${hh}-${mm}-${ss}")`);
  }
  if (dt !== formatLocalDate(start)) throw bad(`has partition dt=${dt} but a window starting on ${formatLocalDate(start)}`);
  return { reportId, dt, stamp: windowStamp(start), format: ext === 'pdf' ? 'PDF' : 'CSV', start };
}

/**
 * S3 event notifications carry the key URL-encoded the way HTML forms are: a space as "+", everything
 * else outside a safe set as %XX (so "dt=" arrives as "dt%3D"). A literal "+" in a key arrives as "%2B".
 */
export function decodeS3EventKey(eventKey: string): string {
  try {
    return decodeURIComponent(eventKey.replace(/\+/g, ' '));
  } catch (e) {
    throw new URIError(`S3 event key "${eventKey}" is not valid URL encoding`, { cause: e });
  }
}

/** The inverse, as AWS writes event keys: "/" kept, space as "+", the rest percent-encoded. The local lake uses it. */
export const encodeS3EventKey = (key: string): string =>
  key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/%20/g, '+'))
    .join('/');
