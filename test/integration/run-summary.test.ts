import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCatalog } from '../../config/reports/index.js';
import { formatLocalDate, wallClockIn } from '../../functions/core/window.js';
import { runLocal, savedQueriesFor } from '../../local/cli/run.js';
import { startSimulator, type Simulator } from '../../local/simulator/index.js';

/** `npm start` says what happened to every window asked, and runs saved queries only when there is something to query. */

describe('the run summary', () => {
  let dir: string;
  let simulator: Simulator;
  let wrongSecret: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-summary-'));
    simulator = await startSimulator({ rowsPerDay: 20 });
    wrongSecret = join(dir, 'wrong.json');
    await writeFile(wrongSecret, JSON.stringify({ ...simulator.credentials.hmac, controlKey: 'not-the-key' }));
  });
  after(async () => {
    await simulator.close();
    await rm(dir, { recursive: true, force: true });
    // runLocal marks the process failed for the failed windows these tests make on purpose.
    process.exitCode = undefined;
  });

  it('a refused login: 3 asked, 1 failed, 2 not tried, and no saved queries', async () => {
    const lines: string[] = [];
    const summary = await runLocal(
      { report: 'transactions', from: '2026-11-01', to: '2026-11-04', lake: join(dir, 'lake'), gatewayUrl: simulator.url, secretFile: wrongSecret },
      (l) => void lines.push(l),
    );
    const out = lines.join('\n');
    assert.deepEqual([summary.asked, summary.loaded, summary.failedWindows, summary.notTried, summary.queries], [3, 0, 1, 2, 0]);
    assert.match(out, /the 2 later window\(s\) were not tried/);
    assert.match(out, /No window loaded, so the saved queries of "transactions" were not run\./);
    assert.doesNotMatch(out, /^── /m);
    assert.match(out, /^Done: 3 window\(s\) asked: 0 loaded, 1 failed, 2 not tried; 0 rows fetched/m);
    assert.doesNotMatch(out, /not-the-key/);
  });

  it('today\'s window is refused before any work, with the --allow-incomplete hint; with it, it loads', async () => {
    const report = loadCatalog().get('transactions');
    const now = wallClockIn(new Date(), report.schedule.timeZone);
    const today = formatLocalDate(now);
    const tomorrow = formatLocalDate(wallClockIn(new Date(Date.UTC(now.year, now.month - 1, now.day + 1, 12)), 'UTC'));
    const lines: string[] = [];
    const print = (l: string) => void lines.push(l);
    await assert.rejects(runLocal({ report: report.id, from: today, lake: join(dir, 'today') }), /without --to the run ends where the current window starts.*--allow-incomplete/);
    await assert.rejects(runLocal({ report: report.id, from: today, to: tomorrow, lake: join(dir, 'today') }, print), (e: Error) =>
      /is not complete yet: .* in Europe\/Moscow, so the gateway would send only part of it\. .*--allow-incomplete/.test(e.message),
    );
    assert.deepEqual(lines, [], 'nothing started');

    const summary = await runLocal({ report: report.id, from: today, to: tomorrow, lake: join(dir, 'today'), allowIncomplete: true }, print);
    assert.deepEqual([summary.asked, summary.loaded], [1, 1], lines.join('\n'));
    assert.ok(summary.queries > 0, 'a window loaded: the saved queries ran');
  });

  it('saved queries are the report\'s own: none for a report whose table no query reads', async () => {
    const own = (await savedQueriesFor('transactions')).map((q) => q.name);
    assert.ok(own.length > 0);
    for (const q of await savedQueriesFor('transactions')) assert.match(q.sql, /\btransactions\b/);
    assert.deepEqual(await savedQueriesFor('no_such_report'), []);
  });
});
