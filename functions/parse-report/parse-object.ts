import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { S3Client } from '@aws-sdk/client-s3';
import type { StartSplitPart } from '../core/convert/csv-split.js';
import { convertCsvToParquet, manifestOf, type ConvertOptions, type Manifest } from '../core/convert/csv-to-parquet.js';
import { definitionRecord } from '../core/definitions/fingerprint.js';
import { isPipelineError } from '../core/errors.js';
import { FINDING_LOG_MESSAGE, findingsOf, qualityChecks, type QualityCheck } from '../core/quality/checks.js';
import type { ReportCatalog } from '../core/definitions/catalog.js';
import type { Feed } from '../core/connections/feed.js';
import type { ReportDefinition } from '../core/definitions/report-definition.js';
import { keysFor, parseRawKey, type RawKeyParts } from '../core/lake/s3-keys.js';
import { formatLocalDateTime, parseWindowSize, wallClockIn, windowAt, type LocalDateTime, type ReportWindow } from '../core/time/window.js';
import { recordLoad, recordLoadCompleted, recordQuality, type MetricDimensions } from '../aws/metrics.js';
import { asByteSink, MultipartSink, type CommittingSink } from '../aws/multipart-sink.js';
import { redactText } from '../aws/redact.js';
import { ObjectNotFound, openObjectStream, putJson, type OpenedObject, type StoredObject } from '../aws/s3-streams.js';
import { readHistory } from './load-history.js';
import { LOAD_LOG_MESSAGE, MANIFEST_VERSION, type LoadManifest, type SourceRef, type StoredRef } from '../core/lake/load-manifest.js';
import { rawObjectState } from './raw-state.js';
import { readTableInPlace } from './table-in-place.js';

/**
 * One raw object to the curated bucket: the CSV streamed through the converter into a multipart upload
 * at the table key (committed only if the whole file converted), the rejected rows beside it, then the
 * manifest (load-manifest.ts). A PDF gets a manifest only. The parse function's handler, the local
 * pipeline and the tests call this with their own S3 client, logger and clock.
 */

export const PARQUET_CONTENT_TYPE = 'application/vnd.apache.parquet';
const REJECTS_CONTENT_TYPE = 'text/csv; charset=utf-8';

export interface ParseDeps {
  s3: S3Client;
  curatedBucket: string;
  catalog: ReportCatalog;
  /** The `environment` metric dimension (PIPELINE_ENVIRONMENT). */
  environment: string;
  logger: Logger;
  /** Omit to emit no metrics (local runs). */
  metrics?: Metrics;
  now?: () => Date;
  /** Converter settings (encoder mode, row group size); the report's own settings otherwise. */
  convert?: Pick<ConvertOptions, 'encoder' | 'workerUrl' | 'rowGroupRows' | 'rowGroupBytes'>;
  /** Multipart part size of the Parquet upload (default 8 MiB). */
  partSizeBytes?: number;
  /**
   * Parse large CSV files on two threads, the second part from a second (ranged) read of the raw object
   * (csv-split.ts): its SplitPart.start. For local runs, where a second core is there; the parse function
   * leaves it off, and its bundle then carries no split code.
   */
  splitParse?: StartSplitPart;
}

/** Files from this size on are split when `splitParse` is set: below it a second thread costs more than it saves. */
export const SPLIT_MIN_BYTES = 16 * 1024 * 1024;
/**
 * Where the cut goes, as a share of the file. The middle: this thread also reads (and hashes) the whole file
 * and uploads the Parquet, but the worker starts later (its isolate, its own compilation of the parser).
 */
const SPLIT_AT = 0.5;
/**
 * The worker's part is at most this much CSV: its Parquet waits in memory until this thread's part is
 * written (~20% of it, so ~20 MB at most). A larger file gets the gain of splitting only for this much of it.
 */
