import { setTimeout as sleep } from 'node:timers/promises';
import { InvokeCommand, ResourceNotReadyException, type LambdaClient } from '@aws-sdk/client-lambda';
import { formatLocalDateTime, type ReportWindow } from '../../functions/core/time/window.js';
import type { WindowResult } from './backfill-runner.js';
import type { FeedKey } from '../../functions/core/connections/feed.js';

/**
 * The deployed mode of `reports backfill`: one synchronous invocation of the fetch function per window,
 * with the backfill request the function accepts (functions/fetch-report/fetch-event.ts):
 * `{"reportId", "connection", "from": window start, "to": window end}`, wall-clock date-times in the report's zone.
 *
 * One window per invocation, although the function takes up to 31: each window then gets its own result
 * and error code, a slow window cannot push others past the function's time-out, and the bounded
 * concurrency of the caller is what the gateway sees.
 *
 * "done" here means the raw file landed: the parse function picks it up asynchronously (S3 -> SQS), so
 * its failures show in the dead-letter queue, the alarms and the manifests, not in this command.
 */

export interface BackfillRequest extends FeedKey {
  from: string;
  to: string;
}

export const backfillRequest = (feed: FeedKey, window: ReportWindow): BackfillRequest => ({
  reportId: feed.reportId,
  connection: feed.connection,
  from: formatLocalDateTime(window.start),
  to: formatLocalDateTime(window.end),
});

/** Lambda's error payload for a function that threw: `errorType` is the error's name, which for PipelineErrors is their code. */
interface LambdaErrorPayload {
  errorType?: string;
  errorMessage?: string;
}

const decode = (payload: Uint8Array | undefined): unknown => {
  if (!payload?.length) return undefined;
  const text = Buffer.from(payload).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** A short account of what the function returned (its FetchedWindow list): bytes and keys, for the per-window line. */
function describeResult(result: unknown): string | undefined {
  const fetched = Array.isArray(result) ? result : (result as { windows?: unknown } | null)?.windows;
  if (Array.isArray(fetched)) {
    const bytes = fetched.reduce((sum: number, w) => sum + (Number((w as { bytes?: unknown }).bytes) || 0), 0);
    const keys = fetched.map((w) => (w as { key?: unknown }).key).filter((k): k is string => typeof k === 'string');
    return `${bytes} bytes${keys.length ? ` -> ${keys.join(', ')}` : ''}`;
  }
  return undefined;
}

/**
 * How long an invocation waits for a function that is not ready: a function in a VPC idle for weeks turns Inactive,
 * and Lambda answers ResourceNotReadyException until it has made the function's network interfaces again (usually a
 * minute or two; docs/deploy.md, "Governed accounts"). Tried again every 10 s for up to 5 minutes.
 */
export const NOT_READY_RETRY = { everyMs: 10_000, forMs: 5 * 60_000 };

export function lambdaWindowRunner(options: {
  client: LambdaClient;
  functionName: string;
  feed: FeedKey;
  notReady?: { everyMs: number; forMs: number };
}) {
  const notReady = options.notReady ?? NOT_READY_RETRY;
  return async (window: ReportWindow): Promise<WindowResult> => {
    const command = new InvokeCommand({
      FunctionName: options.functionName,
      InvocationType: 'RequestResponse',
      Payload: Buffer.from(JSON.stringify(backfillRequest(options.feed, window))),
    });
    const response = await invokeWhenReady(options.client, command, notReady);
    const payload = decode(response.Payload);
    if (response.FunctionError) {
      // "Unhandled" (the handler threw) or "Handled"; either way the payload names the error.
      const error = (payload && typeof payload === 'object' ? payload : {}) as LambdaErrorPayload;
      return {
        ok: false,
        code: error.errorType ?? `Function${response.FunctionError}Error`,
        message: error.errorMessage ?? (typeof payload === 'string' ? payload : `the function failed (${response.FunctionError})`),
      };
    }
    return { ok: true, detail: describeResult(payload) };
  };
}

/** Sends the invocation, again while Lambda says the function is not ready yet, for as long as `notReady` allows. */
async function invokeWhenReady(client: LambdaClient, command: InvokeCommand, notReady: { everyMs: number; forMs: number }) {
  for (let waited = 0; ; waited += notReady.everyMs) {
    try {
      return await client.send(command);
    } catch (e) {
      if (!(e instanceof ResourceNotReadyException) || waited + notReady.everyMs > notReady.forMs) throw e;
      await sleep(notReady.everyMs);
    }
  }
}
