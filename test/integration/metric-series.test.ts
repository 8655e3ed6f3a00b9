import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { METRIC_NAMESPACE, PER_REPORT_METRICS } from '../../functions/aws/metrics.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { SERVICE_NAME } from '../../lib/metrics.js';
import { startLocalPipeline } from '../../local/pipeline/pipeline.js';
import { captureJsonLines, dimensionSetOf } from '../helpers/handler-harness.js';
import { resourcesOf, synthPipeline, testConfig, type Cfn } from '../infra/helpers.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * What an added report costs in CloudWatch, counted rather than assumed (docs/deploy.md, "What it costs"): the distinct
 * metric series a local run's handlers write for a healthy report, and the alarms the template holds per report.
 */

/** docs/deploy.md: a healthy report keeps no series with its name, whatever its window; the environment at most six. */
const SERIES_PER_HEALTHY_REPORT: string[] = [];
const SERIES_PER_ENVIRONMENT = ['FetchBytes', 'FetchDurationMs', 'FetchOutcome Success', 'LoadLagSeconds', 'LoadsCompleted', 'RowsWritten'];
/**
 * docs/deploy.md: three function alarms, five dead-letter alarms and the freshness check's absence, then four per
 * connection, none per report.
 */
const FIXED_ALARMS = 9;
const ALARMS_PER_CONNECTION = 4;

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** One series: the metric and its dimension values (the billing unit), from an EMF line. */
function seriesOf(line: Record<string, unknown>): { name: string; report?: string; key: string } {
  const aws = line._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> };
  const name = aws.CloudWatchMetrics[0]!.Metrics[0]!.Name;
  const dims = dimensionSetOf(line).sort();
  const key = `${name} ${dims.map((d) => `${d}=${String(line[d])}`).join(' ')}`;
  return { name, report: line.report as string | undefined, key };
}

describe('metric series and alarms per report', () => {
  it('a healthy report, loaded day after day, keeps no series of its own; every one is per environment', async () => {
    const lakeDir = await mkdtemp(join(tmpdir(), 'series-'));
    dirs.push(lakeDir);
    const report = loadCatalog().get('transactions');
    const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: SERVICE_NAME });
    const p = await startLocalPipeline({ lakeDir, simulator: { rowsPerDay: 40 }, metrics });
    try {
      const run = await captureJsonLines(async () => {
        for (const day of ['2026-11-16', '2026-11-17', '2026-11-18']) {
          const outcome = await p.runWindow(feedKey(report.id), windowAt(parseLocalDateTime(day), parseWindowSize(report.window)));
          assert.equal(outcome.status, 'loaded', day);
        }
      });
      assert.equal(run.error, undefined, String(run.error));
      const series = new Map(run.lines.filter((l) => typeof l._aws === 'object').map((l) => [seriesOf(l).key, seriesOf(l)]));
      const perReport = [...series.values()].filter((s) => s.report !== undefined);
      assert.deepEqual(perReport.map((s) => s.name), SERIES_PER_HEALTHY_REPORT);
      for (const s of perReport) assert.ok(PER_REPORT_METRICS.has(s.name as never), s.name);
      const perEnvironment = [...series.values()].filter((s) => s.report === undefined).map((s) => (s.name === 'FetchOutcome' ? `${s.name} ${/outcome=(\S+)/.exec(s.key)![1]}` : s.name));
      assert.deepEqual(perEnvironment.sort(), SERIES_PER_ENVIRONMENT);
    } finally {
      await p.close();
    }
  });

  it('the template holds no alarm per report: nine, then four per connection', () => {
    const one = synthPipeline(testConfig());
    const alarms = Object.values(resourcesOf(one.template, 'AWS::CloudWatch::Alarm')).map((a) => (a.Properties as Cfn).AlarmName as string);
    const connections = testConfig().connections.length;
    assert.equal(alarms.length, FIXED_ALARMS + ALARMS_PER_CONNECTION * connections, alarms.join(', '));
    for (const report of loadCatalog().reports) assert.ok(!alarms.some((n) => n.endsWith(`-${report.id}`)), `no alarm named for ${report.id}`);
  });
});
