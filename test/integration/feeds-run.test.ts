import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { readReportQueries } from '../../lib/saved-queries/saved-queries.js';
import { runLocal } from '../../local/cli/run.js';
import { openLakeDatabase } from '../../local/duckdb/duckdb.js';
import { lakeStatus } from '../../local/lake/lake-status.js';
import { startSimulator, type Simulator } from '../../local/simulator/index.js';
import { generateTransactions } from '../../local/simulator/transactions.js';
import { useConnectionFixtures } from '../helpers/connection-fixtures.js';

/**
 * One report over three providers (issue 45): one definition naming connections acme, beta and gamma, each a gateway
 * of its own on loopback (two HMAC logins, one RSA), one `npm start`, one table whose rows per connection are exactly
 * what each gateway served, one saved query giving the cross-provider daily totals exactly; and with one gateway
 * refusing its login, the coverage query, `reports status --lake` and the run's summary name its missing windows.
 */

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const ROWS = 40;
const FIRST = ['2026-11-20', '2026-11-21'];
const REFUSED = ['2026-11-22', '2026-11-23', '2026-11-24'];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
  process.exitCode = undefined;
});

const day = (date: string) => windowAt(parseLocalDateTime(date), parseWindowSize('P1D'));

/** Thousandths, exactly: the amounts are decimal(18,3). */
const milli = (text: string): bigint => {
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const n = BigInt(whole!) * 1000n + BigInt((frac + '000').slice(0, 3));
  return text.startsWith('-') ? -n : n;
};
const decimal = (n: bigint): string => {
  const sign = n < 0n ? '-' : '';
  const a = n < 0n ? -n : n;
  return `${sign}${a / 1000n}.${String(a % 1000n).padStart(3, '0')}`;
};

