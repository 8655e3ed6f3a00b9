import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, mock } from 'node:test';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { formatLocalDate, wallClockIn } from '../../functions/core/time/window.js';
import { QUERIES_DIR_VARIABLE } from '../../lib/saved-queries/saved-queries.js';
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
    // The secret file was read again after the refusal, and the output says so.
    assert.match(out, /Its secret was re-read after the refusal: unchanged, so not retried\./);
  });

  it('a secret file swapped during the run: the refusal, the re-read and the new value are said under the window', async () => {
    const swapped = join(dir, 'swapped.json');
    await writeFile(swapped, JSON.stringify({ ...simulator.credentials.hmac, controlKey: 'not-the-key' }));
    // The right value lands while the refusal is on its way: the run's re-read finds it.
    const rotating = await startSimulator({
      rowsPerDay: 20,
      hmac: { controlKey: simulator.credentials.hmac.controlKey },
      onRequest: (r) => {
        if (r.outcome === 'refused') writeFileSync(swapped, JSON.stringify(simulator.credentials.hmac));
      },
    });
    try {
      const lines: string[] = [];
      const summary = await runLocal(
        { report: 'transactions', from: '2026-11-01', to: '2026-11-02', lake: join(dir, 'swapped-lake'), gatewayUrl: rotating.url, secretFile: swapped },
        (l) => void lines.push(l),
      );
      const out = lines.join('\n');
      assert.deepEqual([summary.loaded, summary.failedWindows], [1, 0], out);
      assert.deepEqual(rotating.requests.map((r) => r.outcome), ['refused', 'report']);
      assert.match(out, /^ {2}2026-11-01 .* loaded .*\n {6}the gateway refused the secret read earlier; re-read after the refusal, it had changed, and this window was fetched with the new value$/m);
    } finally {
      await rotating.close();
    }
  });

  it('names the file of each window that rejected rows, at the end of the run', async () => {
    const header = '"Merchant_Name","Transaction_id","Merchant_OID","Created_date","Amount","Currency","Transaction_type","Order_description","Date_of_report"';
    const sample = join(dir, 'one-bad-amount.csv');
    await writeFile(sample, [header, '"A","1","o","2026-11-20 10:00:00","10.000","RUB","SALE","","21.11.2026"', '"B","2","o","2026-11-20 11:00:00","ten","RUB","SALE","","21.11.2026"', ''].join('\n'));
    const lake = join(dir, 'rejects-lake');
    const lines: string[] = [];
    await runLocal({ report: 'transactions', from: '2026-11-20', to: '2026-11-21', lake, sample: [`transactions=${sample}`] }, (l) => void lines.push(l));
    // The embedded lake's file for the curated object rejected/transactions/connection=default/dt=2026-11-20/<window start>.csv.
    const file = join(lake, 'paynet-reports-local-curated', 'rejected', 'transactions', 'connection=default', 'dt=2026-11-20', '2026-11-20T00-00-00.csv._S3rver_object');
    const at = lines.indexOf('Rejected rows (each with its line in the report and the reason):');
    assert.ok(at >= 0, lines.join('\n'));
    assert.equal(lines[at + 1], `  2026-11-20: 1 in ${file}`);
    assert.match(await readFile(file, 'utf8'), /^"3","Amount","not a decimal: ""ten""",/m);
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

  it('a saved query Athena (Trino) cannot parse is not run: named with file, line and column, the others run, exit code 1', async () => {
    const queries = join(dir, 'queries');
    await mkdir(join(queries, 'transactions'), { recursive: true });
    // DuckDB would run it; Athena would not.
    const asText = join(queries, 'transactions', 'as_text.sql');
    await writeFile(asText, '\n-- Amounts as text.\nSELECT dt,\n       amount::varchar AS amount_text\nFROM transactions\n');
    await writeFile(
      join(queries, 'transactions', 'per_day.sql'),
      '-- Rows per day.\nSELECT dt, CAST(count(*) AS varchar) AS n_text, count(*) OVER () AS days FROM transactions GROUP BY dt\n',
    );
    const saved = process.env[QUERIES_DIR_VARIABLE];
    process.env[QUERIES_DIR_VARIABLE] = queries;
    const errors = mock.method(console, 'error', () => undefined);
    const lines: string[] = [];
    try {
      const summary = await runLocal({ report: 'transactions', from: '2026-11-20', to: '2026-11-21', lake: join(dir, 'refused') }, (l) => void lines.push(l));
      const out = lines.join('\n');
      assert.deepEqual([summary.loaded, summary.queries, summary.failedQueries, summary.refusedQueries], [1, 2, 1, 1], out);
      const at = lines.indexOf('── as_text: Amounts as text.');
      assert.ok(at >= 0, out);
      assert.ok(
        lines[at + 1]!.startsWith(`Not run: ${asText}:4:14: Athena (Trino) cannot parse this saved query: ':' is not valid at this position`),
        lines[at + 1],
      );
      assert.match(lines[at + 1]!, /Write it in SQL both DuckDB and Trino accept/);
      assert.match(out, /── per_day: Rows per day\.\ndt +n_text +days\n[─ ]+\n2026-11-20 +\d+ +1\n\(1 row\)/, 'the other query ran');
      assert.equal(process.exitCode, 1);
      assert.deepEqual(
        errors.mock.calls.map((c) => String(c.arguments[0])),
        ['1 saved query not run: Athena (Trino) cannot parse (see above).'],
      );
    } finally {
      errors.mock.restore();
      process.env[QUERIES_DIR_VARIABLE] = saved;
      process.exitCode = undefined;
    }
  });

  it('a month on the simulator with a weekly rhythm and one dropped date: that window is marked and named, the run exits 0', async () => {
    const lines: string[] = [];
    process.exitCode = undefined;
    const summary = await runLocal(
      { report: 'transactions', from: '2026-10-01', to: '2026-11-01', lake: join(dir, 'month'), weekdayVolume: '1,1,1,1,1.2,0.6,0.4', dropDate: ['2026-10-27'] },
      (l) => void lines.push(l),
    );
    const out = lines.join('\n');
    assert.deepEqual([summary.loaded, summary.failedWindows, summary.flaggedWindows], [31, 0, 1], out);
    assert.notEqual(process.exitCode, 1);
    assert.match(out, /^ {2}window {6}format {2}status {7}rows {2}rejected {6}raw bytes {7}parquet {6}ms {2}checks$/m);
    assert.match(out, /^ {2}2026-10-27 {2}CSV {5}loaded {9}25 .* FLAGGED\n {6}volume low: 25 rows, expected 125-500 from 3 of the last 4 Tuesdays$/m);
    // Weekends are a quarter to a half of a weekday here, and compared with earlier weekends: not flagged.
    assert.match(out, /^ {2}2026-10-25 {2}CSV {5}loaded {8}100 .* ok$/m);
    assert.match(out, /^ {2}2026-10-01 {2}CSV {5}loaded {8}250 .* not judged$/m);
    assert.match(
      out,
      /^Data checks: 1 window\(s\) FLAGGED of 31 loaded; 21 not judged \(the first: too little history: 0 of the last 4 Thursdays loaded, 3 needed\)\. The data loaded as sent; what to do: docs\/operations\.md, "Data checks"\.\n {2}2026-10-27 {2}volume low: 25 rows, expected 125-500 from 3 of the last 4 Tuesdays\nDone: 31 window\(s\) asked: 31 loaded/m,
    );
  });

  it('a window that loads no record before any history says "0 records: is the period right?" with the period the body asked for', async () => {
    const lines: string[] = [];
    process.exitCode = undefined;
    const summary = await runLocal(
      { report: 'transactions', from: '2026-09-01', to: '2026-09-03', lake: join(dir, 'empty'), dropDate: ['2026-09-02=0'] },
      (l) => void lines.push(l),
    );
    const out = lines.join('\n');
    assert.deepEqual([summary.loaded, summary.failedWindows], [2, 0], out);
    assert.match(
      out,
      /^ {2}2026-09-02 {2}CSV {5}loaded {10}0 .* not judged\n {6}0 records: is the period right\? The body asked for "2026-09-02 00:00:00" to "2026-09-03 00:00:00" \(exclusive\) \(docs\/add-a-report\.md, "The period a body asks for"\)\.$/m,
    );
    assert.equal(out.match(/0 records: is the period right\?/g)?.length, 1, 'only the empty window');
  });

  it('the simulator\'s volume flags are refused with another gateway, and bad values name the flag', async () => {
    const lake = join(dir, 'flags');
    await assert.rejects(runLocal({ report: 'transactions', lake, gatewayUrl: simulator.url, secretFile: wrongSecret, dropDate: ['2026-10-27'] }), /--weekday-volume and --drop-date shape the embedded simulator's answers/);
    await assert.rejects(runLocal({ report: 'transactions', lake, gatewayUrl: simulator.url, secretFile: wrongSecret, periodTo: 'whole-day' }), /--period-to says how the embedded simulator reads a period/);
    await assert.rejects(runLocal({ report: 'transactions', lake, from: '2026-10-01', to: '2026-10-02', weekdayVolume: '1,1,1' }), /--weekday-volume 1,1,1: expected seven factors/);
    await assert.rejects(runLocal({ report: 'transactions', lake, from: '2026-10-01', to: '2026-10-02', dropDate: ['2026-10-27=2'] }), /--drop-date 2026-10-27=2: expected YYYY-MM-DD or YYYY-MM-DD=SHARE/);
    await assert.rejects(runLocal({ report: 'transactions', lake, from: '2026-10-01', to: '2026-10-02', dropDate: ['2026-02-30'] }), /--drop-date 2026-02-30: expected/);
  });

  it('saved queries are the report\'s own: none for a report whose table no query reads', async () => {
    const own = (await savedQueriesFor({ id: 'transactions', connections: ['default'] })).map((q) => q.name);
    assert.ok(own.length > 0);
    for (const q of await savedQueriesFor({ id: 'transactions', connections: ['default'] })) assert.match(q.sql, /\btransactions\b/);
    assert.deepEqual(await savedQueriesFor({ id: 'no_such_report', connections: ['default'] }), []);
  });
});
