import { parentPort, workerData } from 'node:worker_threads';
import S3rver, { type KoaMiddleware, type S3rverEventRecord } from 's3rver';
import { abortMultipartUploadMiddleware } from './abort-multipart.js';
import { completeMultipartWithoutRehashing, putPartWhole } from './multipart-store.js';
import { putObjectWhole } from './put-object-whole.js';

/**
 * The local lake's S3 server (s3rver) on a thread of its own (local-lake.ts starts it). On the caller's
 * thread, s3rver's work (HTTP parsing, an MD5 of every byte, file writes, joining multipart parts into the
 * object) ran on the same event loop as the fetch it was serving, and measured as much CPU as the fetch
 * itself: a loopback upload ran at half speed. Here it overlaps with the fetch and parse on the other core.
 *
 * Events cross to the caller as messages. A client that has its response must find the event already
 * registered (local-lake.ts settled() relies on it, as it did in-process), but a socket and a message port
 * are two channels with no order between them: so a request that raised events answers only once the
 * caller has acknowledged them.
 */

export interface LakeWorkerData {
  dir: string;
  host: string;
  port: number;
  buckets: string[];
  /** Test seam: hold each event message back this long, as a busy thread might. */
  delayEventsMs?: number;
}

export type ToLakeWorker = { t: 'ack'; id: number } | { t: 'close' };
export type FromLakeWorker =
  | { t: 'ready'; address: string; family: string; port: number }
  | { t: 'failed'; message: string; code?: string; syscall?: string; path?: string }
  | { t: 'event'; id: number; record: S3rverEventRecord; path: string }
  | { t: 'closed' };

const port = parentPort!;
const data = workerData as LakeWorkerData;
const post = (m: FromLakeWorker) => port.postMessage(m);

const server = new S3rver({
  address: data.host,
  port: data.port,
  silent: true,
  directory: data.dir,
  vhostBuckets: false,
  resetOnClose: false,
  configureBuckets: data.buckets.map((name) => ({ name })),
});

let nextId = 0;
const unacknowledged = new Set<number>();
let onAck: Array<() => void> = [];

const answerAfterAcks: KoaMiddleware = async (_ctx, next) => {
  await next();
  while (unacknowledged.size > 0) await new Promise<void>((resolve) => onAck.push(resolve));
};
// Koa composes its middleware list when the server starts: both go before s3rver's router.
server.middleware.unshift(answerAfterAcks, abortMultipartUploadMiddleware(server));
putObjectWhole(server);
putPartWhole(server);
completeMultipartWithoutRehashing(server);

server.on('event', (event) => {
  for (const record of event.Records) {
    const id = ++nextId;
    unacknowledged.add(id);
    const message: FromLakeWorker = { t: 'event', id, record, path: server.store.getResourcePath(record.s3.bucket.name, record.s3.object.key, 'object') };
    if (data.delayEventsMs) setTimeout(() => post(message), data.delayEventsMs);
    else post(message);
  }
});

port.on('message', (m: ToLakeWorker) => {
  if (m.t === 'ack') {
    unacknowledged.delete(m.id);
    const waiting = onAck;
    onAck = [];
    for (const wake of waiting) wake();
  } else if (m.t === 'close') {
    void server.close().finally(() => {
      post({ t: 'closed' });
      port.close();
    });
  }
});

try {
  const address = await server.run();
  post({ t: 'ready', address: address.address, family: address.family, port: address.port });
} catch (e) {
  const error = e as NodeJS.ErrnoException;
  // What a caller may look at to explain the failure (EACCES, ENOTDIR, EADDRINUSE and the path or syscall).
  const { code, syscall, path } = error;
  post({ t: 'failed', message: error.message ?? String(e), ...(code ? { code } : {}), ...(syscall ? { syscall } : {}), ...(path ? { path } : {}) });
  port.close();
}