const SPLIT_MAX_TAIL_BYTES = 96 * 1024 * 1024;
/**
 * Files below this size are encoded on the parsing thread when the encoder is 'auto' (encoder-thread.ts): a
 * worker's isolate takes ~70 ms of CPU and ~45 MB to start, more than the encoding it would take over (~10% of
 * a conversion that runs at ~30 MiB/s). A run of a hundred small reports started a hundred isolates.
 */
export const ENCODER_WORKER_MIN_BYTES = 8 * 1024 * 1024;

/** The object an S3 event names. */
export interface RawObjectRef {
  bucket: string;
  /** Decoded (decodeS3EventKey), not as the event spells it. */
  key: string;
  versionId?: string;
}

export type ParseResult =
  | { outcome: 'ignored' | 'superseded' | 'deleted'; key: string; reason: string }
  | {
      outcome: LoadManifest['outcome'];
      key: string;
      reportId: string;
      connection: string;
      manifestKey: string;
      manifest: LoadManifest;
      /** Set when outcome is "failed": the typed error, for the caller to report. */
      error?: unknown;
    };

/** Wall-clock seconds from the window's end to `now` in the report's zone (DST shifts aside, which is close enough for lag). */
function lagSeconds(window: ReportWindow, now: Date, timeZone: string): number {
  const epoch = (t: LocalDateTime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
  return Math.round((epoch(wallClockIn(now, timeZone)) - epoch(window.end)) / 1000);
}

/** The raw bytes as they stream past: counted and hashed, so the manifest's checksum costs no second read. */
function digesting(body: Readable) {
  const hash = createHash('sha256');
  let bytes = 0;
  let complete = false;
  async function* stream(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body) {
        hash.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
      complete = true;
    } finally {
      // The converter stopped early (schema drift): release the connection instead of reading on.
      if (!complete) body.destroy();
    }
  }
  let sha256: string | undefined;
  const result = () => {
    if (!complete) return {};
    sha256 ??= hash.digest('hex');
    return { bytes, sha256 };
  };
  return { stream: stream(), result };
}

/**
 * A sink whose end() is only noted: the caller commits it later, after checking the load is still wanted.
 * For the rejects file, which the converter ends as soon as the input is read.
 */
function deferringEnd(sink: CommittingSink) {
  let ended = false;
  return {
    sink: { write: (b: Uint8Array) => sink.write(b), end: async () => void (ended = true), abort: (e: Error) => sink.abort(e) },
    commit: async () => {
      if (ended && !sink.stored) await sink.end();
    },
    abort: (e: Error) => sink.abort(e),
  };
}

const ref = (s: StoredObject): StoredRef => ({
  bucket: s.bucket,
  key: s.key,
  ...(s.versionId ? { versionId: s.versionId } : {}),
  ...(s.etag ? { etag: s.etag } : {}),
  bytes: s.bytes,
  sha256: s.sha256,
});

export async function parseRawObject(object: RawObjectRef, deps: ParseDeps, runId: string): Promise<ParseResult> {
  const parts = parseRawKey(object.key);
  if (!parts) return { outcome: 'ignored', key: object.key, reason: 'not under raw/' };
  const run = startParse(object, deps, runId, parts);
  try {
    const state = await rawObjectState(deps.s3, object);
    if (state === 'superseded') return skipSuperseded(run);
    if (state === 'deleted') return skipDeleted(run);
    const opened = await openRaw(run);
    if (!opened) return skipDeleted(run);
    const raw = digesting(opened.body);
    if (parts.format === 'PDF') return await keepPdf(run, raw);
    const sinks = openSinks(run);
    const conversion = await convert(run, sinks, raw, splitOf(run, opened), encoderFor(run, opened));
    if (!(await publish(run, sinks))) return skipSuperseded(run);
    return await recordLoaded(run, conversion, await judge(run, conversion));
  } catch (error) {
    return await recordFailure(run, error);
  }
}

