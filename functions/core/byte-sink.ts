import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';

/**
 * Where the converter's bytes go: the Parquet file, the rejects file. Either a Node Writable (a file
 * stream, or the PassThrough an S3 multipart upload reads) or this small interface, whose promises
 * are the backpressure: the converter awaits each write before producing more.
 */
export interface ByteSink {
  /** Takes the next bytes (ownership passes: they are not reused). A returned promise is awaited. */
  write(bytes: Uint8Array): void | Promise<void>;
  /**
   * Optional backpressure point, awaited after every write: resolves when the sink can take more
   * (functions/aws/multipart-sink.ts's MultipartSink.flush: parts in flight below the queue size).
   */
  flush?(): void | Promise<void>;
  /** After the last bytes, on success: resolves when they are stored. `finish` is accepted under that name too. */
  end?(): unknown;
  finish?(): unknown;
  /**
   * The output must not be published (schema drift, too many rejected rows, any failure): discard what
   * was written, e.g. abort the multipart upload. May be called more than once.
   */
  abort?(reason?: Error): unknown;
}

export type OutputSink = ByteSink | Writable;

/** A sink with a byte count, whatever it was given as. */
export interface CountingSink {
  readonly bytes: number;
  write(bytes: Uint8Array): Promise<void>;
  end(): Promise<void>;
  abort(reason: Error): Promise<void>;
}

const isWritable = (s: OutputSink): s is Writable =>
  typeof (s as Writable).on === 'function' && typeof (s as Writable).once === 'function' && typeof (s as Writable).end === 'function';

/** Resolves on 'drain'; rejects if the stream errors or closes first. Removes its listeners either way. */
function drained(stream: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => done();
    const onError = (e: Error) => done(e);
    const onClose = () => done(stream.errored ?? new Error('the output stream closed before the conversion ended'));
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

export function countingSink(sink: OutputSink): CountingSink {
  let bytes = 0;
  let closed = false;
  if (isWritable(sink)) {
    return {
      get bytes() {
        return bytes;
      },
      async write(chunk) {
        bytes += chunk.byteLength;
        if (sink.destroyed) throw sink.errored ?? new Error('the output stream was closed before the conversion ended');
        if (!sink.write(chunk)) await drained(sink);
      },
      async end() {
        closed = true;
        sink.end();
        await finished(sink);
      },
      async abort(reason) {
        if (closed) return;
        closed = true;
        // Destroy *with* the error: a consumer such as an S3 Upload reading this stream must see a failure,
        // or it would complete the upload with what it got so far. The no-op listener keeps the error from
        // being unhandled when nobody else listens.
        sink.on('error', () => {});
        sink.destroy(reason);
      },
    };
  }
  return {
    get bytes() {
      return bytes;
    },
    async write(chunk) {
      bytes += chunk.byteLength;
      await sink.write(chunk);
      await sink.flush?.();
    },
    async end() {
      closed = true;
      await (sink.end ? sink.end() : sink.finish?.());
    },
    async abort(reason) {
      if (closed) return;
      closed = true;
      await sink.abort?.(reason);
    },
  };
}
