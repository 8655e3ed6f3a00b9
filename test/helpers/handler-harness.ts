import { readFileSync } from 'node:fs';
import type { Context } from 'aws-lambda';

/** What handler tests share: fixtures of real event shapes, a Lambda context, and the JSON lines Powertools prints. */

/**
 * test/fixtures/events/<name>, parsed: `unknown` unless the caller names its type (never inferred from where it goes, so
 * an overloaded handler picks the overload the caller means).
 */
export function eventFixture<T = unknown>(name: string): NoInfer<T> {
  return JSON.parse(readFileSync(new URL(`../fixtures/events/${name}`, import.meta.url), 'utf8')) as T;
}

/** A Lambda context as the runtime passes it (only what Powertools and the handlers read). */
export function lambdaContext(awsRequestId: string, functionName = 'paynet-reports-test-fn'): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-central-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2026/11/21/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => 300_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export interface Captured<T> {
  result?: T;
  error?: unknown;
  /** Every JSON object printed while `fn` ran: Powertools log lines and EMF metric records. */
  lines: Array<Record<string, unknown>>;
  /** The raw text of those lines, to search for what must never be printed. */
  text: string;
}

/**
 * Runs `fn`, collecting the JSON lines written to stdout and stderr meanwhile. Anything else written (the
 * test runner's own reporting) passes through untouched.
 */
export async function captureJsonLines<T>(fn: () => Promise<T>): Promise<Captured<T>> {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((s) => s.write.bind(s));
  streams.forEach((s, i) => {
    s.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string' && chunk.trimStart().startsWith('{')) {
        const parsed = chunk
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => {
            try {
              return JSON.parse(l) as Record<string, unknown>;
            } catch {
              return undefined;
            }
          });
        if (parsed.every((p) => p !== undefined)) {
          lines.push(...(parsed as Array<Record<string, unknown>>));
          raw.push(chunk);
          const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
          callback?.();
          return true;
        }
      }
      return (originals[i] as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof s.write;
  });
  const out: Captured<T> = { lines, text: '' };
  try {
    out.result = await fn();
  } catch (e) {
    out.error = e;
  } finally {
    streams.forEach((s, i) => (s.write = originals[i]!));
  }
  out.text = raw.join('');
  return out;
}

/**
 * The EMF records of one metric: [{value, dimensions}]. FetchOutcome is written per environment and, for a failure,
 * per report too (functions/aws/metrics.ts): `scope` keeps the records with (or without) the report dimension.
 */
export function metricPoints(
  lines: Array<Record<string, unknown>>,
  name: string,
  scope?: 'report' | 'environment',
): Array<{ value: number; dims: Record<string, unknown> }> {
  return lines
    .filter((l) => typeof l._aws === 'object' && name in l)
    .filter((l) => scope === undefined || dimensionSetOf(l).includes('report') === (scope === 'report'))
    .map((l) => ({ value: l[name] as number, dims: l }));
}

/** The dimension names of an EMF record (one set: emitMetric writes one per line). */
export function dimensionSetOf(line: Record<string, unknown>): string[] {
  const aws = line._aws as { CloudWatchMetrics?: Array<{ Dimensions?: string[][] }> } | undefined;
  return aws?.CloudWatchMetrics?.[0]?.Dimensions?.[0] ?? [];
}
