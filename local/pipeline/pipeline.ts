import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { FullBatchFailureError } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3EventRecord } from 'aws-lambda';
import { bucketNames, LOCAL_ENVIRONMENT, type BucketNames } from '../../functions/core/naming.js';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { SplitPart } from '../../functions/core/convert/csv-split.js';
import { ConfigurationError, isPipelineError, type ErrorCode } from '../../functions/core/errors.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { feedId, type Feed, type FeedKey } from '../../functions/core/connections/feed.js';
import { decodeS3EventKey, PREFIX, rawKey } from '../../functions/core/lake/s3-keys.js';
import type { GatewaySecret, SignatureMethod } from '../../functions/core/gateway/signature-methods.js';
import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import { formatLocalDateTime, parseWindowSize, windowAt, windowStartOf, type ReportWindow } from '../../functions/core/time/window.js';
import { redactText } from '../../functions/aws/redact.js';
import { createS3Client } from '../../functions/aws/s3-client.js';
import { fetchWindows, type FetchRunDeps } from '../../functions/fetch-report/fetch-windows.js';
import type { FetchedWindow, GatewayTuning } from '../../functions/fetch-report/fetch-window.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import type { ParseDeps, ParseResult } from '../../functions/parse-report/parse-object.js';
import { handleParseBatch } from '../../functions/parse-report/sqs-batch.js';
import { ensureBuckets, mirrorTables } from '../lake/external-store.js';
import { startLocalLake, type LocalLake } from '../lake/local-lake.js';
import type { LakeThread } from '../lake/lake-thread.js';
import { objectCreatedRecord, sqsEventOf } from '../lake/sqs-message.js';
import { openLakeDatabase, type LakeDatabase } from '../duckdb/duckdb.js';
import { removePartialTables } from './interrupt.js';
import { localLogger } from './local-logger.js';
import type { SimulatorOptions } from '../simulator/index.js';
import type { RealGateway } from '../connections/connection-flags.js';
import { LocalGateways, type LocalConnection } from '../connections/local-gateways.js';
import { localRequestBounds } from '../connections/request-bound.js';

/**
 * The whole pipeline on this machine, chained as AWS chains it, through the handlers' own code:
 *
 *   fetchWindows (the fetch function's logic) -> raw bucket of the local lake (s3rver)
 *   -> ObjectCreated event -> an SQS-shaped message -> handleParseBatch (the parse function's logic)
 *   -> Parquet, rejects and manifest in the curated bucket -> DuckDB views over the files on disk.
 *
 * Each report goes over its connection: a real gateway when one was given for it, else an embedded simulator of the
 * connection's own (local/connections/local-gateways.ts), never more requests in flight to it than its bound.
 * `npm start` (local/cli/run.ts) and `reports backfill` run windows of any report through this. Differences from AWS:
 * no SQS retries or dead-letter queue (a failed parse is reported in the window's outcome at once), no
 * object versions (s3rver has none), and no metrics unless asked for (the handlers' logs stay silent unless
 * POWERTOOLS_LOG_LEVEL is set).
 */

export interface LocalPipelineOptions {
  /** Connections pointed at a real gateway, by name (local/connections/connection-flags.ts); the others get a simulator each. */
  gateways?: Readonly<Record<string, RealGateway>>;
  /** The `default` connection's gateway (full rpt-engine URL), as `gateways.default` with `secret`. */
  gatewayUrl?: string;
  /** The `default` connection's credentials: required with gatewayUrl; default with the simulator: its test account for `signatureMethod`. */
  secret?: GatewaySecret;
  /** Which simulator test account signs when no secret is given (default DEFAULT_SIGNATURE_METHOD). */
  signatureMethod?: SignatureMethod;
  /** Where the embedded lake keeps its buckets (and, with s3Endpoint, the local copy of the tables). */
  lakeDir: string;
  /** The embedded lake's server thread, started earlier for lakeDir and these buckets (lake-thread.ts); default: started here. */
  lakeThread?: LakeThread;
  /** An external S3-compatible store instead of the embedded lake. Credentials: s3Credentials or the SDK's default chain. */
  s3Endpoint?: string;
  s3Credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Names the buckets (bucketNames); default "local". */
  environment?: string;
  /** Default: the shipped definitions (loadCatalog). Tests pass variants (a PDF report). */
  catalog?: ReportCatalog;
  /** Settings of the embedded simulators (rows per day, a fault mode, sample files); each serves its connection's reports. */
  simulator?: SimulatorOptions;
  /** Connections whose simulators start while the lake does (the others start on first use). */
  connections?: readonly string[];
  /** Requests in flight at most per connection; default: the smallest maxConcurrentRequests of the environment files (request-bound.ts). */
  maxConcurrentRequests?: (connection: string) => number;
  /** Gateway client settings (tests shorten retries). */
  gateway?: GatewayTuning;
  /** Default: the silent-unless-asked local logger (local-logger.ts). */
  logger?: Logger;
  /** The handlers' metrics, as in Lambda (EMF lines on stdout); default none, which would only clutter the terminal. Tests pass one. */
  metrics?: Metrics;
}

