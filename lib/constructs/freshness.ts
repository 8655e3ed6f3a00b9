import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { PREFIX } from '../../functions/core/lake/s3-keys.js';
import { NAME_PREFIX } from '../../functions/core/naming.js';
import { LAMBDA_BUNDLES } from '../bundling/bundling.js';
import { DEAD_LETTER_QUEUE } from '../policies/dead-letters.js';
import { grantObjectRead } from '../policies/grants.js';
import { FunctionTarget, schedulerRole } from '../policies/scheduler-targets.js';
import { PipelineFunction, functionSettingsOf, type FunctionSettings } from './pipeline-function.js';

/**
 * How often the freshness check runs. Each run writes ReportStale for every late report, and the no-fresh-data alarms
 * take the maximum over an hour (lib/constructs/alarms.ts): four runs an hour leave no gap for a late or failed run to
 * turn a contributor OK and notify twice, and a report is named within about a quarter of an hour of its deadline.
 */
export const FRESHNESS_CHECK_EVERY = Duration.minutes(15);

/**
 * The Scheduler's retries of an invocation it could not deliver (throttled, the role or the function refused), with
 * backoff, within one period: a run that cannot be delivered before the next is due goes to the dead-letter queue.
 */
export const FRESHNESS_RETRY_ATTEMPTS = 3;

/** Periods of the check without a single invocation before the freshness-not-running alarm fires. */
export const FRESHNESS_MISSED_PERIODS = 2;

export interface FreshnessProps extends FunctionSettings {
  /** Added to each report's window: a report is late when no load completed within both. */
  readonly grace: Duration;
  /** The check runs only while the environment's schedules do: nothing is expected of a report before that. */
  readonly schedulesEnabled: boolean;
  /** Encrypts the log group and the schedule's dead-letter queue. */
  readonly key: kms.IKey;
  /** Holds the load manifests the check reads (manifests/). */
  readonly curatedBucket: s3.IBucket;
  /** The environment's schedule group (lib/constructs/fetch.ts): `reports status` reads every schedule of it. */
  readonly scheduleGroup: scheduler.IScheduleGroup;
  /** Handler module; defaults to functions/check-freshness/handler.ts. */
  readonly entry?: string;
}

/**
 * The freshness check (functions/check-freshness/handler.ts) and the schedule that runs it. It replaces an alarm per
 * report on a per-report metric of its loads: a report that stops loading leaves no series for a grouped alarm to see,
 * while the catalog the check carries still names it, and its manifests say when it last loaded.
 */
export class Freshness extends Construct {
  readonly function: PipelineFunction;
  readonly schedule: scheduler.Schedule;
  /** Invocations the Scheduler could not deliver after its retries, with the error (lib/constructs/alarms.ts alarms on it). */
  readonly deadLetterQueue: sqs.Queue;
  private readonly environment: string;
  private readonly schedulesEnabled: boolean;

  constructor(scope: Construct, id: string, props: FreshnessProps) {
    super(scope, id);
    this.function = new PipelineFunction(this, 'Check', {
      ...functionSettingsOf(props),
      entry: props.entry ?? LAMBDA_BUNDLES.freshness.entry,
      description: 'paynet-reports: name the reports with no completed load within their window plus the grace',
      logKey: props.key,
      environmentVariables: { FRESHNESS_GRACE_HOURS: String(props.grace.toHours()), CURATED_BUCKET: props.curatedBucket.bucketName },
    });
    this.grantManifestReads(props.curatedBucket);

    this.environment = props.environment;
    this.schedulesEnabled = props.schedulesEnabled;
    this.deadLetterQueue = new sqs.Queue(this, 'ScheduleDeadLetters', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14), // the longest SQS allows: time to notice and read the error
      removalPolicy: props.removalPolicy,
      ...DEAD_LETTER_QUEUE,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is itself a dead-letter queue (of the freshness check's schedule), not a work queue.",
    });

