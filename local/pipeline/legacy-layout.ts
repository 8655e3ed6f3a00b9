import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { feedOf } from '../../functions/core/connections/feed.js';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { CURATED_AREAS, parseLegacyRawKey, rawKey, reportAreaPrefix } from '../../functions/core/lake/s3-keys.js';
import { objectFileKeyPath, s3rverFiles, S3RVER_OBJECT_SUFFIX } from '../lake/s3rver-files.js';

/**
 * A local lake written before feeds keeps a report's files without a connection directory
 * (`raw/<report>/dt=<date>/…`, `tables/<report>/dt=<date>/…`). `reports reparse` moves each such raw file to the
 * layout of today, under the report's FIRST connection (a definition written before feeds named one, and adding
 * connections puts the old one first: docs/deploy.md, "Moving to feeds"), and removes the old table, rejects and
 * manifest files: neither the Glue table's location template nor the local views read them any more, and the
 * reparse that follows rebuilds every moved window into the new layout from its raw file. The raw file is moved,
 * never copied or deleted: it is the one thing that cannot be fetched again for free.
 *
 * On the files of the embedded lake (s3rver's FilesystemStore), not through S3: a PutObject into raw/ would send an
 * ObjectCreated event and start a load the reparse is about to make anyway.
 */

/** Every object file under a directory of the bucket, as keys. */
function keysUnder(bucketDir: string, prefix: string): string[] {
  const root = join(bucketDir, prefix);
  if (!existsSync(root)) return [];
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Array<{ name: string; parentPath: string; isFile(): boolean }>)
    .filter((e) => e.isFile() && e.name.endsWith(S3RVER_OBJECT_SUFFIX))
    .map((e) => objectFileKeyPath(relative(bucketDir, join(e.parentPath, e.name))).split('\\').join('/'));
}

function moveObject(lakeDir: string, bucket: string, from: string, to: string): void {
  const source = s3rverFiles(lakeDir, bucket, from);
  const target = s3rverFiles(lakeDir, bucket, to);
  mkdirSync(dirname(target.object), { recursive: true });
  for (const [a, b] of [[source.object, target.object], ...source.others.map((o, i) => [o, target.others[i]!])] as const) {
    if (existsSync(a)) renameSync(a, b);
  }
}

/** Moves the old layout's raw files of `reports` into the new one and removes its curated files; a line per report moved. */
export function moveLegacyLayout(lakeDir: string, reports: readonly ReportDefinition[]): string[] {
  const buckets = bucketNames(LOCAL_ENVIRONMENT);
  const lines: string[] = [];
  if (!existsSync(lakeDir)) return lines;
  const rawDir = resolve(lakeDir, buckets.raw);
  const curatedDir = resolve(lakeDir, buckets.curated);
  for (const report of reports) {
    const feed = feedOf(report, report.connections[0]!);
    const legacy = keysUnder(rawDir, reportAreaPrefix('raw', report.id)).flatMap((key) => {
      const parts = parseLegacyRawKey(key);
      return parts && parts.reportId === report.id ? [{ key, parts }] : [];
    });
    for (const { key, parts } of legacy) moveObject(lakeDir, buckets.raw, key, rawKey(feed, parts, parts.format));
    // The old curated files: directly under <area>/<report>/dt=…, never under connection=….
    let removed = 0;
    for (const area of CURATED_AREAS) {
      for (const key of keysUnder(curatedDir, reportAreaPrefix(area, report.id)).filter((k) => /\/dt=[^/]+\/[^/]+$/.test(k) && !k.includes('/connection='))) {
        const files = s3rverFiles(lakeDir, buckets.curated, key);
        for (const f of [files.object, ...files.others]) rmSync(f, { force: true });
        removed++;
      }
    }
    if (legacy.length || removed) {
      lines.push(
        `Report "${report.id}": moved ${legacy.length} raw file(s) of the layout before connections to connection "${feed.connection}" ` +
          `(raw/${report.id}/connection=${feed.connection}/…) and removed ${removed} old table, rejects and manifest file(s); the reparse rebuilds them.`,
      );
    }
  }
  return lines;
}
