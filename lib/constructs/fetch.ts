import { Duration, RemovalPolicy, TimeZone, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { scheduleExpressionProblems } from '../../functions/core/time/schedule-expression.js';
import { PREFIX } from '../../functions/core/lake/s3-keys.js';
import { CONNECTIONS_VARIABLE, encodeConnectionsVariable, type ConnectionEndpoint } from '../../functions/core/connections/connection.js';
import type { Credentials } from './credentials.js';
import { FetchQueues, type QueuedConnection } from './fetch-queues.js';
import type { Egress } from './egress.js';
import { DEAD_LETTER_QUEUE } from '../policies/dead-letters.js';
import { EncryptedQueueDestination, grantObjectWrite, objectWrite } from '../policies/grants.js';
import { LAMBDA_BUNDLES } from '../bundling/bundling.js';
import { DEADLINE_MARGIN_MS } from '../../functions/fetch-report/deadline.js';
import { MIN_WINDOW_SHARE_MS, worstCaseShareMs } from '../../functions/fetch-report/window-budget.js';
import { FifoQueueTarget, FunctionTarget, schedulerRole } from '../policies/scheduler-targets.js';
import { KEEP_ALIVE_EVENT } from '../../functions/fetch-report/fetch-event.js';
import { PipelineFunction, functionSettingsOf, type FunctionSettings } from './pipeline-function.js';

/** What a schedule needs to know of a report definition. */
export interface ScheduledReport {
  readonly id: string;
  /** EventBridge Scheduler form, e.g. "cron(15 3 * * ? *)". */
  readonly cron: string;
  /** IANA zone the cron is read in (and the report windows are cut in). */
  readonly timeZone: string;
  /** Each scheduled run fetches its window and `lookback` more, all within one time-out. */
  readonly lookback: number;
  /** The connections it is fetched over: one schedule per feed (report, connection), whose runs wait in that connection's queue. */
  readonly connections: readonly string[];
}

/** A connection as the fetch side needs it: where its requests go, with which secret, and how many at once. */
export interface FetchConnection extends ConnectionEndpoint, QueuedConnection {}

export interface FetchProps extends FunctionSettings {
  readonly reports: readonly ScheduledReport[];
  /** The gateways, their secrets (CONNECTIONS, functions/core/connections/connection.ts) and their bounds. */
  readonly connections: readonly FetchConnection[];
  readonly credentials: Credentials;
  readonly rawBucket: s3.IBucket;
  /** Encrypts the queues and the log group. */
  readonly key: kms.IKey;
  readonly schedulesEnabled: boolean;
  /** The first dt Athena's projection shows (athena.projectionStart): the function refuses windows before it. */
  readonly projectionStart: string;
  /** Handler module; defaults to functions/fetch-report/handler.ts. */
  readonly entry?: string;
  /** A fixed egress address: the function runs in these subnets (lib/constructs/egress.ts). Default: outside any VPC. */
  readonly egress?: Egress;
  /** Where a report's schedule goes: its shard (lib/constructs/report-shards.ts). Default: this construct. */
  readonly scopeOfReport?: (reportId: string) => Construct;
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

/**
 * Fails the synthesis when the fetch function's reservation is below what the queues' event sources may run at once:
 * Lambda would throttle the surplus, and a throttled run returns to its queue as a receive, which sends it to the
 * dead-letter queue (one receive only, lib/constructs/fetch-queues.ts).
 */
function assertReservationCovers(reservedConcurrency: number | undefined, queues: FetchQueues): void {
  if (reservedConcurrency === undefined || reservedConcurrency >= queues.totalConcurrency) return;
  throw new Error(
    `fetch.reservedConcurrency ${reservedConcurrency} is below the ${queues.totalConcurrency} runs the connections' queues may start at once ` +
      `(each connection's maxConcurrentRequests, at least 2 each: Lambda's floor for an SQS event source). Raise it to ` +
      `${queues.totalConcurrency} or more, or leave it null (no reservation).`,
  );
}

/**
 * How often the keep-alive invokes the fetch function in `network` mode: Lambda reclaims the interfaces of a function
 * idle for consecutive weeks, so a day leaves ample margin, for 30 invocations a month.
 */
export const KEEP_ALIVE_EVERY = Duration.days(1);

/** Only under raw/ (functions/core/lake/s3-keys.ts): the function never reads, lists or deletes. */
const RAW_PREFIX = PREFIX.raw;

/**
 * The fetch side: one EventBridge Scheduler schedule per feed (a report over one of its connections) sends
 * {reportId, connection, scheduledTime} to the queue of that connection (lib/constructs/fetch-queues.ts), and the fetch function reads every queue: it reads the
 * connection's credentials, calls its gateway and streams the file into the raw bucket. The queues bound the requests
 * in flight to each gateway. Three dead-letter queues: events the scheduler could not deliver to a queue, runs that
 * failed (the queues' own), and asynchronous invocations that failed (Lambda's on-failure destination).
 */
export class Fetch extends Construct {
  readonly function: PipelineFunction;
  readonly scheduleGroup: scheduler.ScheduleGroup;
  readonly schedules: scheduler.Schedule[] = [];
  /** The connections' queues and their dead-letter queue. */
  readonly queues: FetchQueues;
  /** Scheduler events that could not be delivered to a connection's queue. */
  readonly scheduleDeadLetterQueue: sqs.Queue;
  /**
   * Asynchronous invocations that failed, with their error: the keep-alive's (with `network`), and an operator's
   * `aws lambda invoke --invocation-type Event` (or the console's asynchronous test), whose failure would otherwise
   * leave no trace but a log line. Scheduled runs that fail land in the queues' dead-letter queue instead; the
   * deployed backfill invokes synchronously and prints its failures.
   */
  readonly failedRunsQueue: sqs.Queue;
  /** With `network` only: the daily invocation that keeps the function in its VPC Active (addKeepAlive). */
  readonly keepAlive?: scheduler.Schedule;

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
    this.scheduleDeadLetterQueue = new sqs.Queue(this, 'ScheduleDeadLetters', { ...queueProps, ...DEAD_LETTER_QUEUE });
    this.failedRunsQueue = new sqs.Queue(this, 'FailedRuns', { ...queueProps, ...DEAD_LETTER_QUEUE });
    for (const q of [this.scheduleDeadLetterQueue, this.failedRunsQueue]) {
      Validations.of(q).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason: 'This queue is itself a dead-letter queue (of the scheduler target or of Lambda asynchronous invocations), not a work queue.',
      });
    }
    this.queues = new FetchQueues(this, 'Queues', { connections: props.connections, key: props.key, functionTimeout: props.timeout, removalPolicy: props.removalPolicy });
    assertReservationCovers(props.reservedConcurrency, this.queues);

    this.function = this.addFunction(props);
    this.grantSecretAndRawWrites(props);
    this.queues.consumeWith(this.function.function);

    this.scheduleGroup = new scheduler.ScheduleGroup(this, 'Schedules', {
      scheduleGroupName: `paynet-reports-${props.environment}`,
      removalPolicy: RemovalPolicy.DESTROY, // holds only the schedules of this stack
    });
    const queueRole = this.addSchedulerRole(props);
    const scopeOf = props.scopeOfReport ?? (() => this);
    for (const report of props.reports) {
      for (const connection of report.connections) {
        this.schedules.push(this.addSchedule(scopeOf(report.id), { report, connection }, queueRole, props.schedulesEnabled));
      }
    }
    if (props.egress) this.keepAlive = this.addKeepAlive(props.environment);
  }

  private addFunction(props: FetchProps): PipelineFunction {
    return new PipelineFunction(this, 'Fetch', {
      ...functionSettingsOf(props),
      entry: props.entry ?? LAMBDA_BUNDLES.fetch.entry,
      description: 'paynet-reports: fetch a report from the gateway into the raw bucket',
      logKey: props.key,
      environmentVariables: {
        [CONNECTIONS_VARIABLE]: encodeConnectionsVariable(props.connections.map(({ name, endpointUrl, secretName }) => ({ name, endpointUrl, secretName }))),
        RAW_BUCKET: props.rawBucket.bucketName,
        PROJECTION_START: props.projectionStart,
      },
      asyncInvoke: {
        onFailure: new EncryptedQueueDestination(this.failedRunsQueue, props.key),
        // Asynchronous invocations only (the schedules go through the queues): no Lambda-level retries, the gateway
        // client already retries what is retryable, with backoff, and a blind retry would repeat refused logins.
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
    // The role is named by aws:PrincipalArn under Principal "*", the form AWS's endpoint-policy page gives for gateway
    // endpoints: the caller is the function's assumed-role session, which a role ARN as Principal may not match.
    const writes = objectWrite(props.rawBucket, [RAW_PREFIX], { tagging: true });
    props.egress?.s3Endpoint?.addToPolicy(
      new iam.PolicyStatement({
        principals: [new iam.StarPrincipal()],
        actions: writes.actions,
        resources: writes.resourceArns,
        conditions: { ArnEquals: { 'aws:PrincipalArn': this.function.role.roleArn } },
      }),
    );
  }

  /** One role for all schedules of the environment: send to the connections' queues and to its dead-letter queue. */
  private addSchedulerRole(props: FetchProps): iam.Role {
    const role = schedulerRole(this, 'SchedulerRole', `paynet-reports ${props.environment}: EventBridge Scheduler queues the scheduled fetch runs`);
    // The queues are KMS-encrypted: sending needs the key too (the targets grant only sqs:SendMessage, see FifoQueueTarget).
    props.key.grant(role, 'kms:GenerateDataKey', 'kms:Decrypt');
    return role;
  }

  private addSchedule(scope: Construct, feed: { report: ScheduledReport; connection: string }, role: iam.IRole, enabled: boolean): scheduler.Schedule {
    const { report, connection } = feed;
    const schedule = new scheduler.Schedule(scope, `Schedule-${report.id}-${connection}`, {
      scheduleGroup: this.scheduleGroup,
      description: `Fetch report "${report.id}" over connection "${connection}" (${report.cron} ${report.timeZone})`,
      schedule: scheduler.ScheduleExpression.expression(report.cron, TimeZone.of(report.timeZone)),
      // Runs at the time the definition says: the report window is computed from it.
      timeWindow: scheduler.TimeWindow.off(),
      enabled,
      target: new FifoQueueTarget(this.queues.queueOf(connection), {
        role,
        messageGroupId: this.queues.messageGroupIdOf(connection, report.id),
        // scheduledTime stays the same across retries, so a late delivery still fetches the intended window.
        input: scheduler.ScheduleTargetInput.fromObject({
          reportId: report.id,
          connection,
          scheduledTime: scheduler.ContextAttribute.scheduledTime,
        }),
        retryAttempts: 3,
        maxEventAge: Duration.hours(1),
        deadLetterQueue: this.scheduleDeadLetterQueue,
      }),
    });
    // The schedule names its group by name, a plain string: without the dependency CloudFormation may create the
    // schedule first and fail ("schedule group ... does not exist"). From a shard, CDK makes it the nested stack's.
    schedule.node.addDependency(this.scheduleGroup);
    return schedule;
  }

  /**
   * In a VPC only: a function that remains idle for consecutive weeks loses its network interfaces and turns Inactive,
   * and its next invocation fails with ResourceNotReadyException until Lambda has made them again
   * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc.html, "Lambda Hyperplane ENIs"). A scheduled run
   * meeting that goes to the dead-letter queue (one receive, lib/constructs/fetch-queues.ts), so the function is invoked
   * once a day with {"keepAlive": true}, which the handler answers at once (functions/fetch-report/handler.ts).
   * Enabled whatever schedulesEnabled says: a long pause of the schedules is exactly when it is needed.
   */
  private addKeepAlive(environment: string): scheduler.Schedule {
    const role = schedulerRole(this, 'KeepAliveRole', `paynet-reports ${environment}: EventBridge Scheduler keeps the fetch function in its VPC Active`);
    const schedule = new scheduler.Schedule(this, 'KeepAlive', {
      scheduleGroup: this.scheduleGroup,
      description: `paynet-reports ${environment}: invokes the fetch function once a day with ${JSON.stringify(KEEP_ALIVE_EVENT)} so that it never turns Inactive in its VPC`,
      schedule: scheduler.ScheduleExpression.rate(KEEP_ALIVE_EVERY),
      enabled: true,
      // One missed day changes nothing (idle means weeks): no retry. Scheduler invokes asynchronously, so a failure
      // of the function itself lands in failedRunsQueue like any asynchronous invocation's.
      target: new FunctionTarget(this.function.function, { role, retryAttempts: 0, input: scheduler.ScheduleTargetInput.fromObject(KEEP_ALIVE_EVENT) }),
    });
    schedule.node.addDependency(this.scheduleGroup);
    return schedule;
  }
}
