import {
  FullBatchFailureError,
  processPartialResponse,
  SqsFifoMessageGroupShortCircuitError,
  SqsFifoPartialProcessorAsync,
  SqsFifoShortCircuitError,
} from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ConfigurationError } from '../core/errors.js';
import { parseFetchEvent, type FetchRequest } from './fetch-event.js';

/**
 * Runs that arrive as SQS messages: the schedules put each firing on its connection's FIFO queue, whose event source
 * bounds how many runs reach one gateway at once (maxConcurrentRequests). Each message body is what a direct
 * invocation would be: the Scheduler's `{"reportId", "scheduledTime"}` (or a backfill request), validated by
 * parseFetchEvent.
 *
 * Failure policy: the records run one after another, in queue order. A failed run fails its message, and, as a FIFO
 * queue asks, every message after it in the batch is reported failed untried (Powertools' FIFO processor), so none
 * overtakes it. Failed messages return to the queue; the queue's redrive (maxReceiveCount 1) moves them to the
 * dead-letter queue, whose alarm fires. When the whole batch failed (always so with the stack's batch size of one) the
 * invocation throws, with the run's own typed error when one run failed, so the fetch-errors alarm fires at once.
 */

/** An SQS batch (Lambda's event source mapping), as opposed to a direct invocation. */
export function isSqsEvent(event: unknown): event is SQSEvent {
  if (event === null || typeof event !== 'object' || !('Records' in event)) return false;
  const records = (event as { Records: unknown }).Records;
  const fromSqs = Array.isArray(records) && records.length > 0 && records.every((r) => (r as Partial<SQSRecord> | null)?.eventSource === 'aws:sqs');
  if (!fromSqs) {
    throw new ConfigurationError(
      'The fetch function\'s event has "Records" but is not an SQS batch (every record with "eventSource": "aws:sqs"): ' +
        'it takes messages from its connection queues, a Scheduler invocation {"reportId", "scheduledTime"} or a backfill request {"reportId", "from", "to"}.',
    );
  }
  return true;
}

/** A message's run request; a body that is not JSON or not a run is a ConfigurationError naming the message. */
export function requestOfMessage(record: SQSRecord): FetchRequest {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    throw new ConfigurationError(`SQS message ${record.messageId} is not JSON: its body must be a run such as {"reportId": "…", "scheduledTime": "…"}.`);
  }
  try {
    return parseFetchEvent(body);
  } catch (e) {
    throw new ConfigurationError(`SQS message ${record.messageId}: ${(e as Error).message}`);
  }
}

/** Whether a record's error only says that a message before it failed (FIFO short-circuit): it was never run. */
const untried = (e: unknown) => e instanceof SqsFifoShortCircuitError || e instanceof SqsFifoMessageGroupShortCircuitError;

/**
 * Runs each message of the batch with `run` (which reads it with requestOfMessage and logs its own failure), in
 * order; returns the messages to retry (batchItemFailures), or throws when all failed. `onUntried` hears which were
 * left untried.
 */
export async function runMessages(
  event: SQSEvent,
  run: (record: SQSRecord) => Promise<unknown>,
  onUntried: (messageIds: string[]) => void,
): Promise<SQSBatchResponse> {
  // One processor per batch: it holds the batch's state.
  const processor = new SqsFifoPartialProcessorAsync();
  let response: SQSBatchResponse;
  try {
    response = await processPartialResponse(event, (record: SQSRecord) => run(record), processor);
  } catch (error) {
    if (!(error instanceof FullBatchFailureError)) throw error;
    // FIFO: the first message's run failed, and every later one was left untried.
    if (event.Records.length > 1) onUntried(event.Records.slice(1).map((r) => r.messageId));
    // The invocation's error is that run's own typed error, not Powertools' wrapper around it.
    const [first] = error.recordErrors;
    throw first !== undefined && !untried(first) ? first : error;
  }
  // A failure is followed by the untried rest of the batch, in order.
  const untriedIds = response.batchItemFailures.slice(1).map((f) => f.itemIdentifier);
  if (untriedIds.length) onUntried(untriedIds);
  return response;
}
