import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { loadCatalog } from '../core/definitions/catalog-files.js';
import type { ReportCatalog } from '../core/definitions/catalog.js';
import { functionS3Client, requiredEnv } from '../aws/env.js';
import { logger, metrics } from '../aws/powertools.js';
import { getGatewaySecret } from '../aws/secrets.js';
import { deadlineBefore } from './deadline.js';
import { parseFetchEvent } from './fetch-event.js';
import { fetchWindows, type FetchRunResult, type GatewayConnection } from './fetch-windows.js';
import { CONNECTIONS_VARIABLE, parseConnectionsVariable, type ConnectionEndpoint } from '../core/connections/connection.js';
import { ConfigurationError } from '../core/errors.js';

/**
 * The fetch function: EventBridge Scheduler ({reportId, scheduledTime}) or a backfill request
 * ({reportId, from, to}) in, raw report files in the raw bucket out. Everything but reading the
 * environment lives in fetch-windows.ts, which the local pipeline and the tests call with their own parts.
 *
 * Environment: CONNECTIONS (functions/core/connections/connection.ts), RAW_BUCKET, PIPELINE_ENVIRONMENT, PROJECTION_START (+ POWERTOOLS_*).
 * A failed window makes the invocation fail (after the others were tried), with the typed error.
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
  // Cached by Powertools across invocations for SECRET_MAX_AGE_SECONDS.
  return { name, endpointUrl: endpoint.endpointUrl, loadSecret: () => getGatewaySecret(endpoint.secretName) };
}

export const handler = async (event: unknown, context?: Context): Promise<FetchRunResult> => {
  if (context) logger.addContext(context);
  // The Lambda request id ties the raw objects' metadata to this invocation's log lines.
  const runId = context?.awsRequestId ?? randomUUID();
  const deadline = context ? deadlineBefore(context.getRemainingTimeInMillis()) : undefined;
  try {
    const request = parseFetchEvent(event);
    const environment = requiredEnv('PIPELINE_ENVIRONMENT');
    return await fetchWindows(
      request,
      {
        catalog: (catalog ??= loadCatalog()),
        s3: functionS3Client(),
        rawBucket: requiredEnv('RAW_BUCKET'),
        environment,
        connectionOf,
        logger,
        metrics,
        signal: deadline?.signal,
        runDeadlineAt: deadline?.at,
        projection: { start: requiredEnv('PROJECTION_START'), source: `athena.projectionStart of environment "${environment}"` },
      },
      runId,
    );
  } catch (error) {
    // fetchWindows logged each window's failure with its window; this line is the invocation's verdict.
    logger.error('Fetch run failed', { runId, error });
    throw error;
  } finally {
    deadline?.clear();
  }
};
