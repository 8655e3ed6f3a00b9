import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it, mock } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import { projectPath } from '../../lib/bundling/project.js';
import { refuseWhatTrinoCannotParse } from '../../lib/saved-queries/saved-query-grammar.js';
import { readReportQueries } from '../../lib/saved-queries/saved-queries.js';
import { refuseSavedQueriesTrinoCannotParse } from '../../local/cli/saved-query-check.js';
import { openDuckDb, type TestDb } from '../helpers/duckdb.js';
import { FIXTURE_QUERIES_DIR } from '../helpers/fixture-reports.js';

/**
 * Saved queries run on DuckDB locally and on Athena engine v3 (Trino): the check refuses, before either, a
 * query Trino's grammar does not accept, at the file's own line and column. Each refused query below is
 * run on DuckDB first, so the test shows the very case the check is for: green locally, broken on Athena.
 */

const file = (name: string) => join(projectPath('queries'), 'transactions', name);

/** Each parses on DuckDB and not on Trino; where Trino stops (line:column of the file) and its word for it. */
const DUCKDB_ONLY = {
  cast: {
    text: '-- Amounts as text.\nSELECT dt,\n       amount::varchar AS amount_text\nFROM transactions\n',
    at: '3:14',
    said: /':' is not valid at this position/,
  },
  exclude: {
    text: '-- Everything but the description.\nSELECT * EXCLUDE (order_description)\nFROM transactions\n',
    at: '2:10',
    said: /'EXCLUDE' is not valid at this position/,
  },
  // Trino reads QUALIFY as the table's alias: the first word it cannot take is the function after it.
  qualify: {
    text:
      '-- The newest transaction per currency.\nSELECT currency, transaction_id, created_date\nFROM transactions\n' +
      'QUALIFY row_number() OVER (PARTITION BY currency ORDER BY created_date DESC) = 1\n',
    at: '4:9',
    said: /'row_number' is not valid at this position/,
  },
};

/** CAST, a CTE, window functions, NULLIF, decimal arithmetic: what both engines accept. */
const BOTH_ENGINES = `-- Per day and currency, the largest amount and its share of the day's total.
WITH ranked AS (
  SELECT
    dt,
    currency,
    CAST(amount AS varchar) AS amount_text,
    amount,
    row_number() OVER (PARTITION BY dt, currency ORDER BY amount DESC) AS rank_in_day,
    sum(amount) OVER (PARTITION BY dt) AS day_total
  FROM transactions
  WHERE dt >= cast(cast(current_date - INTERVAL '31' DAY AS date) AS varchar)
)
SELECT dt, currency, amount_text, amount / nullif(day_total, 0) AS share
FROM ranked
WHERE rank_in_day = 1
ORDER BY dt DESC, currency;
`;

const refusal = (queries: Array<{ file: string; text: string }>): ConfigurationError => {
  try {
    refuseWhatTrinoCannotParse(queries);
  } catch (e) {
    assert.ok(e instanceof ConfigurationError, String(e));
    return e;
  }
  assert.fail(`not refused: ${queries.map((q) => q.file).join(', ')}`);
};

