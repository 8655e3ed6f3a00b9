import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FINDING_LOG_MESSAGE } from '../../functions/core/quality/checks.js';
import { fetchOutcomesSearch, MetricName, reportMetric } from '../metrics.js';

export interface DashboardProps {
  readonly environment: string;
  readonly fetchFunction: lambda.IFunction;
  readonly parseFunction: lambda.IFunction;
  /** The work queue between the raw bucket and the parse function. */
  readonly parseQueue: sqs.IQueue;
  readonly deadLetterQueues: Record<string, sqs.IQueue>;
  /** Each connection's queue of scheduled runs, by connection name (lib/constructs/fetch-queues.ts). */
  readonly connectionQueues?: ReadonlyMap<string, sqs.IQueue>;
  readonly reportIds: readonly string[];
  /** The parse function's log group: its "Data quality finding" lines name the flagged windows. */
  readonly parseLogGroup: logs.ILogGroup;
}

/** Daily reports: an hour per point keeps a two-week view readable. */
const PERIOD = Duration.hours(1);
const WIDTH = 12; // two graphs per row (the grid is 24 wide)

/**
 * One CloudWatch dashboard per environment: runs and failures of both functions, fetch outcomes and
 * completed loads, rows written and rejected, bytes fetched, durations, load lag per report, the
 * queues (work and dead letters), and the data checks: findings and repeated keys per report, and a
 * table of the flagged windows (a metric cannot say which window; the parse log line does).
 */
export class PipelineDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const { environment: env, fetchFunction: fetch, parseFunction: parse, reportIds } = props;
    const perReport = (name: Parameters<typeof reportMetric>[0], statistic: string) =>
      reportIds.map((r) => reportMetric(name, env, r, { statistic, period: PERIOD, label: r }));
    const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
      new cloudwatch.GraphWidget({ title, left, right, width: WIDTH, height: 6, period: PERIOD });

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `paynet-reports-${env}`,
      defaultInterval: Duration.days(14),
    });
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# paynet-reports ${env}\nScheduled fetches, parses into Parquet, and the data they land. Alarms go to the SNS topic of this stack.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph('Runs: fetch (invocations, errors)', [fetch.metricInvocations({ period: PERIOD }), fetch.metricErrors({ period: PERIOD })]),
      graph('Runs: parse (invocations, errors)', [parse.metricInvocations({ period: PERIOD }), parse.metricErrors({ period: PERIOD })]),
    );
    this.dashboard.addWidgets(
      // Success, and every error code by name: AuthenticationRefused is the "credentials expired" signal.
      graph('Fetch outcomes per report (windows)', [fetchOutcomesSearch(env, PERIOD)]),
      graph('Loads completed per report (windows, CSV or PDF)', perReport(MetricName.LoadsCompleted, cloudwatch.Stats.SUM)),
    );
    this.dashboard.addWidgets(
      graph('Rows written per report', perReport(MetricName.RowsWritten, cloudwatch.Stats.SUM)),
      graph('Rows rejected per report', perReport(MetricName.RowsRejected, cloudwatch.Stats.SUM)),
    );
    this.dashboard.addWidgets(
      graph('Bytes fetched per report', perReport(MetricName.FetchBytes, cloudwatch.Stats.SUM)),
      graph('Load lag per report (s, window end to Parquet, max)', perReport(MetricName.LoadLagSeconds, cloudwatch.Stats.MAXIMUM)),
    );
    this.dashboard.addWidgets(
      graph('Duration (ms): fetch p50 / max', [
        fetch.metricDuration({ period: PERIOD, statistic: cloudwatch.Stats.percentile(50), label: 'fetch p50' }),
        fetch.metricDuration({ period: PERIOD, statistic: cloudwatch.Stats.MAXIMUM, label: 'fetch max' }),
      ]),
      graph('Duration (ms): parse p50 / max', [
        parse.metricDuration({ period: PERIOD, statistic: cloudwatch.Stats.percentile(50), label: 'parse p50' }),
        parse.metricDuration({ period: PERIOD, statistic: cloudwatch.Stats.MAXIMUM, label: 'parse max' }),
      ]),
    );
    this.dashboard.addWidgets(
      graph('Data check findings per report (windows flagged: volume, sum, repeated keys)', perReport(MetricName.QualityFindings, cloudwatch.Stats.SUM)),
      graph('Repeated keys per report (rows)', perReport(MetricName.DuplicateKeys, cloudwatch.Stats.SUM)),
    );
    this.dashboard.addWidgets(
      new cloudwatch.LogQueryWidget({
        title: `Flagged windows, newest first (parse log "${FINDING_LOG_MESSAGE}")`,
        logGroupNames: [props.parseLogGroup.logGroupName],
        view: cloudwatch.LogQueryVisualizationType.TABLE,
        // Field names are the parse logger's keys (functions/parse-report/parse-object.ts).
        queryLines: ['fields @timestamp, report, window, finding', `filter message = "${FINDING_LOG_MESSAGE}"`, 'sort @timestamp desc', 'limit 50'],
        width: 24,
        height: 6,
      }),
    );
    const depth = (label: string, q: sqs.IQueue) =>
      q.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM, label });
    this.dashboard.addWidgets(
      graph(
        'Dead-letter queues (messages visible)',
        Object.entries(props.deadLetterQueues).map(([name, q]) => depth(name, q)),
      ),
      graph(
        'Raw-files queue (visible; oldest message age, s)',
        [depth('visible', props.parseQueue)],
        [props.parseQueue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM, label: 'oldest (s)' })],
      ),
    );
    // Runs waiting for their connection's bound: a queue that stays long means its reports outgrew maxConcurrentRequests.
    const connections = [...(props.connectionQueues ?? new Map<string, sqs.IQueue>())];
    if (connections.length) {
      this.dashboard.addWidgets(
        graph(
          'Scheduled runs waiting per connection (visible; oldest, s)',
          connections.map(([name, q]) => depth(name, q)),
          connections.map(([name, q]) => q.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM, label: `${name} oldest (s)` })),
        ),
      );
    }
  }
}
