import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LOAD_LOG_MESSAGE } from '../../functions/core/lake/load-manifest.js';
import { FINDING_LOG_MESSAGE } from '../../functions/core/quality/checks.js';
import { connectionScopes, reportsByConnection, type ConnectionScope } from './dashboard/connection-scopes.js';
import { conditionBudget, HAS_CONNECTION_DIMENSION } from './dashboard/insights.js';
import { chosenConnectionRows, connectionVariable, perConnectionRows, worstReportsRows } from './dashboard/report-widgets.js';
import { environmentMetric, fetchOutcomesSearch, MetricName } from '../metrics.js';

/** A report as the dashboard needs it: its id and the connection it is fetched over. */
export interface DashboardReport {
  readonly id: string;
  readonly connection: string;
}

export interface DashboardProps {
  readonly environment: string;
  readonly fetchFunction: lambda.IFunction;
  readonly parseFunction: lambda.IFunction;
  /** The work queue between the raw bucket and the parse function. */
  readonly parseQueue: sqs.IQueue;
  readonly deadLetterQueues: Record<string, sqs.IQueue>;
  /** Each connection's queue of scheduled runs, by connection name (lib/constructs/fetch-queues.ts). */
  readonly connectionQueues?: ReadonlyMap<string, sqs.IQueue>;
  readonly reports: readonly DashboardReport[];
  /** The parse function's log group: its "Data quality finding" lines name the flagged windows. */
  readonly parseLogGroup: logs.ILogGroup;
}

/** Daily reports: an hour per point keeps a two-week view readable. */
const PERIOD = Duration.hours(1);
const WIDTH = 12; // two graphs per row (the grid is 24 wide)
const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
  new cloudwatch.GraphWidget({ title, left, right, width: WIDTH, height: 6, period: PERIOD });
const heading = (markdown: string, height = 1) => new cloudwatch.TextWidget({ markdown, width: 24, height });
const depth = (label: string, q: sqs.IQueue) =>
  q.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM, label });
const oldest = (label: string, q: sqs.IQueue) =>
  q.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM, label });

/**
 * One CloudWatch dashboard per environment, the same widgets at 1 report and at 500: runs and durations of both
 * functions; the reports' metrics per connection, the environment's worst reports, and the reports of the connection
 * chosen in the `connection` drop-down, all Metrics Insights queries (a widget per report, or a line each, would outgrow
 * CloudWatch's limits: lib/constructs/dashboard/limits.ts); a table of the flagged windows from the parse log (a metric
 * cannot say which window); the queues (work, dead letters, each connection's scheduled runs).
 */
