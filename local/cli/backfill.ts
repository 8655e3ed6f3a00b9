import { showPath as show } from '../../functions/core/shown-path.js';
import { showCount as count, showKib as kib } from '../args/display.js';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { requireAwsAccess } from '../args/aws-access.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import { loadEnvironments } from '../../lib/environment/environments.js';
import { selectFeeds } from '../args/report-selection.js';
import { feedLabel, type Feed } from '../../functions/core/connections/feed.js';
import { parseConnectionFlags, realGatewaysOf } from '../connections/connection-flags.js';
import { localRequestBounds } from '../connections/request-bound.js';
import { lambdaWindowRunner } from '../pipeline/backfill-lambda.js';
import { startProgress, type BackfillProgress } from '../pipeline/backfill-progress.js';
import {
  backfillWindows,
  combineSummaries,
  interruptedLines,
  multiReportLine,
  runBackfill,
  summaryLines,
  windowName,
  type BackfillSummary,
  type MultiReportSummary,
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
  /** Reports to backfill (`--report`, repeatable); default: every report of the catalog. */
  report?: string | string[];
  /** Connections to backfill them over (`--connection`, repeatable); default: every connection of each report. */
  connection?: string | string[];
  from: string;
  to: string;
  /** Windows in flight at once (default 2: the fetch function's reserved concurrency). */
  concurrency: number;
  force?: boolean;
  // Local mode, as `reports run`: `[CONNECTION=]URL` and `[CONNECTION=]FILE`, repeatable.
  gatewayUrl?: string | string[];
  secretFile?: string | string[];
  lake: string;
  s3Endpoint?: string;
  // Deployed mode.
  deployed?: boolean;
  functionName?: string;
  region?: string;
  /** Deployed: whose maxConcurrentRequests cap the windows in flight per connection; default: the smallest of every environment file. */
  environment?: string;
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
      listOf(opts.gatewayUrl).length && '--gateway-url',
      listOf(opts.secretFile).length && '--secret-file',
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
  if (opts.functionName || opts.region || opts.environment) throw new ConfigurationError('--function-name, --region and --environment go with --deployed.');
}

const listOf = (v: string | readonly string[] | undefined): readonly string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);

/**
 * The feeds (each report over each of its connections, or those --connection names) and their windows of
 * [--from, --to), each refused before any work if a window is incomplete or unprojected.
 */
function plannedReports(catalog: ReportCatalog, opts: BackfillCommandOptions, print: (line: string) => void): Array<{ report: ReportDefinition; feed: Feed; windows: ReportWindow[] }> {
  const named = listOf(opts.report).length > 0;
  const feeds = selectFeeds(catalog, opts.report, opts.connection);
  const selected = [...new Set(feeds.map((f) => f.report))];
  const planned: Array<{ report: ReportDefinition; feed: Feed; windows: ReportWindow[] }> = [];
  for (const report of selected) {
    let windows: ReportWindow[];
    try {
      windows = backfillWindows(report, opts.from, opts.to);
    } catch (e) {
      // Among every report, one whose windows are longer than the range is left out, not a reason to stop.
      if (named || selected.length === 1 || !(e instanceof ConfigurationError)) throw e;
      print(`Report "${report.id}": no ${report.window} window starts in [${opts.from}, ${opts.to}), so it is not backfilled.`);
      continue;
    }
    refuseIncompleteWindows(report, windows, { allowIncomplete: opts.allowIncomplete });
    // Athena would never show a window outside its projected dates: refuse it before anything is fetched.
    refuseUnprojectedWindows(report.id, windows, localProjectionSetting(), new Date());
    for (const feed of feeds.filter((f) => f.report === report)) planned.push({ report, feed, windows });
  }
  if (!planned.length) throw new ConfigurationError(`No report has a window starting in [${opts.from}, ${opts.to}).`);
  return planned;
}

/** What the Ctrl-C handler reads: the report under way, its windows as they end and those in flight, and the reports after it. */
interface BackfillState {
  report?: ReportDefinition;
  windows: ReportWindow[];
  ended: WindowReport[];
  inFlight: Set<ReportWindow>;
  progress?: BackfillProgress;
  pipeline?: LocalPipeline;
  left: string[];
}

