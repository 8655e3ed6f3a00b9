import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { rawKey, tableKey } from '../../functions/core/lake/s3-keys.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { runReparseCommand } from '../../local/cli/reparse.js';
import { s3rverFiles } from '../../local/lake/s3rver-files.js';
import { startLocalPipeline } from '../../local/pipeline/pipeline.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * A lake written before feeds (no connection= directory): `reports reparse` moves its raw files under the report's
 * connection, removes the old table files the views no longer read, and rebuilds the windows in the new layout.
 */

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('reports reparse over a lake of the layout before feeds', () => {
  it('moves each old raw file under its connection, removes the old curated files and rebuilds the window', async () => {
    const lakeDir = await mkdtemp(join(tmpdir(), 'reparse-legacy-'));
    cleanups.push(() => rm(lakeDir, { recursive: true, force: true }));
    const buckets = bucketNames(LOCAL_ENVIRONMENT);
    const window = windowAt(parseLocalDateTime('2026-11-20'), parseWindowSize('P1D'));
    const feed = feedKey('transactions');
    const pipeline = await startLocalPipeline({ lakeDir });
    try {
      assert.equal((await pipeline.runWindow(feed, window)).status, 'loaded');
    } finally {
      await pipeline.close();
    }
    // Rewind the lake to the old layout: the raw file without its connection directory, an old table file beside it.
    const newRaw = s3rverFiles(lakeDir, buckets.raw, rawKey(feed, window, 'CSV'));
    const oldRaw = s3rverFiles(lakeDir, buckets.raw, 'raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.csv');
    mkdirSync(dirname(oldRaw.object), { recursive: true });
    renameSync(newRaw.object, oldRaw.object);
    const newTable = s3rverFiles(lakeDir, buckets.curated, tableKey(feed, window)).object;
    const oldTable = s3rverFiles(lakeDir, buckets.curated, 'tables/transactions/dt=2026-11-20/2026-11-20T00-00-00.parquet').object;
    mkdirSync(dirname(oldTable), { recursive: true });
    renameSync(newTable, oldTable);
    writeFileSync(`${oldTable}.md5`, '');

    const lines: string[] = [];
    const summary = await runReparseCommand({ from: '2026-11-20', to: '2026-11-21', lake: lakeDir, tty: false }, (l) => void lines.push(l));
    assert.match(lines[0]!, /^Report "transactions": moved 1 raw file\(s\) of the layout before connections to connection "default" \(raw\/transactions\/connection=default\/…\) and removed 1 old table, rejects and manifest file\(s\); the reparse rebuilds them\.$/);
    assert.deepEqual([summary.failed.length, summary.notTried], [0, 0], lines.join('\n'));
    assert.ok(existsSync(newRaw.object), 'the raw file under its connection');
    assert.ok(!existsSync(oldRaw.object), 'moved, not copied');
    assert.ok(existsSync(newTable), 'the window rebuilt in the new layout');
    assert.ok(!existsSync(oldTable) && !existsSync(`${oldTable}.md5`), 'the old table file removed');
  });
});