    const role = schedulerRole(this, 'SchedulerRole', `paynet-reports ${props.environment}: EventBridge Scheduler runs the freshness check`);
    // The target grants the role sqs:SendMessage on the dead-letter queue; the queue is KMS-encrypted, so sending needs the key too.
    props.key.grant(role, 'kms:GenerateDataKey', 'kms:Decrypt');
    this.schedule = new scheduler.Schedule(this, 'Schedule', {
      scheduleGroup: props.scheduleGroup,
      description: `paynet-reports ${props.environment}: the freshness check, every ${FRESHNESS_CHECK_EVERY.toMinutes()} minutes`,
      schedule: scheduler.ScheduleExpression.rate(FRESHNESS_CHECK_EVERY),
      // Off while the schedules are: once they are switched on, the first check names every report not loaded in time,
      // an OK -> ALARM transition CloudWatch notifies on (as the per-report alarms it replaces did).
      enabled: props.schedulesEnabled,
      // The run's own time, not the moment it starts: a run the Scheduler delays judges the quarter-hour it stands for.
      // The Scheduler retries what it could not deliver within the period, then leaves the event and its error in the
      // dead-letter queue (alarm dead-letters-freshness-check). A run that was delivered and failed is the function's
      // error (alarm freshness-errors); the next run comes within minutes.
      target: new FunctionTarget(this.function.function, {
        role,
        retryAttempts: FRESHNESS_RETRY_ATTEMPTS,
        maxEventAge: FRESHNESS_CHECK_EVERY,
        deadLetterQueue: this.deadLetterQueue,
        input: scheduler.ScheduleTargetInput.fromObject({ scheduledTime: scheduler.ContextAttribute.scheduledTime }),
      }),
    });
    // The group is named by a plain string: without the dependency the schedule may be created first and fail.
    this.schedule.node.addDependency(props.scheduleGroup);
  }

  /**
   * The watchdog's own watchdog: an alarm when the check has not been invoked for FRESHNESS_MISSED_PERIODS of its periods
   * (Lambda's Invocations, missing data breaching: a check that is never invoked writes no data point at all), whatever
   * stopped it: the schedule disabled or deleted, its role changed, the function throttled or gone. Without it, every
   * no-fresh-data alarm would rest in OK while nothing arrives. While the schedules are off nothing is expected, so
   * missing data is then not breaching. Named with the stack's alarm prefix, so that the topic takes its notifications.
   */
  alarmWhenNotRunning(topic: sns.ITopic): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, 'NotRunning', {
      alarmName: `${NAME_PREFIX}-${this.environment}-freshness-not-running`,
      alarmDescription:
        `The freshness check has not run for ${FRESHNESS_MISSED_PERIODS * FRESHNESS_CHECK_EVERY.toMinutes()} minutes, so the no-fresh-data alarms cannot fire. ` +
        'Check that its schedule is enabled, the dead-letter queue dead-letters-freshness-check (the Scheduler leaves its error there), ' +
        'and the function\'s throttles (docs/operations.md, "Alarms").',
      metric: this.function.function.metricInvocations({ period: FRESHNESS_CHECK_EVERY, statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: FRESHNESS_MISSED_PERIODS,
      datapointsToAlarm: FRESHNESS_MISSED_PERIODS,
      treatMissingData: this.schedulesEnabled ? cloudwatch.TreatMissingData.BREACHING : cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    // Alarm and recovery both notify, as every alarm of the stack does.
    alarm.addAlarmAction(new actions.SnsAction(topic));
    alarm.addOkAction(new actions.SnsAction(topic));
    return alarm;
  }

  /**
   * The manifests and nothing else of the curated bucket: GetObject under manifests/, and ListBucket only for
   * listings of manifests/ (a listing carries its prefix as s3:prefix, so the condition narrows it; a GET's existence
   * check carries none, which is why the parse function's ListBucket cannot be narrowed this way).
   */
  private grantManifestReads(bucket: s3.IBucket): void {
    grantObjectRead(this.function.function, bucket, [PREFIX.manifests]);
    this.function.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn], conditions: { StringLike: { 's3:prefix': [`${PREFIX.manifests}*`] } } }),
    );
    Validations.of(this.function.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray active tracing (xray:PutTraceSegments, xray:PutTelemetryRecords), which supports no resource-level permissions.',
    });
  }
}
