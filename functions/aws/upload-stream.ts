import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { MIB, MIN_PART_BYTES, unquote, type StoredObject } from './s3-streams.js';

/*
 * The fetch function's streaming upload of a raw report, in a module of its own: lib-storage's Upload is
 * only the fetch function's, and a module that imports it brings it into every bundle that imports the
 * module (the parse function reads objects and writes small ones through s3-streams.ts).
 */

/** Counts and hashes the bytes passing through, so the checksum costs no second read. */
function digestingPassThrough() {
  const hash = createHash('sha256');
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  return { stream, result: () => ({ bytes, sha256: hash.digest('hex') }) };
}

export interface UploadStreamInput {
  client: S3Client;
  bucket: string;
  key: string;
  body: Readable;
  contentType: string;
  /** User metadata (x-amz-meta-*): ASCII keys and values, 2 KB in all. */
  metadata?: Record<string, string>;
  /** Default 8 MiB, at least 5 MiB. Memory held is about partSizeBytes × (queueSize + 1). */
  partSizeBytes?: number;
  /** Parts uploaded in parallel; default 2 to keep a 512 MB Lambda well clear of its limit. */
  queueSize?: number;
}

/**
 * Streams `body` to s3://bucket/key: one PutObject below one part, a multipart upload above. While the
 * bytes stream through, they are counted and hashed (SHA-256).
 *
 * Why the checksum is returned and not stored as object metadata: metadata is sent when the upload
 * starts, before the last byte (and so the digest) is known; adding it afterwards would need a copy of
 * the whole object. The caller records `sha256` in the run manifest, beside the object's versionId.
 *
 * If `body` fails (the gateway drops the connection mid-report), the multipart upload is aborted and the
 * body's own error is rethrown, so nothing appears at the key. If S3 fails, `body` is destroyed (its
 * producer sees the error instead of waiting forever) and the S3 error is rethrown.
 */
export async function uploadStream(input: UploadStreamInput): Promise<StoredObject> {
  const partSize = Math.max(input.partSizeBytes ?? 8 * MIB, MIN_PART_BYTES);
  const digest = digestingPassThrough();
  // The body's own failure, told apart from the one we cause below by destroying it after an S3 failure.
  let bodyError: unknown;
  let stoppingBody = false;
  input.body.on('error', (e) => {
    if (!stoppingBody) bodyError ??= e;
  });
  const piped = pipeline(input.body, digest.stream).catch(() => undefined); // failures are seen through bodyError and upload.done()
  const upload = new Upload({
    client: input.client,
    queueSize: input.queueSize ?? 2,
    partSize,
    leavePartsOnError: false,
    params: {
      Bucket: input.bucket,
      Key: input.key,
      Body: digest.stream,
      ContentType: input.contentType,
      Metadata: input.metadata,
    },
  });
  let out;
  try {
    out = await upload.done();
  } catch (e) {
    if (!input.body.destroyed) {
      stoppingBody = true;
      input.body.destroy(e instanceof Error ? e : new Error(String(e)));
    }
    await piped;
    // The body's failure is the cause; an S3 error seen after it (e.g. while aborting) is a consequence.
    throw bodyError ?? e;
  }
  await piped;
  // Defensive: an upload cannot complete on a failed body, but never report success for one.
  if (bodyError) throw bodyError;
  return {
    bucket: input.bucket,
    key: input.key,
    versionId: out.VersionId,
    etag: unquote(out.ETag),
    ...digest.result(),
  };
}
