import { Readable } from 'node:stream';

/**
 * Looking at the first bytes of a response without buffering it: the client must tell a report from
 * an error page before anything is saved, yet a report can be far larger than memory.
 */

/**
 * How far to peek: at least `min` bytes (or the whole body), then until a CR or LF byte has been seen (the
 * first line ended: a report's header row), at most `max`. The chunk that crosses a bound is kept whole.
 * A number is min and max at once.
 */
export interface PeekLimit {
  min: number;
  max: number;
}

export interface Peeked {
  /** At least `limit` bytes, or the whole body when it is shorter (the chunk that crosses the limit is kept whole). */
  head: Buffer;
  /** The body ended within `head`. */
  complete: boolean;
  /** The whole body again: `head`, then the rest of the source, with the source's backpressure. */
  body: ReplayStream;
}

/** Turns an error of the source into the error the consumer sees, knowing how many bytes got through. */
export type WrapSourceError = (error: Error, bytesReceived: number) => Error;

/**
 * Reads from `source` until `limit` bytes or its end, then hands back those bytes and a stream that
 * replays them followed by the rest. Rejects with the source's error if it fails before that.
 * The replay stream is built synchronously inside the source's event handler, so no source event can
 * fall into the gap between peeking and handing over.
 */
export function peekThenReplay(source: Readable, limit: number | PeekLimit, wrapError: WrapSourceError): Promise<Peeked> {
  const { min, max } = typeof limit === 'number' ? { min: limit, max: limit } : limit;
  let lineEnded = false;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    };
    const finish = (complete: boolean) => {
      cleanup();
      const head = Buffer.concat(chunks, size);
      resolve({ head, complete, body: new ReplayStream(head, source, complete, wrapError) });
    };
    const onData = (chunk: Buffer | string) => {
      // Stryker disable next-line ConditionalExpression: Buffer.from(buffer) is a copy of the same bytes
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(bytes);
      size += bytes.length;
      // Latched per chunk, so a body trickling in byte by byte costs no re-scan of the head.
      lineEnded ||= bytes.includes(0x0a) || bytes.includes(0x0d);
      if (size >= max || (size >= min && lineEnded)) {
        source.pause();
        finish(false);
      }
    };
    const onEnd = () => finish(true);
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the connection closed before the body began'));
    };
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    source.once('close', onClose);
  });
}

/**
 * A Readable that emits `head` and then the rest of `source`, pulled through the source's async
 * iterator one chunk per _read (so the consumer's backpressure reaches the socket), and passing the
 * source's failure on as a wrapped error. The iterator, not 'data'/'end' listeners, because a source
 * that already ended while paused would otherwise end this stream before the head was read.
 * Destroying it destroys the source, so a consumer that gives up also closes the connection.
 */
export class ReplayStream extends Readable {
  #head: Buffer | undefined;
  #received: number;
  #pulling = false;
  readonly #source: Readable;
  readonly #chunks: AsyncIterator<Buffer> | undefined;
  readonly #wrapError: WrapSourceError;

  constructor(head: Buffer, source: Readable, sourceEnded: boolean, wrapError: WrapSourceError) {
    super();
    this.#head = head;
    this.#received = head.length;
    this.#source = source;
    this.#wrapError = wrapError;
    this.#chunks = sourceEnded ? undefined : (source[Symbol.asyncIterator]() as AsyncIterator<Buffer>);
  }

  /** Bytes of the body received from the source so far, the peeked head included. */
  get bytesReceived(): number {
    return this.#received;
  }

  override _read(): void {
    const head = this.#head;
    this.#head = undefined;
    if (head !== undefined && head.length > 0) {
      this.push(head);
      return;
    }
    if (!this.#chunks) {
      this.push(null);
      return;
    }
    if (this.#pulling) return;
    this.#pulling = true;
    this.#chunks.next().then(
      ({ value, done }) => {
        this.#pulling = false;
        if (done) {
          this.push(null);
          return;
        }
        const chunk = typeof value === 'string' ? Buffer.from(value) : value;
        this.#received += chunk.length;
        this.push(chunk);
      },
      (e: unknown) => {
        this.#pulling = false;
        // A source closed before its end without an error of its own still lost data: the iterator
        // reports that as a premature close, which is wrapped like any other break.
        if (!this.destroyed) this.destroy(this.#wrapError(e instanceof Error ? e : new Error(String(e)), this.#received));
      },
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Destroying a destroyed stream does nothing.
    this.#source.destroy();
    callback(error);
  }
}