describe('one report over three connections: a feed each, one table', () => {
  it('loads each gateway\'s rows into its partition, totals them across providers in one query, and names a refusing provider\'s missing days', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feeds-run-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await useConnectionFixtures(dir, [{ id: 'transactions', connection: ['acme', 'beta', 'gamma'] }], {
      integration: [{ name: 'acme' }, { name: 'beta' }, { name: 'gamma' }],
    });
    // The analyst's question, written once for every provider: one GROUP BY over one table.
    await mkdir(join(dir, 'queries', 'transactions'), { recursive: true });
    await writeFile(
      join(dir, 'queries', 'transactions', 'daily_totals_all_providers.sql'),
      '-- Captured amount per day and currency across all providers.\n' +
        'SELECT dt, currency, count(*) AS transactions, CAST(sum(amount) AS varchar) AS total_amount\nFROM transactions\nGROUP BY dt, currency\nORDER BY dt, currency\n',
    );
    const catalog = loadCatalog();
    const report = catalog.get('transactions');
    assert.deepEqual(report.connections, ['acme', 'beta', 'gamma']);

    // Three gateways, each its own login: its rows are seeded by it, so no two serve the same rows.
    const gateways: Record<string, { sim: Simulator; login: string; secret: object }> = {};
    for (const [name, method] of [['acme', 'hmac'], ['beta', 'hmac'], ['gamma', 'rsa']] as const) {
      const sim = await startSimulator({ reports: catalog.reports, rowsPerDay: ROWS, onlyReports: true, [method]: { login: `merchant-${name}` } });
      cleanups.push(() => sim.close());
      const secret = method === 'hmac' ? sim.credentials.hmac : sim.credentials.rsa;
      gateways[name] = { sim, login: secret.login, secret };
    }
    const secretFile = async (name: string, secret: object) => {
      const file = join(dir, `${name}.json`);
      await writeFile(file, JSON.stringify(secret));
      return file;
    };
    const flags = async (secrets: Record<string, object>) => ({
      gatewayUrl: Object.entries(gateways).map(([name, g]) => `${name}=${g.sim.url}`),
      secretFile: await Promise.all(Object.entries(secrets).map(async ([name, s]) => `${name}=${await secretFile(name, s)}`)),
    });
    const lake = join(dir, 'lake');
    const served = (name: string, date: string) => generateTransactions(gateways[name]!.login, day(date), ROWS);

    // One run: every feed, two windows each.
    const lines: string[] = [];
    const all = await flags(Object.fromEntries(Object.entries(gateways).map(([n, g]) => [n, g.secret])));
    const summary = await runLocal({ from: FIRST[0], to: '2026-11-22', lake, ...all }, (l) => void lines.push(l));
    const out = lines.join('\n');
    assert.deepEqual([summary.asked, summary.loaded, summary.failedWindows], [6, 6, 0], out);
    assert.match(out, /^Report "transactions" \(P1D windows, Europe\/Moscow\) over connections "acme", "beta", "gamma": 6 window\(s\)\.$/m);
    for (const name of ['acme', 'beta', 'gamma']) assert.match(out, new RegExp(`^Connection "${name}": http://127\\.0\\.0\\.1:\\d+/\\S+, login "merchant-${name}" signing with (HMAC-SHA1|RSA-SHA256)`, 'm'));

    const db = await openLakeDatabase({ lakeDir: lake, reports: catalog.reports, staleNotices: false });
    try {
      // One table; each connection's rows exactly what its gateway served.
      for (const name of ['acme', 'beta', 'gamma']) {
        const got = await db.query(`SELECT CAST(transaction_id AS VARCHAR) FROM transactions WHERE connection = '${name}' ORDER BY 1`);
        const sent = FIRST.flatMap((d) => served(name, d).map((r) => r[1]!)).sort();
        assert.deepEqual(got.rows.map((r) => r[0]), sent, name);
      }
      // The saved query over every provider: the daily totals per currency, to the thousandth.
      const saved = readReportQueries(report).find((q) => q.name === 'daily_totals_all_providers')!;
      const totals = await db.query(saved.sql);
      const expected = new Map<string, { n: number; sum: bigint }>();
      for (const date of FIRST) {
        for (const name of ['acme', 'beta', 'gamma']) {
          for (const row of served(name, date)) {
            const key = `${date} ${row[5]}`;
            const t = expected.get(key) ?? { n: 0, sum: 0n };
            expected.set(key, { n: t.n + 1, sum: t.sum + milli(row[4]!) });
          }
        }
      }
      assert.deepEqual(
        totals.rows.map((r) => [String(r[0]), String(r[1]), Number(r[2]), String(r[3])]),
        [...expected].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, t]) => [...key.split(' '), t.n, decimal(t.sum)]),
      );
    } finally {
      db.close();
    }

    // beta's secret file now holds a wrong key: its gateway refuses, the others load.
    const wrong = await flags({ acme: gateways.acme!.secret, beta: { ...gateways.beta!.secret, controlKey: 'not-the-key' }, gamma: gateways.gamma!.secret });
    const refusedLines: string[] = [];
    const errors = mock.method(console, 'error', () => undefined);
    let refused;
    try {
      refused = await runLocal({ from: REFUSED[0], to: '2026-11-25', lake, ...wrong }, (l) => void refusedLines.push(l));
    } finally {
      errors.mock.restore();
    }
    process.exitCode = undefined;
    const refusedOut = refusedLines.join('\n');
    assert.deepEqual([refused.asked, refused.loaded, refused.failedWindows, refused.notTried], [9, 6, 1, 2], refusedOut);
    assert.match(refusedOut, /^Not loaded: beta: 3 windows not loaded\.$/m);
    assert.doesNotMatch(refusedOut, /not-the-key/);

    // The coverage query (built in for every report) names beta's missing days; the others loaded each one.
    const db2 = await openLakeDatabase({ lakeDir: lake, reports: catalog.reports, staleNotices: false });
    try {
      const coverage = readReportQueries(report).find((q) => q.name === 'coverage')!;
      const rows = (await db2.query(coverage.sql)).rows.map((r) => [String(r[0]), String(r[1]), String(r[2])]);
      const dates = [...REFUSED, ...FIRST].sort().reverse();
      assert.deepEqual(
        rows,
        dates.flatMap((d) => ['acme', 'beta', 'gamma'].map((c) => [d, c, c === 'beta' && REFUSED.includes(d) ? 'not loaded' : 'loaded'])),
      );
      // The loads table itself: one row per load attempt, report and connection from the path.
      const loads = await db2.query(`SELECT connection, count(*) FROM loads WHERE report = 'transactions' AND outcome = 'loaded' GROUP BY connection ORDER BY connection`);
      assert.deepEqual(loads.rows.map((r) => [String(r[0]), Number(r[1])]), [['acme', 5], ['beta', 2], ['gamma', 5]]);
    } finally {
      db2.close();
    }

    // reports status --lake: the feed missing windows, named with them.
    const items = await lakeStatus({ lakeDir: lake, curatedBucket: bucketNames(LOCAL_ENVIRONMENT).curated, reports: catalog.reports });
    const coverage = items.find((i) => i.item === 'coverage transactions')!;
    assert.equal(coverage.verdict, 'TODO');
    assert.match(coverage.detail, /^beta: 3 window\(s\) not loaded \(2026-11-22, 2026-11-23, 2026-11-24\): npm start -- --report transactions --connection beta --from 2026-11-22/);
    assert.doesNotMatch(coverage.detail, /acme|gamma/);
  });
});