/** One report's windows through `runWindow`, a few at a time, with progress; its summary lines after. */
async function backfillReport(
  state: BackfillState,
  job: { report: ReportDefinition; windows: ReportWindow[]; concurrency: number; plan: string },
  opts: BackfillCommandOptions,
  print: (line: string) => void,
  runner: { runWindow: (w: ReportWindow) => Promise<WindowResult>; isLoaded?: (w: ReportWindow) => Promise<string | false> },
): Promise<BackfillSummary> {
  Object.assign(state, { report: job.report, windows: job.windows, ended: [], inFlight: new Set() });
  print(job.plan);
  const shown = startProgress(job.windows.length, { tty: opts.tty, log: print });
  state.progress = shown;
  const tracked = async (w: ReportWindow) => {
    state.inFlight.add(w);
    try {
      return await runner.runWindow(w);
    } finally {
      state.inFlight.delete(w);
    }
  };
  const onWindow = (r: WindowReport) => {
    state.ended.push(r);
    shown.window(r);
  };
  let summary: BackfillSummary;
  try {
    summary = await runBackfill({ windows: job.windows, concurrency: job.concurrency, runWindow: tracked, isLoaded: runner.isLoaded, force: opts.force, onWindow });
  } finally {
    shown.stop();
  }
  for (const line of summaryLines(summary, job.report.id)) print(line);
  return summary;
}

const planOf = (report: ReportDefinition, windows: readonly ReportWindow[], concurrency: number) =>
  `Backfill of "${report.id}": ${windows.length} ${report.window} window(s) ${windowName(windows[0]!)} .. ${windowName(windows.at(-1)!)}, ${concurrency} at a time`;

/** By invoking the deployed fetch function, each report at most its connection's maxConcurrentRequests windows at once. */
async function backfillDeployed(state: BackfillState, planned: ReturnType<typeof plannedReports>, opts: BackfillCommandOptions, print: (line: string) => void) {
  const boundOf = deployedBounds(opts.environment);
  const client = new LambdaClient({ ...(opts.region ? { region: opts.region } : {}), maxAttempts: INVOKE_MAX_ATTEMPTS });
  await requireAwsAccess(client, 'pass --region');
  const summaries: Array<{ reportId: string; connection: string; summary: BackfillSummary }> = [];
  try {
    for (const [at, { report, feed, windows }] of planned.entries()) {
      state.left = planned.slice(at + 1).map((p) => feedLabel(p.feed));
      const bound = boundOf(feed.connection);
      const concurrency = Math.min(opts.concurrency, bound.limit);
      const capped = concurrency < opts.concurrency ? ` (the connection "${feed.connection}" allows ${bound.limit}: ${bound.source})` : '';
      const plan = `${planOf(report, windows, concurrency)}${capped}, over connection "${feed.connection}", by invoking ${opts.functionName}${opts.region ? ` in ${opts.region}` : ''}.`;
      const runWindow = lambdaWindowRunner({ client, functionName: opts.functionName!, feed });
      summaries.push({ reportId: report.id, connection: feed.connection, summary: await backfillReport(state, { report, windows, concurrency, plan }, opts, print, { runWindow }) });
    }
  } finally {
    client.destroy();
  }
  return summaries;
}

/**
 * A deployed backfill adds its invocations to what the schedules send the same connection, so it keeps to that
 * connection's maxConcurrentRequests: of --environment's file, or without it the smallest any environment file gives.
 */
function deployedBounds(environment: string | undefined): (connection: string) => { limit: number; source: string } {
  if (environment === undefined) {
    const strictest = localRequestBounds();
    return (c) => ({ limit: strictest(c), source: 'the smallest maxConcurrentRequests of the environment files; --environment NAME reads one' });
  }
  const env = loadEnvironments().find((e) => e.name === environment);
  if (!env) throw new ConfigurationError(`--environment ${environment}: there is no environment file of that name (config/environments/<name>.json).`);
  return (c) => {
    const connection = env.connections.find((x) => x.name === c);
    if (!connection) throw new ConfigurationError(`--environment ${environment} defines no connection "${c}".`);
    return { limit: connection.maxConcurrentRequests, source: `maxConcurrentRequests of environment "${environment}"` };
  };
}

