import { ConfigurationError } from '../errors.js';
import { CONNECTION_KEY, PARTITION_KEY } from '../definitions/table-schema.js';
import { CONNECTION_NAME, CONNECTION_NAME_RULE } from '../connections/connection.js';
import type { FeedKey } from '../connections/feed.js';
import { formatLocalDate, parseLocalDateTime, windowStamp, type LocalDateTime, type ReportWindow } from '../time/window.js';

/**
 * The S3 layout of docs/architecture.md "S3 layout", written out here only: builders, the patterns and
 * templates other code needs (the Glue table's location, the local views' glob, listings from a date on) and the
 * parsers, side by side. Every key is a pure function of (feed, window start), a feed being a report over one of
 * its connections (connections/feed.ts), so re-running a window overwrites its objects instead of adding a second
 * copy beside them:
 *
 *   raw bucket      raw/<report>/connection=<name>/dt=<window date>/<window start>.<csv|pdf>
 *   curated bucket  tables/<report>/connection=<name>/dt=<window date>/<window start>.parquet
 *                   rejected/<report>/connection=<name>/dt=<window date>/<window start>.csv
 *                   manifests/<report>/connection=<name>/dt=<window date>/<window start>.json
 *
 * <window date> is the window start's wall-clock date (YYYY-MM-DD) in the report's time zone, and
 * <window start> is windowStamp(start) ("2026-11-20T00-00-00": no colons, which S3 tools and file systems dislike).
 * `connection` and `dt` are the tables' partition keys, in that order (table-schema.ts PARTITION_KEYS): every feed of
 * a report writes into the report's one table. Only `.parquet` files live under tables/<report>/, the Glue table's
 * location. Keys of the layout before feeds (`raw/<report>/dt=…`, no connection) are read by parseLegacyRawKey only,
 * for `reports reparse` to rebuild them into this layout (docs/deploy.md).
 */

export const PREFIX = {
  raw: 'raw/',
  tables: 'tables/',
  rejected: 'rejected/',
  manifests: 'manifests/',
} as const;

/** The four areas of the layout: raw in the raw bucket, the others in the curated bucket. */
export type Area = keyof typeof PREFIX;
export type CuratedArea = Exclude<Area, 'raw'>;
/** The file extension of each curated area's objects (raw objects take the report's format). */
const CURATED_EXTENSION = { tables: 'parquet', rejected: 'csv', manifests: 'json' } as const satisfies Record<CuratedArea, string>;
export const CURATED_AREAS = Object.keys(CURATED_EXTENSION) as CuratedArea[];

/** The report formats of a report definition; the key's extension is the lower-case form. */
const RAW_FORMATS = ['CSV', 'PDF'] as const;
export type RawFormat = (typeof RAW_FORMATS)[number];
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

function checkConnection(connection: string): string {
  if (!CONNECTION_NAME.test(connection)) throw new ConfigurationError(`connection "${connection}" ${CONNECTION_NAME_RULE}: it is part of S3 keys.`);
  return connection;
}

/** One partition directory's name: `dt=2026-11-20`. */
const partitionDir = (date: string) => `${PARTITION_KEY}=${date}`;
/** A feed's directory under an area: `<report>/connection=<name>`. */
const feedDir = (feed: FeedKey) => `${checkReportId(feed.reportId)}/${CONNECTION_KEY}=${checkConnection(feed.connection)}`;

const partition = (feed: FeedKey, start: LocalDateTime) => `${feedDir(feed)}/${partitionDir(formatLocalDate(start))}/${windowStamp(start)}`;

export const rawKey = (feed: FeedKey, window: WindowStart, format: RawFormatInput): string =>
  `${PREFIX.raw}${partition(feed, window.start)}.${format.toLowerCase()}`;

const curatedKey = (area: CuratedArea, feed: FeedKey, window: WindowStart): string =>
  `${PREFIX[area]}${partition(feed, window.start)}.${CURATED_EXTENSION[area]}`;

export const tableKey = (feed: FeedKey, window: WindowStart): string => curatedKey('tables', feed, window);

export const rejectedKey = (feed: FeedKey, window: WindowStart): string => curatedKey('rejected', feed, window);

export const manifestKey = (feed: FeedKey, window: WindowStart): string => curatedKey('manifests', feed, window);

/** Where an area keeps a feed's objects (ends with "/"): `manifests/<report>/connection=<name>/`. */
export const areaPrefix = (area: Area, feed: FeedKey): string => `${PREFIX[area]}${feedDir(feed)}/`;

/**
 * Where an area keeps every feed of a report (ends with "/"): `raw/<report>/`. Only listings use it (a report's
 * objects in every layout, for reparse and status); no object is placed by report alone.
 */
export const reportAreaPrefix = (area: Area, reportId: string): string => `${PREFIX[area]}${checkReportId(reportId)}/`;

/** The Glue table's location inside the curated bucket (ends with "/"): the report's table holds every feed. */
export const tablePrefix = (reportId: string): string => reportAreaPrefix('tables', reportId);

/**
 * The keys of an area's partition of `date` and every later one sort at or after this
 * (`manifests/<report>/connection=<name>/dt=2026-11-20`): a listing's StartAfter that reads from that date on.
 */
export const partitionStart = (area: Area, feed: FeedKey, date: string): string => `${areaPrefix(area, feed)}${partitionDir(date)}`;

/**
 * The Glue table's `storage.location.template`: `tables/<report>/connection=${connection}/dt=${dt}/`, Athena filling in
 * each projected connection and dt.
 */
export const tableLocationTemplate = (reportId: string): string =>
  `${tablePrefix(reportId)}${CONNECTION_KEY}=\${${CONNECTION_KEY}}/${partitionDir(`\${${PARTITION_KEY}}`)}/`;

