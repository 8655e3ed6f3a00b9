import { randomUUID } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { loadCatalog } from '../core/definitions/catalog-files.js';
import type { ReportCatalog } from '../core/definitions/catalog.js';
import { functionS3Client, requiredEnv } from '../aws/env.js';
import { logger, metrics } from '../aws/powertools.js';
import { getGatewaySecret } from '../aws/secrets.js';
import { deadlineBefore } from './deadline.js';
import { isKeepAlive, parseFetchEvent, type FetchRequest, type KeepAliveEvent } from './fetch-event.js';
import { isSqsEvent, requestOfMessage, runMessages } from './sqs-runs.js';
import { fetchWindows, type FetchRunResult, type GatewayConnection } from './fetch-windows.js';
import { CONNECTIONS_VARIABLE, parseConnectionsVariable, type ConnectionEndpoint } from '../core/connections/connection.js';
import { ConfigurationError } from '../core/errors.js';

/**
 * The fetch function: runs in, raw report files in the raw bucket out. A run comes as an SQS message from its
 * connection's queue (the Scheduler's {reportId, scheduledTime}; sqs-runs.ts), or as a direct invocation: the same
 * {reportId, scheduledTime}, or a backfill request ({reportId, from, to}); in `network` mode also the daily
 * {"keepAlive": true}, answered at once (fetch-event.ts says why). Everything but reading the environment lives
 * in fetch-windows.ts, which the local pipeline and the tests call with their own parts.
 *
 * Environment: CONNECTIONS (functions/core/connections/connection.ts), RAW_BUCKET, PIPELINE_ENVIRONMENT, PROJECTION_START (+ POWERTOOLS_*).
 * A failed window fails the run (after the others were tried) with the typed error: its message from a queue, or the
 * direct invocation.
 */

// Loaded once per container: the definitions are bundled, not read per invocation.
let catalog: ReportCatalog | undefined;
let connections: { text: string; byName: Map<string, ConnectionEndpoint> } | undefined;

/** The deployment's connections (CONNECTIONS, set by the stack), each reading its own secret. */
function connectionOf(name: string): GatewayConnection {
  const text = requiredEnv(CONNECTIONS_VARIABLE);
  if (connections?.text !== text) connections = { text, byName: parseConnectionsVariable(text) };
  const endpoint = connections.byName.get(name);
  if (!endpoint) {
    throw new ConfigurationError(
      `Connection "${name}" is not defined in this deployment (it has ${[...connections.byName.keys()].join(', ')}): add it to the environment file and deploy.`,
    );
  }
  // Cached by Powertools across invocations for SECRET_MAX_AGE_SECONDS; `fresh` (after a refusal) reads past it.
  return {
    name,
    endpointUrl: endpoint.endpointUrl,
    loadSecret: (options) => getGatewaySecret(endpoint.secretName, { fresh: options?.fresh }),
    credentials: `Secrets Manager secret "${endpoint.secretName}"`,
  };
}

/** What a run is given besides its request: the invocation's id, deadline and logger. */
interface RunContext {
  runId: string;
  deadline: ReturnType<typeof deadlineBefore> | undefined;
  logger: Logger;
}

async function run(request: FetchRequest, ctx: RunContext): Promise<FetchRunResult> {
  const environment = requiredEnv('PIPELINE_ENVIRONMENT');
  return fetchWindows(
    request,
    {
      catalog: (catalog ??= loadCatalog()),
      s3: functionS3Client(),
      rawBucket: requiredEnv('RAW_BUCKET'),
      environment,
      connectionOf,
      logger: ctx.logger,
      metrics,
      signal: ctx.deadline?.signal,
      runDeadlineAt: ctx.deadline?.at,
      projection: { start: requiredEnv('PROJECTION_START'), source: `athena.projectionStart of environment "${environment}"` },
    },
    ctx.runId,
  );
}

/** One SQS message's run: its failure (a bad body included) is logged with the message, then fails it (sqs-runs.ts). */
async function runMessage(record: SQSRecord, ctx: RunContext): Promise<FetchRunResult> {
  try {
    return await run(requestOfMessage(record), ctx);
  } catch (error) {
    ctx.logger.error('Fetch run failed', { runId: ctx.runId, messageId: record.messageId, error });
    throw error;
  }
}

/** The keep-alive's answer: the invocation happened, and that is all it was for. */
export interface KeepAliveAnswer {
  kind: 'keepAlive';
  runId: string;
}

/**
 * SQS batches from the connection queues get {batchItemFailures} back; a direct invocation (Scheduler, backfill) gets
 * the run's result, which `reports backfill --deployed` reads; the keep-alive gets KeepAliveAnswer.
 */
export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse>;
export async function handler(event: KeepAliveEvent, context?: Context): Promise<KeepAliveAnswer>;
export async function handler(event: unknown, context?: Context): Promise<FetchRunResult>;
export async function handler(event: unknown, context?: Context): Promise<FetchRunResult | SQSBatchResponse | KeepAliveAnswer> {
  if (context) logger.addContext(context);
  // The Lambda request id ties the raw objects' metadata to this invocation's log lines.
  const runId = context?.awsRequestId ?? randomUUID();
  const deadline = context ? deadlineBefore(context.getRemainingTimeInMillis()) : undefined;
  let verdict = 'Fetch run failed';
  try {
    // Before anything else: no gateway, no S3, no secret, no metric. Its purpose was served by Lambda running it.
    if (isKeepAlive(event)) {
      logger.debug('Keep-alive: nothing to fetch; the invocation keeps the function in its VPC Active', { runId });
      return { kind: 'keepAlive', runId };
    }
    if (isSqsEvent(event)) {
      verdict = 'Every message of the batch failed: they return to the queue, and past its receive count to the dead-letter queue';
      return await runMessages(
        event,
        (record) => runMessage(record, { runId, deadline, logger: logger.createChild({ persistentKeys: { messageId: record.messageId } }) }),
        (untried) => logger.warn('A run of this batch failed: the messages after it were not tried, and fail with it to keep the queue\'s order', { runId, untried }),
      );
    }
    return await run(parseFetchEvent(event), { runId, deadline, logger });
  } catch (error) {
    // fetchWindows logged each window's failure with its window, runMessage each message's; this line is the invocation's verdict.
    logger.error(verdict, { runId, error });
    throw error;
  } finally {
    deadline?.clear();
  }
}