/** On this machine, through one pipeline for every report; each connection's requests within its bound (the pipeline's limiter). */
async function backfillLocally(
  state: BackfillState,
  planned: ReturnType<typeof plannedReports>,
  catalog: ReportCatalog,
  opts: BackfillCommandOptions,
  print: (line: string) => void,
) {
  const flags = parseConnectionFlags(opts, catalog.connections());
  const simulated = planned.some((p) => !flags.some((f) => f.connection === p.feed.connection));
  const volume = simulatorVolume({ ...opts, gatewayUrl: simulated ? undefined : 'given' });
  const local = await startLocalPipeline({
    catalog,
    gateways: await realGatewaysOf(flags),
    lakeDir: opts.lake,
    s3Endpoint: opts.s3Endpoint,
    ...(volume ? { simulator: { volume } } : {}),
  });
  state.pipeline = local;
  const summaries: Array<{ reportId: string; connection: string; summary: BackfillSummary }> = [];
  try {
    for (const [at, { report, feed, windows }] of planned.entries()) {
      state.left = planned.slice(at + 1).map((p) => feedLabel(p.feed));
      const connection = await local.connection(feed.connection);
      const gateway = connection.simulator ? `the embedded simulator (${connection.endpointUrl})` : connection.endpointUrl;
      const store = local.lake ? `lake ${show(opts.lake)}` : `S3 ${local.s3Endpoint}`;
      const over = planned.length > 1 ? `, connection "${connection.name}"` : '';
      const plan = `${planOf(report, windows, opts.concurrency)}, locally${over}: ${gateway} as "${connection.login}" (${connection.signatureMethod}), ${store}.`;
      const runner = {
        runWindow: async (w: ReportWindow) => localResult(await local.runWindow(feed, w)),
        isLoaded: (w: ReportWindow) => loadedReason(local.s3, local.buckets.curated, feed, w),
      };
      summaries.push({ reportId: report.id, connection: feed.connection, summary: await backfillReport(state, { report, windows, concurrency: opts.concurrency, plan }, opts, print, runner) });
    }
  } finally {
    await local.close();
  }
  return summaries;
}

export async function runBackfillCommand(
  opts: BackfillCommandOptions,
  print: (line: string) => void = (l) => console.log(l),
): Promise<MultiReportSummary> {
  checkFlags(opts);
  // As in runLocal: the SDK's Node 22 notice would land in the middle of the progress output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const catalog = loadCatalog();
  const planned = plannedReports(catalog, opts, print);
  if (!opts.deployed) await ensureWritableDir(opts.lake);

  // What has happened so far, for the Ctrl-C summary.
  const state: BackfillState = { windows: [], ended: [], inFlight: new Set(), left: [] };
  const stopListening = onInterrupt(() => {
    // The bar hid the cursor and turned line wrap off: give the terminal back before saying anything.
    state.progress?.stop();
    const abandoned = (state.pipeline?.abandonInFlight() ?? []).map((r) => r.window);
    // A window whose parse ended waits only for the lake to settle other windows: it is done (or failed), not in flight.
    const parsed = (state.pipeline?.parsedInFlight() ?? []).filter((p) => state.inFlight.has(p.window));
    const ended = [...state.ended, ...parsed.map((p): WindowReport => ({ window: p.window, status: p.status === 'failed' ? 'failed' : 'done', ms: 0 }))];
    const inFlight = [...state.inFlight].filter((w) => !parsed.some((p) => p.window === w));
    for (const line of interruptedLines({ windows: state.windows, ended, inFlight, abandoned, deployed: Boolean(opts.deployed) })) print(line);
    if (state.left.length) print(`Not started: ${state.left.join(', ')}.`);
  });
  try {
    const summaries = opts.deployed ? await backfillDeployed(state, planned, opts, print) : await backfillLocally(state, planned, catalog, opts, print);
    const all = combineSummaries(summaries);
    for (const line of multiReportLine('Backfill', all)) print(line);
    return all;
  } finally {
    stopListening();
  }
}

/** The command's exit code: 1 when a window did not load (failed, or not tried after a failure that stops the run). */
export async function backfillCommand(opts: BackfillCommandOptions): Promise<number> {
  const summary = await runBackfillCommand(opts);
  return summary.failed.length || summary.notTried ? 1 : 0;
}
