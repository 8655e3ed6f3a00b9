import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Json } from '@duckdb/node-api';
import { limitedSql, openLakeDatabase, type LakeDatabase } from '../../local/duckdb/duckdb.js';
import { formatTable, streamTable } from '../../local/duckdb/result-table.js';

/**
 * Results too big for memory: `npm run query` streams them, and the saved-query summary asks DuckDB for
 * the rows it shows only. The ceiling is memory, checked in a child process, never a timing.
 */

const ROWS = 400_000;
/** Enough for the command itself; too little for 400,000 rows of 4 columns read into JavaScript at once (the read-all path dies here). */
const HEAP_MB = 32;
/** Peak RSS allowed, DuckDB's own memory (its sort) included: the result's JSON alone is ~40 MB. */
const RSS_CEILING_MB = 400;
const WIDE_ROWS =
  `SELECT i AS id, 'merchant-' || i AS name, (i * 1.001)::DECIMAL(18,3) AS amount, ` +
  `TIMESTAMP '2026-01-01' + to_seconds(i) AS at FROM range(${ROWS}) t(i) ORDER BY i`;

describe('streamed query results', () => {
  let lakeDir: string;
  let db: LakeDatabase;
  before(async () => {
    lakeDir = await mkdtemp(join(tmpdir(), 'query-stream-'));
    db = await openLakeDatabase({ lakeDir, reports: [] });
  });
  after(async () => {
    db.close();
    await rm(lakeDir, { recursive: true, force: true });
  });

  it(`npm run query --json: ${ROWS.toLocaleString('en-US')} rows through a ${HEAP_MB} MB heap, every row out, in order`, async () => {
    const child = spawn(
      process.execPath,
      [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', '--import', './test/helpers/report-max-rss.ts', 'bin/reports.ts', 'query', '--json', '--lake', lakeDir, WIDE_ROWS],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // Counted as it arrives, never kept: the test process must not be the one that holds the result.
    let lines = 0;
    let expectedId = 0;
    let partial = '';
    let outOfOrder: string | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      const parts = (partial + d).split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        if (!outOfOrder && JSON.parse(line).id !== String(expectedId)) outOfOrder = line;
        expectedId++;
        lines++;
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, stderr.slice(-2000));
    assert.equal(partial, '');
    assert.equal(outOfOrder, undefined);
    assert.equal(lines, ROWS);
    const rss = Number(/max-rss-kib=(\d+)/.exec(stderr)?.[1]) / 1024;
    assert.ok(rss > 0, stderr);
    assert.ok(rss < RSS_CEILING_MB, `peak RSS ${rss.toFixed(0)} MB, ceiling ${RSS_CEILING_MB} MB`);
  });

  it('head(): LIMIT n+1 in SQL, the order of the query kept, and whether there are more', async () => {
    const big = await db.head(`SELECT i FROM range(${ROWS}) t(i) ORDER BY i DESC;`, 20);
    assert.equal(big.rows.length, 20);
    assert.equal(big.more, true);
    assert.deepEqual(big.rows.slice(0, 2), [[String(ROWS - 1)], [String(ROWS - 2)]]);
    assert.match(formatTable(big, 20), /\(the first 20 rows; the query has more\)$/);

    const exact = await db.head('SELECT i FROM range(20) t(i) ORDER BY i -- a comment at the end', 20);
    assert.equal(exact.rows.length, 20);
    assert.equal(exact.more, false);
    assert.match(formatTable(exact, 20), /\(20 rows\)$/);

    assert.equal(limitedSql('SELECT 1;  \n', 5), 'SELECT * FROM (\nSELECT 1\n) AS limited LIMIT 5');
  });

  it('a streamed table: aligned from the first chunk, widened for wider later values, counted at the end', async () => {
    const batches: Json[][][] = [
      [['a', '1.5'], ['bb', '22.25']],
      [['a much longer name', '3.0']],
    ];
    const lines: string[] = [];
    const rows = await streamTable(
      { columns: [{ name: 'name', type: 'VARCHAR' }, { name: 'amount', type: 'DECIMAL(18,2)' }], batches: (async function* () { yield* batches; })() },
      (text) => void lines.push(...text.split('\n')),
    );
    assert.equal(rows, 3);
    assert.deepEqual(lines, [
      'name  amount',
      '────  ──────',
      'a        1.5',
      'bb     22.25',
      'a much longer name     3.0',
      '(3 rows)',
    ]);
  });

  it('a failure while producing rows (at the start or in a later chunk) is a QueryFailed with DuckDB\'s message', async () => {
    await assert.rejects(
      (async () => {
        const stream = await db.stream(`SELECT CASE WHEN i < 50000 THEN 'ok' ELSE error('broke at ' || i) END AS x FROM range(100000) t(i)`);
        for await (const batch of stream.batches) void batch;
      })(),
      (e: Error) => e.name === 'QueryFailed' && /broke at/.test(e.message),
    );
  });
});
