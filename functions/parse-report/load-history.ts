import type { S3Client } from '@aws-sdk/client-s3';
import type { HistoryLoad } from '../core/quality/checks.js';
import type { Feed } from '../core/connections/feed.js';
import { manifestKey } from '../core/lake/s3-keys.js';
import { historyWindows } from '../core/quality/volume-band.js';
import type { ReportWindow } from '../core/time/window.js';
import { ObjectNotFound } from '../aws/s3-streams.js';
import { readManifest } from '../aws/manifests.js';
import type { LoadManifest } from '../core/lake/load-manifest.js';

/**
 * The history a window's volume check compares it with: the load manifests of the same feed's same slot in earlier
 * weeks (never another connection's: two providers' counts never mix) (functions/core/quality/volume-band.ts historyWindows), one GET each at a key computed from the window,
 * never a listing. A missing manifest, or one whose load did not succeed, is a week without history. The
 * window's own manifest is never among them, so re-loading a window (lookback) judges it afresh.
 *
 * Reading history must not fail a load whose data is fine: a read that fails (permissions, throttling)
 * comes back as `problem`, and the checks record that they were not judged, and why.
 */
export async function readHistory(
  s3: S3Client,
  curatedBucket: string,
  feed: Feed,
  window: ReportWindow,
): Promise<{ history: HistoryLoad[]; problem?: string }> {
  const report = feed.report;
  if (!report.volume.enabled) return { history: [] };
  const windows = historyWindows(window, report.volume);
  const problems: string[] = [];
  const history = await Promise.all(
    windows.map(async (w): Promise<HistoryLoad> => {
      let manifest: Partial<LoadManifest>;
      try {
        manifest = await readManifest(s3, curatedBucket, manifestKey(feed, w));
      } catch (e) {
        if (e instanceof ObjectNotFound) return { window: w };
        if (e instanceof SyntaxError) return { window: w }; // not JSON: not a load this check can use
        problems.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
        return { window: w };
      }
      if (manifest.outcome !== 'loaded' || typeof manifest.rows?.written !== 'number') return { window: w };
      const sum = manifest.sum?.column === report.volume.sumColumn ? manifest.sum?.total : undefined;
      return { window: w, rows: manifest.rows.written, ...(sum !== undefined ? { sum } : {}) };
    }),
  );
  return { history, ...(problems.length ? { problem: problems[0] } : {}) };
}
