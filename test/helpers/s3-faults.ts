import { S3ServiceException, type S3Client } from '@aws-sdk/client-s3';

/**
 * S3 failures on demand, for an S3Client the code under test uses (the handlers' functionS3Client(), the local
 * lake's client): a middleware at the `initialize` step, i.e. before the SDK's own retries, so an injected
 * failure is what the caller sees after S3 kept failing. It also records every command the client sends,
 * so a test can show that a multipart upload was created, fed and aborted.
 */

export interface SentCommand {
  command: string;
  bucket?: string;
  key?: string;
  uploadId?: string;
  partNumber?: number;
  /** Set when this call was failed on purpose. */
  injected?: boolean;
}

export interface FaultRule {
  /** The command name, e.g. "UploadPartCommand", "CompleteMultipartUploadCommand", "PutObjectCommand". */
  command: string;
  /** Only calls whose Key passes count (default: all). */
  key?: (key: string) => boolean;
  /** Fail the nth matching call (1-based) ... */
  nth: number;
  /** ... and this many after it (default 1: only the nth). */
  times?: number;
  /** Runs just before the failure is thrown (e.g. to look at the bucket at that moment). */
  before?: (call: SentCommand) => Promise<void> | void;
  /** What is thrown (default: s3InternalError). */
  error?: (call: SentCommand) => Error;
}

export interface S3FaultInjector {
  readonly sent: readonly SentCommand[];
  /** Calls failed so far. */
  readonly injected: number;
  /** Commands sent for keys passing `key`, in order: ["CreateMultipartUploadCommand", "UploadPartCommand", ...]. */
  commandsFor(key: (key: string) => boolean): string[];
  remove(): void;
}

/** An S3-shaped server error: what the SDK throws once its retries are spent. */
export function s3InternalError(call: SentCommand): Error {
  return Object.assign(new Error(`We encountered an internal error. Please try again. (injected into ${call.command} of ${call.key ?? '?'})`), {
    name: 'InternalError',
    $fault: 'server',
    $metadata: { httpStatusCode: 500, attempts: 3 },
  });
}

/**
 * S3's 403 as the SDK throws it: what a GET answers for a key the caller may not read, and also for a missing key when
 * the caller may not list it (the GetObject API page), which s3rver, granting everything, never sends.
 */
export function s3AccessDenied(call: SentCommand): Error {
  return new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: `Access Denied (injected into ${call.command} of ${call.key ?? '?'})` });
}

let installed = 0;

export function injectS3Faults(client: S3Client, rules: FaultRule[] = []): S3FaultInjector {
  const name = `reliability-s3-faults-${++installed}`;
  const sent: SentCommand[] = [];
  const counts = rules.map(() => 0);
  let injected = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Bucket?: string; Key?: string; UploadId?: string; PartNumber?: number };
      const call: SentCommand = {
        command: context.commandName ?? 'unknown',
        bucket: input.Bucket,
        key: input.Key,
        uploadId: input.UploadId,
        partNumber: input.PartNumber,
      };
      sent.push(call);
      for (const [i, rule] of rules.entries()) {
        if (rule.command !== call.command || (rule.key && !rule.key(call.key ?? ''))) continue;
        const n = ++counts[i]!;
        if (n >= rule.nth && n < rule.nth + (rule.times ?? 1)) {
          call.injected = true;
          injected++;
          await rule.before?.(call);
          throw (rule.error ?? s3InternalError)(call);
        }
      }
      return next(args);
    },
    { step: 'initialize', name, override: true },
  );
  return {
    sent,
    get injected() {
      return injected;
    },
    commandsFor: (key) => sent.filter((c) => c.key !== undefined && key(c.key)).map((c) => c.command),
    remove: () => {
      client.middlewareStack.remove(name);
    },
  };
}
