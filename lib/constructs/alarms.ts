import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { NAME_PREFIX } from '../../functions/core/naming.js';
import { parseWindowSize } from '../../functions/core/time/window.js';
import { fetchOutcomeMetric, MetricName, reportMetric } from '../metrics.js';

/** A report as the alarms see it: its id and its window ("P1D", "PT6H"). */
export interface WatchedReport {
  readonly id: string;
  readonly window: string;
}

export interface AlarmsProps {
  readonly environment: string;
  readonly fetchFunction: lambda.IFunction;
  readonly parseFunction: lambda.IFunction;
  /** Every dead-letter queue of the pipeline, by a short readable name ("schedule", "fetch-failures", "parse"). */
  readonly deadLetterQueues: Record<string, sqs.IQueue>;
  readonly reports: readonly WatchedReport[];
  /** Encrypts the topic; CloudWatch is allowed to use it to publish. */
  readonly key: kms.IKey;
  readonly emails: readonly string[];
  /** Added to each report's window before "no fresh data" alarms. */
  readonly freshnessGrace: Duration;
  /**
   * Whether the schedules run. While they do not, the freshness alarms treat missing data as not breaching, so
   * they rest in OK; turning the schedules on makes missing data breaching, and an alarm with nothing loading
   * then goes from OK to ALARM, a transition, which is what CloudWatch notifies on.
   */
  readonly schedulesEnabled: boolean;
}

/** CloudWatch alarms evaluate at most 7 days (period x evaluation periods). */
const MAX_EVALUATION = Duration.days(7);

export const windowDuration = (window: string): Duration => {
  const size = parseWindowSize(window);
  return size.unit === 'day' ? Duration.days(size.count) : Duration.hours(size.count);
};

/**
 * The alarms and where they go: an SNS topic (KMS-encrypted, TLS only) with e-mail subscriptions.
 * Failed runs (function errors), dead letters (any message in any dead-letter queue), and per report:
 * the gateway refusing the credentials, rejected rows, freshness (no completed load within the
 * report's window plus a grace), and data quality (a load whose checks found something). The README ("Alarms: what each means, what to do") has the table of what each means and what to do.
 */
export class Alarms extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: `paynet-reports ${props.environment} alarms`,
      masterKey: props.key,
      enforceSSL: true,
    });
    for (const email of props.emails) this.topic.addSubscription(new subscriptions.EmailSubscription(email));
    const prefix = `${NAME_PREFIX}-${props.environment}`;
    // Only this stack's alarms (their names all start with the prefix) may publish, not any alarm of the account.
    this.allowCloudWatchAlarms(`${prefix}-`);
    this.allowCloudWatchToUseKey(props.key);

    this.addFunctionErrorAlarms(prefix, props);
    this.addDeadLetterAlarms(prefix, props.deadLetterQueues);
    for (const report of props.reports) {
      this.addAuthRefusedAlarm(prefix, report, props.environment);
      this.addRejectedRowsAlarm(prefix, report, props.environment);
      this.addDataQualityAlarm(prefix, report, props.environment);
      this.addFreshnessAlarm(prefix, report, props);
    }
  }

  /** Alarm and recovery both notify, so a mail thread shows when a problem ended. */
  private addAlarm(alarmId: string, alarmProps: cloudwatch.AlarmProps): void {
    const alarm = new cloudwatch.Alarm(this, alarmId, alarmProps);
    const action = new actions.SnsAction(this.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
  }

  private addFunctionErrorAlarms(prefix: string, props: AlarmsProps): void {
    for (const [name, fn] of [
      ['fetch', props.fetchFunction],
      ['parse', props.parseFunction],
    ] as const) {
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
   * The fetch-errors alarm fires too, but says only "failed": this one names the cause, the one failure that
   * needs a person with the provider's credentials (expired, rotated or revoked) and that no retry fixes.
   */
  private addAuthRefusedAlarm(prefix: string, report: WatchedReport, environment: string): void {
    this.addAlarm(`auth-refused-${report.id}`, {
      alarmName: `${prefix}-auth-refused-${report.id}`,
      alarmDescription:
        `Report "${report.id}": the gateway refused the credentials ("not authorised"). Check with the provider that the login ` +
        'is active and the key current, then put the right value into the Secrets Manager secret; the next run (or a backfill) picks it up.',
      metric: fetchOutcomeMetric(environment, report.id, 'AuthenticationRefused', { period: Duration.minutes(5) }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  private addRejectedRowsAlarm(prefix: string, report: WatchedReport, environment: string): void {
    this.addAlarm(`rejected-rows-${report.id}`, {
      alarmName: `${prefix}-rejected-rows-${report.id}`,
      alarmDescription: `Report "${report.id}": rows failed typing and were quarantined under rejected/${report.id}/ with line numbers and reasons.`,
      metric: reportMetric(MetricName.RowsRejected, environment, report.id, { period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** A load that succeeded but looks wrong: no other alarm sees it, since nothing failed. */
  private addDataQualityAlarm(prefix: string, report: WatchedReport, environment: string): void {
    this.addAlarm(`data-quality-${report.id}`, {
      alarmName: `${prefix}-data-quality-${report.id}`,
      alarmDescription:
        `Report "${report.id}": a window loaded, but its data checks found something: rows (or the sum) far from the same weekday ` +
        'or hour of earlier weeks, a header-only file where rows are usual, or repeated keys. The data was kept as sent. ' +
        `Which window and what was off: \`npm run reports -- status --environment ${environment}\`, the dashboard's findings table, ` +
        `or the parse log line "Data quality finding"; each check's value and band are in the window's manifest (manifests/${report.id}/). ` +
        'The OK that follows means no newer finding, not that the window was fixed: re-fetch it once the provider has.',
      metric: reportMetric(MetricName.QualityFindings, environment, report.id, { period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING, // no loads, nothing to judge
    });
  }

  private addFreshnessAlarm(prefix: string, report: WatchedReport, props: AlarmsProps): void {
    const period = windowDuration(report.window).plus(props.freshnessGrace);
    if (period.toSeconds() > MAX_EVALUATION.toSeconds()) {
      throw new Error(
        `Report "${report.id}": window ${report.window} plus ${props.freshnessGrace.toHours()} h grace is longer than the 7 days a CloudWatch alarm can look back; shorten the window or the grace.`,
      );
    }
    this.addAlarm(`freshness-${report.id}`, {
      alarmName: `${prefix}-no-fresh-data-${report.id}`,
      alarmDescription:
        `Report "${report.id}": no window was loaded in the last ${period.toHours()} h (window ${report.window} + grace). ` +
        'Check the fetch and parse alarms and logs, the dead-letter queues, and that the schedule is enabled.',
      // Completed loads, not rows: a day without sales (header-only report) and a PDF report write no rows
      // and must not alarm; a load that failed emits nothing and must.
      metric: reportMetric(MetricName.LoadsCompleted, props.environment, report.id, { period }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // With schedules on, no data point at all is exactly what this alarm is about. With them off nothing is
      // expected: OK, not ALARM, so that switching them on is a transition CloudWatch notifies on (an alarm
      // already in ALARM when its actions are switched on never notifies).
      treatMissingData: props.schedulesEnabled ? cloudwatch.TreatMissingData.BREACHING : cloudwatch.TreatMissingData.NOT_BREACHING,
    });
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

  /** CloudWatch publishes to an encrypted topic with the topic's key: the key policy must let it (for this account only). */
  private allowCloudWatchToUseKey(key: kms.IKey): void {
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToPublish',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'], // in a key policy "*" means this key
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
  }
}
