import { createHash } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ByteSink } from '../core/byte-sink.js';
import { MIB, MIN_PART_BYTES, type StoredObject } from './s3-streams.js';

export interface MultipartSinkOptions {
  client: S3Client;
  bucket: string;
  key: string;
  contentType: string;
  metadata?: Record<string, string>;
  /** Bytes per part (default 8 MiB; S3 needs at least 5 MiB for every part but the last). */
  partSizeBytes?: number;
  /** Parts uploading at once (default 2). flush() lets the producer go on while these are in flight. */
  queueSize?: number;
}

interface CutPart {
  partNumber: number;
  body: Uint8Array;
  /** The part buffer body is a view of: back to the spares once the part is uploaded. */
  buffer: Buffer;
}

/**
 * A push-style writer into one S3 object, for producers that write synchronously and pause at checkpoints
 * (the CSV-to-Parquet converter, through asByteSink below):
 *
 * - write(chunk) copies the chunk into the part being filled (synchronously) and cuts the part when it is full;
 * - await flush() is the backpressure point: it resolves once every cut part is uploading or uploaded and at
 *   most queueSize are in flight, so memory stays near partSize × (queueSize + 2) (those uploading, one cut
 *   while they were, the one being filled) plus what the producer holds;
 * - await finish() commits: a single PutObject if the whole object fits in one part, otherwise the last part
 *   and CompleteMultipartUpload. Only then does anything appear at the key;
 * - await abort() discards everything: nothing appears at the key.
 *
 * Commit is separate from the producer's own "end of file" on purpose: the caller decides after the last
 * byte whether to keep the file (e.g. not when too many rows were rejected).
 *
 * A part that fails (after the SDK's own retries) makes the next flush()/finish() reject; finish() then
 * aborts by itself. write() copies `chunk`: the caller may reuse it.
 *
 * Parts are filled in buffers of partSizeBytes that are reused once their upload is over, rather than
 * joined from the chunks into a new buffer each time: a new 5 MiB buffer is fresh memory, mapped and
 * faulted in page by page (with `npm start`'s fixed mmap threshold, a new mapping for every part), which
 * cost ~0.1 s of the local fetch's main thread per 130 MiB report; a reused one is already there.
 */
export class MultipartSink {
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly hash = createHash('sha256');
  private total = 0;
  /** The part being filled, and how many of its bytes are. */
  private part: Buffer | undefined;
  private buffered = 0;
  /** Part buffers whose upload succeeded, for the next parts. */
  private readonly spare: Buffer[] = [];
  private nextPartNumber = 1;
  private uploadId: Promise<{ id: string; crc32: boolean }> | undefined;
  private readonly waiting: CutPart[] = [];
  private inFlight = 0;
  private readonly uploaded: CompletedPart[] = [];
  private failure: { error: unknown } | undefined;
  private state: 'open' | 'finishing' | 'finished' | 'aborted' = 'open';
  private wakeUps: Array<() => void> = [];
  private aborting: Promise<void> | undefined;
  /** Set if AbortMultipartUpload itself failed: the parts stay until the bucket's lifecycle rule removes them. */
  abortError: unknown;

  constructor(private readonly options: MultipartSinkOptions) {
    this.partSize = Math.max(options.partSizeBytes ?? 8 * MIB, MIN_PART_BYTES);
    this.queueSize = Math.max(1, options.queueSize ?? 2);
  }

  /** Bytes accepted so far. */
  get bytesWritten(): number {
    return this.total;
  }

