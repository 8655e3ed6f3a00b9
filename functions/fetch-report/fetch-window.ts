import type { Logger } from '@aws-lambda-powertools/logger';
import type { S3Client } from '@aws-sdk/client-s3';
import { renderBody } from '../core/gateway/body-template.js';
import { expectationOf } from '../core/gateway/answer.js';
import { fetchReport, type GatewayClientOptions, type GatewayEvent } from '../core/gateway/client.js';
import type { Feed } from '../core/connections/feed.js';
import { rawKey } from '../core/lake/s3-keys.js';
import type { GatewaySecret } from '../core/gateway/secret.js';
import { formatLocalDateTime, type ReportWindow } from '../core/time/window.js';
import { tagObject, type StoredObject } from '../aws/s3-streams.js';
import { uploadStream } from '../aws/upload-stream.js';

/**
 * One window: render the report body, call the gateway, stream the answer into the raw bucket at the
 * window's key (docs/architecture.md, "S3 layout"). Never buffers the report: the bytes go from the gateway socket
 * through a hash into S3 multipart parts. A failure anywhere leaves nothing at the key (uploadStream aborts).
 */

/** Gateway client settings a caller may tune (tests shorten retries; a deployment could sign bodies). */
export type GatewayTuning = Pick<GatewayClientOptions, 'retry' | 'timeouts' | 'bodySigning' | 'sleep' | 'acceptEncoding'>;

export interface FetchWindowDeps {
  s3: S3Client;
  rawBucket: string;
  gateway?: GatewayTuning;
  /** Multipart part size of the raw upload (default: uploadStream's 8 MiB). */
  partSizeBytes?: number;
  /** Parts of the raw upload in flight at once (default: uploadStream's 2). */
  queueSize?: number;
  now?: () => Date;
  /** Aborts the gateway call and the upload with its reason (the handler's deadline, deadline.ts). */
  signal?: AbortSignal;
}

/**
 * What one window left in the raw bucket: the stored object (its SHA-256 is known only after the last
 * byte, so it is reported here, not in metadata) and the call that produced it. Plain JSON: it is the
 * fetch function's result and goes into logs.
 */
export interface FetchedWindow extends StoredObject {
  reportId: string;
  connection: string;
  /** Wall-clock "YYYY-MM-DDTHH:mm:ss" in the report's zone; end exclusive. */
  windowStart: string;
  windowEnd: string;
  /** As the gateway sent it, e.g. "text/csv; charset=UTF-8". */
  contentType: string;
  kind: 'csv' | 'pdf';
  attempts: number;
  durationMs: number;
  /** The Content-Encoding it came in ("identity", "gzip", ...); `bytes` and `sha256` are of the decoded report. */
  wireCoding: string;
  /** Bytes on the wire, before decoding. */
  wireBytes: number;
  /** CSV: whether the first line is exactly the definition's header (if not, the parse will refuse it as SchemaDrift). */
  headerMatches?: boolean;
  /** Fetched with a value read again after the gateway refused the one read before (a secret rotated during the run). */
  secretReread?: 'changed';
}

/** "2026-11-20T00:00:00/2026-11-21T00:00:00": the window on every log line, as an ISO 8601 interval. */
export const windowLabel = (w: ReportWindow): string => `${formatLocalDateTime(w.start)}/${formatLocalDateTime(w.end)}`;

const FALLBACK_CONTENT_TYPE = { csv: 'text/csv', pdf: 'application/pdf' } as const;

/** S3 user metadata travels as HTTP headers: printable ASCII only, or the PUT is refused. */
const headerSafe = (v: string) => v.replace(/[^\x20-\x7e]/g, '?').slice(0, 256);

export async function fetchWindow(
  input: { feed: Feed; window: ReportWindow; endpointUrl: string; secret: GatewaySecret; runId: string; logger: Logger },
  deps: FetchWindowDeps,
): Promise<FetchedWindow> {
  const { feed, window, endpointUrl, secret, runId, logger } = input;
  const report = feed.report;
  const now = deps.now ?? (() => new Date());
  const started = performance.now();
  const answer = await fetchReport({
    ...deps.gateway,
    endpointUrl,
    secret,
    body: renderBody(report.bodyTemplate, window),
    expect: expectationOf(report),
    signal: deps.signal,
    onEvent: (event) => logGatewayEvent(logger, event),
  });
  const key = rawKey(feed, window, answer.fileExtension);
  const contentType = answer.contentType || FALLBACK_CONTENT_TYPE[answer.kind];
  const stored = await uploadStream({
    client: deps.s3,
    bucket: deps.rawBucket,
    key,
    body: answer.body,
    contentType,
    partSizeBytes: deps.partSizeBytes,
    queueSize: deps.queueSize,
    // What the parse function and a person looking at the object need to place it without its key.
    metadata: {
      'report-id': report.id,
      connection: feed.connection,
      'window-start': formatLocalDateTime(window.start),
      'window-end': formatLocalDateTime(window.end),
      'time-zone': report.schedule.timeZone,
      'run-id': headerSafe(runId),
      'gateway-content-type': headerSafe(answer.contentType),
      'fetched-at': now().toISOString(),
      'gateway-attempts': String(answer.attempts),
      // The object is the decoded report; this says how it travelled. Its wire size is known only at the end: a tag.
      'wire-coding': headerSafe(answer.contentCoding),
    },
  });
  const wireBytes = answer.wireBytes();
  try {
    await tagObject({
      client: deps.s3,
      bucket: stored.bucket,
      key: stored.key,
      versionId: stored.versionId,
      tags: { sha256: stored.sha256, 'wire-bytes': String(wireBytes) },
    });
  } catch (error) {
    // The file is stored whole; the tag only repeats the checksum the result, the logs and the manifest carry.
    logger.warn('Could not tag the raw file with its SHA-256', { key: stored.key, error });
  }
  return {
    reportId: report.id,
    connection: feed.connection,
    windowStart: formatLocalDateTime(window.start),
    windowEnd: formatLocalDateTime(window.end),
    bucket: stored.bucket,
    key: stored.key,
    versionId: stored.versionId,
    etag: stored.etag,
    bytes: stored.bytes,
    sha256: stored.sha256,
    contentType,
    kind: answer.kind,
    attempts: answer.attempts,
    durationMs: Math.round(performance.now() - started),
    wireCoding: answer.contentCoding,
    wireBytes,
    ...(answer.headerMatches !== undefined ? { headerMatches: answer.headerMatches } : {}),
  };
}

/** The client's events as log lines. They never carry a key or a signature (gateway/client.ts says so). */
function logGatewayEvent(logger: Logger, event: GatewayEvent): void {
  switch (event.type) {
    case 'attempt':
      logger.debug('Calling the gateway', { ...event });
      break;
    case 'response':
      logger.debug('Gateway answered', { ...event });
      break;
    case 'retry':
      logger.warn('Gateway busy or unreachable: retrying', { ...event });
      break;
    case 'accepted':
      logger.info('Gateway is sending the report', { ...event });
      if (event.headerMatches === false) {
        logger.warn("The report's first line is not the definition's header: the parse will refuse it as SchemaDrift; the raw file is kept", {
          firstLine: event.firstLine,
        });
      }
      break;
    case 'body-end':
      logger.debug('Report received', { ...event });
      break;
    case 'body-error':
      logger.warn('The report broke off', { ...event });
      break;
  }
}
