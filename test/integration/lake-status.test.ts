import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { headerLine } from '../../functions/core/gateway/answer.js';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { parseWindowSize, windowAt, windowsBetween } from '../../functions/core/time/window.js';
import { lakeStatus, runLakeStatusCommand } from '../../local/lake/lake-status.js';
import { startLocalPipeline } from '../../local/pipeline/pipeline.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * `reports status --lake`: a lake the real local pipeline filled (simulator -> fetch -> s3rver -> parse), then read
 * back by the status from its manifests: the newest windows, the findings of the last 7 days, the stale partitions
 * after a rename, and the rejects with the file on disk that lists them.
 */

const report = loadCatalog().get('transactions');
const curatedBucket = bucketNames(LOCAL_ENVIRONMENT).curated;
const day = (month: number, d: number) => ({ year: 2026, month, day: d, hour: 0, minute: 0, second: 0 });
const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
const tempDir = async (name: string) => {
  const d = await mkdtemp(join(tmpdir(), name));
  dirs.push(d);
  return d;
};

describe('reports status --lake', () => {
  let lakeDir: string;
  before(async () => {
    lakeDir = await tempDir('lake-status-');
    // Four weeks build the history; the 27th loses most of its rows and is flagged.
    const pipeline = await startLocalPipeline({ lakeDir, simulator: { rowsPerDay: 40, volume: { drops: { '2026-10-27': 0.1 } } } });
    try {
      for (const window of windowsBetween(day(10, 1), day(10, 29), parseWindowSize('P1D'))) {
        const outcome = await pipeline.runWindow(feedKey(report.id), window);
        assert.equal(outcome.status, 'loaded', JSON.stringify(outcome.error));
      }
    } finally {
      await pipeline.close();
    }
  });

  it('names the newest windows, the findings of the last 7 days and no stale partition or reject', async () => {
    const items = await lakeStatus({ lakeDir, curatedBucket, reports: [report] });
    assert.deepEqual(items.map((i) => [i.verdict, i.item]), [
      ['OK', 'newest loads transactions'],
      ['TODO', 'data checks transactions'],
      ['OK', 'stale transactions'],
      ['OK', 'rejects transactions'],
    ]);
    assert.equal(items[0]!.detail, '28 window(s) loaded, the newest 2026-10-28 (40 rows), 2026-10-27 (4 rows), 2026-10-26 (40 rows)');
    assert.match(items[1]!.detail, /^1 FLAGGED of 28 window\(s\) loaded in the last 7 days \(docs\/operations\.md, "Data checks"\): 2026-10-27: volume low: 4 rows/);
    assert.match(items[2]!.detail, /^28 windows checked: 28 with a table file written under this checkout's definition/);
  });

  it('a week later the findings are out of its window; after a rename the stale line has the banner\'s count and command', async () => {
    const renamed = { ...report, columns: report.columns.map((c) => (c.name === 'merchant_oid' ? { ...c, name: 'order_ref' } : c)) };
    const later = new Date(Date.now() + 8 * 86_400_000);
    const items = await lakeStatus({ lakeDir, curatedBucket, reports: [renamed], now: later });
    assert.deepEqual(items[1], { item: 'data checks transactions', verdict: 'OK', detail: 'nothing loaded in the last 7 days' });
    assert.equal(items[2]!.verdict, 'TODO');
    assert.match(items[2]!.detail, /^28 windows \(2026-10-01 \.\. 2026-10-28\) written under another definition than this checkout's .*column merchant_oid was renamed order_ref/);
    assert.ok(items[2]!.detail.endsWith(`To fix, rebuild them from their raw files: npm run reports -- reparse --report transactions --from 2026-10-01 --to 2026-10-29 --lake ${lakeDir}`), items[2]!.detail);
  });

  it('rejected rows: how many, in which windows, and the file on disk that lists them', async () => {
    const rejectsLake = await tempDir('lake-status-rejects-');
    const sample = join(rejectsLake, 'sample.csv');
    const header = headerLine(report.columns.map((c) => c.header), report.delimiter);
    const good = '"Acme","1","A-1","2026-11-20 10:00:00","1.000","RUB","SALE","","20.11.2026"';
    const bad = '"Acme","2","A-2","2026-11-20 11:00:00","not money","RUB","SALE","","20.11.2026"';
    await writeFile(sample, `${header}\r\n${good}\r\n${bad}\r\n`);
    const pipeline = await startLocalPipeline({ lakeDir: rejectsLake, simulator: { samples: { [report.id]: sample } } });
    try {
      const outcome = await pipeline.runWindow(feedKey(report.id), windowAt(day(11, 20), parseWindowSize('P1D')));
      // Above the definition's rejects.maxShare (0): nothing is written to the table, the rejected rows are kept.
      assert.equal(outcome.error?.code, 'TooManyRejectedRows');
    } finally {
      await pipeline.close();
    }
    const lines: string[] = [];
    const code = await runLakeStatusCommand({ lake: rejectsLake }, (l) => void lines.push(l));
    assert.equal(code, 1);
    assert.equal(lines[0], `Local lake ${rejectsLake}:`);
    const rejects = lines.find((l) => l.startsWith('TODO    rejects transactions'))!;
    const file = /2026-11-20: 1 \(the load failed: TooManyRejectedRows\) in (\S+);/.exec(rejects)?.[1];
    assert.ok(file && existsSync(file), rejects);
    assert.match(file, /rejected\/transactions\/connection=default\/dt=2026-11-20\//);
    assert.match(rejects, /^TODO {4}rejects transactions {7}1 row rejected in 1 window\(s\): /);
    assert.ok(lines.some((l) => /^TODO {4}newest loads transactions +no window loaded yet; 1 window\(s\) whose latest attempt failed \(2026-11-20: TooManyRejectedRows\)/.test(l)), lines.join('\n'));
  });

  it('refuses a directory that holds no lake, and says how to make one', async () => {
    await assert.rejects(runLakeStatusCommand({ lake: join(lakeDir, 'nothing-here') }), /No local lake at .*nothing-here: load some windows first \(npm start\)/);
  });
});
