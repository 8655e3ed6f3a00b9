import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync } from 'node:fs';
import { manifestKey, tableKey } from '../../functions/core/lake/s3-keys.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import type { FeedKey } from '../../functions/core/connections/feed.js';
import { s3rverFiles } from '../lake/s3rver-files.js';

/**
 * Ctrl-C during `run` or `backfill`. The first SIGINT (or SIGTERM) runs `stop` (restore the terminal,
 * clean up, say what is done and how to resume) and exits 130 (143 for SIGTERM), the shell's code for a
 * command ended by that signal; a second one exits at once. Returns a function that removes the handlers.
 */
export function onInterrupt(stop: (signal: NodeJS.Signals) => void | Promise<void>): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    const code = signal === 'SIGTERM' ? 143 : 130;
    if (stopping) process.exit(code);
    stopping = true;
    Promise.resolve()
      .then(() => stop(signal))
      .catch((e: unknown) => console.error(e))
      .finally(() => process.exit(code));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}


/**
 * Whether a file is a whole Parquet file: "PAR1" at both ends and a footer that fits. s3rver writes an
 * object straight to its final path, so a load stopped part-way leaves a truncated file there.
 */
export function isWholeParquet(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size < 12) return false;
    const head = Buffer.alloc(4);
    const tail = Buffer.alloc(8);
    readSync(fd, head, 0, 4, 0);
    readSync(fd, tail, 0, 8, size - 8);
    return head.toString('latin1') === 'PAR1' && tail.toString('latin1', 4) === 'PAR1' && tail.readUInt32LE(0) + 12 <= size;
  } finally {
    closeSync(fd);
  }
}

/**
 * After an interrupt, for windows whose load was in flight in the embedded lake: a table file that is not
 * a whole Parquet file is removed, so DuckDB never reads half a file, and so is the window's manifest,
 * which may still say an earlier load succeeded: a re-run (a backfill too) then loads the window again.
 * Synchronous, so it runs to the end before the process exits. Returns the windows whose partial file went.
 */
export function removePartialTables(lakeDir: string, curatedBucket: string, feed: FeedKey, windows: Iterable<ReportWindow>): ReportWindow[] {
  const removed: ReportWindow[] = [];
  for (const window of windows) {
    const table = s3rverFiles(lakeDir, curatedBucket, tableKey(feed, window));
    if (!existsSync(table.object)) continue;
    let whole: boolean;
    try {
      whole = isWholeParquet(table.object);
    } catch {
      whole = false;
    }
    if (whole) continue;
    const manifest = s3rverFiles(lakeDir, curatedBucket, manifestKey(feed, window));
    for (const file of [table.object, ...table.others, manifest.object, ...manifest.others]) rmSync(file, { force: true });
    removed.push(window);
  }
  return removed;
}
