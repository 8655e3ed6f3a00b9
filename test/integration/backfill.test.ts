import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bucketNames } from '../../functions/core/naming.js';
import { formatLocalDate } from '../../functions/core/time/window.js';
import { runBackfillCommand, type BackfillCommandOptions } from '../../local/cli/backfill.js';
import { openLakeDatabase } from '../../local/duckdb/duckdb.js';
import { LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { startSimulator } from '../../local/simulator/index.js';

/**
 * `reports backfill` locally, end to end: the embedded pipeline (or an outside gateway), the manifest
 * check that skips loaded windows, re-runs that overwrite instead of duplicating, typed failures named.
 */

describe('reports backfill, local mode', () => {
  let lakeDir: string;
  before(async () => {
    lakeDir = await mkdtemp(join(tmpdir(), 'backfill-lake-'));
  });
  after(async () => rm(lakeDir, { recursive: true, force: true }));

  const run = async (extra: Partial<BackfillCommandOptions> & Pick<BackfillCommandOptions, 'from' | 'to'>) => {
    const lines: string[] = [];
    const summary = await runBackfillCommand({ report: 'transactions', concurrency: 2, lake: lakeDir, tty: false, ...extra }, (l) => lines.push(l));
    return { summary, lines, text: lines.join('\n') };
  };
  const parquetFiles = async () =>
    (await readdir(join(lakeDir, bucketNames(LOCAL_ENVIRONMENT).curated, 'tables', 'transactions'), { recursive: true })).filter((f) =>
      f.endsWith('.parquet._S3rver_object'),
    );

  it('loads every window of [from, to), one line each without a terminal, then a summary', async () => {
    const { summary, lines, text } = await run({ from: '2026-11-01', to: '2026-11-04' });
    assert.deepEqual([summary.done, summary.failed.length, summary.skipped], [3, 0, 0]);
    assert.match(lines[0]!, /^Backfill of "transactions": 3 P1D window\(s\) 2026-11-01 \.\. 2026-11-03, 2 at a time, locally: the embedded simulator/);
    for (const d of ['01', '02', '03']) assert.match(text, new RegExp(`^ {2}2026-11-${d} +done +\\d+ ms {2}250 rows, `, 'm'));
    assert.match(lines.at(-1)!, /3 window\(s\) in [\d.]+ s: 3 done, 0 failed, 0 skipped\.$/);
    assert.equal((await parquetFiles()).length, 3);
  });

  it('a re-run skips the loaded windows; --force reloads them, leaving one copy of each row', async () => {
    const again = await run({ from: '2026-11-01', to: '2026-11-05' });
    assert.deepEqual([again.summary.done, again.summary.skipped], [1, 3]);
    assert.match(again.text, /^ {2}2026-11-01 +skipped +\d+ ms {2}already loaded at \S+: 250 rows \(--force re-fetches\)$/m);

    const forced = await run({ from: '2026-11-01', to: '2026-11-03', force: true });
    assert.deepEqual([forced.summary.done, forced.summary.skipped], [2, 0]);
    assert.equal((await parquetFiles()).length, 4);
    const db = await openLakeDatabase({ lakeDir });
    try {
      const result = await db.query('SELECT dt, count(*) AS n, count(DISTINCT transaction_id) AS ids FROM transactions GROUP BY dt ORDER BY dt');
      assert.deepEqual(result.rows, ['01', '02', '03', '04'].map((d) => [`2026-11-${d}`, '250', '250']));
    } finally {
      db.close();
    }
  });

  it('against an outside gateway: a failed window is counted and named with its typed code; a refused login stops the rest', async () => {
    const simulator = await startSimulator({ fault: { mode: 'schemaDrift', times: 1 } });
    const secretFile = join(lakeDir, 'hmac.json');
    const wrongSecretFile = join(lakeDir, 'wrong.json');
    await writeFile(secretFile, JSON.stringify(simulator.credentials.hmac));
    await writeFile(wrongSecretFile, JSON.stringify({ ...simulator.credentials.hmac, controlKey: 'not-the-key' }));
    try {
      const drift = await run({ from: '2026-11-10', to: '2026-11-12', concurrency: 1, gatewayUrl: simulator.url, secretFile });
      assert.deepEqual(drift.summary.failed.map((f) => [formatLocalDate(f.window.start), f.code]), [['2026-11-10', 'SchemaDrift']]);
      assert.equal(drift.summary.done, 1);
      assert.match(drift.text, /Failed windows .*\n {2}2026-11-10 {2}SchemaDrift: \(parse\) The header row of report "transactions" differs/);

      const refused = await run({ from: '2026-11-13', to: '2026-11-17', concurrency: 1, gatewayUrl: simulator.url, secretFile: wrongSecretFile });
      assert.deepEqual([refused.summary.done, refused.summary.failed.length, refused.summary.notTried], [0, 1, 3]);
      assert.equal(refused.summary.failed[0]!.code, 'AuthenticationRefused');
      assert.match(refused.text, /Stopped after 2026-11-13 failed with AuthenticationRefused/);
      assert.doesNotMatch(refused.text, /not-the-key/, 'the key never reaches the output');
    } finally {
      await simulator.close();
    }
  });

  it('a window the data checks flag is done (exit 0), marked on its line and named again at the end', async () => {
    const lake = join(lakeDir, 'checks');
    const { summary, text } = await run({ from: '2025-12-01', to: '2025-12-29', lake, dropDate: ['2025-12-24=0'] });
    assert.deepEqual([summary.done, summary.failed.length, summary.notTried], [28, 0, 0]);
    assert.equal(summary.reports.filter((r) => r.findings?.length).length, 1);
    assert.match(text, /^ {2}2025-12-24 +done +\d+ ms {2}0 rows, .*; FLAGGED: header only: 0 rows, expected 125-500 from 3 of the last 4 Wednesdays$/m);
    assert.match(
      text,
      /^Data checks FLAGGED 1 window\(s\) that loaded; the data is kept as sent; what to do: docs\/operations\.md, "Data checks":\n {2}2025-12-24 {2}header only: 0 rows/m,
    );
    // The exit code counts only windows that did not load.
    assert.equal(summary.failed.length || summary.notTried ? 1 : 0, 0);
  });

  it('refuses flag mixes that cannot mean anything before starting anything', async () => {
    await assert.rejects(run({ from: '2026-11-01', to: '2026-11-02', deployed: true }), /--deployed needs --function-name/);
    await assert.rejects(run({ from: '2026-11-01', to: '2026-11-02', deployed: true, functionName: 'f', gatewayUrl: 'https://x' }), /--gateway-url only apply to a local backfill/);
    await assert.rejects(run({ from: '2026-11-01', to: '2026-11-02', functionName: 'f' }), /go with --deployed/);
    await assert.rejects(run({ from: '2026-11-01', to: '2026-11-02', deployed: true, functionName: 'f', dropDate: ['2026-11-01'] }), /--drop-date only apply to a local backfill/);
    await assert.rejects(run({ from: '2026-11-02', to: '2026-11-02' }), /--from must be before --to/);
  });
});