/** One raw object's parse: what its stages share, and what its manifest gathers as they go. */
interface ParseRun {
  readonly object: RawObjectRef;
  readonly deps: ParseDeps;
  readonly runId: string;
  readonly feed: Feed;
  readonly report: ReportDefinition;
  readonly window: ReportWindow;
  readonly keys: ReturnType<typeof keysFor>;
  readonly logger: Logger;
  readonly dims: MetricDimensions;
  readonly now: () => Date;
  readonly startedAt: Date;
  /** performance.now() at the start, for the manifest's durationMs. */
  readonly t0: number;
  /** The raw object as the manifest names it, completed by what its read found (version, etag, metadata, checksum). */
  source: SourceRef;
  sinks?: LoadSinks;
  /** The converter's manifest: once the file converted, or failed after it was read through (too many rejects). */
  conversion?: Manifest;
}

/** Where a CSV's load goes: the table's and the rejects' multipart uploads, the rejects' end deferred (deferringEnd). */
interface LoadSinks {
  table: CommittingSink;
  rejects: CommittingSink;
  deferredRejects: ReturnType<typeof deferringEnd>;
}

/** The loaded window judged: its manifest, the data checks in it, the load's lag. */
interface Judged {
  manifest: LoadManifest;
  checks: QualityCheck[];
  loadLagSeconds: number;
}

/** The report, window, keys and logger the raw key names, the clock started. */
function startParse(object: RawObjectRef, deps: ParseDeps, runId: string, parts: RawKeyParts): ParseRun {
  const now = deps.now ?? (() => new Date());
  const feed = deps.catalog.feed(parts.reportId, parts.connection);
  const report = feed.report;
  const window = windowAt(parts.start, parseWindowSize(report.window));
  const keys = keysFor(feed, window, parts.format);
  const label = `${formatLocalDateTime(window.start)}/${formatLocalDateTime(window.end)}`;
  const logger = deps.logger.createChild({ persistentKeys: { runId, report: report.id, connection: feed.connection, window: label, sourceKey: object.key } });
  const dims = { report: report.id, connection: feed.connection, environment: deps.environment };
  const startedAt = now();
  const t0 = performance.now();
  const source: SourceRef = { bucket: object.bucket, key: object.key, ...(object.versionId ? { versionId: object.versionId } : {}) };
  return { object, deps, runId, feed, report, window, keys, logger, dims, now, startedAt, t0, source };
}

/** The raw object opened for reading, its source completed from what S3 says of it; undefined when it is gone. */
async function openRaw(run: ParseRun): Promise<OpenedObject | undefined> {
  const { object, deps } = run;
  let opened: OpenedObject;
  try {
    opened = await openObjectStream({ client: deps.s3, bucket: object.bucket, key: object.key, versionId: object.versionId });
  } catch (e) {
    // Deleted between the look and the read (or the version itself was deleted).
    if (e instanceof ObjectNotFound) return undefined;
    throw e;
  }
  run.source = {
    ...run.source,
    ...(opened.versionId ? { versionId: opened.versionId } : {}),
    ...(opened.etag ? { etag: opened.etag } : {}),
    ...(opened.contentType ? { contentType: opened.contentType } : {}),
    ...(opened.metadata['run-id'] ? { fetchRunId: opened.metadata['run-id'] } : {}),
    ...(opened.metadata['fetched-at'] ? { fetchedAt: opened.metadata['fetched-at'] } : {}),
    ...(opened.metadata['wire-coding'] ? { wireCoding: opened.metadata['wire-coding'] } : {}),
  };
  return opened;
}

/** A PDF report: read through for its checksum, then a manifest only. */
async function keepPdf(run: ParseRun, raw: ReturnType<typeof digesting>): Promise<ParseResult> {
  const { deps, logger } = run;
  // Nothing to parse, but the checksum still proves which file the manifest speaks of.
  for await (const _ of raw.stream);
  run.source = { ...run.source, ...raw.result() };
  const manifest = manifestFor(run, 'not-parsed');
  await writeManifest(run, manifest);
  // Stored is all a PDF report gets: the window arrived, so the freshness alarm must hear of it.
  if (deps.metrics) recordLoadCompleted(deps.metrics, run.dims);
  logger.info(LOAD_LOG_MESSAGE['not-parsed'], { manifestKey: run.keys.manifest, ...run.source });
  return resultOf(run, manifest);
}

