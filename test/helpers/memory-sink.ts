import type { ByteSink } from '../../functions/core/byte-sink.js';

/** A ByteSink in memory that remembers whether it was ended or aborted, and why. */
export class MemorySink implements ByteSink {
  chunks: Uint8Array[] = [];
  ended = false;
  aborted: Error | undefined;
  write(bytes: Uint8Array) {
    this.chunks.push(bytes);
  }
  end() {
    this.ended = true;
  }
  abort(reason?: Error) {
    this.aborted = reason;
  }
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
