import { showPath as show } from '../../functions/core/shown-path.js';
import { showCount as count, showKib as kib } from '../args/display.js';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { validateGatewayUrl } from '../../functions/core/gateway/request.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import { lambdaWindowRunner } from '../pipeline/backfill-lambda.js';
import { startProgress, type BackfillProgress } from '../pipeline/backfill-progress.js';
import {
  backfillWindows,
  interruptedLines,
  runBackfill,
  summaryLines,
  windowName,
  type BackfillSummary,
  type WindowReport,
  type WindowResult,
} from '../pipeline/backfill-runner.js';
import { loadedReason } from '../pipeline/backfill-skip.js';
import { refuseIncompleteWindows } from '../pipeline/incomplete-window.js';
import { localProjectionSetting } from '../args/projection-setting.js';
import { refuseUnprojectedWindows } from '../../functions/core/lake/partition-projection.js';
import { onInterrupt } from '../pipeline/interrupt.js';
import { ensureWritableDir } from '../lake/lake-thread.js';
import { startLocalPipeline, type LocalPipeline, type WindowOutcome } from '../pipeline/pipeline.js';
import { findingsOf } from '../pipeline/check-summary.js';
import { readSecretFile } from '../args/secret-file.js';
import { simulatorVolume } from '../args/option-values.js';

/**
 * `reports backfill`: every window of [--from, --to) through the pipeline, a few at a time, with progress
 * and a closing summary. Locally through the embedded pipeline (local/pipeline/pipeline.ts, the `run` flags); with
 * --deployed by invoking the deployed fetch function (local/pipeline/backfill-lambda.ts). The scheduling itself is
 * local/pipeline/backfill-runner.ts.
 *
 * Safe to re-run: every key is a pure function of (report, window), so a window run again overwrites its
 * objects. Locally a window whose manifest says it loaded is skipped unless --force; deployed, nothing is
 * skipped (see the README: the manifests live in a bucket this command does not assume access to).
 */

export interface BackfillCommandOptions {
  /** Default: the catalog's only report. */
  report?: string;
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
  /** Load windows that have not ended yet in the report's time zone (refused otherwise). */
  allowIncomplete?: boolean;
  /** `--weekday-volume`, `--drop-date`: the embedded simulator's volume shape (local/simulator/volume.ts). */
  weekdayVolume?: string;
  dropDate?: string[];
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

/** One local window's outcome as the runner's result: typed failures keep their code; the stage says which step. */
export function localResult(outcome: WindowOutcome): WindowResult {
  if (outcome.status === 'failed') {
    const error = outcome.error ?? { stage: 'parse' as const, code: 'Unexpected' as const, message: 'the load failed without an error' };
    return { ok: false, code: error.code, message: `(${error.stage}) ${error.message}` };
  }
  if (outcome.status === 'not-parsed') return { ok: true, detail: `PDF kept raw, ${kib(outcome.bytes)}` };
  const rejected = outcome.rowsRejected ? `, ${count(outcome.rowsRejected)} rejected` : '';
  const findings = findingsOf(outcome.manifest?.checks);
  return {
    ok: true,
    detail: `${count(outcome.rowsWritten)} rows${rejected}, ${kib(outcome.bytes)} raw -> ${kib(outcome.parquetBytes)} Parquet`,
    ...(findings.length ? { findings } : {}),
  };
}

function checkFlags(opts: BackfillCommandOptions): void {
  if (opts.deployed) {
    if (!opts.functionName) throw new ConfigurationError('--deployed needs --function-name: the fetch function of the stack (its name or ARN).');
    const local = [
      opts.gatewayUrl && '--gateway-url',
      opts.secretFile && '--secret-file',
      opts.s3Endpoint && '--s3-endpoint',
      opts.weekdayVolume !== undefined && '--weekday-volume',
      opts.dropDate?.length && '--drop-date',
    ].filter(Boolean);
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
  const report = loadCatalog().chosen(opts.report);
  const windows = backfillWindows(report, opts.from, opts.to);
  refuseIncompleteWindows(report, windows, { allowIncomplete: opts.allowIncomplete });
  // Athena would never show a window outside its projected dates: refuse it before anything is fetched.
  refuseUnprojectedWindows(report.id, windows, localProjectionSetting(), new Date());
  if (!opts.deployed) await ensureWritableDir(opts.lake);
  const range = `${windowName(windows[0]!)} .. ${windowName(windows.at(-1)!)}`;
  const plan = `Backfill of "${report.id}": ${windows.length} ${report.window} window(s) ${range}, ${opts.concurrency} at a time`;

  // What has happened so far, for the Ctrl-C summary: windows as they end, and those in flight.
  const ended: WindowReport[] = [];
  const inFlight = new Set<ReportWindow>();
  let progress: BackfillProgress | undefined;
  let pipeline: LocalPipeline | undefined;
  const stopListening = onInterrupt(() => {
    // The bar hid the cursor and turned line wrap off: give the terminal back before saying anything.
    progress?.stop();
    const abandoned = (pipeline?.abandonInFlight() ?? []).map((r) => r.window);
    for (const line of interruptedLines({ windows, ended, inFlight: [...inFlight], abandoned, deployed: Boolean(opts.deployed) })) print(line);
  });

  const execute = async (runWindow: (w: ReportWindow) => Promise<WindowResult>, isLoaded?: (w: ReportWindow) => Promise<string | false>) => {
    const shown = startProgress(windows.length, { tty: opts.tty, log: print });
    progress = shown;
    const tracked = async (w: ReportWindow) => {
      inFlight.add(w);
      try {
        return await runWindow(w);
      } finally {
        inFlight.delete(w);
      }
    };
    const onWindow = (r: WindowReport) => {
      ended.push(r);
      shown.window(r);
    };
    try {
      return await runBackfill({ windows, concurrency: opts.concurrency, runWindow: tracked, isLoaded, force: opts.force, onWindow });
    } finally {
      shown.stop();
    }
  };

  let summary: BackfillSummary;
  try {
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
      const volume = simulatorVolume(opts);
      const local = await startLocalPipeline({
        gatewayUrl: opts.gatewayUrl,
        secret,
        lakeDir: opts.lake,
        s3Endpoint: opts.s3Endpoint,
        ...(volume ? { simulator: { volume } } : {}),
      });
      pipeline = local;
      try {
        const connection = await local.connection(report.connection);
        const gateway = connection.simulator ? `the embedded simulator (${connection.endpointUrl})` : connection.endpointUrl;
        const store = local.lake ? `lake ${show(opts.lake)}` : `S3 ${local.s3Endpoint}`;
        print(`${plan}, locally: ${gateway} as "${connection.login}" (${connection.signatureMethod}), ${store}.`);
        summary = await execute(
          async (w) => localResult(await local.runWindow(report.id, w)),
          (w) => loadedReason(local.s3, local.buckets.curated, report.id, w),
        );
      } finally {
        await local.close();
      }
    }
  } finally {
    stopListening();
  }
  for (const line of summaryLines(summary, report.id)) print(line);
  return summary;
}

/** The command's exit code: 1 when a window did not load (failed, or not tried after a failure that stops the run). */
export async function backfillCommand(opts: BackfillCommandOptions): Promise<number> {
  const summary = await runBackfillCommand(opts);
  return summary.failed.length || summary.notTried ? 1 : 0;
}
