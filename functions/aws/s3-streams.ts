import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, PutObjectTaggingCommand, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';

/**
 * Streams in and out of S3 without holding a whole file in memory, and without ever leaving a partial
 * object at a key: an upload either completes or leaves nothing (a new object, or on a versioned bucket a
 * new version, appears only on CompleteMultipartUpload / a finished PutObject).
 */

export const MIB = 1024 * 1024;
/** S3's minimum size of every part but the last. */
export const MIN_PART_BYTES = 5 * MIB;

/** What a finished upload reports; the caller records it in the run manifest. */
export interface StoredObject {
  bucket: string;
  key: string;
  /** Undefined on an unversioned bucket (and always on the local lake: s3rver has no versioning). */
  versionId: string | undefined;
  /** S3's ETag, quotes removed. For multipart uploads it is not an MD5 of the content: use sha256. */
  etag: string | undefined;
  bytes: number;
  /** Lower-case hex SHA-256 of exactly the bytes stored. */
  sha256: string;
}

/** The object (or the version asked for) does not exist. Not retryable: S3 events for deleted objects end here. */
export class ObjectNotFound extends Error {
  readonly retryable = false;
  constructor(
    readonly bucket: string,
    readonly key: string,
    readonly versionId?: string,
    options?: { cause?: unknown },
  ) {
    super(`s3://${bucket}/${key}${versionId ? ` (version ${versionId})` : ''} does not exist.`, options);
    this.name = 'ObjectNotFound';
  }
}

/** An ETag as S3 sends it, without its quotes. */
export const unquote = (etag: string | undefined) => etag?.replace(/"/g, '');

export interface OpenedObject {
  body: Readable;
  contentLength: number | undefined;
  contentType: string | undefined;
  /** User metadata, keys lower-case without the x-amz-meta- prefix. */
  metadata: Record<string, string>;
  /** The version read: pass the S3 event's versionId to read exactly the object that caused the event. */
  versionId: string | undefined;
  etag: string | undefined;
}

/** Opens an object (or one version of it) as a Node stream. Consume or destroy `body`: it holds a connection. */
export async function openObjectStream(input: {
  client: S3Client;
  bucket: string;
  key: string;
  versionId?: string;
  /** Read from this byte offset to the end (HTTP Range `bytes=from-`). */
  from?: number;
  /** Only if the object still has this ETag (a second read of the same object). */
  ifMatch?: string;
}): Promise<OpenedObject> {
  try {
    const out = await input.client.send(
      new GetObjectCommand({
        Bucket: input.bucket,
        Key: input.key,
        VersionId: input.versionId,
        ...(input.from !== undefined ? { Range: `bytes=${input.from}-` } : {}),
        ...(input.ifMatch !== undefined ? { IfMatch: `"${input.ifMatch}"` } : {}),
      }),
    );
    const body = out.Body;
    if (!body) throw new ObjectNotFound(input.bucket, input.key, input.versionId);
    return {
      // In Node the SDK's body is an http.IncomingMessage (a Readable); in other runtimes, a web stream.
      body: body instanceof Readable ? body : Readable.fromWeb(body.transformToWebStream() as import('node:stream/web').ReadableStream),
      contentLength: out.ContentLength,
      contentType: out.ContentType,
      metadata: out.Metadata ?? {},
      versionId: out.VersionId,
      etag: unquote(out.ETag),
    };
  } catch (e) {
    if (e instanceof ObjectNotFound) throw e;
    if (e instanceof NoSuchKey || (e instanceof S3ServiceException && (e.name === 'NoSuchVersion' || e.name === 'NoSuchKey'))) {
      throw new ObjectNotFound(input.bucket, input.key, input.versionId, { cause: e });
    }
    throw e;
  }
}

/**
 * Sets an object's tags. Unlike metadata, tags can be added after the upload without a copy, so without a
 * new version and a second ObjectCreated event: the way to attach what is known only after the last byte.
 */
export async function tagObject(input: {
  client: S3Client;
  bucket: string;
  key: string;
  versionId?: string;
  tags: Record<string, string>;
}): Promise<void> {
  await input.client.send(
    new PutObjectTaggingCommand({
      Bucket: input.bucket,
      Key: input.key,
      VersionId: input.versionId,
      Tagging: { TagSet: Object.entries(input.tags).map(([Key, Value]) => ({ Key, Value })) },
    }),
  );
}

export interface PutBytesInput {
  client: S3Client;
  bucket: string;
  key: string;
  body: Uint8Array | string;
  contentType: string;
  metadata?: Record<string, string>;
}

/** One PutObject for small objects (manifests, rejected-row files): all or nothing by itself. */
export async function putBytes(input: PutBytesInput): Promise<StoredObject> {
  const bytes = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const out = await input.client.send(
    new PutObjectCommand({
      Bucket: input.bucket,
      Key: input.key,
      Body: bytes,
      ContentLength: bytes.byteLength,
      ContentType: input.contentType,
      Metadata: input.metadata,
    }),
  );
  return {
    bucket: input.bucket,
    key: input.key,
    versionId: out.VersionId,
    etag: unquote(out.ETag),
    bytes: bytes.byteLength,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}

/**
 * JSON on one line with a final newline: the Glue table `loads` reads the manifests with a JSON SerDe, which takes one
 * record per line and refuses a pretty-printed one (functions/core/lake/loads-table.ts). `jq .` shows one to a person.
 */
export function putJson(input: Omit<PutBytesInput, 'body' | 'contentType'> & { value: unknown }): Promise<StoredObject> {
  const { value, ...rest } = input;
  return putBytes({ ...rest, body: `${JSON.stringify(value)}\n`, contentType: 'application/json; charset=utf-8' });
}
