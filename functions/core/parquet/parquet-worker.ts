import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { RowGroupEncoder, type EncoderSettings } from './encoder.js';
import type { RowBatch } from './row-group-buffer.js';

/**
 * The encoding thread (see encoder-thread.ts): receives typed batches in order, encodes a row group
 * when told the group is complete, and posts the Parquet bytes back; the parsing thread writes them to
 * the sink. Messages are handled one at a time, in order.
 */

export type ToWorker = { t: 'batch'; batch: RowBatch; end: boolean } | { t: 'finish' };
export type FromWorker =
  | { t: 'bytes'; bytes: Uint8Array }
  | { t: 'group' }
  | { t: 'done'; encodeMs: number; rowGroups: number }
  | { t: 'error'; message: string; stack?: string };

/** Where the batches come from and the bytes go: the worker's parentPort, or one end of a MessageChannel. */
export type EncoderPort = Pick<MessagePort, 'on' | 'postMessage'>;

/**
 * Encodes the batches arriving on `port` one message at a time, in order, posting each closed group's bytes, then
 * `group`; after `finish`, `done`; or the first error, after which it ignores the rest.
 */
export function encodeOnPort(port: EncoderPort, settings: EncoderSettings): void {
  // Nothing is transferred (copied instead): detaching an ArrayBuffer slows every typed-array access of the
  // isolate from then on, hyparquet-writer's included (see row-group-buffer.ts).
  const post = (m: FromWorker) => port.postMessage(m);
  const encoder = new RowGroupEncoder(settings, (bytes) => post({ t: 'bytes', bytes }));
  let queue = Promise.resolve();
  let failed = false;

  async function handle(m: ToWorker): Promise<void> {
    if (m.t === 'batch') {
      // appended to the group's column buffers at once; a closed group is encoded before the next message
      encoder.add(m.batch);
      if (!m.end) return;
      await encoder.writeRowGroup();
      post({ t: 'group' });
    } else {
      await encoder.finish();
      post({ t: 'done', encodeMs: encoder.encodeMs, rowGroups: encoder.rowGroups });
    }
  }

  port.on('message', (m: ToWorker) => {
    queue = queue.then(async () => {
      if (failed) return;
      try {
        await handle(m);
      } catch (e) {
        failed = true;
        const err = e instanceof Error ? e : new Error(String(e));
        post({ t: 'error', message: err.message, ...(err.stack ? { stack: err.stack } : {}) });
      }
    });
  });
}

// The worker thread encoder-thread.ts starts; imported anywhere else (a unit test), the module only defines
// encodeOnPort. Stryker sees coverage on the main thread only, so the tests drive encodeOnPort over a channel.
if (parentPort) encodeOnPort(parentPort, workerData as EncoderSettings);
