import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { CreateBucketCommand, HeadBucketCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { BucketNames } from '../../functions/core/naming.js';
import { PREFIX } from '../../functions/core/lake/s3-keys.js';
import { openObjectStream } from '../../functions/aws/s3-streams.js';
import { S3RVER_OBJECT_SUFFIX } from './s3rver-files.js';

/**
 * An external S3-compatible store (`npm start -- --s3-endpoint URL`: MinIO, LocalStack, a real bucket
 * pair) in place of the embedded lake. It sends this process no ObjectCreated events, and DuckDB cannot
 * read its objects as local files, so the local pipeline drives the parse step itself (pipeline.ts) and
 * copies the curated tables down here before querying.
 */


/** Creates the stack-named buckets when the store lacks them (a fresh MinIO); an existing bucket is left alone. */
export async function ensureBuckets(client: S3Client, buckets: BucketNames): Promise<void> {
  for (const bucket of [buckets.raw, buckets.curated]) {
    try {
      await client.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status !== 404) throw e;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    }
  }
}

/**
 * Mirrors the curated bucket's tables/ prefix into <cacheDir>/<bucket>/, replacing what was there, so the
 * cache holds exactly the store's current Parquet files (a window deleted in the store disappears here too).
 */
export async function mirrorTables(client: S3Client, bucket: string, cacheDir: string): Promise<number> {
  const root = join(cacheDir, bucket);
  const wanted = new Set<string>();
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: PREFIX.tables, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      if (!object.Key?.endsWith('.parquet')) continue;
      // Laid out like the embedded lake (s3rver-files.ts), so the same DuckDB views read both.
      const file = join(root, ...object.Key.split('/')) + S3RVER_OBJECT_SUFFIX;
      // A key with ".." segments must not write outside the cache.
      if (relative(root, file).startsWith(`..${sep}`)) continue;
      wanted.add(file);
      await mkdir(dirname(file), { recursive: true });
      const opened = await openObjectStream({ client, bucket, key: object.Key });
      await pipeline(opened.body, createWriteStream(file));
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  for (const file of await filesUnder(join(root, PREFIX.tables))) if (!wanted.has(file)) await rm(file, { force: true });
  return wanted.size;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
