import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CONNECTION_NAME, MAX_CONCURRENT_REQUESTS } from '../../functions/core/connections/connection.js';
import { DEAD_LETTER_QUEUE } from '../policies/dead-letters.js';

/** What the queues need to know of a connection. */
export interface QueuedConnection {
  readonly name: string;
  /** Requests in flight to its gateway at most (1-10). */
  readonly maxConcurrentRequests: number;
}

export interface FetchQueuesProps {
  readonly connections: readonly QueuedConnection[];
  /** Encrypts the queues (the lake key: the scheduler's role and the fetch role use it already). */
  readonly key: kms.IKey;
  /** The fetch function's time-out: a received run stays invisible to the others at least that long. */
  readonly functionTimeout: Duration;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * AWS's floor for an SQS event source's maximum concurrency (ScalingConfig.MaximumConcurrency, 2-1000): a bound of 1
 * cannot be set there, so it is made by the message groups instead (messageGroupIdOf).
 */
export const MIN_EVENT_SOURCE_CONCURRENCY = 2;

/**
 * Past the function's time-out before a received run may be received again: Lambda's poller receives the message
 * before the function starts (and a cold start's initialisation is not part of the time-out).
 */
export const VISIBILITY_MARGIN = Duration.minutes(2);

/**
 * Receives before a run goes to the dead-letter queue: one. A failed run is not retried by the queue, as no failed
 * run was before the queues: the next scheduled run's lookback or a backfill fetches its windows again, and a
 * refused login tried again and again may lock the merchant's account. It waits in the dead-letter queue, whose
 * alarm fires, and is given up there.
 */
export const MAX_RECEIVE_COUNT = 1;

/** The message group of a report's runs on its connection's queue (FIFO: one group at a time is in flight). */
export function messageGroupIdOf(connection: QueuedConnection, reportId: string): string {
  // A bound of 1: every report of the connection in one group, so Lambda takes them one at a time, in order.
  // From 2: a group per report, and the event source's maximum concurrency is the bound (FIFO: in flight at most
  // min(groups with messages, maximum concurrency)); runs of one report never overlap.
  return connection.maxConcurrentRequests === 1 ? connection.name : reportId;
}

/** The event source's maximum concurrency for a connection: its bound, or the floor when one group is the bound. */
export const maximumConcurrencyOf = (connection: QueuedConnection): number => Math.max(MIN_EVENT_SOURCE_CONCURRENCY, connection.maxConcurrentRequests);

/** Fails the synthesis on what SQS, Lambda or the Scheduler would refuse only at deploy time, naming the connection. */
function assertQueueable(connection: QueuedConnection): void {
  if (!CONNECTION_NAME.test(connection.name)) throw new Error(`Connection "${connection.name}": not a connection name (a message group id and a construct id come from it).`);
  const { min, max } = MAX_CONCURRENT_REQUESTS;
  if (!Number.isInteger(connection.maxConcurrentRequests) || connection.maxConcurrentRequests < min || connection.maxConcurrentRequests > max) {
    throw new Error(`Connection "${connection.name}": maxConcurrentRequests ${connection.maxConcurrentRequests} is not a whole number from ${min} to ${max}.`);
  }
}

/**
 * Scheduled runs wait their turn here, one FIFO queue per connection, so that however many of a connection's
 * reports fall due in the same minute, at most maxConcurrentRequests requests are in flight to its gateway. The
 * schedules send {reportId, scheduledTime} to the queue of the report's connection (lib/constructs/fetch.ts); the
 * fetch function reads every queue, one run per invocation. Waiting in a queue is not a receive: a run that waits
 * is not counted, retried or given up as a failure. Content-based deduplication drops the second copy of one firing
 * sent within SQS's 5-minute deduplication interval (the Scheduler may deliver twice; the body carries the scheduled
 * time, so two firings never look alike); a later copy runs again, and its windows overwrite themselves.
 */
export class FetchQueues extends Construct {
  /** By connection name. */
  readonly queues: ReadonlyMap<string, sqs.Queue>;
  /** Runs that failed once, from every connection's queue (FIFO, as a FIFO queue's dead-letter queue must be). */
  readonly deadLetterQueue: sqs.Queue;
  private readonly connections: ReadonlyMap<string, QueuedConnection>;

  constructor(scope: Construct, id: string, props: FetchQueuesProps) {
    super(scope, id);
    props.connections.forEach(assertQueueable);
    this.connections = new Map(props.connections.map((c) => [c.name, c]));
    const encrypted = {
      fifo: true,
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14), // the longest SQS allows: time to notice and re-drive
      removalPolicy: props.removalPolicy,
    } satisfies sqs.QueueProps;
    // cdk-nag's SQS3 (a queue without a dead-letter queue) sees the redrive policies below: nothing to acknowledge.
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', { ...encrypted, ...DEAD_LETTER_QUEUE });
    this.queues = new Map(
      props.connections.map((c) => [
        c.name,
        new sqs.Queue(this, `Connection-${c.name}`, {
          ...encrypted,
          contentBasedDeduplication: true,
          // While one invocation works on a run no other may receive it; a failed run then moves to the dead-letter queue.
          visibilityTimeout: props.functionTimeout.plus(VISIBILITY_MARGIN),
          deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
        }),
      ]),
    );
  }

  /** The queue a report's schedule sends to; the error names the connections there are. */
  queueOf(connection: string): sqs.Queue {
    const queue = this.queues.get(connection);
    if (!queue) throw new Error(`${this.node.path}: no queue for connection "${connection}" (there are ${[...this.queues.keys()].join(', ')}).`);
    return queue;
  }

  /** The message group of a report's runs on the queue of its connection (messageGroupIdOf). */
  messageGroupIdOf(connection: string, reportId: string): string {
    this.queueOf(connection);
    return messageGroupIdOf(this.connections.get(connection)!, reportId);
  }

  /** What the event sources may run at once, all connections together: a reservation below it would throttle runs. */
  get totalConcurrency(): number {
    return [...this.connections.values()].reduce((sum, c) => sum + maximumConcurrencyOf(c), 0);
  }

  /** The fetch function reads every queue: one run per invocation, at most the connection's bound at once. */
  consumeWith(fn: lambda.IFunction): void {
    for (const [name, queue] of this.queues) {
      fn.addEventSource(
        new sources.SqsEventSource(queue, {
          // One run per invocation: each run has the whole time-out to itself (functions/fetch-report/window-budget.ts).
          batchSize: 1,
          // A handler that reports the run as failed fails it, whether it throws or answers batchItemFailures.
          reportBatchItemFailures: true,
          maxConcurrency: maximumConcurrencyOf(this.connections.get(name)!),
        }),
      );
    }
  }
}
