import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { S3Client } from '@aws-sdk/client-s3';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { Feed } from '../../functions/core/connections/feed.js';
import { manifestKey } from '../../functions/core/lake/s3-keys.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import { openObjectStream } from '../../functions/aws/s3-streams.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { currentRawObjects } from './raw-objects.js';
import { NOT_LOADED, outcomeOfManifest, reparseEvent, type Reparser } from './reparse-window.js';

/**
 * `reports reparse --environment NAME`: the deployed parse function invoked synchronously (Lambda Invoke,
 * RequestResponse), once per window, with the event its queue would deliver for the window's current raw version.
 *
 * Why Invoke and not a message on the parse queue: the queue answers nothing, so the command could not say per
 * window what came of it; a synchronous invocation returns when the window is rebuilt or failed, and the manifest
 * the function wrote then says how many rows, or which typed error. (The stack does not output the queue's URL
 * either.) The function's SQS poller keeps handling S3's own events meanwhile: the reparse adds at most
 * --concurrency invocations beside it.
 *
 * Permissions: lambda:InvokeFunction on the parse function, s3:ListBucketVersions on the raw bucket, and, to read
 * each window's result, s3:GetObject on manifests/ of the curated bucket with kms:Decrypt on its key
 * (docs/cli.md, "reports reparse"); without the last, windows still rebuild, their rows are just not shown.
 */

/** The parse function's clock and this machine's may differ; a manifest started this long before the call is still its own. */
const CLOCK_SKEW_MS = 5 * 60_000;

interface LambdaErrorPayload {
  errorType?: string;
  errorMessage?: string;
}

async function readManifest(s3: S3Client, bucket: string, key: string): Promise<Partial<LoadManifest>> {
  const opened = await openObjectStream({ client: s3, bucket, key });
  return JSON.parse(Buffer.concat(await opened.body.toArray()).toString('utf8')) as Partial<LoadManifest>;
}

export function lambdaReparser(options: {
  lambda: LambdaClient;
  s3: S3Client;
  functionName: string;
  rawBucket: string;
  curatedBucket: string;
  region?: string;
  feed: Feed;
}): Reparser {
  const { lambda, s3, feed } = options;
  const report = feed.report;
  return {
    where: `by invoking ${options.functionName}${options.region ? ` in ${options.region}` : ''}`,
    async rawObjects(windows) {
      try {
        return await currentRawObjects(s3, options.rawBucket, feed, windows, { versioned: true });
      } catch (e) {
        const why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        throw new ConfigurationError(`Could not list the raw files of "${report.id}" in ${options.rawBucket} (${why}): your credentials need s3:ListBucketVersions on it.`, { cause: e });
      }
    },
    async reparse(window: ReportWindow, raw) {
      const started = Date.now();
      const response = await lambda.send(
        new InvokeCommand({
          FunctionName: options.functionName,
          InvocationType: 'RequestResponse',
          Payload: Buffer.from(JSON.stringify(reparseEvent(options.rawBucket, raw, options.region))),
        }),
      );
      const text = response.Payload?.length ? Buffer.from(response.Payload).toString('utf8') : '';
      let payload: unknown;
      try {
        payload = text ? JSON.parse(text) : undefined;
      } catch {
        payload = text;
      }
      let manifest: Partial<LoadManifest> | undefined;
      let unreadable: unknown;
      try {
        manifest = await readManifest(s3, options.curatedBucket, manifestKey(feed, window));
      } catch (e) {
        unreadable = e;
      }
      // This invocation's manifest: its request id, or (should the ids differ) the version it was given, read since the call.
      const ours =
        manifest !== undefined &&
        ((response.$metadata.requestId !== undefined && manifest.loadRunId === response.$metadata.requestId) ||
          (manifest.source?.versionId === raw.versionId && Date.parse(manifest.startedAt ?? '') >= started - CLOCK_SKEW_MS));
      if (response.FunctionError) {
        // The parse fails its batch when the file failed (Powertools: FullBatchFailureError); the manifest names the typed error.
        if (ours && manifest!.outcome === 'failed') return outcomeOfManifest(manifest!);
        const error = (payload && typeof payload === 'object' ? payload : {}) as LambdaErrorPayload;
        const message = error.errorMessage ?? (typeof payload === 'string' ? payload : `the function failed (${response.FunctionError})`);
        return { result: { ok: false, code: error.errorType ?? `Function${response.FunctionError}Error`, message }, rowsWritten: 0, rowsRejected: 0 };
      }
      if (ours) return outcomeOfManifest(manifest!);
      if (unreadable !== undefined) {
        const why = unreadable instanceof Error ? `${unreadable.name}: ${unreadable.message}` : String(unreadable);
        return {
          result: { ok: true, detail: `rebuilt; rows not shown: its manifest could not be read (${why}; needs s3:GetObject on manifests/ and kms:Decrypt)` },
          rowsWritten: 0,
          rowsRejected: 0,
        };
      }
      return NOT_LOADED;
    },
    // Invocations in flight finish in AWS, each writing whole files: nothing to clean up here.
    abandon: () => [],
    close: async () => undefined,
  };
}
