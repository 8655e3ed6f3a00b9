import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { openObjectStream } from '../../functions/aws/s3-streams.js';

/**
 * Looking into the local lake (s3rver) from a test: what keys exist, what they hold, and what s3rver keeps
 * on disk that S3 would only show through ListMultipartUploads (which s3rver lacks): unfinished uploads.
 */

export async function listKeys(client: S3Client, bucket: string, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

export async function readObject(client: S3Client, bucket: string, key: string): Promise<Buffer> {
  const opened = await openObjectStream({ client, bucket, key });
  const chunks: Buffer[] = [];
  for await (const c of opened.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Whether a GET/HEAD of the key would find an object right now. */
export async function objectExists(client: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (e) {
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw e;
  }
}

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * Multipart uploads started in `bucket` and neither completed nor aborted. s3rver keeps each as a directory
 * <lakeDir>/<bucket>/._S3rver_uploads/<uploadId>/ (its FilesystemStore) and removes it on complete or abort.
 */
export async function incompleteUploads(lakeDir: string, bucket: string): Promise<string[]> {
  const dir = join(lakeDir, bucket, '._S3rver_uploads');
  const entries = await readdir(dir, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [];
    throw e;
  });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name);
}
