import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { encodeConnectionsVariable } from '../../functions/core/connections/connection.js';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it as nodeIt, type TestContext } from 'node:test';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { bucketNames } from '../../functions/core/naming.js';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { decodeS3EventKey, keysFor } from '../../functions/core/lake/s3-keys.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';
import { formatLocalDate, parseLocalDateTime, parseWindowSize, windowAt, type ReportWindow } from '../../functions/core/time/window.js';
import { logger } from '../../functions/aws/powertools.js';
import { clearGatewaySecretCache } from '../../functions/aws/secrets.js';
import { putBytes } from '../../functions/aws/s3-streams.js';
import { handler as fetchHandler } from '../../functions/fetch-report/handler.js';
import type { FetchRunResult } from '../../functions/fetch-report/fetch-windows.js';
import { handler as parseHandler } from '../../functions/parse-report/handler.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { LOCAL_LAKE_CREDENTIALS, startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { sqsEventOf } from '../../local/lake/sqs-message.js';
import { openLakeDatabase } from '../../local/duckdb/duckdb.js';
import {
  DEFAULT_HMAC_CONTROL_KEY,
  REPORT_HEADER,
  generateTransactions,
  startSimulator,
  writeReportCsv,
  type Simulator,
  type SimulatorOptions,
} from '../../local/simulator/index.js';
import { captureJsonLines, lambdaContext } from '../helpers/handler-harness.js';
import { incompleteUploads, listKeys, readObject } from '../helpers/lake-inspect.js';
import { leakGuard } from '../helpers/leak-guard.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * The reliability suite's world, shared by all its cases in one process (so the leak guard sees the whole
 * suite): one local lake (s3rver), the two Lambda handlers wired as AWS wires them (raw ObjectCreated ->
 * SQS-shaped message -> parse handler), Secrets Manager mocked, and simulators started per fault mode with
 * the suite's own credentials (a random control key, a generated RSA key), registered with the leak guard.
 */

leakGuard.install();
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// Every line the handlers can log, debug included, is produced and scanned.
logger.setLogLevel('DEBUG');

export const ENVIRONMENT = 'reliability';
export const buckets = bucketNames(ENVIRONMENT);
export const REPORT_ID = 'transactions';
export const report = loadCatalog().get(REPORT_ID);
export const SECRET_NAME = 'paynet-reports/reliability/gateway';
/** The stack's CONNECTIONS variable with the one connection, "default", at `url`. */
export const gatewayAt = (url: string): string => encodeConnectionsVariable([{ name: 'default', endpointUrl: url, secretName: SECRET_NAME }]);
export const CSV = { delimiter: ',', encoding: 'UTF-8' } as const;

export const day = (date: string): ReportWindow => windowAt(parseLocalDateTime(date), parseWindowSize(report.window));
/** The fetch function's backfill event for one day. */
export const backfillOf = (date: string) => ({ reportId: REPORT_ID, from: date, to: formatLocalDate(day(date).end) });
export const keysOf = (date: string) => keysFor(feedKey(REPORT_ID), day(date), 'csv');

/** Cases run and passed: the suite prints them at the end. */
export const counts = { started: 0, passed: 0, propertyRuns: 0 };

/** node:test's `it`, counted. */
export function it(name: string, fn: (t: TestContext) => Promise<void> | void, options: { timeout?: number } = {}): void {
  nodeIt(name, { timeout: options.timeout ?? 90_000 }, async (t) => {
    counts.started++;
    await fn(t);
    counts.passed++;
  });
}

/** The suite's credentials: nobody else knows them, so finding them anywhere is a leak. */
function suiteSecrets() {
  const hmac: GatewaySecret = { login: 'reliability-hmac', controlKey: `ck-${randomBytes(24).toString('base64url')}` };
  const pair = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const rsa: GatewaySecret = { login: 'reliability-rsa', signatureMethod: 'RSA-SHA256', privateKeyPem: pair.privateKey };
  leakGuard.gatewaySecret(hmac.login, hmac);
  leakGuard.gatewaySecret(rsa.login, rsa);
  // The simulator's published default key is not a secret, but the pipeline must not print it either.
  leakGuard.secret('the simulator default control key', DEFAULT_HMAC_CONTROL_KEY);
  return { hmac, rsa };
}

/** One parse invocation the raw bucket's ObjectCreated event caused. */
export interface ParseRecord {
  key: string;
  event: SQSEvent;
  result?: SQSBatchResponse;
  error?: unknown;
}

/** What a captured run produced: the handler's result or error, and every JSON line printed meanwhile. */
export interface Run<T> {
  result?: T;
  error?: unknown;
  lines: Array<Record<string, unknown>>;
  text: string;
  /** Parse invocations the chain made while this ran. */
  parses: ParseRecord[];
}

