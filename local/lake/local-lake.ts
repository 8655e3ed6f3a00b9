import { stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3EventRecord } from 'aws-lambda';
import type { BucketNames } from '../../functions/core/naming.js';
import { createS3Client } from '../../functions/aws/s3-client.js';
import type { FromLakeWorker, ToLakeWorker } from './lake-worker.js';
import { startLakeThread, type LakeThread, type LakeThreadOptions } from './lake-thread.js';
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

export type LocalLakeOptions = LakeThreadOptions;

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
 * Starts the lake, or, given `thread` (lake-thread.ts, started earlier with the same options), puts the S3
 * client and the event delivery in front of it.
 */
export async function startLocalLake(options: LocalLakeOptions, thread: LakeThread = startLakeThread(options)): Promise<LocalLake> {
  if (thread.options.dir !== options.dir || thread.options.buckets.raw !== options.buckets.raw || thread.options.buckets.curated !== options.buckets.curated) {
    throw new Error(`the lake thread was started for ${thread.options.dir}, not ${options.dir}`);
  }
  const { worker } = thread;
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
  thread.adopt((m: FromLakeWorker) => {
    if (m.t === 'closed') {
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
  const address = await thread.ready.catch(async (e: unknown) => {
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
