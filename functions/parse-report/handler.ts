import { randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { loadCatalog } from '../../config/reports/index.js';
import type { ReportCatalog } from '../core/report-catalog.js';
import { functionS3Client, requiredEnv } from '../aws/env.js';
import { logger, metrics } from '../aws/powertools.js';
import { handleParseBatch } from './sqs-batch.js';

/**
 * The parse function: SQS batches of S3 ObjectCreated notifications from the raw bucket in; Parquet,
 * rejected rows and manifests in the curated bucket out; {batchItemFailures} back to SQS. Everything but
 * reading the environment lives in sqs-batch.ts and parse-object.ts.
 *
 * Environment: CURATED_BUCKET, PIPELINE_ENVIRONMENT (+ POWERTOOLS_*). The raw bucket comes from each event.
 */

let catalog: ReportCatalog | undefined;

export const handler = async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
  if (context) logger.addContext(context);
  const runId = context?.awsRequestId ?? randomUUID();
  return handleParseBatch(
    event,
    {
      catalog: (catalog ??= loadCatalog()),
      s3: functionS3Client(),
      curatedBucket: requiredEnv('CURATED_BUCKET'),
      environment: requiredEnv('PIPELINE_ENVIRONMENT'),
      logger,
      metrics,
    },
    runId,
  );
};