/**
 * A glob of every window's Parquet file of a report, every feed: `tables/<report>/connection=*\/dt=*\/*.parquet`, plus a
 * suffix (s3rver's on-disk name).
 */
export const tableFilesGlob = (reportId: string, suffix = ''): string =>
  `${tablePrefix(reportId)}${CONNECTION_KEY}=*/${partitionDir('*')}/*.${CURATED_EXTENSION.tables}${suffix}`;

/** Every key of one (feed, window), for handlers and manifests that need several. */
export function keysFor(feed: FeedKey, window: WindowStart, format: RawFormatInput) {
  return {
    raw: rawKey(feed, window, format),
    table: tableKey(feed, window),
    rejected: rejectedKey(feed, window),
    manifest: manifestKey(feed, window),
  };
}

export interface RawKeyParts extends FeedKey {
  /** The partition value, "YYYY-MM-DD". */
  dt: string;
  /** The file name without extension, windowStamp(start). */
  stamp: string;
  format: RawFormat;
  /** The window start; the report definition's window size gives the end (windowAt). */
  start: LocalDateTime;
}

const DATED = `${PARTITION_KEY}=(\\d{4}-\\d{2}-\\d{2})/(\\d{4}-\\d{2}-\\d{2})T(\\d{2})-(\\d{2})-(\\d{2})\\.([a-z]+)`;
/** `<report>/connection=<name>/dt=<date>/<start>.<extension>`: report, connection, dt, the start's date, hour, minute, second, extension. */
const PARTITIONED = `([a-z][a-z0-9_]*)/${CONNECTION_KEY}=([a-z0-9][a-z0-9-]{0,31})/${DATED}`;
const RAW_KEY = new RegExp(`^${PREFIX.raw}${PARTITIONED}$`);
/** The layout before feeds: `raw/<report>/dt=<date>/<start>.<extension>`. */
const LEGACY_RAW_KEY = new RegExp(`^${PREFIX.raw}([a-z][a-z0-9_]*)/${DATED}$`);
const CURATED_KEY = new RegExp(`(?:^|/)(${CURATED_AREAS.join('|')})/${PARTITIONED}$`);

/** The window start a key names, if it is a real date-time in the partition it names. */
function startOf(dt: string, date: string, hh: string, mm: string, ss: string): LocalDateTime | string {
  let start: LocalDateTime;
  try {
    // parseLocalDateTime rejects what does not round-trip through the calendar: 2026-02-30, 25:00, 12:61.
    start = parseLocalDateTime(`${date}T${hh}:${mm}:${ss}`);
  } catch {
    return `names no real date-time ("${date}T${hh}-${mm}-${ss}")`;
  }
  return dt === formatLocalDate(start) ? start : `has partition ${partitionDir(dt)} but a window starting on ${formatLocalDate(start)}`;
}

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
      `S3 key "${key}" is under raw/ but ${why}. Expected raw/<report>/connection=<name>/dt=YYYY-MM-DD/YYYY-MM-DDTHH-mm-ss.<csv|pdf>, ` +
        'as the fetch function writes it; move the object elsewhere or delete it' +
        (LEGACY_RAW_KEY.test(key) ? ' (it is in the layout before connections: `reports reparse` rebuilds it, docs/deploy.md).' : '.'),
    );
  const [, reportId, connection, dt, date, hh, mm, ss, ext] = (m ?? []) as unknown as [string, string, string, string, string, string, string, string, string];
  const format = RAW_FORMATS.find((f) => f.toLowerCase() === ext);
  if (!m || !format) throw bad('does not follow the layout');
  const start = startOf(dt, date, hh, mm, ss);
  if (typeof start === 'string') throw bad(start);
  return { reportId, connection, dt, stamp: windowStamp(start), format, start };
}

/** A raw key of the layout before feeds (no connection directory): its report and window, for reparse's migration; null otherwise. */
export function parseLegacyRawKey(key: string): Omit<RawKeyParts, 'connection'> | null {
  const m = LEGACY_RAW_KEY.exec(key);
  if (!m) return null;
  const [, reportId, dt, date, hh, mm, ss, ext] = m as unknown as [string, string, string, string, string, string, string, string];
  const format = RAW_FORMATS.find((f) => f.toLowerCase() === ext);
  const start = startOf(dt, date, hh, mm, ss);
  return format && typeof start !== 'string' ? { reportId, dt, stamp: windowStamp(start), format, start } : null;
}

export interface CuratedKeyParts extends FeedKey {
  area: CuratedArea;
  /** The partition value, "YYYY-MM-DD". */
  dt: string;
  /** The file name without extension, windowStamp(start). */
  stamp: string;
  /** The window start; the report definition's window size gives the end (windowAt). */
  start: LocalDateTime;
}

/**
 * Reads a curated key (tables/, rejected/, manifests/) back into its parts; null for anything else (the curated
 * bucket's readers list it and skip what is not theirs). A file path that ends in a key reads the same (the local
 * lake keeps each object as a file named by its key, under `<lake>/<bucket>/`; strip s3rver's suffix first).
 */
export function parseCuratedKey(key: string): CuratedKeyParts | null {
  const m = CURATED_KEY.exec(key.replace(/\\/g, '/'));
  if (!m) return null;
  const [, area, reportId, connection, dt, date, hh, mm, ss, ext] = m as unknown as [string, CuratedArea, string, string, string, string, string, string, string, string];
  if (ext !== CURATED_EXTENSION[area]) return null;
  const start = startOf(dt, date, hh, mm, ss);
  return typeof start === 'string' ? null : { area, reportId, connection, dt, stamp: windowStamp(start), start };
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
