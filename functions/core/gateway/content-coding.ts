import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream';
import zlib from 'node:zlib';

/**
 * Content codings of the gateway's answer (RFC 9110 §8.4): the body is decoded while it streams, so the
 * raw object is the report itself and its SHA-256 covers the decoded bytes. What was on the wire (the
 * coding and its byte count) is reported beside it.
 *
 * Each coding is declared once: DECODABLE_CODINGS names it, CODECS (below) holds how it is decoded (this
 * client) and encoded (the simulator's --compress, local/simulator/transport.ts). The request asks for the
 * list (request.ts ACCEPT_ENCODING) and the command line offers it (bin/reports.ts).
 */

/** The codings this client decodes, in the order they are asked for. */
export const DECODABLE_CODINGS = ['gzip', 'deflate', 'br'] as const;
export type ContentCoding = (typeof DECODABLE_CODINGS)[number];

/**
 * "gzip", "x-gzip, identity", "" -> the codings in the order they were applied. `identity` is no coding.
 * An unknown one is returned as it is, for the caller to refuse by name.
 */
export function parseContentEncoding(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity')
    .map((c) => (c === 'x-gzip' ? 'gzip' : c));
}

export const isDecodable = (coding: string): coding is ContentCoding => (DECODABLE_CODINGS as readonly string[]).includes(coding);

/** How the codings are written in logs, metadata and manifests: "identity" when there was none. */
export const codingLabel = (codings: readonly string[]): string => (codings.length ? codings.join(', ') : 'identity');

/**
 * "deflate" is the zlib format (RFC 9110 §8.4.1.2), but some servers send raw DEFLATE under that name, as
 * browsers tolerate. The first two bytes tell them apart: a zlib header has CM 8 and (CMF*256+FLG) % 31 == 0.
 */
class InflateEither extends Transform {
  #inner: zlib.Inflate | zlib.InflateRaw | undefined;
  #done: TransformCallback | undefined;
  #pending: Buffer = Buffer.alloc(0);

  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    if (!this.#inner) {
      this.#pending = Buffer.concat([this.#pending, chunk]);
      if (this.#pending.length < 2) return callback();
      const [cmf, flg] = [this.#pending[0]!, this.#pending[1]!];
      const zlibHeader = (cmf & 0x0f) === 8 && (cmf * 256 + flg) % 31 === 0;
      this.#start(zlibHeader ? zlib.createInflate() : zlib.createInflateRaw());
      chunk = this.#pending;
    }
    if (this.#inner!.write(chunk)) callback();
    else this.#inner!.once('drain', () => callback());
  }

  override _read(size: number): void {
    this.#inner?.resume();
    super._read(size);
  }

  override _flush(callback: TransformCallback): void {
    if (!this.#inner) {
      // A body of fewer than two bytes: no header to read; raw inflate says what is wrong with it.
      this.#start(zlib.createInflateRaw());
      this.#inner!.write(this.#pending);
    }
    this.#done = callback;
    this.#inner!.end();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#inner?.destroy();
    callback(error);
  }

  #start(inner: zlib.Inflate | zlib.InflateRaw): void {
    this.#inner = inner;
    // The consumer's backpressure reaches the inner inflater (and through it the socket): pause it while
    // this stream's buffer is full, resume it when the consumer reads again (_read).
    inner.on('data', (d: Buffer) => {
      if (!this.push(d)) inner.pause();
    });
    inner.once('end', () => this.#done?.());
    inner.once('error', (e) => this.destroy(e));
  }
}

interface Codec {
  /** A stream decoding the coding, for the client. */
  decoder(): Transform;
  /** A stream applying the coding, for the simulator's answers. */
  encoder(): Transform;
  /** The coding applied to a whole body at once (the simulator's cut-short answer, whose length it announces). */
  encodeWhole(body: Buffer): Buffer;
}

const CODECS = {
  gzip: { decoder: () => zlib.createGunzip(), encoder: () => zlib.createGzip(), encodeWhole: (b) => zlib.gzipSync(b) },
  // Encoded in the zlib format the RFC names; decoded in either, as servers differ (InflateEither).
  deflate: { decoder: () => new InflateEither(), encoder: () => zlib.createDeflate(), encodeWhole: (b) => zlib.deflateSync(b) },
  br: { decoder: () => zlib.createBrotliDecompress(), encoder: () => zlib.createBrotliCompress(), encodeWhole: (b) => zlib.brotliCompressSync(b) },
} satisfies Record<ContentCoding, Codec>;

const decoderFor = (coding: ContentCoding): Transform => CODECS[coding].decoder();

/** A stream applying `coding` (the simulator's compressed answers). */
export const encoderFor = (coding: ContentCoding): Transform => CODECS[coding].encoder();

/** `body` with `coding` applied. */
export const encodeWhole = (body: Buffer, coding: ContentCoding): Buffer => CODECS[coding].encodeWhole(body);

export interface DecodedBody {
  /** The decoded body. Destroying it destroys the whole chain and the source. */
  body: Readable;
  /** Bytes read from the source (the wire) so far. */
  wireBytes: () => number;
}

/**
 * `source` (the HTTP response) through a byte counter and one decoder per coding, last applied first.
 * Every coding must be decodable (the caller refuses the others first). A truncated or corrupt stream
 * errors the returned body with zlib's error (code Z_BUF_ERROR / Z_DATA_ERROR), like a dropped connection.
 */
export function decodeBody(source: Readable, codings: readonly ContentCoding[]): DecodedBody {
  let wire = 0;
  // A 'data' listener on the source would make it flow past the consumer's backpressure: count in a transform.
  const counting = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      wire += chunk.length;
      callback(null, chunk);
    },
  });
  const decoders = [...codings].reverse().map(decoderFor);
  const streams = [source, counting, ...decoders] as const;
  // pipeline() destroys every stream when one fails, so the last one (the body) carries the failure.
  const body = (pipeline as (...s: unknown[]) => Readable)(...streams, () => {
    // Errors surface on the returned stream; this callback only keeps pipeline() from throwing them.
  });
  return { body, wireBytes: () => wire };
}
