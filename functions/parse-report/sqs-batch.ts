import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { ConfigurationError, isPipelineError } from '../core/errors.js';
import { decodeS3EventKey } from '../core/lake/s3-keys.js';
import { parseRawObject, type ParseDeps, type ParseResult } from './parse-object.js';

/**
 * An SQS batch of S3 event notifications (raw bucket -> queue -> this function) with partial batch
 * failure reporting: a message whose file failed is returned in batchItemFailures, so SQS delivers it
 * again and, after MAX_RECEIVE_COUNT receives, moves it to the dead-letter queue (whose alarm fires).
 *
 * Which messages fail, and why:
 * - a file that failed to load, for any reason. Transient errors (S3 throttling) then get their retries.
 *   Data errors (SchemaDrift, TooManyRejectedRows, MalformedReport) fail the same way each time; failing
 *   the message anyway parks it in the dead-letter queue: fix the report definition, deploy, and re-drive
 *   the queue to load the file. Each attempt also writes a "failed" manifest and logs the typed error. With
 *   the stack's batch size of one, a failed file also fails the invocation (Powertools throws when the
 *   whole batch failed), so the "parse errors" alarm fires at the first attempt, not only at the DLQ;
 * - a message that is not an S3 notification, or names a key under raw/ that is not the pipeline's
 *   layout or an unknown report: someone has to look at it, and the DLQ is where it waits.
 * Succeeding without work: S3's s3:TestEvent (sent when the notification is configured), events other
 * than ObjectCreated, and keys outside raw/ (logged and ignored).
 */

const s3TestEvent = z.object({ Event: z.literal('s3:TestEvent') }).loose();

const s3Notification = z.object({
  Records: z
    .array(
      z
        .object({
          eventSource: z.literal('aws:s3'),
          eventName: z.string(),
          s3: z.object({
            bucket: z.object({ name: z.string().min(1) }).loose(),
            object: z.object({ key: z.string().min(1), versionId: z.string().optional() }).loose(),
          }).loose(),
        })
        .loose(),
    )
    .min(1),
});

export interface BatchHooks {
  /** Called with each file's result (the local pipeline collects them to report per window). */
  onResult?: (result: ParseResult) => void;
}

function messageBody(record: SQSRecord): z.infer<typeof s3Notification> | 'test-event' {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    throw new ConfigurationError(`SQS message ${record.messageId} is not JSON: it cannot be an S3 event notification.`);
  }
  if (s3TestEvent.safeParse(body).success) return 'test-event';
  const parsed = s3Notification.safeParse(body);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(body)'))].join(', ');
    throw new ConfigurationError(`SQS message ${record.messageId} is not an S3 event notification (problem with: ${fields}).`);
  }
  return parsed.data;
}

async function handleMessage(record: SQSRecord, deps: ParseDeps, runId: string, hooks: BatchHooks): Promise<void> {
  const logger = deps.logger.createChild({ persistentKeys: { runId, messageId: record.messageId } });
  let body: ReturnType<typeof messageBody>;
  try {
    body = messageBody(record);
  } catch (error) {
    logger.error('Unreadable message: it goes back to the queue and, after its retries, to the dead-letter queue', { error });
    throw error;
  }
  if (body === 'test-event') {
    logger.info('s3:TestEvent (S3 checking the notification): nothing to do');
    return;
  }
  for (const s3Record of body.Records) {
    const key = decodeS3EventKey(s3Record.s3.object.key);
    if (!s3Record.eventName.startsWith('ObjectCreated:')) {
      logger.info('Ignoring an S3 event other than ObjectCreated', { eventName: s3Record.eventName, key });
      continue;
    }
    const object = { bucket: s3Record.s3.bucket.name, key, ...(s3Record.s3.object.versionId ? { versionId: s3Record.s3.object.versionId } : {}) };
    let result: ParseResult;
    try {
      result = await parseRawObject(object, { ...deps, logger }, runId);
    } catch (error) {
      // Before any load started: a key under raw/ off the layout, an unknown report.
      logger.error('Cannot load this object', { code: isPipelineError(error) ? error.code : 'Unexpected', key, error });
      throw error;
    }
    hooks.onResult?.(result);
    if (result.outcome === 'ignored') logger.info('Ignoring an object outside raw/', { bucket: object.bucket, key });
    if (result.outcome === 'failed') throw result.error;
  }
}

export async function handleParseBatch(event: SQSEvent, deps: ParseDeps, runId: string, hooks: BatchHooks = {}): Promise<SQSBatchResponse> {
  if (!event || !Array.isArray((event as Partial<SQSEvent>).Records)) {
    throw new ConfigurationError('The parse function expects an SQS event ({"Records": [...]}) from its queue.');
  }
  // One processor per batch: it holds the batch's state, and the local pipeline may run batches concurrently.
  const processor = new BatchProcessor(EventType.SQS);
  return processPartialResponse(event, (record: SQSRecord) => handleMessage(record, deps, runId, hooks), processor);
}