export interface World {
  dir: string;
  lake: LocalLake;
  hmac: GatewaySecret;
  rsa: GatewaySecret;
  /** Every parse invocation of the chain so far. */
  parses: ParseRecord[];
  /** Off: raw objects raise no parse (a test then delivers the events itself). */
  chain: { enabled: boolean };
  /** A simulator with the suite's accounts; closed at the end of the suite. */
  simulator(options?: SimulatorOptions): Promise<Simulator>;
  /**
   * Points the fetch handler at `sim` (CONNECTIONS) with `secret` in the mocked Secrets Manager; several values are
   * answered in turn, the last for ever (a rotation between two reads).
   */
  useGateway(sim: Simulator, secret?: GatewaySecret | GatewaySecret[]): void;
  /** Runs `fn` capturing its JSON lines (for the leak guard too) and waits for the chain to settle. */
  capture<T>(label: string, fn: () => Promise<T>): Promise<Run<T>>;
  /** The fetch function's handler as Lambda calls it, then the parse its raw object caused. */
  fetch(event: unknown, requestId: string): Promise<Run<FetchRunResult>>;
  /** The parse function's handler with an SQS event. */
  parse(event: SQSEvent, requestId: string): Promise<Run<SQSBatchResponse>>;
  /** Stores bytes at a day's raw key as the fetch would (the chain then parses them). */
  putRaw(date: string, body: Buffer): Promise<Run<void>>;
  keys(bucket: 'raw' | 'curated', prefix?: string): Promise<string[]>;
  read(bucket: 'raw' | 'curated', key: string): Promise<Buffer>;
  manifest(date: string): Promise<LoadManifest>;
  /** Unfinished multipart uploads in both buckets. */
  incomplete(): Promise<{ raw: string[]; curated: string[] }>;
  /** The simulator's report for a day, as it sends it. */
  expectedReport(login: string, date: string, rowsPerDay: number): Buffer;
  /** DuckDB over the table as Athena sees it (the local view over every Parquet file of the report). */
  table(date: string): Promise<{ rows: number; distinctIds: number; files: number; ids: string[] }>;
  /** SQL over the local view of the table (DuckDB, as Athena would run it); JSON rows. */
  query(sql: string): Promise<unknown[][]>;
  /** Hands what the suite stored besides console output to the leak guard: request logs, manifests, rejects, object metadata. */
  recordArtifacts(): Promise<void>;
  close(): Promise<void>;
}

let world: Promise<World> | undefined;

/** The shared world, started on first use. */
export function getWorld(): Promise<World> {
  world ??= startWorld();
  return world;
}

export async function closeWorld(): Promise<void> {
  if (!world) return;
  const w = await world.catch(() => undefined);
  world = undefined;
  await w?.close();
}