describe('saved queries against the grammar of Athena engine v3 (Trino)', () => {
  let duckdb: TestDb;
  before(async () => {
    duckdb = await openDuckDb();
    await duckdb.query(
      `CREATE TABLE transactions AS SELECT '2026-11-20' AS dt, TIMESTAMP '2026-11-20 10:00:00' AS created_date, 17::BIGINT AS transaction_id,
         'USD' AS currency, -12.5::DECIMAL(18,3) AS amount, 'refund' AS order_description`,
    );
  });
  after(() => duckdb.close());

  it('the shipped saved queries and the fixture copies pass', () => {
    for (const root of [projectPath('queries'), FIXTURE_QUERIES_DIR]) {
      const queries = readReportQueries({ id: 'transactions', connections: ['default'] }, root);
      assert.ok(queries.length >= 3, root);
      refuseWhatTrinoCannotParse(queries);
    }
  });

  for (const [construct, { text, at, said }] of Object.entries(DUCKDB_ONLY)) {
    it(`refuses ${construct} (DuckDB runs it) at the file's line and column, with the parser's message and what to do`, async () => {
      await duckdb.query(text);
      const e = refusal([{ file: file(`${construct}.sql`), text }]);
      const [where, rest] = [e.message.slice(0, e.message.indexOf(': ')), e.message.slice(e.message.indexOf(': ') + 2)];
      assert.equal(where, `queries/transactions/${construct}.sql:${at}`);
      assert.match(rest, /^Athena \(Trino\) cannot parse this saved query: /);
      assert.match(rest, said);
      assert.match(rest, /Write it in SQL both DuckDB and Trino accept \(for example CAST\(x AS varchar\) instead of x::varchar\)\.$/);
      assert.equal(e.code, 'ConfigurationError');
    });
  }

  it('passes a query both engines accept (CAST, a CTE, window functions)', async () => {
    assert.equal((await duckdb.query(BOTH_ENGINES)).length, 1);
    refuseWhatTrinoCannotParse([{ file: file('largest.sql'), text: BOTH_ENGINES }]);
  });

  it('names every refused file at once, and only those', () => {
    const queries = [
      { file: file('largest.sql'), text: BOTH_ENGINES },
      ...Object.entries(DUCKDB_ONLY).map(([name, { text }]) => ({ file: file(`${name}.sql`), text })),
    ];
    const lines = refusal(queries).message.split('\n');
    assert.equal(lines[0], '3 saved queries Athena (Trino) cannot parse:');
    assert.deepEqual(
      lines.slice(1, 4).map((l) => l.slice(0, l.indexOf(': '))),
      Object.entries(DUCKDB_ONLY).map(([name, { at }]) => `queries/transactions/${name}.sql:${at}`),
    );
    assert.match(lines[4]!, /^Write each in SQL both DuckDB and Trino accept/);
    assert.equal(lines.length, 5, 'largest.sql is not named');
  });

  it("counts lines and columns in the file as it is: leading blank lines and a byte-order mark stay the file's", () => {
    const text = '\uFEFF\n\n-- Two blank lines above.\n  SELECT amount::varchar FROM transactions';
    assert.match(refusal([{ file: file('padded.sql'), text }]).message, /^queries\/transactions\/padded\.sql:4:16: /);
    refuseWhatTrinoCannotParse([{ file: file('bom.sql'), text: '\uFEFFSELECT 1' }]);
  });

  it('names a file outside the working directory by its absolute path', () => {
    assert.match(refusal([{ file: '/elsewhere/q.sql', text: 'SELECT a::int FROM t' }]).message, /^\/elsewhere\/q\.sql:1:9: /);
  });

  it('prints nothing itself: the parser would echo each error of a file with several statements on stderr', (t) => {
    const printed = t.mock.method(console, 'error', () => undefined);
    refusal([{ file: file('two.sql'), text: 'SELECT 1;\nSELECT a::int FROM t;\nSELECT * EXCLUDE (x) FROM t' }]);
    assert.equal(printed.mock.callCount(), 0, printed.mock.calls.map((c) => String(c.arguments[0])).join('\n'));
    mock.restoreAll();
  });
});

describe("the commands' check (local/cli/saved-query-check.ts): passes are remembered, refusals are not", () => {
  const remembered = (): number => {
    try {
      return (JSON.parse(readFileSync(projectPath('node_modules/.cache/paynet-reports-pipeline/saved-queries-trino.json'), 'utf8')) as string[]).length;
    } catch {
      return 0;
    }
  };
  // A text no earlier run can have checked.
  const unique = `-- ${process.pid} ${Date.now()}\n`;

  it('a pass is remembered; the same file edited into DuckDB-only syntax is refused, every time', async () => {
    const good = `${unique}SELECT dt, CAST(amount AS varchar) AS amount_text FROM transactions\n`;
    const before = remembered();
    await refuseSavedQueriesTrinoCannotParse([{ file: file('edited.sql'), text: good }]);
    assert.equal(remembered(), Math.min(before + 1, 1000));
    await refuseSavedQueriesTrinoCannotParse([{ file: file('edited.sql'), text: good }]);

    const edited = `${unique}SELECT dt, amount::varchar AS amount_text FROM transactions\n`;
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        refuseSavedQueriesTrinoCannotParse([{ file: file('edited.sql'), text: edited }]),
        (e: unknown) => e instanceof ConfigurationError && e.message.startsWith('queries/transactions/edited.sql:2:18: Athena (Trino) cannot parse'),
      );
    }
    assert.equal(remembered(), Math.min(before + 1, 1000), 'a refusal is not remembered');
  });
});
