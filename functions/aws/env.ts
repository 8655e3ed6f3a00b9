import { ConfigurationError } from '../core/errors.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from './s3-client.js';
import { tracer } from './powertools.js';

/** Environment variables of the functions (set by the stack, lib/constructs/fetch.ts and lib/constructs/parse.ts). */

/** A variable the function cannot run without: missing, the error names it and who sets it. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new ConfigurationError(`Environment variable ${name} is not set. The stack sets it on the function; set it yourself when invoking the handler elsewhere.`);
  }
  return value;
}

let s3: { endpoint: string | undefined; client: S3Client } | undefined;

/**
 * The functions' S3 client, made once per container (connections are reused across invocations) and traced.
 * AWS_ENDPOINT_URL_S3 (the SDK's own variable for an S3-compatible endpoint) also switches on path-style
 * addressing and on-demand checksums, which such stores need (s3-client.ts): tests point the real handler
 * at the local lake this way.
 */
export function functionS3Client(): S3Client {
  const endpoint = process.env.AWS_ENDPOINT_URL_S3 || undefined;
  if (!s3 || s3.endpoint !== endpoint) {
    s3 = { endpoint, client: tracer.captureAWSv3Client(createS3Client(endpoint ? { endpoint } : {})) };
  }
  return s3.client;
}