  write(chunk: Uint8Array): void {
    if (this.state !== 'open') throw new Error(`MultipartSink for s3://${this.options.bucket}/${this.options.key} is ${this.state}: no more writes.`);
    this.throwIfFailed();
    if (chunk.byteLength === 0) return;
    this.hash.update(chunk);
    this.total += chunk.byteLength;
    for (let at = 0; at < chunk.byteLength; ) {
      this.part ??= this.spare.pop() ?? Buffer.allocUnsafe(this.partSize);
      const n = Math.min(chunk.byteLength - at, this.partSize - this.buffered);
      this.part.set(at === 0 && n === chunk.byteLength ? chunk : chunk.subarray(at, at + n), this.buffered);
      this.buffered += n;
      at += n;
      if (this.buffered === this.partSize) this.cutPart();
    }
  }

  async flush(): Promise<void> {
    await this.until(() => this.failure !== undefined || this.waiting.length === 0);
    this.throwIfFailed();
  }

  async finish(): Promise<StoredObject> {
    if (this.state !== 'open') throw new Error(`MultipartSink for s3://${this.options.bucket}/${this.options.key} is ${this.state}: cannot finish.`);
    this.state = 'finishing';
    try {
      this.throwIfFailed();
      // Never started a multipart upload: one PutObject is just as atomic and saves three requests.
      if (this.nextPartNumber === 1) return await this.putWhole();
      if (this.buffered > 0) this.cutPart();
      await this.until(() => this.failure !== undefined || (this.waiting.length === 0 && this.inFlight === 0));
      this.throwIfFailed();
      const { id } = await this.started();
      const parts = [...this.uploaded].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
      const out = await this.options.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.options.bucket,
          Key: this.options.key,
          UploadId: id,
          MultipartUpload: { Parts: parts },
        }),
      );
      this.state = 'finished';
      return this.stored(out.VersionId, out.ETag);
    } catch (e) {
      await this.abortNow();
      throw e;
    }
  }

  /**
   * Discards the upload. Rejects only when called after a successful finish(); an S3 failure while
   * aborting is kept in abortError instead, so `catch (e) { await sink.abort(); throw e; }` keeps the real error.
   * Safe to call more than once, and after a failed finish() (which already aborted).
   */
  async abort(): Promise<void> {
    if (this.state === 'finished') {
      throw new Error(`s3://${this.options.bucket}/${this.options.key} was already completed; abort() cannot take it back.`);
    }
    await this.abortNow();
  }

  private abortNow(): Promise<void> {
    this.state = 'aborted';
    this.aborting ??= (async () => {
      this.waiting.length = 0;
      this.part = undefined;
      this.buffered = 0;
      // Let parts in flight settle first, so none lands after the abort and outlives it.
      await this.until(() => this.inFlight === 0);
      // A create that failed (or never happened) left nothing to abort.
      const started = await this.uploadId?.catch(() => undefined);
      if (!started) return;
      try {
        const { id } = started;
        await this.options.client.send(
          new AbortMultipartUploadCommand({ Bucket: this.options.bucket, Key: this.options.key, UploadId: id }),
        );
      } catch (e) {
        // Already gone is fine; anything else leaves parts for the bucket's AbortIncompleteMultipartUpload rule.
        if (!(e instanceof Error && e.name === 'NoSuchUpload')) this.abortError = e;
      }
    })();
    return this.aborting;
  }

  /** A part upload failed earlier: surface its error at the next call. */
  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  private cutPart(): void {
    const buffer = this.part!;
    this.waiting.push({ partNumber: this.nextPartNumber++, body: buffer.subarray(0, this.buffered), buffer });
    this.part = undefined;
    this.buffered = 0;
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.queueSize && this.waiting.length > 0 && !this.failure && this.state !== 'aborted') {
      const part = this.waiting.shift()!;
      this.inFlight++;
      this.sendPart(part)
        // Uploaded: its buffer is free (a failed part's is not reused: the request may still hold it).
        .then(() => void this.spare.push(part.buffer))
        .catch((error: unknown) => {
          this.failure ??= { error };
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
          this.wake();
        });
    }
    this.wake();
  }

  private started(): Promise<{ id: string; crc32: boolean }> {
    this.uploadId ??= (async () => {
      // Mirror lib-storage: when the SDK adds CRC32 checksums to parts (its AWS default), the upload must be
      // created with that algorithm and completed with each part's checksum, or S3 refuses the parts.
      const crc32 = (await this.options.client.config.requestChecksumCalculation()) === 'WHEN_SUPPORTED';
      const out = await this.options.client.send(
        new CreateMultipartUploadCommand({
          Bucket: this.options.bucket,
          Key: this.options.key,
          ContentType: this.options.contentType,
          Metadata: this.options.metadata,
          ...(crc32 ? { ChecksumAlgorithm: 'CRC32' as const } : {}),
        }),
      );
      if (!out.UploadId) throw new Error(`S3 returned no UploadId for s3://${this.options.bucket}/${this.options.key}.`);
      return { id: out.UploadId, crc32 };
    })();
    return this.uploadId;
  }

  private async sendPart(part: CutPart): Promise<void> {
    const { id, crc32 } = await this.started();
    if (this.state === 'aborted') return;
    const out = await this.options.client.send(
      new UploadPartCommand({
        Bucket: this.options.bucket,
        Key: this.options.key,
        UploadId: id,
        PartNumber: part.partNumber,
        Body: part.body,
        ContentLength: part.body.byteLength,
        ...(crc32 ? { ChecksumAlgorithm: 'CRC32' as const } : {}),
      }),
    );
    if (!out.ETag) throw new Error(`S3 returned no ETag for part ${part.partNumber} of s3://${this.options.bucket}/${this.options.key}.`);
    this.uploaded.push({
      PartNumber: part.partNumber,
      ETag: out.ETag,
      ...(out.ChecksumCRC32 ? { ChecksumCRC32: out.ChecksumCRC32 } : {}),
    });
  }

  private async putWhole(): Promise<StoredObject> {
    const body = this.part ? this.part.subarray(0, this.buffered) : Buffer.alloc(0);
    this.part = undefined;
    this.buffered = 0;
    const out = await this.options.client.send(
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.options.key,
        Body: body,
        ContentLength: body.byteLength,
        ContentType: this.options.contentType,
        Metadata: this.options.metadata,
      }),
    );
    this.state = 'finished';
    return this.stored(out.VersionId, out.ETag);
  }

  private stored(versionId: string | undefined, etag: string | undefined): StoredObject {
    return {
      bucket: this.options.bucket,
      key: this.options.key,
      versionId,
      etag: etag?.replace(/"/g, ''),
      bytes: this.total,
      sha256: this.hash.digest('hex'),
    };
  }

  /** Resolves when `ready()` holds, re-checked each time a part settles. */
  private until(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => (ready() ? resolve() : this.wakeUps.push(check));
      this.wakeUps.push(check);
    });
  }

  private wake(): void {
    const waiters = this.wakeUps;
    this.wakeUps = [];
    for (const w of waiters) w();
  }
}

/** A ByteSink that also tells, once ended, what S3 stored. */
export interface CommittingSink extends ByteSink {
  end(): Promise<void>;
  abort(reason?: Error): Promise<void>;
  /** Set by end(): the object as committed (undefined before, or after an abort). */
  readonly stored: StoredObject | undefined;
}

/**
 * The converter's output interface (core/byte-sink.ts) over a MultipartSink:
 * - write() hands the bytes over and resolves once the parts in flight leave room (flush()), so a slow
 *   S3 slows the encoder down instead of piling parts up in memory;
 * - end() commits (finish()) and keeps what was stored, for the manifest;
 * - abort() discards the upload: nothing appears at the key.
 */
export function asByteSink(sink: MultipartSink): CommittingSink {
  let stored: StoredObject | undefined;
  return {
    get stored() {
      return stored;
    },
    async write(bytes) {
      sink.write(bytes);
      await sink.flush();
    },
    async end() {
      stored = await sink.finish();
    },
    async abort() {
      await sink.abort();
    },
  };
}
