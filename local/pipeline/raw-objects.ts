import { ListObjectsV2Command, ListObjectVersionsCommand, type ListObjectVersionsCommandOutput, type S3Client } from '@aws-sdk/client-s3';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { Feed } from '../../functions/core/connections/feed.js';
import { areaPrefix, partitionStart, rawKey } from '../../functions/core/lake/s3-keys.js';
import { formatLocalDate, type ReportWindow } from '../../functions/core/time/window.js';

/**
 * The raw files `reports reparse` rebuilds from: the current object at each window's raw key, found with one
 * paged listing of the feed's raw/ prefix from the first window's date on (not a request per window).
 *
 * In AWS the raw bucket is versioned, and the parse must be told which version it reads: it checks the version
 * is still current before reading and again before committing (parse-object.ts), so a reparse racing a fetch of
 * the same window never replaces the newer file's table with the older one's. ListObjectVersions gives the
 * current version of every key at once (s3:ListBucketVersions); a key whose latest version is a delete marker has
 * no raw file. The local lake (s3rver) has no versions: ListObjectsV2 (s3:ListBucket) is enough there.
 */

export interface RawObject {
  key: string;
  /** The current version (absent on an unversioned store). */
  versionId?: string;
  size: number;
  etag?: string;
}

/** A PDF report is kept raw and never parsed: there is nothing to rebuild. */
export function refusePdf(report: Pick<ReportDefinition, 'id' | 'format'>): void {
  if (report.format !== 'CSV') {
    throw new ConfigurationError(`Report "${report.id}" is ${report.format}: it is kept raw and never parsed, so there is no table to rebuild.`);
  }
}

/** The current raw object of each window that has one, by raw key; windows missing from the map have none. */
export async function currentRawObjects(
  s3: S3Client,
  bucket: string,
  feed: Feed,
  windows: readonly ReportWindow[],
  options: { versioned: boolean },
): Promise<Map<string, RawObject>> {
  const wanted = new Set(windows.map((w) => rawKey(feed, w, feed.report.format)));
  const found = new Map<string, RawObject>();
  if (!windows.length) return found;
  const prefix = areaPrefix('raw', feed);
  // Every key of the first window's date sorts after this, and keys come back in order: stop past the last wanted.
  const startAfter = partitionStart('raw', feed, formatLocalDate(windows[0]!.start));
  const last = [...wanted].sort().at(-1)!;
  const take = (object: RawObject) => {
    if (wanted.has(object.key)) found.set(object.key, object);
  };

  if (options.versioned) {
    let keyMarker: string | undefined = startAfter;
    let versionIdMarker: string | undefined;
    for (;;) {
      const page: ListObjectVersionsCommandOutput = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: keyMarker, VersionIdMarker: versionIdMarker }));
      for (const v of page.Versions ?? []) {
        if (v.IsLatest && v.Key) take({ key: v.Key, ...(v.VersionId ? { versionId: v.VersionId } : {}), size: v.Size ?? 0, ...(v.ETag ? { etag: v.ETag.replace(/"/g, '') } : {}) });
      }
      const keys = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].map((v) => v.Key ?? '');
      if (!page.IsTruncated || keys.some((k) => k > last)) return found;
      keyMarker = page.NextKeyMarker;
      versionIdMarker = page.NextVersionIdMarker;
    }
  }
  let token: string | undefined;
  for (;;) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, StartAfter: startAfter, ContinuationToken: token }));
    for (const o of page.Contents ?? []) if (o.Key) take({ key: o.Key, size: o.Size ?? 0, ...(o.ETag ? { etag: o.ETag.replace(/"/g, '') } : {}) });
    if (!page.IsTruncated || (page.Contents ?? []).some((o) => (o.Key ?? '') > last)) return found;
    token = page.NextContinuationToken;
  }
}
