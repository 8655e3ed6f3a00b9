import { CfnElement, Duration, RemovalPolicy, Stack, TimeZone, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { scheduleExpressionProblems } from '../../functions/core/time/schedule-expression.js';
import { PREFIX } from '../../functions/core/lake/s3-keys.js';
import { CONNECTIONS_VARIABLE, encodeConnectionsVariable, type ConnectionEndpoint } from '../../functions/core/connections/connection.js';
import type { Credentials } from './credentials.js';
import type { Egress } from './egress.js';
import { EncryptedQueueDestination, grantObjectWrite, objectWrite } from '../policies/grants.js';
import { LAMBDA_BUNDLES } from '../bundling/bundling.js';
import { DEADLINE_MARGIN_MS } from '../../functions/fetch-report/deadline.js';
import { MIN_WINDOW_SHARE_MS, worstCaseShareMs } from '../../functions/fetch-report/window-budget.js';
import { INLINE_POLICY_REASON, PipelineFunction, functionSettingsOf, type FunctionSettings } from './pipeline-function.js';

/** What a schedule needs to know of a report definition. */
export interface ScheduledReport {
  readonly id: string;
  /** EventBridge Scheduler form, e.g. "cron(15 3 * * ? *)". */
  readonly cron: string;
  /** IANA zone the cron is read in (and the report windows are cut in). */
  readonly timeZone: string;
  /** Each scheduled run fetches its window and `lookback` more, all within one time-out. */
  readonly lookback: number;
}

export interface FetchProps extends FunctionSettings {
  readonly reports: readonly ScheduledReport[];
  /** The gateways and their secrets (CONNECTIONS, functions/core/connections/connection.ts). */
  readonly connections: readonly ConnectionEndpoint[];
  readonly credentials: Credentials;
  readonly rawBucket: s3.IBucket;
  /** Encrypts the dead-letter queues and the log group. */
  readonly key: kms.IKey;
  readonly schedulesEnabled: boolean;
  /** The first dt Athena's projection shows (athena.projectionStart): the function refuses windows before it. */
  readonly projectionStart: string;
  /** Handler module; defaults to functions/fetch-report/handler.ts. */
  readonly entry?: string;
  /** A fixed egress address: the function runs in these subnets (lib/constructs/egress.ts). Default: outside any VPC. */
  readonly egress?: Egress;
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

/**
 * Fails the synthesis when a scheduled run of the report cannot give each of its windows a useful share of the
 * time-out (functions/fetch-report/window-budget.ts): the run would cut its last windows off every time.
 */
function assertWindowsFit(report: ScheduledReport, timeout: Duration): void {
  const windows = report.lookback + 1;
  const share = worstCaseShareMs(timeout.toMilliseconds() - DEADLINE_MARGIN_MS, windows);
  if (share < MIN_WINDOW_SHARE_MS) {
    throw new Error(
      `Report "${report.id}": a scheduled run fetches ${windows} windows (lookback ${report.lookback}) within fetch.timeoutSeconds ` +
        `${timeout.toSeconds()}, ${Math.floor(share / 1000)} s each after the ${DEADLINE_MARGIN_MS / 1000} s margin; each needs at least ` +
        `${MIN_WINDOW_SHARE_MS / 1000} s. Raise fetch.timeoutSeconds (up to 900) or lower the report's lookback.`,
    );
  }
}

/** Only under raw/ (functions/core/lake/s3-keys.ts): the function never reads, lists or deletes. */
const RAW_PREFIX = PREFIX.raw;

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
    for (const report of props.reports) assertWindowsFit(report, props.timeout);
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

    this.function = this.addFunction(props);
    this.grantSecretAndRawWrites(props);

    this.scheduleGroup = new scheduler.ScheduleGroup(this, 'Schedules', {
      scheduleGroupName: `paynet-reports-${props.environment}`,
      removalPolicy: RemovalPolicy.DESTROY, // holds only the schedules of this stack
    });
    const schedulerRole = this.addSchedulerRole(props);
    for (const report of props.reports) this.schedules.push(this.addSchedule(report, schedulerRole, props.schedulesEnabled));
  }

  private addFunction(props: FetchProps): PipelineFunction {
    return new PipelineFunction(this, 'Fetch', {
      ...functionSettingsOf(props),
      entry: props.entry ?? LAMBDA_BUNDLES.fetch.entry,
      description: 'paynet-reports: fetch a report from the gateway into the raw bucket',
      logKey: props.key,
      environmentVariables: {
        [CONNECTIONS_VARIABLE]: encodeConnectionsVariable(props.connections),
        RAW_BUCKET: props.rawBucket.bucketName,
        PROJECTION_START: props.projectionStart,
      },
      asyncInvoke: {
        onFailure: new EncryptedQueueDestination(this.failedRunsQueue, props.key),
        // No Lambda-level retries: the gateway client already retries what is retryable, with backoff; a blind
        // retry would repeat refused logins. The next scheduled run re-fetches missed windows (lookback).
        // The Scheduler invokes asynchronously, so a throttled invocation (no concurrency free) waits in Lambda's
        // own queue, retried for up to maxEventAge, and then goes to the failed-runs queue, not to the schedule's
        // dead-letter queue (that one only gets events the Scheduler could not hand to Lambda at all).
        retryAttempts: 0,
        maxEventAge: Duration.hours(6),
      },
      network: props.egress && { vpc: props.egress.vpc, subnets: props.egress.subnets, securityGroup: props.egress.securityGroup },
    });
  }

  private grantSecretAndRawWrites(props: FetchProps): void {
    const fn = this.function.function;
    props.credentials.grantRead(fn);
    grantObjectWrite(fn, props.rawBucket, [RAW_PREFIX], { tagging: true });
    // The VPC's S3 endpoint lets through exactly these writes of this role: nothing else of the VPC's can reach S3 by it.
    const writes = objectWrite(props.rawBucket, [RAW_PREFIX], { tagging: true });
    props.egress?.s3Endpoint?.addToPolicy(
      new iam.PolicyStatement({ principals: [new iam.ArnPrincipal(this.function.role.roleArn)], actions: writes.actions, resources: writes.resourceArns }),
    );
  }

  /** One role for all schedules of the environment: invoke this function, send to the dead-letter queue. */
  private addSchedulerRole(props: FetchProps): iam.Role {
    const schedulerRole = new iam.Role(this, 'SchedulerRole', {
      // Only schedules of this account may assume it (confused-deputy protection).
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com').withConditions({
        StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
      }),
      description: `paynet-reports ${props.environment}: EventBridge Scheduler invokes the fetch function`,
    });
    // The dead-letter queue is KMS-encrypted: sending to it needs the key too (the target only grants sqs:SendMessage).
    props.key.grant(schedulerRole, 'kms:GenerateDataKey', 'kms:Decrypt');
    const fnLogicalId = Stack.of(this).resolve((this.function.function.node.defaultChild as CfnElement).logicalId) as string;
    Validations.of(schedulerRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${fnLogicalId}.Arn>:*]`,
      reason: "lambda:InvokeFunction on the fetch function's own versions and aliases (CDK's grantInvoke); no other function.",
    });
    Validations.of(schedulerRole).acknowledge({
      id: 'PCI.DSS.321-IAMNoInlinePolicy',
      reason: INLINE_POLICY_REASON,
    });
    return schedulerRole;
  }

  private addSchedule(report: ScheduledReport, schedulerRole: iam.IRole, enabled: boolean): scheduler.Schedule {
    const schedule = new scheduler.Schedule(this, `Schedule-${report.id}`, {
      scheduleGroup: this.scheduleGroup,
      description: `Fetch report "${report.id}" (${report.cron} ${report.timeZone})`,
      schedule: scheduler.ScheduleExpression.expression(report.cron, TimeZone.of(report.timeZone)),
      // Runs at the time the definition says: the report window is computed from it.
      timeWindow: scheduler.TimeWindow.off(),
      enabled,
      target: new targets.LambdaInvoke(this.function.function, {
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
    return schedule;
  }
}