/** The table's and the rejects' multipart uploads, started uncommitted: publish() commits them. */
function openSinks(run: ParseRun): LoadSinks {
  const { object, deps, report, window, keys, runId, source } = run;
  const objectMetadata = {
    'report-id': report.id,
    'window-start': formatLocalDateTime(window.start),
    'source-key': object.key,
    ...(source.versionId ? { 'source-version-id': source.versionId } : {}),
    'load-run-id': runId.replace(/[^\x20-\x7e]/g, '?'),
  };
  const sink = (key: string, contentType: string) =>
    asByteSink(new MultipartSink({ client: deps.s3, bucket: deps.curatedBucket, key, contentType, metadata: objectMetadata, partSizeBytes: deps.partSizeBytes }));
  const table = sink(keys.table, PARQUET_CONTENT_TYPE);
  // Written on every run that reads the file through (header-only when nothing was rejected), so a re-run
  // never leaves an older run's rejects beside a table that no longer lacks them.
  const rejects = sink(keys.rejected, REJECTS_CONTENT_TYPE);
  run.sinks = { table, rejects, deferredRejects: deferringEnd(rejects) };
  return run.sinks;
}

/** A second, ranged read of a large file for a second parsing thread, when the deps ask for one (csv-split.ts). */
function splitOf(run: ParseRun, opened: OpenedObject): ConvertOptions['split'] {
  const { object, deps } = run;
  const size = opened.contentLength;
  if (deps.splitParse && size !== undefined && size >= SPLIT_MIN_BYTES) {
    return {
      at: Math.max(Math.floor(size * SPLIT_AT), size - SPLIT_MAX_TAIL_BYTES),
      start: deps.splitParse,
      tail: async (from: number) =>
        (await openObjectStream({ client: deps.s3, bucket: object.bucket, key: object.key, versionId: opened.versionId ?? object.versionId, from, ...(opened.etag ? { ifMatch: opened.etag } : {}) })).body,
    };
  }
  return undefined;
}

/** The encoder asked for, but 'auto' on a file known to be small: inline. */
function encoderFor(run: ParseRun, opened: OpenedObject): ConvertOptions['encoder'] {
  const asked = run.deps.convert?.encoder ?? 'auto';
  const size = opened.contentLength;
  return asked === 'auto' && size !== undefined && size < ENCODER_WORKER_MIN_BYTES ? 'inline' : asked;
}

/** The CSV streamed through the converter into the sinks; the source gets the bytes and checksum it read, even on failure. */
async function convert(run: ParseRun, sinks: LoadSinks, raw: ReturnType<typeof digesting>, split: ConvertOptions['split'], encoder: ConvertOptions['encoder']): Promise<Manifest> {
  try {
    run.conversion = await convertCsvToParquet({
      ...run.deps.convert,
      encoder,
      ...(split ? { split } : {}),
      input: raw.stream,
      output: sinks.table,
      rejects: sinks.deferredRejects.sink,
      report: run.report,
      finishOutput: false,
    });
  } catch (e) {
    run.conversion = manifestOf(e);
    throw e;
  } finally {
    run.source = { ...run.source, ...raw.result() };
  }
  return run.conversion;
}

/** Commits the rejects, then the table, unless a newer raw version came meanwhile: then both are aborted (false). */
async function publish(run: ParseRun, sinks: LoadSinks): Promise<boolean> {
  if (await isSuperseded(run)) {
    const reason = new Error('superseded by a newer version of the raw file');
    await Promise.all([sinks.table.abort(reason), sinks.deferredRejects.abort(reason)]);
    return false;
  }
  // Rejects first: if they cannot be stored, the table must not be published without them.
  await sinks.deferredRejects.commit();
  await sinks.table.end();
  return true;
}

