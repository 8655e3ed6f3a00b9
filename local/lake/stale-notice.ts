import { resolve } from 'node:path';
import type { ColumnDefinition, ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { staleNotice, staleReport, staleStatus, type RawCoverage, type RecordedWindow, type StaleReport } from '../../functions/core/lake/stale-windows.js';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { formatLocalDateTime, parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { rawStarts, tableFiles, withTableFiles } from './footer-windows.js';
import { showPath } from '../../functions/core/shown-path.js';
import { bucketWindows, lakeWindows } from './manifest-windows.js';

/**
 * What `npm start` and `npm run query` say about the local lake's windows written under another definition than
 * the current one: read from the manifests on disk (manifest-windows.ts), judged by functions/core/lake/stale-windows.ts.
 * The views themselves read such files as Athena would (view-evolution.ts); this says how many and what fixes them.
 * `reports status --environment NAME` says the same of a deployment, from its curated bucket.
 */

/** The flags that end a `reports reparse` command for this lake: `--lake DIR` unless it is the default ./.lake. */
export function lakeReparseFlags(lakeDir: string): string[] {
  if (resolve(lakeDir) === resolve('.lake')) return [];
  const path = showPath(lakeDir);
  return [`--lake ${/^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`}`];
}

/**
 * A report's windows in the local lake as a reader sees them: the manifests' record made to agree with the table
 * files on disk (footer-windows.ts), judged against the current definition, and which windows have a raw file.
 * The banner, `reports status --lake` and a query's error all count from here, so they give one number.
 */
export async function lakeStaleReport(
  lakeDir: string,
  report: Pick<ReportDefinition, 'id' | 'columns' | 'window'>,
  buckets: { curated: string; raw: string } = bucketNames(LOCAL_ENVIRONMENT),
): Promise<{ stale: StaleReport; windows: RecordedWindow[]; raw: RawCoverage }> {
  const size = parseWindowSize(report.window);
  const windowEnd = (start: string) => formatLocalDateTime(windowAt(parseLocalDateTime(start), size).end);
  const files = await tableFiles(lakeDir, buckets.curated, report.id);
  const windows = await withTableFiles(await lakeWindows(lakeDir, buckets.curated, report.id), files, report.columns, windowEnd);
  const raw = { starts: await rawStarts(lakeDir, buckets.raw, report.id), size };
  return { stale: staleReport(report.id, report.columns, windows), windows, raw };
}

/** The notice lines for every report of the lake (none when every table file is its current definition's). */
export async function lakeStaleNotices(options: { lakeDir: string; buckets?: { curated: string; raw: string }; reports: readonly ReportDefinition[] }): Promise<string[]> {
  const lines: string[] = [];
  for (const report of options.reports) {
    const { stale, raw } = await lakeStaleReport(options.lakeDir, report, options.buckets);
    lines.push(...staleNotice(stale, lakeReparseFlags(options.lakeDir), raw));
  }
  return lines;
}

/** How many of a report's newest windows `reports status` reads the manifests of (manifest-windows.ts says why it is bounded). */
export const STATUS_STALE_WINDOWS = 400;

/** `reports status --environment NAME`: the item "stale <report>", from the deployed manifests. */
export async function deployedStaleItem(
  s3: S3Client,
  curatedBucket: string,
  report: { id: string; columns: readonly ColumnDefinition[]; connections: readonly string[] },
  environment: string,
): Promise<{ item: string; verdict: 'OK' | 'TODO' | 'UNKNOWN'; detail: string }> {
  const item = `stale ${report.id}`;
  let read: Awaited<ReturnType<typeof bucketWindows>>;
  try {
    // Every feed of the report: one table, written by each connection's loads.
    const feeds = await Promise.all(report.connections.map((connection) => bucketWindows(s3, curatedBucket, { reportId: report.id, connection }, STATUS_STALE_WINDOWS)));
    read = { windows: feeds.flatMap((f) => f.windows), total: feeds.reduce((n, f) => n + f.total, 0) };
  } catch (e) {
    return {
      item,
      verdict: 'UNKNOWN',
      detail: `could not check (${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}); your credentials need s3:ListBucket and s3:GetObject on manifests/ of ${curatedBucket}, and kms:Decrypt`,
    };
  }
  const stale = staleReport(report.id, report.columns, read.windows);
  return { item, ...staleStatus(stale, read.windows, [`--environment ${environment}`], read.windows.length, read.total) };
}
