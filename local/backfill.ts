import { relative, resolve } from 'node:path';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { loadCatalog } from '../config/reports/index.js';
import { ConfigurationError } from '../functions/core/errors.js';
import { validateGatewayUrl } from '../functions/core/gateway-request.js';
import type { ReportWindow } from '../functions/core/window.js';
import { lambdaWindowRunner } from './backfill-lambda.js';
import { startProgress } from './backfill-progress.js';
import { backfillWindows, runBackfill, summaryLines, windowName, type BackfillSummary, type WindowResult } from './backfill-runner.js';
import { loadedReason } from './backfill-skip.js';
import { startLocalPipeline, type WindowOutcome } from './pipeline.js';
import { readSecretFile } from './secret-file.js';

/**
 * `reports backfill`: every window of [--from, --to) through the pipeline, a few at a time, with progress
 * and a closing summary. Locally through the embedded pipeline (local/pipeline.ts, the `run` flags); with
 * --deployed by invoking the deployed fetch function (backfill-lambda.ts). The scheduling itself is
 * backfill-runner.ts.
 *
 * Safe to re-run: every key is a pure function of (report, window), so a window run again overwrites its
 * objects. Locally a window whose manifest says it loaded is skipped unless --force; deployed, nothing is
 * skipped (see the README: the manifests live in a bucket this command does not assume access to).
 */

export interface BackfillCommandOptions {
  report: string;
  from: string;
  to: string;
  /** Windows in flight at once (default 2: the fetch function's reserved concurrency). */
  concurrency: number;
  force?: boolean;
  // Local mode, as `reports run`.
  gatewayUrl?: string;
  secretFile?: string;
  lake: string;
  s3Endpoint?: string;
  // Deployed mode.
  deployed?: boolean;
  functionName?: string;
  region?: string;
  /** Progress style; default: a bar when stderr is a terminal. */
  tty?: boolean;
}

/**
 * SDK attempts per invocation. A throttled Invoke (429: the function's reserved concurrency is taken, e.g.
 * by a scheduled run at the same time) is retried with backoff; 6 rides out a few minutes of that. A retry
 * after a broken connection runs the window again, which only overwrites its own keys.
 */
const INVOKE_MAX_ATTEMPTS = 6;

/** A path as the user would type it: relative below the working directory, absolute elsewhere. */
const show = (path: string) => {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? resolve(path) : rel;
};
const count = (n: number) => n.toLocaleString('en-US');
const kib = (bytes: number) => (bytes < 10_240 ? `${bytes} B` : `${Math.round(bytes / 1024).toLocaleString('en-US')} KiB`);

/** One local window's outcome as the runner's result: typed failures keep their code; the stage says which step. */
export function localResult(outcome: WindowOutcome): WindowResult {
  if (outcome.status === 'failed') {
    const error = outcome.error ?? { stage: 'parse' as const, code: 'Unexpected' as const, message: 'the load failed without an error' };
    return { ok: false, code: error.code, message: `(${error.stage}) ${error.message}` };
  }
  if (outcome.status === 'not-parsed') return { ok: true, detail: `PDF kept raw, ${kib(outcome.bytes)}` };
  const rejected = outcome.rowsRejected ? `, ${count(outcome.rowsRejected)} rejected` : '';
  return { ok: true, detail: `${count(outcome.rowsWritten)} rows${rejected}, ${kib(outcome.bytes)} raw -> ${kib(outcome.parquetBytes)} Parquet` };
}

function checkFlags(opts: BackfillCommandOptions): void {
  if (opts.deployed) {
    if (!opts.functionName) throw new ConfigurationError('--deployed needs --function-name: the fetch function of the stack (its name or ARN).');
    const local = [opts.gatewayUrl && '--gateway-url', opts.secretFile && '--secret-file', opts.s3Endpoint && '--s3-endpoint'].filter(Boolean);
    if (local.length) {
      throw new ConfigurationError(`${local.join(', ')} only apply to a local backfill: the deployed function has its own gateway, secret and buckets.`);
    }
    if (opts.force) throw new ConfigurationError('--force only applies to a local backfill: a deployed backfill skips nothing, it re-runs every window.');
    return;
  }
  if (opts.functionName || opts.region) throw new ConfigurationError('--function-name and --region go with --deployed.');
  if (opts.gatewayUrl && !opts.secretFile) {
    throw new ConfigurationError('--gateway-url needs --secret-file: the JSON with the login and the control key or private key.');
  }
  if (opts.secretFile && !opts.gatewayUrl) {
    throw new ConfigurationError('--secret-file goes with --gateway-url: the embedded simulator has its own test accounts.');
  }
  if (opts.gatewayUrl) validateGatewayUrl(opts.gatewayUrl);
}

export async function runBackfillCommand(
  opts: BackfillCommandOptions,
  print: (line: string) => void = (l) => console.log(l),
): Promise<BackfillSummary> {
  checkFlags(opts);
  // As in runLocal: the SDK's Node 22 notice would land in the middle of the progress output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const report = loadCatalog().get(opts.report);
  const windows = backfillWindows(report, opts.from, opts.to);
  const range = `${windowName(windows[0]!)} .. ${windowName(windows.at(-1)!)}`;
  const plan = `Backfill of "${report.id}": ${windows.length} ${report.window} window(s) ${range}, ${opts.concurrency} at a time`;

  const execute = async (runWindow: (w: ReportWindow) => Promise<WindowResult>, isLoaded?: (w: ReportWindow) => Promise<string | false>) => {
    const progress = startProgress(windows.length, { tty: opts.tty, log: print });
    try {
      return await runBackfill({ windows, concurrency: opts.concurrency, runWindow, isLoaded, force: opts.force, onWindow: (r) => progress.window(r) });
    } finally {
      progress.stop();
    }
  };

  let summary: BackfillSummary;
  if (opts.deployed) {
    const client = new LambdaClient({ ...(opts.region ? { region: opts.region } : {}), maxAttempts: INVOKE_MAX_ATTEMPTS });
    try {
      print(`${plan}, by invoking ${opts.functionName}${opts.region ? ` in ${opts.region}` : ''}.`);
      summary = await execute(lambdaWindowRunner({ client, functionName: opts.functionName!, reportId: report.id }));
    } finally {
      client.destroy();
    }
  } else {
    const secret = opts.secretFile ? await readSecretFile(opts.secretFile) : undefined;
    const pipeline = await startLocalPipeline({ reportId: report.id, gatewayUrl: opts.gatewayUrl, secret, lakeDir: opts.lake, s3Endpoint: opts.s3Endpoint });
    try {
      const gateway = pipeline.simulator ? `the embedded simulator (${pipeline.endpointUrl})` : pipeline.endpointUrl;
      const store = pipeline.lake ? `lake ${show(opts.lake)}` : `S3 ${pipeline.s3Endpoint}`;
      print(`${plan}, locally: ${gateway} as "${pipeline.login}" (${pipeline.signatureMethod}), ${store}.`);
      summary = await execute(
        async (w) => localResult(await pipeline.runWindow(w)),
        (w) => loadedReason(pipeline.s3, pipeline.buckets.curated, report.id, w),
      );
    } finally {
      await pipeline.close();
    }
  }
  for (const line of summaryLines(summary, report.id)) print(line);
  return summary;
}