async function startWorld(): Promise<World> {
  const { hmac, rsa } = suiteSecrets();
  const dir = await mkdtemp(join(tmpdir(), 'reliability-'));
  const lake = await startLocalLake({ dir, buckets });
  const saved = { ...process.env };
  Object.assign(process.env, {
    RAW_BUCKET: buckets.raw,
    CURATED_BUCKET: buckets.curated,
    PIPELINE_ENVIRONMENT: ENVIRONMENT,
    PROJECTION_START: '2020-01-01',
    AWS_REGION: 'eu-central-1',
    AWS_ENDPOINT_URL_S3: lake.endpoint,
    AWS_ACCESS_KEY_ID: LOCAL_LAKE_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_LAKE_CREDENTIALS.secretAccessKey,
  });
  const sm = mockClient(SecretsManagerClient);
  const sims: Simulator[] = [];
  const parses: ParseRecord[] = [];
  const chain = { enabled: true };
  let parseCount = 0;

  // The stack's wiring: ObjectCreated under raw/ of the raw bucket -> one SQS message -> the parse function.
  const unsubscribe = lake.onObjectCreated(async (record) => {
    const key = decodeS3EventKey(record.s3.object.key);
    if (!chain.enabled || record.s3.bucket.name !== buckets.raw || !key.startsWith(`raw/${REPORT_ID}/`)) return;
    const entry: ParseRecord = { key, event: sqsEventOf([record]) };
    parses.push(entry);
    try {
      entry.result = await parseHandler(entry.event, lambdaContext(`chain-parse-${++parseCount}`, 'paynet-reports-reliability-parse'));
    } catch (e) {
      entry.error = e;
      leakGuard.error('parse handler (chain)', e);
    }
  });

  const capture = async <T>(label: string, fn: () => Promise<T>): Promise<Run<T>> => {
    const before = parses.length;
    const run = await captureJsonLines(async () => {
      try {
        return await fn();
      } finally {
        await lake.settled();
      }
    });
    leakGuard.record(`captured log lines: ${label}`, run.text);
    leakGuard.error(label, run.error);
    return { ...run, parses: parses.slice(before) };
  };

  const read = (bucket: 'raw' | 'curated', key: string) => readObject(lake.client, buckets[bucket], key);

  return {
    dir,
    lake,
    hmac,
    rsa,
    parses,
    chain,
    async simulator(options = {}) {
      const sim = await startSimulator({
        rowsPerDay: 20,
        ...options,
        hmac: { login: hmac.login, controlKey: (hmac as { controlKey: string }).controlKey },
        rsa: { login: rsa.login, privateKeyPem: (rsa as { privateKeyPem: string }).privateKeyPem },
      });
      sims.push(sim);
      return sim;
    },
    useGateway(sim, secret = hmac) {
      process.env.CONNECTIONS = gatewayAt(sim.url);
      clearGatewaySecretCache();
      sm.reset();
      const values = Array.isArray(secret) ? secret : [secret];
      let stub = sm.on(GetSecretValueCommand, { SecretId: SECRET_NAME });
      for (const value of values.slice(0, -1)) stub = stub.resolvesOnce({ SecretString: JSON.stringify(value) });
      stub.resolves({ SecretString: JSON.stringify(values.at(-1)) });
    },
    capture,
    fetch: (event, requestId) => capture(`fetch handler ${requestId}`, () => fetchHandler(event, lambdaContext(requestId, 'paynet-reports-reliability-fetch'))),
    parse: (event, requestId) => capture(`parse handler ${requestId}`, () => parseHandler(event, lambdaContext(requestId, 'paynet-reports-reliability-parse'))),
    putRaw: (date, body) =>
      capture(`raw object ${date}`, async () => {
        await putBytes({
          client: lake.client,
          bucket: buckets.raw,
          key: keysOf(date).raw,
          body,
          contentType: 'text/csv; charset=UTF-8',
          metadata: { 'run-id': `put-${date}`, 'fetched-at': new Date().toISOString() },
        });
      }),
    keys: (bucket, prefix = '') => listKeys(lake.client, buckets[bucket], prefix),
    read,
    manifest: async (date) => JSON.parse((await read('curated', keysOf(date).manifest)).toString('utf8')) as LoadManifest,
    incomplete: async () => ({ raw: await incompleteUploads(dir, buckets.raw), curated: await incompleteUploads(dir, buckets.curated) }),
    expectedReport: (login, date, rowsPerDay) => writeReportCsv(REPORT_HEADER, generateTransactions(login, day(date), rowsPerDay), CSV),
    async table(date) {
      const db = await openLakeDatabase({ lakeDir: dir, environment: ENVIRONMENT, reports: [report] });
      try {
        const where = `WHERE dt = '${date}'`;
        const [stats] = (await db.query(`SELECT count(*) AS n, count(DISTINCT transaction_id) AS d FROM ${REPORT_ID} ${where}`)).rows;
        const ids = (await db.query(`SELECT transaction_id FROM ${REPORT_ID} ${where} ORDER BY transaction_id`)).rows.map((r) => String(r[0]));
        const files = db.views.find((v) => v.name === REPORT_ID)?.files ?? 0;
        return { rows: Number(stats![0]), distinctIds: Number(stats![1]), files, ids };
      } finally {
        db.close();
      }
    },
    async query(sql) {
      const db = await openLakeDatabase({ lakeDir: dir, environment: ENVIRONMENT, reports: [report] });
      try {
        return (await db.query(sql)).rows;
      } finally {
        db.close();
      }
    },
    async recordArtifacts() {
      for (const sim of sims) leakGuard.record(`simulator request log ${sim.url}`, JSON.stringify(sim.requests));
      // Manifests carry error messages, rejects carry reasons, and every object's metadata what the handlers
      // attached. Raw reports and Parquet files hold only the simulator's rows.
      for (const bucket of [buckets.raw, buckets.curated]) {
        const files = await readdir(join(dir, bucket), { recursive: true, withFileTypes: true }).catch(() => []);
        for (const f of files) {
          const path = join(f.parentPath, f.name);
          const text = f.name.endsWith('._S3rver_metadata.json') || (f.name.endsWith('._S3rver_object') && /\/(manifests|rejected)\//.test(path));
          if (f.isFile() && text) leakGuard.record(`${bucket}: ${path.slice(dir.length)}`, await readFile(path, 'utf8'));
        }
      }
    },
    async close() {
      unsubscribe();
      for (const sim of sims) await sim.close().catch(() => undefined);
      sm.restore();
      await lake.close();
      process.env = saved;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
