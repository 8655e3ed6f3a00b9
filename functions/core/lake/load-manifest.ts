import type { Manifest } from '../convert/csv-to-parquet.js';
import type { DefinitionRecord } from '../definitions/fingerprint.js';
import type { ErrorCode } from '../errors.js';
import type { QualityCheck } from '../quality/checks.js';

/**
 * The manifest of one load attempt, at manifests/<report>/connection=<name>/dt=<date>/<window start>.json in the curated
 * bucket (docs/architecture.md "S3 layout", s3-keys.ts manifestKey). The parse function writes it
 * (functions/parse-report/parse-object.ts); the local chain, `reports status`, reparse and the data checks read it:
 * one type for all of them, in the core so a reader needs nothing of the handler. Written last, after the table and rejects objects, by every attempt,
 * successful or not, so it always describes the latest attempt for its window:
 *
 * - outcome "loaded": the Parquet file at `table` holds `rows.written` rows of the raw object in `source`;
 *   `rejected` holds the rows that failed typing (a header-only file when none did).
 * - outcome "failed": nothing was written to the table by this attempt. A Parquet file from an earlier
 *   successful load of the window, if any, is still in place, with the rejects file that belongs to it;
 *   except after TooManyRejectedRows, whose rejects file is written (it lists what to fix).
 * - outcome "not-parsed": a PDF report; it stays in the raw bucket only.
 *
 * A "loaded" manifest also carries the data checks (functions/core/quality/checks.ts): each check's outcome,
 * the value observed and the band expected. A finding does not change the outcome: the data loaded as sent.
 */

export const MANIFEST_VERSION = 1;

export type LoadOutcome = 'loaded' | 'failed' | 'not-parsed';

/**
 * The parse log's line for each completed load: the dashboard's table of each report's newest load
 * (lib/constructs/dashboard.ts) filters on these, so a reworded line cannot empty it unnoticed.
 */
export const LOAD_LOG_MESSAGE = {
  loaded: 'Report loaded',
  'not-parsed': 'PDF report kept in the raw bucket; it is not parsed',
} as const satisfies Partial<Record<LoadOutcome, string>>;

export interface StoredRef {
  bucket: string;
  key: string;
  versionId?: string;
  etag?: string;
  bytes: number;
  /** Lower-case hex SHA-256 of the object's bytes. */
  sha256: string;
}

export interface SourceRef {
  bucket: string;
  key: string;
  /** The version the S3 event named and that was read (absent on an unversioned store). */
  versionId?: string;
  etag?: string;
  contentType?: string;
  /** Bytes and SHA-256 of the raw object, when it was read to its end (not after schema drift). */
  bytes?: number;
  sha256?: string;
  /** From the raw object's metadata: the fetch run (Lambda request id) that stored it, and when. */
  fetchRunId?: string;
  fetchedAt?: string;
  /** From the raw object's metadata: the Content-Encoding the gateway sent it in ("identity", "gzip", ...); the object is decoded. */
  wireCoding?: string;
}

/** The table file of an earlier load that a failed attempt left in place, and what wrote it. */
export interface TableInPlace {
  table: StoredRef;
  /** Absent when that load predates recorded definitions. */
  definition?: DefinitionRecord;
  loadRunId: string;
  finishedAt: string;
}

export interface LoadManifest {
  manifestVersion: typeof MANIFEST_VERSION;
  reportId: string;
  /** The feed's connection (its partition); the Glue table `loads` reads it from the key, as it reads `report`. */
  connection: string;
  /** Wall-clock times in `timeZone`, end exclusive. */
  window: { start: string; end: string; timeZone: string };
  outcome: LoadOutcome;
  error?: { code: ErrorCode | 'Unexpected'; message: string; retryable: boolean };
  source: SourceRef;
  table?: StoredRef;
  rejected?: StoredRef;
  rows?: { read: number; written: number; rejected: number; emptyLines: number };
  conversion?: Pick<Manifest, 'rowGroups' | 'encoder' | 'timings' | 'durationMs' | 'split'>;
  /** The data checks of a loaded window: volume against earlier weeks, duplicate keys (docs/operations.md). */
  checks?: QualityCheck[];
  /** The definition's volume.sumColumn and its total over the rows written: what later loads compare their sum with. */
  sum?: { column: string; total: string };
  /**
   * The columns this attempt parsed with and their fingerprint (definitions/fingerprint.ts). For "loaded", the
   * definition the table file was written with; readers compare it with the current one to find stale windows.
   * Absent in manifests written before it was recorded.
   */
  definition?: DefinitionRecord;
  /**
   * On a "failed" attempt: the table file this attempt left in place, from the window's previous manifest (an
   * earlier successful load), so a reader still knows which definition wrote it (table-in-place.ts).
   */
  tableInPlace?: TableInPlace;
  /** Seconds from the window's end to this load (the LoadLagSeconds metric). */
  loadLagSeconds?: number;
  /** The parse invocation (Lambda request id, or a uuid locally). */
  loadRunId: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}
