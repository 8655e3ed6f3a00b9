import type { S3Client } from '@aws-sdk/client-s3';
import { mapWithConcurrency } from '../core/concurrency.js';
import { earliestLoadedWindowDate, isCompletedLoad, type WatchedReport } from '../core/freshness/stale-reports.js';
import { areaPrefix, partitionStart } from '../core/lake/s3-keys.js';
import { listManifests, readManifest } from '../aws/manifests.js';
import { ObjectNotFound } from '../aws/s3-streams.js';

/**
 * Completed loads, read from the curated bucket's manifests: every attempt writes its window's manifest last
 * (functions/core/lake/load-manifest.ts), so a manifest written after `since` whose outcome completed is a completed
 * load after `since`. Per report: one listing from the earliest window such a load can have, then the manifests
 * written since, newest first, read until one completed. A healthy report costs one LIST and one GET per check.
 */

/** Reports checked at once: S3 answers a listing in tens of milliseconds, so 500 reports take a second or two. */
const REPORTS_AT_ONCE = 16;

async function outcomeOf(s3: S3Client, bucket: string, key: string) {
  try {
    return (await readManifest(s3, bucket, key)).outcome;
  } catch (e) {
    // Overwritten or removed since the listing, or not JSON: not a load this check can count.
    if (e instanceof ObjectNotFound || e instanceof SyntaxError) return undefined;
    throw e;
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
