import { GetMetricDataCommand, type CloudWatchClient, type MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import { Dimension, METRIC_NAMESPACE, MetricName } from './metrics.js';

/**
 * Reading one metric's per-report series back from CloudWatch (functions/aws/metrics.ts writes them with
 * {service, connection, environment, report}, plus `outcome` for FetchOutcome): `reports status` reads the newest
 * refusal. One query per report, 500 to a call (GetMetricData's most), every page.
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
