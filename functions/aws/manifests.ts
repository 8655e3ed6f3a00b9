import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { LoadManifest } from '../core/lake/load-manifest.js';
import { openObjectStream } from './s3-streams.js';

/** Reading the parse function's load manifests back (functions/core/lake/load-manifest.ts): the data checks' history, the freshness check. */

/** One manifest, parsed; fields a reader needs are checked by the reader (a manifest of an older version may lack them). */
export async function readManifest(s3: S3Client, bucket: string, key: string): Promise<Partial<LoadManifest>> {
  const opened = await openObjectStream({ client: s3, bucket, key });
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Partial<LoadManifest>;
}

export interface ListedManifest {
  key: string;
  lastModified: Date;
}

/** Every manifest under `prefix` whose key sorts after `startAfter`, every page. */
export async function listManifests(s3: S3Client, bucket: string, prefix: string, startAfter: string): Promise<ListedManifest[]> {
  const listed: ListedManifest[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token, ...(token ? {} : { StartAfter: startAfter }) }));
    for (const o of page.Contents ?? []) if (o.Key && o.LastModified) listed.push({ key: o.Key, lastModified: o.LastModified });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return listed;
}