/** What one window came to, fetch and parse together. */
export interface WindowOutcome extends FeedKey {
  window: ReportWindow;
  /** Wall-clock "YYYY-MM-DDTHH:mm:ss", end exclusive. */
  windowStart: string;
  windowEnd: string;
  /** loaded: Parquet written; not-parsed: a PDF, kept raw with a manifest; failed: see error. */
  status: LoadManifest['outcome'];
  /** The raw object, when the fetch succeeded. */
  fetched?: FetchedWindow;
  /** The load's manifest, as written to the curated bucket, when the parse step got that far. */
  manifest?: LoadManifest;
  rowsRead: number;
  rowsWritten: number;
  rowsRejected: number;
  /** Raw report bytes. */
  bytes: number;
  parquetBytes: number;
  durationMs: number;
  error?: { stage: 'fetch' | 'parse'; code: ErrorCode | 'Unexpected'; message: string };
}

/** One window of one feed, as the interrupt handling names what was in flight. */
export interface ReportWindowRef extends FeedKey {
  window: ReportWindow;
}

export interface LocalPipeline {
  readonly catalog: ReportCatalog;
  readonly environment: string;
  readonly buckets: BucketNames;
  /** The gateway of a connection, and who signs: its embedded simulator is started on first use. */
  connection(name: string): Promise<LocalConnection>;
  /** The embedded lake, when no s3Endpoint was given. */
  readonly lake: LocalLake | undefined;
  /** The S3 endpoint in use (the embedded lake's loopback URL or s3Endpoint). */
  readonly s3Endpoint: string;
  readonly s3: S3Client;
  /**
   * Fetches one window of a feed (a report over one of its connections) and loads it: the raw file, then Parquet, rejects and
   * manifest. Never throws for a window's own failure. Windows may run at once: each connection's limiter keeps its
   * requests in flight within its bound, whatever the callers do.
   */
  runWindow(feed: FeedKey, window: ReportWindow): Promise<WindowOutcome>;
  /**
   * The directory whose files DuckDB reads (give it to openLakeDatabase as lakeDir): the lake itself, or,
   * with s3Endpoint, a local copy of the store's tables made now (<lakeDir>/s3-cache).
   */
  queryLakeDir(): Promise<string>;
  /** DuckDB with one view per report of the catalog over the current curated Parquet. Close it after use. */
  openDatabase(): Promise<LakeDatabase>;
  /** Stops the lake and the simulators (the lake's files stay in lakeDir). */
  close(): Promise<void>;
  /** The windows whose runWindow has not returned yet and whose parse has not ended. */
  inFlight(): ReportWindowRef[];
  /**
   * The windows whose runWindow has not returned yet although their parse ended, with its outcome: the embedded
   * lake's runWindow returns once the whole lake is settled, so a window loaded while another still parses waits.
   */
  parsedInFlight(): Array<ReportWindowRef & { status: LoadManifest['outcome'] }>;
  /**
   * For an interrupt, just before the process exits: removes what the windows in flight left half-written
   * in the embedded lake's table (and their manifests, so a re-run loads them again). Synchronous. Returns
   * the windows cleaned up. An external store needs nothing: S3 shows an upload only once it is whole.
   */
  abandonInFlight(): ReportWindowRef[];
}

const errorInfo = (stage: 'fetch' | 'parse', e: unknown): NonNullable<WindowOutcome['error']> => ({
  stage,
  code: isPipelineError(e) ? e.code : 'Unexpected',
  message: redactText(e instanceof Error ? e.message : String(e)),
});

/** What the chain's stages share once it is started. */
interface Chain {
  options: LocalPipelineOptions;
  environment: string;
  catalog: ReportCatalog;
  gateways: LocalGateways;
  buckets: BucketNames;
  /** The embedded lake, when no s3Endpoint was given. */
  lake: LocalLake | undefined;
  s3: S3Client;
  fetchDeps: FetchRunDeps;
  parseDeps: ParseDeps;
  /** What the parse step said about each raw key, collected as the messages are handled. */
  parsed: Map<string, ParseResult>;
  parseErrors: Map<string, unknown>;
  /** The windows whose runWindow has not returned yet. */
  inFlight: Set<ReportWindowRef>;
}

