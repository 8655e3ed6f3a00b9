import { GetMetricDataCommand, type CloudWatchClient, type MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import type { LookbackGroup } from '../core/freshness/stale-reports.js';
import { Dimension, METRIC_NAMESPACE, MetricName } from './metrics.js';

/** GetMetricData takes at most 500 queries per call. */
const QUERIES_PER_CALL = 500;

/**
 * Completed loads per report within each group's look-back, from the LoadsCompleted series the parse function writes
 * (functions/aws/metrics.ts): one query per report, a single period spanning the look-back, so CloudWatch returns at
 * most a point or two per report. A report with no series at all (it never loaded, or not for 15 months) counts 0.
 */
export async function completedLoads(
  cloudWatch: CloudWatchClient,
  request: { environment: string; service: string; groups: readonly LookbackGroup[]; now: Date },
): Promise<Map<string, number>> {
  const loads = new Map<string, number>();
  for (const group of request.groups) {
    const start = new Date(request.now.getTime() - group.hours * 3_600_000);
    for (let i = 0; i < group.reports.length; i += QUERIES_PER_CALL) {
      const batch = group.reports.slice(i, i + QUERIES_PER_CALL);
      const queries: MetricDataQuery[] = batch.map((report, j) => ({
        Id: `r${j}`,
        ReturnData: true,
        MetricStat: {
          Metric: {
            Namespace: METRIC_NAMESPACE,
            MetricName: MetricName.LoadsCompleted,
            Dimensions: [
              { Name: Dimension.service, Value: request.service },
              { Name: Dimension.connection, Value: report.connection },
              { Name: Dimension.report, Value: report.id },
              { Name: Dimension.environment, Value: request.environment },
            ],
          },
          Period: group.hours * 3600,
          Stat: 'Sum',
        },
      }));
      let token: string | undefined;
      do {
        const page = await cloudWatch.send(new GetMetricDataCommand({ MetricDataQueries: queries, StartTime: start, EndTime: request.now, NextToken: token }));
        for (const result of page.MetricDataResults ?? []) {
          const report = batch[Number(result.Id?.slice(1))];
          if (!report) continue;
          const sum = (result.Values ?? []).reduce((a, b) => a + b, 0);
          loads.set(report.id, (loads.get(report.id) ?? 0) + sum);
        }
        token = page.NextToken;
      } while (token);
    }
  }
  return loads;
}
