import { CfnElement, Duration, RemovalPolicy, Stack, TimeZone, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { scheduleExpressionProblems } from '../functions/core/schedule-expression.js';
import type { Credentials } from './credentials.js';
import { EncryptedQueueDestination, grantObjectWrite } from './grants.js';
import { LAMBDA_BUNDLES } from './bundling.js';
import { INLINE_POLICY_REASON, PipelineFunction, functionSettingsOf, type FunctionSettings } from './pipeline-function.js';

/** What a schedule needs to know of a report definition. */
export interface ScheduledReport {
  readonly id: string;
  /** EventBridge Scheduler form, e.g. "cron(15 3 * * ? *)". */
  readonly cron: string;
  /** IANA zone the cron is read in (and the report windows are cut in). */
  readonly timeZone: string;
}

export interface FetchProps extends FunctionSettings {
  readonly reports: readonly ScheduledReport[];
  /** Full https URL of the gateway's rpt-engine endpoint (ENDPOINT_URL). */
  readonly endpointUrl: string;
  readonly credentials: Credentials;
  readonly rawBucket: s3.IBucket;
  /** Encrypts the dead-letter queues and the log group. */
  readonly key: kms.IKey;
  readonly schedulesEnabled: boolean;
  /** Handler module; defaults to functions/fetch-report/handler.ts. */
  readonly entry?: string;
}

/** Fails the synthesis, naming the report, on what EventBridge Scheduler would only refuse at deploy time. */
function assertSchedulable(report: ScheduledReport): void {
  // The same rule the definition is loaded with (cron or rate), so what loads also synthesizes.
  const problems = scheduleExpressionProblems(report.cron);
  if (problems.length) throw new Error(`Report "${report.id}": schedule.cron "${report.cron}": ${problems.join('; ')}`);
  try {
    new Intl.DateTimeFormat('en', { timeZone: report.timeZone });
  } catch {
    throw new Error(`Report "${report.id}": schedule.timeZone "${report.timeZone}" is not an IANA time zone.`);
  }
}

/** Only under raw/: the function never reads, lists or deletes. */
const RAW_PREFIX = 'raw/';

/**
 * The fetch side: one EventBridge Scheduler schedule per report invoking the fetch function with
 * {reportId, scheduledTime}; the function reads the credentials, calls the gateway and streams the file
 * into the raw bucket. Two dead-letter queues: events the scheduler could not deliver, and invocations
 * that failed (Lambda on-failure destination, which keeps the error message with the event).
 */
export class Fetch extends Construct {
  readonly function: PipelineFunction;
  readonly scheduleGroup: scheduler.ScheduleGroup;
  readonly schedules: scheduler.Schedule[] = [];
  /** Scheduler events that could not be delivered to the function. */
  readonly scheduleDeadLetterQueue: sqs.Queue;
  /** Invocations that failed (the handler threw or timed out). */
  readonly failedRunsQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: FetchProps) {
    super(scope, id);
    props.reports.forEach(assertSchedulable);
    const queueProps: sqs.QueueProps = {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14), // the longest SQS allows: time to notice and re-drive
      removalPolicy: props.removalPolicy,
    };
    this.scheduleDeadLetterQueue = new sqs.Queue(this, 'ScheduleDeadLetters', queueProps);
    this.failedRunsQueue = new sqs.Queue(this, 'FailedRuns', queueProps);
    for (const q of [this.scheduleDeadLetterQueue, this.failedRunsQueue]) {
      Validations.of(q).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason: 'This queue is itself a dead-letter queue (of the scheduler target or of Lambda asynchronous invocations), not a work queue.',
      });
    }

    this.function = new PipelineFunction(this, 'Fetch', {
      ...functionSettingsOf(props),
      entry: props.entry ?? LAMBDA_BUNDLES.fetch.entry,
      description: 'paynet-reports: fetch a report from the gateway into the raw bucket',
      logKey: props.key,
      environmentVariables: {
        ENDPOINT_URL: props.endpointUrl,
        SECRET_NAME: props.credentials.secretName,
        RAW_BUCKET: props.rawBucket.bucketName,
      },
      asyncInvoke: {
        onFailure: new EncryptedQueueDestination(this.failedRunsQueue, props.key),
        // No Lambda-level retries: the gateway client already retries what is retryable, with backoff; a blind
        // retry would repeat refused logins. The next scheduled run re-fetches missed windows (lookback).
        retryAttempts: 0,
        maxEventAge: Duration.hours(6),
      },
    });
    const fn = this.function.function;
    props.credentials.grantRead(fn);
    grantObjectWrite(fn, props.rawBucket, [RAW_PREFIX], { tagging: true });

    this.scheduleGroup = new scheduler.ScheduleGroup(this, 'Schedules', {
      scheduleGroupName: `paynet-reports-${props.environment}`,
      removalPolicy: RemovalPolicy.DESTROY, // holds only the schedules of this stack
    });
    // One role for all schedules of the environment: invoke this function, send to the dead-letter queue.
    const schedulerRole = new iam.Role(this, 'SchedulerRole', {
      // Only schedules of this account may assume it (confused-deputy protection).
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com').withConditions({
        StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
      }),
      description: `paynet-reports ${props.environment}: EventBridge Scheduler invokes the fetch function`,
    });
    // The dead-letter queue is KMS-encrypted: sending to it needs the key too (the target only grants sqs:SendMessage).
    props.key.grant(schedulerRole, 'kms:GenerateDataKey', 'kms:Decrypt');
    const fnLogicalId = Stack.of(this).resolve((fn.node.defaultChild as CfnElement).logicalId) as string;
    Validations.of(schedulerRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${fnLogicalId}.Arn>:*]`,
      reason: "lambda:InvokeFunction on the fetch function's own versions and aliases (CDK's grantInvoke); no other function.",
    });
    Validations.of(schedulerRole).acknowledge({
      id: 'PCI.DSS.321-IAMNoInlinePolicy',
      reason: INLINE_POLICY_REASON,
    });

    for (const report of props.reports) {
      const schedule = new scheduler.Schedule(this, `Schedule-${report.id}`, {
        scheduleGroup: this.scheduleGroup,
        description: `Fetch report "${report.id}" (${report.cron} ${report.timeZone})`,
        schedule: scheduler.ScheduleExpression.expression(report.cron, TimeZone.of(report.timeZone)),
        // Runs at the time the definition says: the report window is computed from it.
        timeWindow: scheduler.TimeWindow.off(),
        enabled: props.schedulesEnabled,
        target: new targets.LambdaInvoke(fn, {
          role: schedulerRole,
          // scheduledTime stays the same across retries, so a late delivery still fetches the intended window.
          input: scheduler.ScheduleTargetInput.fromObject({
            reportId: report.id,
            scheduledTime: scheduler.ContextAttribute.scheduledTime,
          }),
          retryAttempts: 3,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: this.scheduleDeadLetterQueue,
        }),
      });
      // The schedule names its group by name, a plain string: without the dependency CloudFormation may create the
      // schedule first and fail ("schedule group ... does not exist").
      schedule.node.addDependency(this.scheduleGroup);
      this.schedules.push(schedule);
    }
  }
}
