import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import '../helpers/fixture-reports.js';
import { resourcesOf, synthPipeline, testConfig, type Cfn } from './helpers.js';

/**
 * Every Metrics Insights query the stack writes (the alarms' and the dashboard's) against the grammar AWS documents
 * ("Metrics Insights query components and syntax"), not against our own builder: a query CloudWatch would refuse
 * fails the deploy (an alarm) or draws nothing (a widget), and neither shows offline otherwise.
 *
 *   SELECT FUNCTION(metricName) FROM namespace | SCHEMA(...)
 *   [ WHERE labelKey OPERATOR labelValue [AND ... ] ] [ GROUP BY labelKey [ , ... ] ]
 *   [ ORDER BY FUNCTION() [ DESC | ASC ] ] [ LIMIT number ]
 *
 * FUNCTION is AVG, COUNT, MAX, MIN or SUM; a query returns at most 500 time series, so LIMIT is 1 to 500; a multi-series
 * alarm (GROUP BY) needs ORDER BY. OPERATOR is kept to = and != (the operators every version of the page lists).
 */
const FUNCTION = '(AVG|COUNT|MAX|MIN|SUM)';
const LABEL = '[A-Za-z_][A-Za-z0-9_]*';
const VALUE = `'[^']*'`;
const CONDITION = `${LABEL} (=|!=) ${VALUE}`;
const GRAMMAR = new RegExp(
  `^SELECT ${FUNCTION}\\(${LABEL}\\) FROM (${LABEL}|SCHEMA\\(${LABEL}(, ${LABEL})*\\))` +
    `( WHERE ${CONDITION}( AND ${CONDITION})*)?` +
    `( GROUP BY ${LABEL}(, ${LABEL})*)?` +
    `( ORDER BY ${FUNCTION}\\(\\)( DESC| ASC)?)?` +
    `( LIMIT (\\d+))?$`,
);

function checkQuery(query: string, where: string, alarm: boolean): void {
  const m = GRAMMAR.exec(query);
  assert.ok(m, `${where}: not the documented grammar: ${query}`);
  const grouped = query.includes(' GROUP BY ');
  const limit = /LIMIT (\d+)$/.exec(query);
  if (limit) assert.ok(Number(limit[1]) >= 1 && Number(limit[1]) <= 500, `${where}: LIMIT ${limit[1]}`);
  if (alarm && grouped) assert.ok(query.includes(' ORDER BY '), `${where}: a multi-time-series alarm needs ORDER BY`);
}

describe('Metrics Insights queries, against the documented grammar', () => {
  const { template } = synthPipeline(testConfig());

  it("every alarm's query", () => {
    const queries = Object.entries(resourcesOf(template, 'AWS::CloudWatch::Alarm')).flatMap(([id, a]) =>
      ((a.Properties as Cfn).Metrics ?? []).filter((m: Cfn) => typeof m.Expression === 'string' && m.Expression.startsWith('SELECT')).map((m: Cfn) => [id, m.Expression as string]),
    );
    assert.ok(queries.length >= 4, `the per-connection alarms: ${queries.length}`);
    for (const [id, q] of queries) checkQuery(q!, id!, true);
  });

  it("every dashboard widget's query", () => {
    const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
    const parts = (dashboard!.Properties as Cfn).DashboardBody['Fn::Join'][1] as Cfn[];
    const body = parts.map((p) => (typeof p === 'string' ? p : 'ref')).join('');
    // Expressions sit in the widgets' metrics as {"expression": "..."}; a pattern variable fills CHOSEN_… at view time.
    const queries = [...body.matchAll(/"expression":"(SELECT [^"]*)"/g)].map((m) => m[1]!);
    assert.ok(queries.length >= 5, `dashboard queries: ${queries.length}`);
    for (const q of queries) {
      // The drop-down's placeholder stands for a connection's condition; check it as one.
      checkQuery(q.replace(/CHOSEN_CONNECTION_REPORTS/g, "connection = 'default'"), 'dashboard', false);
    }
  });

  it('refuses what the documentation does not allow, so the checks above can fail', () => {
    const bad = [
      "SELECT SUM(RowsRejected) FROM SCHEMA(PaynetReports, report) WHERE report = 'a' OR report = 'b'",
      "SELECT MEDIAN(RowsRejected) FROM PaynetReports",
      "SELECT SUM(RowsRejected) FROM PaynetReports GROUP BY report ORDER BY SUM() DESC LIMIT 501",
      "SELECT SUM(RowsRejected) FROM PaynetReports WHERE report IN ('a')",
    ];
    for (const q of bad) assert.throws(() => checkQuery(q, 'bad', true), q);
    assert.throws(() => checkQuery('SELECT SUM(RowsRejected) FROM PaynetReports GROUP BY report', 'alarm', true), /needs ORDER BY/);
  });
});
