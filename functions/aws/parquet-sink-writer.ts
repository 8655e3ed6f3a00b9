import { ByteWriter, type Writer } from 'hyparquet-writer';

/** What the adapter needs from a sink: MultipartSink, or a test double collecting bytes. */
export interface ByteSink {
  write(chunk: Uint8Array): void;
  flush(): Promise<void>;
}

/**
 * hyparquet-writer's ParquetWriter writes into a `Writer` (a growable ByteWriter) and awaits
 * `writer.flush()` after each row group. This Writer hands its bytes to a ByteSink every `drainBytes`
 * (like hyparquet-writer's own fileWriter) and on flush(), then awaits the sink's flush(): the
 * backpressure from S3 part uploads reaches the Parquet encoder, and memory stays at about one row group.
 *
 * finish() only drains the last bytes (the footer): it does not commit. After `await parquet.finish()`,
 * the caller commits with `await sink.finish()` or discards with `await sink.abort()`.
 */
export function parquetSinkWriter(sink: ByteSink, drainBytes = 1024 * 1024): Writer {
  return new SinkByteWriter(sink, drainBytes);
}

class SinkByteWriter extends ByteWriter {
  constructor(
    private readonly sink: ByteSink,
    private readonly drainBytes: number,
  ) {
    super(Math.min(drainBytes * 2, 4 * 1024 * 1024));
  }

  override ensure(size: number): void {
    // Drain before growing: index counts bytes held since the last drain, offset all bytes ever written.
    if (this.index >= this.drainBytes) this.drain();
    super.ensure(size);
  }

  flush(): Promise<void> {
    this.drain();
    return this.sink.flush();
  }

  override finish(): void {
    this.drain();
  }

  override getBuffer(): ArrayBuffer {
    throw new Error('parquetSinkWriter streams its bytes to a sink; they are not kept in memory.');
  }

  override getBytes(): Uint8Array<ArrayBuffer> {
    throw new Error('parquetSinkWriter streams its bytes to a sink; they are not kept in memory.');
  }

  private drain(): void {
    if (this.index === 0) return;
    // A copy: the buffer is reused for the next bytes while the sink may still hold this chunk.
    this.sink.write(new Uint8Array(this.buffer.slice(0, this.index)));
    this.index = 0;
  }
}
