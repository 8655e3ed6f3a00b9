import type { S3Client } from '@aws-sdk/client-s3';
import { manifestKey } from '../../functions/core/lake/s3-keys.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import type { FeedKey } from '../../functions/core/connections/feed.js';
import { ObjectNotFound, openObjectStream } from '../../functions/aws/s3-streams.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';

/**
 * "Already loaded" for a local backfill: the window's manifest (written last by every load attempt, so
 * it describes the latest one) says the load succeeded: outcome "loaded", or "not-parsed" for a PDF
 * report, which is as far as a PDF goes. A failed attempt, or no manifest, means the window runs.
 * One small GetObject per window, on the same S3 (embedded or --s3-endpoint) the pipeline writes to.
 */
export async function loadedReason(s3: S3Client, curatedBucket: string, feed: FeedKey, window: ReportWindow): Promise<string | false> {
  let text: string;
  try {
    const opened = await openObjectStream({ client: s3, bucket: curatedBucket, key: manifestKey(feed, window) });
    const chunks: Buffer[] = [];
    for await (const chunk of opened.body) chunks.push(chunk as Buffer);
    text = Buffer.concat(chunks).toString('utf8');
  } catch (e) {
    if (e instanceof ObjectNotFound) return false;
    throw e;
  }
  const manifest = JSON.parse(text) as Partial<LoadManifest>;
  if (manifest.outcome === 'loaded') return `already loaded at ${manifest.finishedAt}: ${manifest.rows?.written ?? 0} rows (--force re-fetches)`;
  if (manifest.outcome === 'not-parsed') return `already fetched at ${manifest.finishedAt} (PDF, kept raw; --force re-fetches)`;
  return false;
}