export class PipelineDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;
  /** What each connection line and drop-down entry covers, for tests and operators' questions. */
  readonly scopes: readonly ConnectionScope[];

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const env = props.environment;
    this.scopes = connectionScopes(reportsByConnection(props.reports), { maxConditionLength: conditionBudget(env), byDimension: HAS_CONNECTION_DIMENSION });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `paynet-reports-${env}`,
      defaultInterval: Duration.days(14),
      // A drop-down needs entries: an environment with no report has none to offer.
      variables: this.scopes.length ? [connectionVariable(this.scopes)] : [],
    });
    const context = { environment: env, period: PERIOD, scopes: this.scopes };
    const rows = [
      [this.introduction(env)],
      this.runs(props),
      ...this.volumes(env),
      [heading('## Per connection\nEach line is a connection\'s reports together ("acme 2/3": the second part of a connection whose reports take more than one query).', 2)],
      ...perConnectionRows(context),
      [heading('## Reports to look at first, whatever their connection')],
      ...worstReportsRows(context),
      [heading('## Reports of the connection chosen in the `connection` drop-down above, one line each')],
      ...chosenConnectionRows(context),
      [this.newestLoads(props.parseLogGroup)],
      [this.findings(props.parseLogGroup)],
      ...this.queues(props),
    ];
    for (const row of rows) this.dashboard.addWidgets(...row);
  }

  private introduction(env: string): cloudwatch.IWidget {
    return heading(
      `# paynet-reports ${env}\nScheduled fetches, parses into Parquet, and the data they land. Alarms go to the SNS topic of this stack. ` +
        'Pick a connection in the `connection` drop-down to see its reports one by one.',
      2,
    );
  }

  private runs({ fetchFunction: fetch, parseFunction: parse }: DashboardProps): cloudwatch.IWidget[] {
    const p = { period: PERIOD };
    const durations = (fn: lambda.IFunction, name: string) => [
      fn.metricDuration({ ...p, statistic: cloudwatch.Stats.percentile(50), label: `${name} p50` }),
      fn.metricDuration({ ...p, statistic: cloudwatch.Stats.MAXIMUM, label: `${name} max` }),
    ];
    return [
      graph('Runs: fetch (invocations, errors; duration ms p50 / max)', [fetch.metricInvocations(p), fetch.metricErrors(p)], durations(fetch, 'fetch')),
      graph('Runs: parse (invocations, errors; duration ms p50 / max)', [parse.metricInvocations(p), parse.metricErrors(p)], durations(parse, 'parse')),
    ];
  }

  /** What the environment moved, every report together: these series carry no report dimension (functions/aws/metrics.ts). */
  private volumes(env: string): cloudwatch.IWidget[][] {
    const total = (name: Exclude<MetricName, 'FetchOutcome'>, statistic: string, label: string) => environmentMetric(name, env, { statistic, period: PERIOD, label });
    return [
      [
        graph('Fetch outcomes, every report (windows: Success and each error code)', [fetchOutcomesSearch(env, PERIOD)]),
        graph('Rows written and bytes fetched, every report', [total(MetricName.RowsWritten, cloudwatch.Stats.SUM, 'rows written')], [total(MetricName.FetchBytes, cloudwatch.Stats.SUM, 'bytes')]),
      ],
      [
        graph('Loads completed, every report (windows, CSV or PDF)', [total(MetricName.LoadsCompleted, cloudwatch.Stats.SUM, 'loads')]),
        graph('Load lag, every report (s, window end to Parquet, max)', [total(MetricName.LoadLagSeconds, cloudwatch.Stats.MAXIMUM, 'max lag (s)')]),
      ],
    ];
  }

  /**
   * Every report that loaded in the dashboard's range, with its newest load, from the parse log: no metric per report
   * is written while it is healthy (functions/aws/metrics.ts), and a log query costs only when someone looks. The
   * freshness check reads the manifests instead; this table is for reading, not alarming.
   */
  private newestLoads(parseLogGroup: logs.ILogGroup): cloudwatch.IWidget {
    const messages = Object.values(LOAD_LOG_MESSAGE).map((m) => `"${m}"`).join(', ');
    return new cloudwatch.LogQueryWidget({
      title: 'Newest load of each report, by connection (parse log; a report missing here loaded nothing in the range)',
      logGroupNames: [parseLogGroup.logGroupName],
      view: cloudwatch.LogQueryVisualizationType.TABLE,
      queryLines: [
        'fields @timestamp, connection, report, window',
        `filter message in [${messages}]`,
        'stats max(@timestamp) as newestLoad, latest(window) as newestWindow, count(*) as loads by connection, report',
        'sort connection asc, report asc',
        // Logs Insights' most rows: every report of a catalog within its documented size.
        'limit 10000',
      ],
      width: 24,
      height: 8,
    });
  }

  private findings(parseLogGroup: logs.ILogGroup): cloudwatch.IWidget {
    return new cloudwatch.LogQueryWidget({
      title: `Flagged windows, newest first (parse log "${FINDING_LOG_MESSAGE}")`,
      logGroupNames: [parseLogGroup.logGroupName],
      view: cloudwatch.LogQueryVisualizationType.TABLE,
      // Field names are the parse logger's keys (functions/parse-report/parse-object.ts).
      queryLines: ['fields @timestamp, report, window, finding', `filter message = "${FINDING_LOG_MESSAGE}"`, 'sort @timestamp desc', 'limit 50'],
      width: 24,
      height: 6,
    });
  }

  private queues(props: DashboardProps): cloudwatch.IWidget[][] {
    const rows: cloudwatch.IWidget[][] = [
      [
        graph('Dead-letter queues (messages visible)', Object.entries(props.deadLetterQueues).map(([name, q]) => depth(name, q))),
        graph('Raw-files queue (visible; oldest message age, s)', [depth('visible', props.parseQueue)], [oldest('oldest (s)', props.parseQueue)]),
      ],
    ];
    // Runs waiting for their connection's bound: a queue that stays long means its reports outgrew maxConcurrentRequests.
    const connections = [...(props.connectionQueues ?? new Map<string, sqs.IQueue>())];
    if (connections.length) {
      rows.push([
        graph(
          'Scheduled runs waiting per connection (visible; oldest, s)',
          connections.map(([name, q]) => depth(name, q)),
          connections.map(([name, q]) => oldest(`${name} oldest (s)`, q)),
        ),
      ]);
    }
    return rows;
  }
}
