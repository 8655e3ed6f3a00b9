import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { NAME_PREFIX } from '../../functions/core/naming.js';
import { MetricName, perReportQuery } from '../metrics.js';

export interface AlarmsProps {
  readonly environment: string;
  readonly fetchFunction: lambda.IFunction;
  readonly parseFunction: lambda.IFunction;
  /** The freshness check (lib/constructs/freshness.ts): its failure would silence the no-fresh-data alarms. */
  readonly freshnessFunction?: lambda.IFunction;
  /** Every dead-letter queue of the pipeline, by a short readable name ("schedule", "fetch-failures", "parse"). */
  readonly deadLetterQueues: Record<string, sqs.IQueue>;
  /** The connections by name: one alarm of each per-report kind per connection, its reports the contributors. */
  readonly connections: readonly string[];
  /** Encrypts the topic; CloudWatch is allowed to use it to publish. */
  readonly key: kms.IKey;
}

/** The per-report kinds: each is one Metrics Insights alarm per connection, grouped by report. */
interface ReportAlarmKind {
  readonly name: string;
  readonly metric: MetricName;
  readonly aggregate: 'SUM' | 'MAX';
  readonly outcome?: string;
  /** Breaching at or above this value. */
  readonly threshold: number;
  readonly period: Duration;
  readonly description: (connection: string, environment: string) => string;
}

const WHICH_REPORTS = (environment: string) =>
  `The reports are the alarm's contributors: named in the notification's "StateReason" and in \`npm run reports -- status --environment ${environment}\` (docs/operations.md, "Reading a multi-report alarm").`;

/**
 * What alarms per report, per connection. Auth refused: the fetch-errors alarm fires too, but says only "failed";
 * this one names the cause, the one failure that needs a person with the provider's credentials. Data quality: a
 * load that succeeded but looks wrong, which no other alarm sees. No fresh data: the freshness check's ReportStale,
 * written each run for every report with no completed load within its window plus the grace (a report that stops
 * loading writes nothing at all, so no alarm on its own series could see it).
 */
const REPORT_ALARMS: readonly ReportAlarmKind[] = [
  {
    name: 'auth-refused',
    metric: MetricName.FetchOutcome,
    aggregate: 'SUM',
    outcome: 'AuthenticationRefused',
    threshold: 1,
    period: Duration.minutes(5),
    description: (connection, environment) =>
      `Connection "${connection}": the gateway refused the credentials ("not authorised") for the reports named. Check with the provider that the login ` +
      `is active and the key current, then put the right value into the connection's Secrets Manager secret; the next run (or a backfill) picks it up. ${WHICH_REPORTS(environment)}`,
  },
  {
    name: 'rejected-rows',
    metric: MetricName.RowsRejected,
    aggregate: 'SUM',
    threshold: 1,
    period: Duration.minutes(5),
    description: (connection, environment) =>
      `Connection "${connection}": rows of the reports named failed typing and were quarantined under rejected/<report>/ with line numbers and reasons. ${WHICH_REPORTS(environment)}`,
  },
  {
    name: 'data-quality',
    metric: MetricName.QualityFindings,
    aggregate: 'SUM',
    threshold: 1,
    period: Duration.minutes(5),
    description: (connection, environment) =>
      `Connection "${connection}": a window of each report named loaded, but its data checks found something: rows (or the sum) far from the same weekday ` +
      'or hour of earlier weeks, a header-only file where rows are usual, or repeated keys. The data was kept as sent. ' +
      `Which window and what was off: \`npm run reports -- status --environment ${environment}\`, the dashboard's findings table, ` +
      'or the parse log line "Data quality finding"; each check\'s value and band are in the window\'s manifest (manifests/<report>/). ' +
      'The OK that follows means no newer finding, not that the window was fixed: re-fetch it once the provider has.',
  },
  {
    name: 'no-fresh-data',
    metric: MetricName.ReportStale,
    aggregate: 'MAX',
    threshold: 1,
    // The check runs every FRESHNESS_CHECK_EVERY: an hour holds several of its points, so a late run leaves no gap.
    period: Duration.hours(1),
    description: (connection, environment) =>
      `Connection "${connection}": no window of the reports named was loaded within its window plus freshnessGraceHours. ` +
      `Check the fetch and parse alarms and logs, the dead-letter queues, and that the schedules are enabled. ${WHICH_REPORTS(environment)}`,
  },
];

/**
 * The alarms and where they go: an SNS topic (KMS-encrypted, TLS only) every channel of the environment subscribes to
 * (lib/constructs/alarm-channels/).
 * Failed runs (function errors, the freshness check's too), dead letters (any message in any dead-letter queue), and
 * per connection one Metrics Insights alarm of each per-report kind (REPORT_ALARMS), `GROUP BY report`: each report
 * a contributor, so the count is flat in the number of reports (docs/architecture.md, "Alarms that do not grow per report").
 */