/** The loaded window's lag and data checks, and its manifest with them. */
async function judge(run: ParseRun, conversion: Manifest): Promise<Judged> {
  const { deps, feed, report, window, logger, now } = run;
  const loadLagSeconds = lagSeconds(window, now(), report.schedule.timeZone);
  // The data checks judge what was written against earlier weeks' manifests; whatever they find, the load stands.
  const { history, problem } = await readHistory(deps.s3, deps.curatedBucket, feed, window);
  if (problem) logger.error('Could not read the history of the volume check: the window is not judged', { problem });
  const checks = qualityChecks({ report, window, rowsWritten: conversion.rowsWritten, tally: conversion.tally, history, historyProblem: problem });
  const sumColumn = report.volume.sumColumn;
  const sumTotal = conversion.tally?.sum;
  const manifest = manifestFor(run, 'loaded', {
    loadLagSeconds,
    ...(checks.length ? { checks } : {}),
    ...(sumColumn !== undefined && sumTotal !== undefined ? { sum: { column: sumColumn, total: sumTotal } } : {}),
  });
  return { manifest, checks, loadLagSeconds };
}

/** The loaded window's manifest stored, then its metrics and log lines. */
async function recordLoaded(run: ParseRun, conversion: Manifest, { manifest, checks, loadLagSeconds }: Judged): Promise<ParseResult> {
  const { deps, dims, keys, logger } = run;
  await writeManifest(run, manifest);
  const findings = findingsOf(checks);
  if (deps.metrics) {
    recordLoad(deps.metrics, dims, { rowsWritten: conversion.rowsWritten, rowsRejected: conversion.rowsRejected, loadLagSeconds });
    // Zero rows included: a header-only report is a day without sales, not missing data.
    recordLoadCompleted(deps.metrics, dims);
    recordQuality(deps.metrics, dims, { findings: findings.length, duplicateKeys: conversion.tally?.duplicateKeys });
  }
  logger.info(LOAD_LOG_MESSAGE.loaded, { manifestKey: keys.manifest, rows: manifest.rows, table: manifest.table, loadLagSeconds });
  // One line per flagged window, naming it (persistent keys report and window): the dashboard lists these.
  if (findings.length) logger.warn(FINDING_LOG_MESSAGE, { finding: findings.join('; '), manifestKey: keys.manifest });
  return resultOf(run, manifest);
}

/** Any failure after the key named a report: the rejects kept when they are complete, a "failed" manifest, its metric and log line. */
async function recordFailure(run: ParseRun, error: unknown): Promise<ParseResult> {
  const { deps, dims, keys, logger, conversion, sinks } = run;
  const code = isPipelineError(error) ? error.code : 'Unexpected';
  const message = redactText(error instanceof Error ? error.message : String(error));
  // Too many rejected rows: the table is not written, but the rejects file lists what to fix.
  if (conversion && sinks) {
    try {
      if (!(await isSuperseded(run))) await sinks.deferredRejects.commit();
    } catch (rejectsError) {
      logger.error('Could not store the rejected rows', { error: rejectsError });
    }
  }
  // Nothing was written to the table: say which earlier load's file stays there, and under which definition.
  const tableInPlace = sinks?.table.stored ? undefined : await readTableInPlace(deps.s3, deps.curatedBucket, keys.manifest).catch((e: unknown) => {
    logger.warn('Could not read the previous manifest: the failed manifest will not say which table file stays in place', { error: e });
    return undefined;
  });
  const manifest = manifestFor(run, 'failed', {
    error: { code, message, retryable: isPipelineError(error) ? error.retryable : true },
    ...(tableInPlace ? { tableInPlace } : {}),
  });
  // Rows are known when the whole file was read (too many rejects): the rejected-rows alarm should see them.
  if (deps.metrics && conversion) recordLoad(deps.metrics, dims, { rowsWritten: 0, rowsRejected: conversion.rowsRejected });
  logger.error(
    sinks?.table.stored
      ? 'Load failed after the table was written (storing the manifest failed); the retry loads the window again'
      : 'Load failed: nothing was written to the table',
    { code, error, rows: manifest.rows },
  );
  try {
    await writeManifest(run, manifest);
  } catch (manifestError) {
    // The original error matters more; the retry writes the manifest again.
    logger.error('Could not write the failed-load manifest', { error: manifestError });
  }
  return resultOf(run, manifest, error);
}

