import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CloudWatchClient, GetMetricDataCommand, type GetMetricDataCommandInput } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';
import { groupByLookback, lookbackHours, staleReports } from '../../functions/core/freshness/stale-reports.js';
import { handler } from '../../functions/check-freshness/handler.js';
import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import { captureJsonLines, dimensionSetOf, lambdaContext, metricPoints } from '../helpers/handler-harness.js';

/**
 * The freshness check through its event shape (the Scheduler's, which it does not read): the catalog's reports, their
 * completed loads as CloudWatch answers (aws-sdk-client-mock), and the ReportStale lines it writes for the late ones.
 */

const cloudWatch = mockClient(CloudWatchClient);
const saved = { ...process.env };
let dir: string;

/** Three reports: the fixture's daily one, a 6-hour one, and a daily one over a second connection. */
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'freshness-'));
  const base = JSON.parse(await readFile(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(dir, 'transactions.json'), JSON.stringify(base));
  await writeFile(join(dir, 'hourly.json'), JSON.stringify({ ...base, id: 'hourly', window: 'PT6H' }));
  await writeFile(join(dir, 'payouts.json'), JSON.stringify({ ...base, id: 'payouts', connection: 'payouts-eu' }));
});
after(async () => {
  process.env = saved;
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  cloudWatch.reset();
  process.env = { ...saved, [REPORTS_DIR_VARIABLE]: dir, PIPELINE_ENVIRONMENT: 'test', FRESHNESS_GRACE_HOURS: '6' };
});

/** CloudWatch's answer: `loads` completed loads for each report named, none for the others. */
function answer(loads: Record<string, number>) {
  cloudWatch.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => ({
    MetricDataResults: input.MetricDataQueries!.map((q) => {
      const report = q.MetricStat!.Metric!.Dimensions!.find((d) => d.Name === 'report')!.Value!;
      const n = loads[report];
      return { Id: q.Id, Timestamps: n ? [new Date()] : [], Values: n ? [n] : [] };
    }),
  }));
}

describe('freshness check handler', () => {
  it('writes ReportStale for each report with no completed load within its window plus the grace, and nothing for the others', async () => {
    answer({ transactions: 1 });
    const run = await captureJsonLines(() => handler({}, lambdaContext('req-fresh-1')));
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(run.result, {
      checked: 3,
      stale: [
        { report: 'hourly', connection: 'default', lookbackHours: 12 },
        { report: 'payouts', connection: 'payouts-eu', lookbackHours: 30 },
      ],
    });
    const stale = metricPoints(run.lines, 'ReportStale');
    assert.deepEqual(stale.map((p) => [p.value, p.dims.report, p.dims.connection, p.dims.environment, p.dims.service]), [
      [1, 'hourly', 'default', 'test', 'paynet-reports'],
      [1, 'payouts', 'payouts-eu', 'test', 'paynet-reports'],
    ]);
    // The dimension set the no-fresh-data alarms' SCHEMA names (lib/metrics.ts).
    for (const p of stale) assert.deepEqual(dimensionSetOf(p.dims).sort(), ['connection', 'environment', 'report', 'service']);
    const warning = run.lines.find((l) => l.level === 'WARN');
    assert.match(String(warning?.message), /no completed load within their window plus the grace/);
  });

  it('reads LoadsCompleted of each report, with the dimensions the parse function writes, over its window plus the grace', async () => {
    answer({ transactions: 1, hourly: 2, payouts: 1 });
    const before = Date.now();
    const run = await captureJsonLines(() => handler({}, lambdaContext('req-fresh-2')));
    assert.deepEqual(run.result, { checked: 3, stale: [] });
    assert.deepEqual(metricPoints(run.lines, 'ReportStale'), [], 'all fresh: no series written');
    const calls = cloudWatch.commandCalls(GetMetricDataCommand).map((c) => c.args[0].input);
    // One call per look-back: 12 h for the 6-hour report, 30 h for the two daily ones.
    assert.deepEqual(calls.map((c) => [Math.round((c.EndTime!.getTime() - c.StartTime!.getTime()) / 3_600_000), c.MetricDataQueries!.length]), [[12, 1], [30, 2]]);
    assert.ok(calls[0]!.EndTime!.getTime() >= before);
    const query = calls[1]!.MetricDataQueries!.map((q) => q.MetricStat!).find((q) => q.Metric!.Dimensions!.some((d) => d.Value === 'payouts'))!;
    assert.equal(query.Metric!.MetricName, 'LoadsCompleted');
    assert.deepEqual(Object.fromEntries(query.Metric!.Dimensions!.map((d) => [d.Name, d.Value])), {
      service: 'paynet-reports',
      connection: 'payouts-eu',
      report: 'payouts',
      environment: 'test',
    });
    assert.deepEqual([query.Period, query.Stat], [30 * 3600, 'Sum']);
  });

  it('fails with a typed error naming the variable when the grace is not set', async () => {
    delete process.env.FRESHNESS_GRACE_HOURS;
    const run = await captureJsonLines(() => handler({}, lambdaContext('req-fresh-3')));
    assert.equal((run.error as { code?: string }).code, 'ConfigurationError');
    assert.match(String(run.error), /FRESHNESS_GRACE_HOURS/);
  });
});

describe('stale reports', () => {
  it('looks back the window plus the grace, groups reports by look-back, and calls late those without a completed load', () => {
    assert.equal(lookbackHours('P1D', 6), 30);
    assert.equal(lookbackHours('PT1H', 2), 3);
    assert.equal(lookbackHours('P7D', 48), 216, 'no seven-day cap: the check reads metrics, not an alarm period');
    const reports = [
      { id: 'a', connection: 'x', window: 'P1D' },
      { id: 'b', connection: 'x', window: 'PT6H' },
      { id: 'c', connection: 'y', window: 'P1D' },
    ];
    assert.deepEqual(groupByLookback(reports, 6).map((g) => [g.hours, g.reports.map((r) => r.id)]), [[12, ['b']], [30, ['a', 'c']]]);
    assert.deepEqual(staleReports(reports, new Map([['a', 1], ['b', 0]])).map((r) => r.id), ['b', 'c']);
  });
});