/** Where the chain's objects go: the embedded lake, or an external store. */
interface Store {
  lake: LocalLake | undefined;
  s3: S3Client;
  s3Endpoint: string;
}

type OutcomeFields = Partial<WindowOutcome> & Pick<WindowOutcome, 'status'>;

export async function startLocalPipeline(options: LocalPipelineOptions): Promise<LocalPipeline> {
  const environment = options.environment ?? LOCAL_ENVIRONMENT;
  const catalog = options.catalog ?? loadCatalog();
  const buckets = bucketNames(environment);
  const logger = options.logger ?? localLogger();
  if (options.gatewayUrl && !options.secret) {
    throw new ConfigurationError('A gateway URL needs its credentials (--secret-file): the JSON with the login and the control key or private key.');
  }

  const closers: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  };
  try {
    const gateways = localGateways(options, catalog);
    closers.push(() => gateways.close());
    const warming = Promise.all((options.connections ?? []).map((c) => gateways.connection(c)));
    // Awaited once the lake is up; should the lake fail first, its own failure is the one reported.
    warming.catch(() => undefined);
    const store = await openStore(options, buckets, closers);
    await warming;
    const { fetchDeps, parseDeps } = handlerDeps({ options, catalog, environment, logger, buckets, s3: store.s3 }, gateways);
    const { lake, s3 } = store;
    const chain: Chain = { options, environment, catalog, gateways, buckets, lake, s3, fetchDeps, parseDeps, parsed: new Map(), parseErrors: new Map(), inFlight: new Set() };
    if (chain.lake) subscribeParse(chain, chain.lake, closers);
    return pipelineOf(chain, store.s3Endpoint, closeAll);
  } catch (e) {
    await closeAll();
    throw e;
  }
}

/** Each connection's gateway: the real ones given (gatewayUrl with secret is `default`'s), a simulator for the rest. */
function localGateways(options: LocalPipelineOptions, catalog: ReportCatalog): LocalGateways {
  const real = { ...options.gateways };
  const { gatewayUrl, secret } = options;
  if (gatewayUrl && secret) real[DEFAULT_CONNECTION] = { endpointUrl: gatewayUrl, loadSecret: async () => secret, credentials: 'the secret given' };
  return new LocalGateways({
    catalog,
    real,
    defaultSecret: gatewayUrl ? undefined : secret,
    signatureMethod: options.signatureMethod,
    simulator: options.simulator,
    boundOf: options.maxConcurrentRequests ?? localRequestBounds(),
  });
}

async function openStore(options: LocalPipelineOptions, buckets: BucketNames, closers: Array<() => Promise<void>>): Promise<Store> {
  if (options.s3Endpoint) {
    const s3Endpoint = options.s3Endpoint;
    const client = createS3Client({ endpoint: s3Endpoint, credentials: options.s3Credentials });
    closers.push(async () => client.destroy());
    await ensureBuckets(client, buckets);
    return { lake: undefined, s3: client, s3Endpoint };
  }
  const lake = await startLocalLake({ dir: options.lakeDir, buckets }, options.lakeThread);
  closers.push(() => lake.close());
  return { lake, s3: lake.client, s3Endpoint: lake.endpoint };
}

/** What the fetch and parse functions' logic is given here in place of Lambda's environment. */
function handlerDeps(
  setup: { options: LocalPipelineOptions; catalog: ReportCatalog; environment: string; logger: Logger; buckets: BucketNames; s3: S3Client },
  gateways: LocalGateways,
): { fetchDeps: FetchRunDeps; parseDeps: ParseDeps } {
  const { options, catalog, environment, logger, buckets, s3 } = setup;
  const fetchDeps: FetchRunDeps = {
    catalog,
    s3,
    rawBucket: buckets.raw,
    environment,
    logger,
    connectionOf: (name) => gateways.connectionOf(name),
    gateway: options.gateway,
    metrics: options.metrics,
    // The raw report goes up in the smallest parts S3 allows (5 MiB, against 8 in Lambda), four at a time
    // (two in Lambda): the lake's thread hashes and writes a part while the next ones arrive. The run's
    // peak of memory comes later, in the parse; four parts in flight add ~10 MB here, and the chain bench
    // stores the report ~10% faster.
    partSizeBytes: 5 * 1024 * 1024,
    queueSize: 4,
  };
  // Locally a second core is there while the parse runs: large files parse on two threads (csv-split.ts).
  // Parquet goes up in the smallest parts S3 allows (5 MiB, against the parse function's 8): less held at once.
  const parseDeps: ParseDeps = { catalog, s3, curatedBucket: buckets.curated, environment, logger, metrics: options.metrics, splitParse: SplitPart.start, partSizeBytes: 5 * 1024 * 1024 };
  return { fetchDeps, parseDeps };
}