/** The window's manifest as things stand: the source, what was stored and converted so far, the times. */
function manifestFor(run: ParseRun, outcome: LoadManifest['outcome'], extra: Partial<LoadManifest> = {}): LoadManifest {
  const { report, window, source, sinks, conversion, now } = run;
  const finishedAt = now();
  return {
    manifestVersion: MANIFEST_VERSION,
    reportId: report.id,
    connection: run.feed.connection,
    window: { start: formatLocalDateTime(window.start), end: formatLocalDateTime(window.end), timeZone: report.schedule.timeZone },
    outcome,
    ...extra,
    source,
    ...(sinks?.table.stored ? { table: ref(sinks.table.stored) } : {}),
    ...(sinks?.rejects.stored ? { rejected: ref(sinks.rejects.stored) } : {}),
    ...(conversion
      ? {
          rows: { read: conversion.rowsRead, written: conversion.rowsWritten, rejected: conversion.rowsRejected, emptyLines: conversion.emptyLines },
          conversion: {
            rowGroups: conversion.rowGroups,
            encoder: conversion.encoder,
            timings: conversion.timings,
            durationMs: conversion.durationMs,
            ...(conversion.split ? { split: conversion.split } : {}),
          },
        }
      : {}),
    // What readers compare with the current definition to find windows written under an older one.
    definition: definitionRecord(report.columns),
    loadRunId: run.runId,
    startedAt: run.startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: Math.round(performance.now() - run.t0),
  };
}

function writeManifest(run: ParseRun, manifest: LoadManifest) {
  return putJson({ client: run.deps.s3, bucket: run.deps.curatedBucket, key: run.keys.manifest, value: manifest });
}

function resultOf(run: ParseRun, manifest: LoadManifest, error?: unknown): ParseResult {
  return {
    outcome: manifest.outcome,
    key: run.object.key,
    reportId: run.report.id,
    connection: run.feed.connection,
    manifestKey: run.keys.manifest,
    manifest,
    ...(error === undefined ? {} : { error }),
  };
}

/**
 * S3 events can arrive late or twice, and two parses of one window can race (a re-fetch while the first
 * file is still parsing). The raw key is versioned: only the parse of its current version may write the
 * window's table, or an older report could replace a newer one. Checked before reading and again before
 * committing; without versions (the local lake) there is nothing to compare.
 */
async function isSuperseded(run: ParseRun): Promise<boolean> {
  return (await rawObjectState(run.deps.s3, run.object)) === 'superseded';
}

function skipSuperseded(run: ParseRun): ParseResult {
  run.logger.info('A newer version of the raw file exists: its own event loads the window; this one is skipped', {
    versionId: run.object.versionId,
  });
  return { outcome: 'superseded', key: run.object.key, reason: `version ${run.object.versionId} is no longer the current one` };
}

/**
 * A raw file deleted before its event was handled (by hand, or a window cleaned up) is not a failed load:
 * nothing to parse, no manifest, no message parked in the dead-letter queue; a log line says so.
 */
function skipDeleted(run: ParseRun): ParseResult {
  run.logger.info('The raw file was deleted before it was parsed: nothing to load, this event is skipped', { versionId: run.object.versionId });
  return { outcome: 'deleted', key: run.object.key, reason: 'the raw file no longer exists' };
}
