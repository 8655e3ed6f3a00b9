import { Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { PREFIX } from '../../functions/core/lake/s3-keys.js';
import { LAMBDA_BUNDLES } from '../bundling/bundling.js';
import { grantObjectRead } from '../policies/grants.js';
import { FunctionTarget, schedulerRole } from '../policies/scheduler-targets.js';
import { PipelineFunction, functionSettingsOf, type FunctionSettings } from './pipeline-function.js';

/**
 * How often the freshness check runs. Each run writes ReportStale for every late report, and the no-fresh-data alarms
 * take the maximum over an hour (lib/constructs/alarms.ts): four runs an hour leave no gap for a late or failed run to
 * turn a contributor OK and notify twice, and a report is named within about a quarter of an hour of its deadline.
 */
export const FRESHNESS_CHECK_EVERY = Duration.minutes(15);

export interface FreshnessProps extends FunctionSettings {
  /** Added to each report's window: a report is late when no load completed within both. */
  readonly grace: Duration;
  /** The check runs only while the environment's schedules do: nothing is expected of a report before that. */
  readonly schedulesEnabled: boolean;
  /** Encrypts the log group. */
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

    const role = schedulerRole(this, 'SchedulerRole', `paynet-reports ${props.environment}: EventBridge Scheduler runs the freshness check`);
    this.schedule = new scheduler.Schedule(this, 'Schedule', {
      scheduleGroup: props.scheduleGroup,
      description: `paynet-reports ${props.environment}: the freshness check, every ${FRESHNESS_CHECK_EVERY.toMinutes()} minutes`,
      schedule: scheduler.ScheduleExpression.rate(FRESHNESS_CHECK_EVERY),
      // Off while the schedules are: once they are switched on, the first check names every report not loaded in time,
      // an OK -> ALARM transition CloudWatch notifies on (as the per-report alarms it replaces did).
      enabled: props.schedulesEnabled,
      // The next run comes within minutes: a failed one is not retried, and its errors alarm (freshness-errors).
      // The run's own time, not the moment it starts: a run the Scheduler delays judges the quarter-hour it stands for.
      target: new FunctionTarget(this.function.function, {
        role,
        retryAttempts: 0,
        input: scheduler.ScheduleTargetInput.fromObject({ scheduledTime: scheduler.ContextAttribute.scheduledTime }),
      }),
    });
    // The group is named by a plain string: without the dependency the schedule may be created first and fail.
    this.schedule.node.addDependency(props.scheduleGroup);
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
