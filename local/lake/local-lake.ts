import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3EventRecord } from 'aws-lambda';
import type { BucketNames } from '../../config/naming.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { createS3Client } from '../../functions/aws/s3-client.js';
import { scriptBeside, startWorkerScript } from '../../functions/runtime/worker-script.js';
import type { FromLakeWorker, LakeWorkerData, ToLakeWorker } from './lake-worker.js';
import { toS3EventRecord } from './s3-event.js';

/**
 * The local lake: an S3-compatible server (s3rver) on loopback, on a worker thread (lake-worker.ts), storing
 * objects as files under `dir`, with the raw and curated buckets created. The handlers' S3 code talks to it
 * through an ordinary S3Client.
 *
 * How it differs from S3, on purpose or not:
 * - No versioning: s3rver does not implement it. Re-running a window overwrites the object in place, and
 *   versionId is always undefined (in events, uploads and reads). In AWS the raw bucket keeps every version.
 * - AbortMultipartUpload is added (abort-multipart.ts); ListMultipartUploads is not available.
 * - ObjectCreated events are delivered in-process to onObjectCreated listeners (no SQS, no retries, no DLQ),
 *   reshaped like AWS's (s3-event.ts).
 * - Credentials are s3rver's fixed pair; the server only listens on loopback.
 */

export const LOCAL_LAKE_REGION = 'us-east-1';
/** s3rver's built-in account; any other key pair is refused. */
export const LOCAL_LAKE_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface LocalLakeOptions {
  /** Where objects live on disk (kept across runs; s3rver stores each object as files under <dir>/<bucket>/). */
  dir: string;
  buckets: BucketNames;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** A loopback address: 127.0.0.1 (default), ::1 or localhost. */
  host?: string;
  /** Test seam: the server thread holds each event message back this long (see lake-worker.ts). */
  delayEventsMs?: number;
}

export type ObjectCreatedListener = (record: S3EventRecord) => void | Promise<void>;

export interface LocalLake {
  /** e.g. "http://127.0.0.1:40123": pass to createS3Client for more clients. */
  endpoint: string;
  /** An S3Client configured for the lake (path style, checksums only when required, s3rver's credentials). */
  client: S3Client;
  buckets: BucketNames;
  /** Calls `listener` with each ObjectCreated record, once the object is readable. Returns an unsubscribe function. */
  onObjectCreated(listener: ObjectCreatedListener): () => void;
  /**
   * Waits until every event so far has been handled by the listeners (and the ones those caused, e.g. a
   * fetch's raw object whose parse writes Parquet). Rejects with an AggregateError of what listeners threw.
   */
  settled(): Promise<void>;
  /** Waits for listeners, then stops the server. The files stay in `dir`. */
  close(): Promise<void>;
}

/**
 * Checks, before anything starts, that `dir` is a directory this process can write, or can be created:
 * s3rver would otherwise fail on the first object with a raw EACCES/ENOTDIR, or answer "We encountered
 * an internal error". Creates it when missing. `flag` names the option in the message.
 */
