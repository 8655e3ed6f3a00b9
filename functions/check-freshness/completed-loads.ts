import { ListObjectsV2Command, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import { mapWithConcurrency } from '../core/concurrency.js';
import { ConfigurationError } from '../core/errors.js';
import { earliestLoadedWindowDate, isCompletedLoad, type WatchedReport } from '../core/freshness/stale-reports.js';
import { areaPrefix, partitionStart } from '../core/lake/s3-keys.js';
import { listManifests, readManifest } from '../aws/manifests.js';
import { logger } from '../aws/powertools.js';
import { ObjectNotFound } from '../aws/s3-streams.js';

/**
 * Completed loads, read from the curated bucket's manifests: every attempt writes its window's manifest last
 * (functions/core/lake/load-manifest.ts), so a manifest written after `since` whose outcome completed is a completed
 * load after `since`. Per report: one listing from the earliest window such a load can have, then the manifests
 * written since, newest first, read until one completed. A healthy report costs one LIST and one GET per check.
 */

/** Reports checked at once: S3 answers a listing in tens of milliseconds, so 500 reports take a second or two. */
const REPORTS_AT_ONCE = 16;

/**
 * S3 answers a GET of a missing key with 403 AccessDenied, not 404, unless the caller may list the bucket for it
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html, "Permissions"). The check's role may list only
 * with an s3:prefix under manifests/ (lib/constructs/freshness.ts), which a GET's existence check does not carry: a
 * manifest removed between the listing and the read answers 403, as a refused read of one that exists would.
 */
function isAccessDenied(e: unknown): boolean {
  return e instanceof S3ServiceException && (e.name === 'AccessDenied' || e.$metadata?.httpStatusCode === 403);
}

/** Whether `key` is still in the bucket: a listing of the key itself (its prefix is under manifests/, which the role may list). */
async function stillListed(s3: S3Client, bucket: string, key: string): Promise<boolean> {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, MaxKeys: 1 }));
  return (page.Contents ?? []).some((o) => o.Key === key);
}

async function outcomeOf(s3: S3Client, bucket: string, key: string) {
  try {
    return (await readManifest(s3, bucket, key)).outcome;
  } catch (e) {
    // Overwritten or removed since the listing, or not JSON: not a load this check can count.
    if (e instanceof ObjectNotFound || e instanceof SyntaxError) return undefined;
    if (!isAccessDenied(e)) throw e;
    // A 403 is a vanished manifest only if the key is gone: one that is still there was refused, and a refusal hidden
    // as "not a load" would name every report late, or none, for a fault nobody would look for.
    if (!(await stillListed(s3, bucket, key))) {
      logger.debug('A load manifest was removed between the listing and its read: not counted', { key });
      return undefined;
    }
    throw new ConfigurationError(
      `Reading the load manifest s3://${bucket}/${key} was refused (AccessDenied) although it exists: the freshness check's role, the ` +
        "bucket policy or the bucket key's policy no longer lets it read manifests/. Redeploy the stack (it grants s3:GetObject on manifests/* and kms:Decrypt).",
      { cause: e },
    );
  }
}

/** Whether a load of the feed `report` completed after `since`. */
export async function loadedSince(s3: S3Client, bucket: string, report: WatchedReport, since: Date): Promise<boolean> {
  const startAfter = partitionStart('manifests', report, earliestLoadedWindowDate(report, since));
  const listed = await listManifests(s3, bucket, areaPrefix('manifests', report), startAfter);
  const recent = listed.filter((m) => m.lastModified >= since).sort((a, b) => b.lastModified.getTime() - a.lastModified.getTime());
  for (const manifest of recent) {
    if (isCompletedLoad(await outcomeOf(s3, bucket, manifest.key))) return true;
  }
  return false;
}

/** The reports with no completed load after their own `sinceOf(report)`. */
export async function reportsWithoutLoads(
  s3: S3Client,
  bucket: string,
  reports: readonly WatchedReport[],
  sinceOf: (report: WatchedReport) => Date,
): Promise<WatchedReport[]> {
  const loaded = await mapWithConcurrency(reports, REPORTS_AT_ONCE, (r) => loadedSince(s3, bucket, r, sinceOf(r)));
  return reports.filter((_, i) => !loaded[i]);
}
