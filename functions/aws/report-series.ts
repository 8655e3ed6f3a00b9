import { GetMetricDataCommand, type CloudWatchClient, type MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import type { LookbackGroup } from '../core/freshness/stale-reports.js';
import { Dimension, METRIC_NAMESPACE, MetricName } from './metrics.js';

/**
 * Reading one metric's per-report series back from CloudWatch (functions/aws/metrics.ts writes them with
 * {service, connection, environment, report}, plus `outcome` for FetchOutcome): the freshness check reads completed
 * loads, `reports status` the newest refusal. One query per report, 500 to a call (GetMetricData's most), every page.
 */

/** GetMetricData takes at most 500 queries per call. */
const QUERIES_PER_CALL = 500;

export interface ReportSeriesRequest {
  metric: MetricName;
  service: string;
  environment: string;
  /** FetchOutcome only: which outcome's series. */
  outcome?: string;
  reports: ReadonlyArray<{ id: string; connection: string }>;
  start: Date;
  end: Date;
  /** Seconds per data point (Sum). */
  period: number;
}

/** Every data point of every report's series in the range, handed to `onPoint` (reports with no series get none). */
export async function readReportSeries(
  cloudWatch: CloudWatchClient,
  r: ReportSeriesRequest,
  onPoint: (reportId: string, value: number, timestamp: Date) => void,
): Promise<void> {
  for (let i = 0; i < r.reports.length; i += QUERIES_PER_CALL) {
    const batch = r.reports.slice(i, i + QUERIES_PER_CALL);
    const queries: MetricDataQuery[] = batch.map((report, j) => ({
      Id: `r${j}`,
      ReturnData: true,
      MetricStat: {
        Metric: {
          Namespace: METRIC_NAMESPACE,
          MetricName: r.metric,
          Dimensions: [
            { Name: Dimension.service, Value: r.service },
            { Name: Dimension.connection, Value: report.connection },
            { Name: Dimension.report, Value: report.id },
            { Name: Dimension.environment, Value: r.environment },
            ...(r.outcome === undefined ? [] : [{ Name: Dimension.outcome, Value: r.outcome }]),
          ],
        },
        Period: r.period,
        Stat: 'Sum',
      },
    }));
    let token: string | undefined;
    do {
      const page = await cloudWatch.send(new GetMetricDataCommand({ MetricDataQueries: queries, StartTime: r.start, EndTime: r.end, NextToken: token }));
      for (const result of page?.MetricDataResults ?? []) {
        const report = batch[Number(result.Id?.slice(1))];
        if (!report) continue;
        (result.Values ?? []).forEach((value, k) => onPoint(report.id, value, result.Timestamps?.[k] ?? r.end));
      }
      token = page?.NextToken;
    } while (token);
  }
}

/**
 * Completed loads per report within each group's look-back, from LoadsCompleted: a single period spanning the
 * look-back, so CloudWatch returns at most a point or two per report. A report with no series at all (it never loaded,
 * or not for 15 months) counts 0.
 */
export async function completedLoads(
  cloudWatch: CloudWatchClient,
  request: { environment: string; service: string; groups: readonly LookbackGroup[]; now: Date },
): Promise<Map<string, number>> {
  const loads = new Map<string, number>();
  for (const group of request.groups) {
    const { environment, service, now } = request;
    const range = { start: new Date(now.getTime() - group.hours * 3_600_000), end: now, period: group.hours * 3600 };
    await readReportSeries(cloudWatch, { metric: MetricName.LoadsCompleted, service, environment, reports: group.reports, ...range }, (id, value) =>
      loads.set(id, (loads.get(id) ?? 0) + value),
    );
  }
  return loads;
}
