import { randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { loadCatalog } from '../core/definitions/catalog-files.js';
import type { EncoderMode } from '../core/parquet/encoder-thread.js';
import { ConfigurationError } from '../core/errors.js';
import type { ReportCatalog } from '../core/definitions/catalog.js';
import { functionS3Client, requiredEnv } from '../aws/env.js';
import { logger, metrics } from '../aws/powertools.js';
import { handleParseBatch } from './sqs-batch.js';

/**
 * The parse function: SQS batches of S3 ObjectCreated notifications from the raw bucket in; Parquet,
 * rejected rows and manifests in the curated bucket out; {batchItemFailures} back to SQS. Everything but
 * reading the environment lives in sqs-batch.ts and parse-object.ts.
 *
 * Environment: CURATED_BUCKET, PIPELINE_ENVIRONMENT, PARQUET_ENCODER (+ POWERTOOLS_*). The raw bucket comes
 * from each event.
 */

let catalog: ReportCatalog | undefined;

const ENCODER_MODES: readonly EncoderMode[] = ['auto', 'worker', 'inline'];

/**
 * PARQUET_ENCODER: where Parquet encoding runs. The stack sets it from the memory size (lib/constructs/parse.ts says
 * why 'auto' misjudges Lambda's CPU share); unset means 'auto'. The worker script is parquet-worker.mjs
 * beside this bundle (lib/bundling/bundling.ts), where encoder-thread.ts looks for it.
 */
function encoderMode(): EncoderMode | undefined {
  const value = process.env.PARQUET_ENCODER;
  if (!value) return undefined;
  if (!(ENCODER_MODES as readonly string[]).includes(value)) {
    throw new ConfigurationError(`Environment variable PARQUET_ENCODER is "${value}"; it must be one of ${ENCODER_MODES.join(', ')}.`);
  }
  return value as EncoderMode;
}

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
      convert: { encoder: encoderMode() },
      logger,
      metrics,
    },
    runId,
  );
};
