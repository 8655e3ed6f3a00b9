import type { S3Client } from '@aws-sdk/client-s3';
import type { RecordedWindow } from '../core/lake/stale-windows.js';
import { ObjectNotFound, openObjectStream } from '../aws/s3-streams.js';
import type { LoadManifest, TableInPlace } from '../core/lake/load-manifest.js';

/**
 * Which table file a window's manifest says is in place, and which definition wrote it. A manifest describes the
 * latest attempt; when that attempt failed, nothing was written to the table and the file of an earlier load stays.
 * The failed attempt's manifest carries that file forward (`tableInPlace`), read from the manifest it replaces,
 * so the readers that look for windows written under an older definition (stale-windows.ts) still see it, for
 * example a window whose reparse failed on a header that no longer matches.
 */

/** The table file a manifest describes as in place: its own for "loaded", the one it carried for "failed". */
export function tableOf(manifest: Partial<LoadManifest>): TableInPlace | undefined {
  // "failed" with a table of its own: the table was written and the manifest after it failed (a retry rewrites both).
  if (manifest.table && (manifest.outcome === 'loaded' || manifest.outcome === 'failed')) {
    return {
      table: manifest.table,
      ...(manifest.definition ? { definition: manifest.definition } : {}),
      loadRunId: manifest.loadRunId ?? '',
      finishedAt: manifest.finishedAt ?? '',
    };
  }
  return manifest.outcome === 'failed' ? manifest.tableInPlace : undefined;
}

/** The table in place per the window's current manifest, read just before a failed attempt replaces it; undefined when there is none. */
export async function readTableInPlace(s3: S3Client, bucket: string, manifestKey: string): Promise<TableInPlace | undefined> {
  let text: string;
  try {
    const opened = await openObjectStream({ client: s3, bucket, key: manifestKey });
    text = Buffer.concat(await opened.body.toArray()).toString('utf8');
  } catch (e) {
    if (e instanceof ObjectNotFound) return undefined;
    throw e;
  }
  return tableOf(JSON.parse(text) as Partial<LoadManifest>);
}

/** A window as the stale-window readers see it, from its manifest. */
export function recordedWindowOf(manifest: Partial<LoadManifest>): RecordedWindow | undefined {
  if (!manifest.window?.start || !manifest.window.end) return undefined;
  const inPlace = tableOf(manifest);
  return {
    start: manifest.window.start,
    end: manifest.window.end,
    ...(inPlace ? { table: inPlace.definition ?? 'unrecorded' } : {}),
    ...(manifest.outcome === 'failed' ? { lastAttemptFailed: manifest.error?.code ?? 'Unexpected' } : {}),
  };
}
