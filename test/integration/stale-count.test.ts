import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { rm, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { parseWindowSize, windowsBetween } from '../../functions/core/time/window.js';
import { openLakeDatabase, QueryFailed } from '../../local/duckdb/duckdb.js';
import { lakeStatus } from '../../local/lake/lake-status.js';
import { lakeStaleNotices } from '../../local/lake/stale-notice.js';
import { startLocalPipeline } from '../../local/pipeline/pipeline.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * One count everywhere: after a rename and a retype, the stale banner, a query's error, `--list` (the view's files)
 * and `reports status --lake` give the same number of windows, even when a load stopped between its table file and
 * its manifest; and the advised reparse covers only stretches of windows with a raw file, saying how many lack one.
 */

const report = loadCatalog().get('transactions');
const changed: ReportDefinition = parseReportDefinition(
  {
    ...report,
    window: report.window,
    columns: report.columns.map((c) => ({
      header: c.header,
      name: c.name === 'merchant_oid' ? 'order_ref' : c.name,
      type: c.name === 'amount' ? 'decimal(18,4)' : c.type,
      ...(c.pattern ? { pattern: c.pattern } : {}),
      ...(c.nullable ? { nullable: true } : {}),
    })),
  },
  'transactions.json',
);
const day = (d: number) => ({ year: 2026, month: 10, day: d, hour: 0, minute: 0, second: 0 });
const curated = bucketNames(LOCAL_ENVIRONMENT).curated;

describe('stale windows: one count everywhere', () => {
  let lakeDir: string;
  before(async () => {
    lakeDir = await mkdtemp(join(tmpdir(), 'stale-count-'));
    const pipeline = await startLocalPipeline({ lakeDir, simulator: { rowsPerDay: 20 } });
    try {
      // Two stretches with a gap of three windows never fetched: 1-4 and 8-9 October.
      for (const w of [...windowsBetween(day(1), day(5), parseWindowSize('P1D')), ...windowsBetween(day(8), day(10), parseWindowSize('P1D'))]) {
        assert.equal((await pipeline.runWindow(feedKey(report.id), w)).status, 'loaded');
      }
    } finally {
      await pipeline.close();
    }
    // A load stopped between its table file and its manifest (Ctrl-C): the 3rd's table file is there, its manifest is not.
    const manifests = join(lakeDir, curated, 'manifests', report.id, 'connection=default', 'dt=2026-10-03');
    for (const f of await readdir(manifests)) await rm(join(manifests, f));
  });
  after(() => rm(lakeDir, { recursive: true, force: true }));

  it('the banner, the query error, the view and the lake status all say 6 windows', async () => {
    const banner = await lakeStaleNotices({ lakeDir, reports: [changed] });
    assert.match(banner[0]!, /^Stale: 6 partitions of "transactions" were written under another definition/);
    assert.match(banner[1]!, /^ {2}6 windows \(2026-10-01, 2026-10-02, 2026-10-03, 2026-10-04, 2026-10-08, 2026-10-09\) under /);

    const db = await openLakeDatabase({ lakeDir, reports: [changed] });
    try {
      assert.deepEqual(db.views.map((v) => [v.name, v.files]), [['transactions', 6], ['loads', 5]]);
      await assert.rejects(db.query('SELECT sum(amount) FROM transactions'), (e: unknown) => {
        assert.ok(e instanceof QueryFailed);
        assert.match(e.message, /in the Parquet files of 6 window\(s\) \(2026-10-01, 2026-10-02, 2026-10-03, 2026-10-04, 2026-10-08, 2026-10-09\)/);
        return true;
      });
    } finally {
      db.close();
    }
    const stale = (await lakeStatus({ lakeDir, curatedBucket: curated, reports: [changed] })).find((i) => i.item === 'stale transactions')!;
    assert.match(stale.detail, /^6 windows \(2026-10-01, 2026-10-02, 2026-10-03, 2026-10-04, 2026-10-08, 2026-10-09\) written under another definition/);
  });

  it('the advised reparse covers the stretches with raw files and says how many windows of the range lack one', async () => {
    const banner = await lakeStaleNotices({ lakeDir, reports: [changed] });
    const flags = `--lake ${lakeDir}`;
    assert.equal(
      banner.at(-1),
      '  Rebuild them from the raw files already stored (no gateway request): ' +
        `npm run reports -- reparse --report transactions --from 2026-10-01 --to 2026-10-05 ${flags} and ` +
        `npm run reports -- reparse --report transactions --from 2026-10-08 --to 2026-10-10 ${flags} ` +
        '(3 of the 9 windows from 2026-10-01 to 2026-10-10 have no raw file, never fetched: nothing to rebuild there, load them with npm start or backfill)',
    );
  });
});