export async function ensureWritableDir(dir: string, flag = '--lake'): Promise<void> {
  const path = resolve(dir);
  const fail = (why: string): never => {
    throw new ConfigurationError(`${flag} ${dir}: ${why}. Pass ${flag} a directory you can write to (it is created if missing).`);
  };
  // The nearest part of the path that exists decides: a file there, or no write permission, fails.
  const kindOf = (p: string) => stat(p).then((s) => (s.isDirectory() ? 'dir' : 'file'), () => undefined);
  let existing = path;
  let kind = await kindOf(existing);
  while (kind === undefined && dirname(existing) !== existing) {
    existing = dirname(existing);
    kind = await kindOf(existing);
  }
  if (kind === 'file') fail(existing === path ? 'is a file, not a directory' : `${existing} is a file, not a directory`);
  try {
    await access(existing, constants.W_OK | constants.X_OK);
  } catch {
    fail(existing === path ? 'is not writable' : `cannot be created: ${existing} is not writable`);
  }
  try {
    await mkdir(path, { recursive: true });
  } catch (e) {
    fail(`cannot be created (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function startLocalLake(options: LocalLakeOptions): Promise<LocalLake> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) {
    throw new ConfigurationError(`The local lake listens on loopback only (127.0.0.1, ::1, localhost), not "${host}".`);
  }
  const workerData: LakeWorkerData = {
    dir: options.dir,
    host,
    port: options.port ?? 0,
    buckets: [options.buckets.raw, options.buckets.curated],
    ...(options.delayEventsMs ? { delayEventsMs: options.delayEventsMs } : {}),
  };
  const worker = startWorker(lakeWorkerUrl(), workerData);

  const listeners = new Set<ObjectCreatedListener>();
  const pending = new Set<Promise<void>>();
  let listenerErrors: unknown[] = [];

  const deliver = async (record: S3EventRecord, path: string) => {
    await objectWritten(path, record.s3.object.size);
    for (const listener of [...listeners]) {
      try {
        await listener(record);
      } catch (e) {
        listenerErrors.push(e);
      }
    }
  };

  let closed: (() => void) | undefined;
  const ready = new Promise<Extract<FromLakeWorker, { t: 'ready' }>>((resolve, reject) => {
    worker.on('message', (m: FromLakeWorker) => {
      if (m.t === 'ready') {
        resolve(m);
      } else if (m.t === 'failed') {
        const { t: _, message, ...fields } = m;
        reject(Object.assign(new Error(message), fields));
      } else if (m.t === 'closed') {
        closed?.();
      } else if (m.t === 'event') {
        const record = toS3EventRecord(m.record, LOCAL_LAKE_REGION);
        if (record) {
          // After the current tick, as s3rver's in-process event was: the upload's caller sees its answer first.
          const delivery: Promise<void> = sleep(0).then(() => deliver(record, m.path));
          pending.add(delivery);
          void delivery.finally(() => pending.delete(delivery));
        }
        // Registered: the request that raised the event may now answer (lake-worker.ts).
        worker.postMessage({ t: 'ack', id: m.id } satisfies ToLakeWorker);
      }
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`The local lake's S3 server stopped (thread exit code ${code}).`)));
  });
  const address = await ready.catch(async (e: unknown) => {
    await worker.terminate();
    throw e;
  });
  const endpoint = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const client = createS3Client({ endpoint, region: LOCAL_LAKE_REGION, credentials: LOCAL_LAKE_CREDENTIALS, unsignedPayload: true });

  const settled = async () => {
    // Listeners may cause further events (fetch -> raw object -> parse), so drain until nothing is left.
    while (pending.size > 0) await Promise.allSettled([...pending]);
    const errors = listenerErrors;
    listenerErrors = [];
    if (errors.length) throw new AggregateError(errors, `${errors.length} ObjectCreated listener(s) failed`);
  };

  let closing: Promise<void> | undefined;
  return {
    endpoint,
    client,
    buckets: options.buckets,
    onObjectCreated(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    settled,
    close() {
      closing ??= (async () => {
        await settled().catch(() => undefined);
        client.destroy();
        const stopped = new Promise<void>((resolve) => {
          closed = resolve;
          worker.once('exit', () => resolve());
        });
        worker.postMessage({ t: 'close' } satisfies ToLakeWorker);
        await stopped;
        await worker.terminate();
      })();
      return closing;
    },
  };
}

/** Starts the server's thread (from TypeScript sources, compiled first: worker-script.ts). */
function startWorker(url: URL, workerData: LakeWorkerData): Worker {
  // The server's garbage is short-lived (request chunks on their way to disk): a small young generation is
  // collected more often at no measurable CPU cost, and keeps ~40 MB less resident during a 130 MiB upload.
  const resourceLimits = { maxYoungGenerationSizeMb: 2 };
  return startWorkerScript(url, { workerData, resourceLimits });
}

/** lake-worker.{js,mjs,ts} beside this module: .ts when run from source (tsx), .js/.mjs when built. */
function lakeWorkerUrl(): URL {
  const url = scriptBeside('lake-worker', import.meta.url);
  if (!url) throw new Error(`lake-worker is missing beside ${fileURLToPath(import.meta.url)}`);
  return url;
}

/**
 * s3rver answers (and emits its event) when it has handed the last byte to the file stream, not when the
 * file is complete on disk. Waiting until the file has the event's size keeps listeners from reading a short object.
 */
async function objectWritten(path: string, size: number): Promise<void> {
  for (let waited = 0; waited < 2000; waited += 5) {
    const current = await stat(path).then((s) => s.size, () => -1);
    if (current === size) return;
    await sleep(5);
  }
}
