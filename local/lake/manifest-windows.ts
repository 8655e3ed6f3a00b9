import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, type ListObjectsV2CommandOutput, type S3Client } from '@aws-sdk/client-s3';
import { areaPrefix, parseCuratedKey, reportAreaPrefix } from '../../functions/core/lake/s3-keys.js';
import type { FeedKey } from '../../functions/core/connections/feed.js';
import type { RecordedWindow } from '../../functions/core/lake/stale-windows.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { recordedWindowOf } from '../../functions/parse-report/table-in-place.js';
import { mapWithConcurrency } from '../../functions/core/concurrency.js';
import { S3RVER_OBJECT_SUFFIX } from './s3rver-files.js';

/**
 * A report's windows as their manifests describe them (functions/parse-report/table-in-place.ts, recordedWindowOf):
 * which table file is in place and which definition wrote it. Two sources: the local lake's files on disk, and a
 * deployment's curated bucket.
 */

/** From the local lake: s3rver keeps `manifests/<report>/dt=D/S.json` as `<lake>/<curated bucket>/manifests/<report>/dt=D/S.json._S3rver_object`. */
export async function lakeWindows(lakeDir: string, curatedBucket: string, reportId: string): Promise<RecordedWindow[]> {
  const dir = join(resolve(lakeDir), curatedBucket, reportAreaPrefix('manifests', reportId));
  const files = (await readdir(dir, { recursive: true }).catch(() => [] as string[])).filter((f) => f.endsWith(`.json${S3RVER_OBJECT_SUFFIX}`));
  const windows: RecordedWindow[] = [];
  for (const file of files) {
    let manifest: Partial<LoadManifest>;
    try {
      manifest = JSON.parse(await readFile(join(dir, file), 'utf8')) as Partial<LoadManifest>;
    } catch {
      continue; // Half written (an interrupted load); the next load of the window rewrites it.
    }
    const window = recordedWindowOf(manifest);
    if (window) windows.push(window);
  }
  return windows;
}

/**
 * From a curated bucket: one listing of manifests/<report>/, then a GET of each of the `newest` latest windows'
 * manifests (8 at a time). Bounded because every window is one request: 400 daily windows are more than a year, read
 * in a few seconds for a fraction of a cent. The fingerprint is inside the manifest, not in object metadata a
 * listing could return (ListObjectsV2 returns no metadata, so metadata would cost a HEAD per window all the same).
 */
export async function bucketWindows(s3: S3Client, bucket: string, feed: FeedKey, newest: number): Promise<{ windows: RecordedWindow[]; total: number }> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page: ListObjectsV2CommandOutput = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: areaPrefix('manifests', feed), ContinuationToken: token }));
    for (const o of page.Contents ?? []) if (o.Key && parseCuratedKey(o.Key)?.area === 'manifests') keys.push(o.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  // Keys are manifests/<report>/dt=<date>/<window start>.json: in key order, the last are the newest windows.
  const chosen = keys.sort().slice(-newest);
  // The runner's workers must not throw (backfill-runner.ts): failures come back as values, the first one rethrown.
  const read = await mapWithConcurrency(chosen, 8, async (key) => {
    try {
      const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })))?.Body?.transformToString();
      return body ? recordedWindowOf(JSON.parse(body) as Partial<LoadManifest>) : undefined;
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  });
  const failed = read.find((r) => r instanceof Error);
  if (failed) throw failed;
  return { windows: read.filter((w): w is RecordedWindow => w !== undefined && !(w instanceof Error)), total: keys.length };
}