export class Alarms extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.CfnAlarm[] = [];

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: `paynet-reports ${props.environment} alarms`,
      masterKey: props.key,
      enforceSSL: true,
    });
    const prefix = `${NAME_PREFIX}-${props.environment}`;
    // Only this stack's alarms (their names all start with the prefix) may publish, not any alarm of the account.
    this.allowCloudWatchAlarms(`${prefix}-`);
    this.allowCloudWatchToUseKey(props.key);

    this.addFunctionErrorAlarms(prefix, props);
    this.addDeadLetterAlarms(prefix, props.deadLetterQueues);
    for (const connection of props.connections) {
      for (const kind of REPORT_ALARMS) this.addReportAlarm(prefix, kind, connection, props.environment);
    }
  }

  /** Alarm and recovery both notify, so a mail thread shows when a problem ended. */
  private addAlarm(alarmId: string, alarmProps: cloudwatch.AlarmProps): void {
    const alarm = new cloudwatch.Alarm(this, alarmId, alarmProps);
    const action = new actions.SnsAction(this.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm.node.defaultChild as cloudwatch.CfnAlarm);
  }

  private addFunctionErrorAlarms(prefix: string, props: AlarmsProps): void {
    const functions = [['fetch', props.fetchFunction], ['parse', props.parseFunction]] as Array<[string, lambda.IFunction]>;
    if (props.freshnessFunction) functions.push(['freshness', props.freshnessFunction]);
    for (const [name, fn] of functions) {
      this.addAlarm(`${name}-errors`, {
        alarmName: `${prefix}-${name}-errors`,
        alarmDescription: `The ${name} function failed (threw or timed out). Its log group has the typed error saying what to do.`,
        metric: fn.metricErrors({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING, // no invocations, no failures
      });
    }
  }

  private addDeadLetterAlarms(prefix: string, deadLetterQueues: Record<string, sqs.IQueue>): void {
    for (const [name, queue] of Object.entries(deadLetterQueues)) {
      this.addAlarm(`dead-letters-${name}`, {
        alarmName: `${prefix}-dead-letters-${name}`,
        alarmDescription: `Messages wait in the ${name} dead-letter queue: a run or a file was given up on. Inspect, fix, then re-drive or purge.`,
        metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }
  }

  /**
   * One Metrics Insights alarm: a multi-time-series alarm whose contributors are the connection's reports in breach.
   * CDK's Alarm takes no Metrics Insights query, hence the CfnAlarm. Missing data is not breaching: the per-report
   * series are written only when something is wrong, so a healthy connection returns no series at all.
   */
  private addReportAlarm(prefix: string, kind: ReportAlarmKind, connection: string, environment: string): void {
    const action = this.topic.topicArn;
    const alarm = new cloudwatch.CfnAlarm(this, `${kind.name}-${connection}`, {
      alarmName: `${prefix}-${kind.name}-${connection}`,
      alarmDescription: kind.description(connection, environment),
      metrics: [
        {
          id: 'reports',
          expression: perReportQuery(kind.metric, { environment, connection, outcome: kind.outcome }, kind.aggregate),
          period: kind.period.toSeconds(),
          returnData: true,
        },
      ],
      threshold: kind.threshold,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: 'notBreaching',
      alarmActions: [action],
      okActions: [action],
    });
    this.alarms.push(alarm);
  }

  /**
   * An AWS::SNS::TopicPolicy replaces the topic's default policy, whose same-account Allow is what lets
   * CloudWatch publish; CDK writes one for enforceSSL (the TLS deny), so the Allow has to be explicit: only
   * this stack's alarms (aws:SourceArn: this account, this region, the alarm-name prefix) may publish.
   */
  private allowCloudWatchAlarms(alarmNamePrefix: string): void {
    const { account, region, partition } = Stack.of(this);
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarmsOfThisAccount',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': account },
          ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:${alarmNamePrefix}*` },
        },
      }),
    );
  }

  /**
   * CloudWatch publishes to an encrypted topic with the topic's key: the key policy must let it. The statement is
   * the one AWS's SNS guide gives for AWS services publishing to encrypted topics ("Enable compatibility between
   * event sources from AWS services and encrypted topics"), word for word: no condition. AWS documents no
   * aws:SourceAccount or aws:SourceArn on CloudWatch's KMS requests, and a condition they do not carry would
   * drop every alarm notification silently; the topic policy above is what scopes publishing to this stack's alarms.
   */
  private allowCloudWatchToUseKey(key: kms.IKey): void {
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToPublish',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:GenerateDataKey*', 'kms:Decrypt'],
        resources: ['*'], // in a key policy "*" means this key
      }),
    );
  }
}