/** One ObjectCreated record to the parse step, as the SQS message AWS would send; its result or error is kept by raw key. */
async function deliverToParse(chain: Chain, record: S3EventRecord): Promise<void> {
  const key = decodeS3EventKey(record.s3.object.key);
  try {
    await handleParseBatch(sqsEventOf([record]), chain.parseDeps, randomUUID(), { onResult: (r) => chain.parsed.set(r.key, r) });
  } catch (e) {
    // With one message per batch, a failed message makes Powertools throw FullBatchFailureError (as in Lambda).
    if (!chain.parsed.has(key)) chain.parseErrors.set(key, e instanceof FullBatchFailureError ? (e.recordErrors[0] ?? e) : e);
  }
}

function subscribeParse(chain: Chain, lake: LocalLake, closers: Array<() => Promise<void>>): void {
  // The stack's notification: ObjectCreated in the raw bucket under raw/ (lib/constructs/parse.ts). The parse step's own
  // objects in the curated bucket raise events too; AWS sends those nowhere, and so does this.
  const unsubscribe = lake.onObjectCreated(async (record) => {
    if (record.s3.bucket.name !== chain.buckets.raw || !decodeS3EventKey(record.s3.object.key).startsWith(PREFIX.raw)) return;
    await deliverToParse(chain, record);
  });
  closers.push(async () => void unsubscribe());
}

function pipelineOf(chain: Chain, s3Endpoint: string, close: () => Promise<void>): LocalPipeline {
  const { options, catalog, environment, buckets, lake, s3, inFlight } = chain;
  const cacheDir = join(options.lakeDir, 's3-cache');
  const queryLakeDir = async () => {
    if (lake) return options.lakeDir;
    await mirrorTables(s3, buckets.curated, cacheDir);
    return cacheDir;
  };
  return {
    catalog,
    environment,
    buckets,
    connection: (name) => chain.gateways.connection(name),
    lake,
    s3Endpoint,
    s3,
    runWindow: (feed, window) => runWindow(chain, catalog.feed(feed.reportId, feed.connection), window),
    queryLakeDir,
    // The run printed the lake's stale notices before its saved queries: not read again here.
    openDatabase: async () => openLakeDatabase({ lakeDir: await queryLakeDir(), environment, reports: catalog.reports, staleNotices: false }),
    close,
    inFlight: () => [...inFlight].filter((ref) => !parsedManifest(chain, ref)),
    parsedInFlight: () => [...inFlight].flatMap((ref) => {
      const manifest = parsedManifest(chain, ref);
      return manifest ? [{ ...ref, status: manifest.outcome }] : [];
    }),
    abandonInFlight: () => (lake ? abandonPartialTables(options.lakeDir, buckets.curated, inFlight) : []),
  };
}

/** The manifest this run's parse wrote for the window, if it has ended (loadWindow forgets earlier runs' results first). */
function parsedManifest(chain: Chain, ref: ReportWindowRef): LoadManifest | undefined {
  for (const format of ['csv', 'pdf'] as const) {
    const result = chain.parsed.get(rawKey(ref, ref.window, format));
    if (result && 'manifest' in result) return result.manifest;
  }
  return undefined;
}

/** The in-flight windows whose half-written table file was removed, feed by feed. */
function abandonPartialTables(lakeDir: string, curatedBucket: string, inFlight: Iterable<ReportWindowRef>): ReportWindowRef[] {
  const byFeed = new Map<string, { feed: FeedKey; windows: ReportWindow[] }>();
  for (const ref of inFlight) {
    const entry = byFeed.get(feedId(ref)) ?? { feed: { reportId: ref.reportId, connection: ref.connection }, windows: [] };
    entry.windows.push(ref.window);
    byFeed.set(feedId(ref), entry);
  }
  return [...byFeed.values()].flatMap(({ feed, windows }) => removePartialTables(lakeDir, curatedBucket, feed, windows).map((window) => ({ ...feed, window })));
}

