import { S3Client } from '@aws-sdk/client-s3';

export interface S3ClientOptions {
  /** An S3-compatible endpoint such as the local lake's "http://127.0.0.1:4568"; omit for AWS. */
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** SDK retry attempts per call (default 3, the SDK's own). */
  maxAttempts?: number;
  /**
   * Sign request bodies as UNSIGNED-PAYLOAD instead of with their SHA-256 (SigV4's x-amz-content-sha256).
   * For the embedded lake on loopback only: the SDK hashes every byte-array body (each multipart part)
   * on the caller's thread before sending it, a second SHA-256 pass over every report beside the one the
   * fetch keeps, protecting bytes that never leave the machine. Streamed bodies are unsigned already.
   */
  unsignedPayload?: boolean;
}

/**
 * The S3 client of the handlers, the local runner and the tests. In Lambda, pass nothing: region and
 * credentials come from the function's environment.
 *
 * With an endpoint (the local lake, s3rver), two settings are needed (docs/architecture.md, "Tooling facts"):
 * - forcePathStyle: s3rver serves buckets as /<bucket>/<key>, not <bucket>.host;
 * - request/response checksums only WHEN_REQUIRED: otherwise SDK v3 sends streamed bodies with
 *   aws-chunked framing and trailing checksums, which s3rver stores verbatim, framing included.
 */
export function createS3Client(options: S3ClientOptions = {}): S3Client {
  const local = options.endpoint !== undefined;
  const client = new S3Client({
    ...(options.region ? { region: options.region } : local ? { region: 'us-east-1' } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    ...(local
      ? {
          endpoint: options.endpoint,
          forcePathStyle: true,
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }
      : {}),
  });
  if (options.unsignedPayload) {
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        // The signer uses this header's value as the payload hash when it is set (@smithy/signature-v4).
        if (request.headers) request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
        return next(args);
      },
      { step: 'build', name: 'localLakeUnsignedPayload' },
    );
  }
  return client;
}