async function runWindow(chain: Chain, feed: Feed, window: ReportWindow): Promise<WindowOutcome> {
  const ref = { reportId: feed.reportId, connection: feed.connection, window };
  chain.inFlight.add(ref);
  try {
    return await loadWindow(chain, feed, window);
  } finally {
    chain.inFlight.delete(ref);
  }
}

async function loadWindow(chain: Chain, feed: Feed, window: ReportWindow): Promise<WindowOutcome> {
  const t0 = performance.now();
  const report = feed.report;
  refuseUnalignedWindow(report, window);
  const outcome = (fields: OutcomeFields) => windowOutcome(feed, window, t0, fields);
  // Forget an earlier run's result for this window, whichever format it came in.
  for (const format of ['csv', 'pdf'] as const) {
    chain.parsed.delete(rawKey(feed, window, format));
    chain.parseErrors.delete(rawKey(feed, window, format));
  }

  let fetched: FetchedWindow;
  try {
    await chain.gateways.connection(feed.connection);
    // The request slot is held for the fetch alone: the parse of one window overlaps the next one's request.
    const run = await chain.gateways.limit(feed.connection, () =>
      fetchWindows({ kind: 'backfill', reportId: report.id, connection: feed.connection, from: window.start, to: window.end }, chain.fetchDeps, randomUUID()),
    );
    fetched = run.windows[0]!;
  } catch (e) {
    return outcome({ status: 'failed', error: errorInfo('fetch', e) });
  }

  await parseFetched(chain, fetched);
  return parsedOutcome(chain, fetched, outcome);
}

function refuseUnalignedWindow(report: ReportDefinition, window: ReportWindow): void {
  const size = parseWindowSize(report.window);
  const aligned = windowAt(windowStartOf(window.start, size), size);
  if (formatLocalDateTime(aligned.start) !== formatLocalDateTime(window.start) || formatLocalDateTime(aligned.end) !== formatLocalDateTime(window.end)) {
    throw new ConfigurationError(
      `Window ${formatLocalDateTime(window.start)}/${formatLocalDateTime(window.end)} is not one ${report.window} window of report "${report.id}".`,
    );
  }
}

function windowOutcome(feed: FeedKey, window: ReportWindow, t0: number, fields: OutcomeFields): WindowOutcome {
  return {
    reportId: feed.reportId,
    connection: feed.connection,
    window,
    windowStart: formatLocalDateTime(window.start),
    windowEnd: formatLocalDateTime(window.end),
    rowsRead: 0,
    rowsWritten: 0,
    rowsRejected: 0,
    bytes: 0,
    parquetBytes: 0,
    ...fields,
    durationMs: Math.round(performance.now() - t0),
  };
}

/** Returns once the parse step is done with the fetched raw object. */
async function parseFetched(chain: Chain, fetched: FetchedWindow): Promise<void> {
  if (chain.lake) {
    // The event of the raw object, and the parse it triggered, have run once the lake is settled.
    await chain.lake.settled().catch(() => undefined);
  } else {
    // No notifications from an external store: send the parse step the event S3 would have sent.
    const { bucket, key, bytes, etag, versionId } = fetched;
    await deliverToParse(chain, objectCreatedRecord({ bucket, key, size: bytes, eTag: etag, versionId }));
  }
}

/** The window's outcome from what the parse step said about its raw object: its manifest, or why there is none. */
function parsedOutcome(chain: Chain, fetched: FetchedWindow, outcome: (fields: OutcomeFields) => WindowOutcome): WindowOutcome {
  const result = chain.parsed.get(fetched.key);
  const fetchedPart = { fetched, bytes: fetched.bytes };
  if (!result || !('manifest' in result)) {
    const error = chain.parseErrors.get(fetched.key) ?? new Error(`No parse result for ${fetched.key}: the ObjectCreated event did not reach the parse step.`);
    return outcome({ status: 'failed', ...fetchedPart, error: errorInfo('parse', error) });
  }
  const m = result.manifest;
  return outcome({
    status: m.outcome,
    ...fetchedPart,
    manifest: m,
    rowsRead: m.rows?.read ?? 0,
    rowsWritten: m.outcome === 'loaded' ? (m.rows?.written ?? 0) : 0,
    rowsRejected: m.rows?.rejected ?? 0,
    parquetBytes: m.table?.bytes ?? 0,
    ...(m.error ? { error: { stage: 'parse' as const, code: m.error.code, message: m.error.message } } : {}),
  });
}
