import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { stackName } from '../../functions/core/naming.js';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { requireAwsAccess } from '../args/aws-access.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { selectFeeds } from '../args/report-selection.js';
import type { Feed } from '../../functions/core/connections/feed.js';
import { moveLegacyLayout } from '../pipeline/legacy-layout.js';
import { rawKey } from '../../functions/core/lake/s3-keys.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import { startProgress, type BackfillProgress } from '../pipeline/backfill-progress.js';
import {
  backfillWindows,
  combineSummaries,
  multiReportLine,
  runBackfill,
  windowName,
  type BackfillSummary,
  type MultiReportSummary,
  type WindowReport,
} from '../pipeline/backfill-runner.js';
import { onInterrupt } from '../pipeline/interrupt.js';
import { refusePdf } from '../pipeline/raw-objects.js';
import { lambdaReparser } from '../pipeline/reparse-lambda.js';
import { REPARSE_SLOTS } from '../../lib/constructs/parse.js';
import { localReparser } from '../pipeline/reparse-local.js';
import { reparseInterruptedLines, reparseSummaryLines, type ReparseTotals } from '../pipeline/reparse-summary.js';
import type { Reparser } from '../pipeline/reparse-window.js';

/**
 * `reports reparse [--report ID]… --from D --to D`: rebuilds the windows' Parquet, rejects and manifests from the raw
 * files already stored, through the parse step's own code with the current definition. It never calls the gateway.
 * Locally on the lake (--lake, default ./.lake: local/pipeline/reparse-local.ts); with --environment NAME by
 * invoking that deployment's parse function (local/pipeline/reparse-lambda.ts). The windows run through backfill's
 * runner and progress (a window without a raw file is reported as such), then a summary.
 *
 * Idempotent: keys are a function of report and window, so a window rebuilt twice holds the same files. A window
 * whose raw file no longer parses (its header is not the definition's) fails with the usual typed error and keeps
 * the table file it had; the other windows go on.
 */

export interface ReparseCommandOptions {
  /** Reports to rebuild (`--report`, repeatable); default: every report of the catalog. */
  report?: string | string[];
  /** Connections to rebuild them over (`--connection`, repeatable); default: every connection of each report. */
  connection?: string | string[];
  from: string;
  to: string;
  /** Local mode: the lake directory (default ./.lake). */
  lake?: string;
  /** Deployed mode: the environment whose parse function rebuilds the windows. */
  environment?: string;
  region?: string;
  /** Windows in flight at once (default 2). */
  concurrency?: number;
  /** Progress style; default: a bar when stderr is a terminal. */
  tty?: boolean;
}

/** The clients of the deployed mode, replaceable in tests. */
export interface DeployedClients {
  cloudFormation: CloudFormationClient;
  lambda: LambdaClient;
  s3: S3Client;
}

/** SDK attempts per call, as backfill: a throttled Invoke is retried; a retried window only rebuilds the same keys. */
const MAX_ATTEMPTS = 6;

/** The stack outputs the deployed mode needs (lib/reports-pipeline-stack.ts writes them). */
const OUTPUTS = ['ParseFunctionName', 'RawBucketName', 'CuratedBucketName'] as const;

/**
 * Why a deployed reparse may not run this many windows at once, or undefined. With a parse reservation the queue's
 * poller may use all but REPARSE_SLOTS of it (lib/constructs/parse.ts): more invocations here would take the queue's
 * slots, and its throttled receives would send queued files to the dead-letter queue. Without one the function draws
 * on the account's unreserved concurrency, as the queue does.
 */
export function reparseConcurrencyProblem(reservedConcurrency: number | null, concurrency: number): string | undefined {
  if (reservedConcurrency === null || concurrency <= REPARSE_SLOTS) return undefined;
  return (
    `--concurrency ${concurrency} is more than the ${REPARSE_SLOTS} invocations the parse function's reservation (${reservedConcurrency}) keeps ` +
    `beside its queue: give --concurrency ${REPARSE_SLOTS} or less, so that the queue's files are not throttled into its dead-letter queue.`
  );
}

async function deployedReparser(opts: ReparseCommandOptions, feed: Feed, clients?: DeployedClients): Promise<Reparser> {
  const { loadEnvironments } = await import('../../lib/environment/environments.js');
  const config = loadEnvironments().find((e) => e.name === opts.environment);
  if (!config) throw new ConfigurationError(`No environment "${opts.environment}" in config/environments/: ${loadEnvironments().map((e) => e.name).join(', ')}.`);
  const refusal = reparseConcurrencyProblem(config.parse.reservedConcurrency, opts.concurrency ?? 2);
  if (refusal) throw new ConfigurationError(refusal);
  const region = opts.region ?? config.region;
  const clientConfig = { ...(region ? { region } : {}), maxAttempts: MAX_ATTEMPTS };
  const c = clients ?? { cloudFormation: new CloudFormationClient(clientConfig), lambda: new LambdaClient(clientConfig), s3: new S3Client(clientConfig) };
  if (!clients) await requireAwsAccess(c.cloudFormation, `pass --region, or set "region" in config/environments/${config.name}.json`);
  const name = stackName(config.name);
  let stack;
  try {
    stack = (await c.cloudFormation.send(new DescribeStacksCommand({ StackName: name }))).Stacks?.[0];
  } catch (e) {
    const why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    throw new ConfigurationError(`Could not read the stack ${name} (${why}): deploy it, or check the region and that your credentials allow cloudformation:DescribeStacks.`, { cause: e });
  }
  const outputs = Object.fromEntries((stack?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
  const missing = OUTPUTS.filter((k) => !outputs[k]);
  if (missing.length) {
    throw new ConfigurationError(`The stack ${name} has no output ${missing.join(', ')}: deploy this version (npx cdk deploy ${name}), then run the reparse again.`);
  }
  const reparser = lambdaReparser({
    lambda: c.lambda,
    s3: c.s3,
    functionName: outputs.ParseFunctionName!,
    rawBucket: outputs.RawBucketName!,
    curatedBucket: outputs.CuratedBucketName!,
    region,
    feed,
  });
  return {
    ...reparser,
    close: async () => {
      if (clients) return;
      for (const client of Object.values(c)) client.destroy();
    },
  };
}

export async function runReparseCommand(
  opts: ReparseCommandOptions,
  print: (line: string) => void = (l) => console.log(l),
  clients?: DeployedClients,
): Promise<MultiReportSummary> {
  if (opts.environment && opts.lake) {
    throw new ConfigurationError('--lake is the local lake and --environment a deployment: give one (a deployed reparse re-drives that environment\'s parse function).');
  }
  if (opts.region && !opts.environment) throw new ConfigurationError('--region goes with --environment.');
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const catalog = loadCatalog();
  const planned = plannedReports(catalog, opts, print);
  // The layout before feeds (no connection= directory): its raw files are moved into the new layout first, so the
  // windows below rebuild them like any other (docs/deploy.md, "Moving to feeds").
  if (!opts.environment) {
    const moved = moveLegacyLayout(opts.lake ?? './.lake', [...new Set(planned.map((p) => p.report))]);
    for (const line of moved) print(line);
  }
  const summaries: Array<{ reportId: string; connection: string; summary: BackfillSummary }> = [];
  for (const [i, { feed, windows }] of planned.entries()) {
    if (i > 0) print('');
    const reparser = opts.environment ? await deployedReparser(opts, feed, clients) : await localReparser({ lakeDir: opts.lake ?? './.lake', feed, catalog });
    summaries.push({ reportId: feed.reportId, connection: feed.connection, summary: await reparseReport(feed, windows, reparser, opts, print) });
  }
  const all = combineSummaries(summaries);
  for (const line of multiReportLine('Reparse', all)) print(line);
  return all;
}

/**
 * The feeds (`--report` and `--connection`, repeatable; none: every report over every one of its connections) and
 * their windows; a PDF report, kept raw, has nothing to rebuild.
 */
function plannedReports(catalog: ReportCatalog, opts: ReparseCommandOptions, print: (line: string) => void): Array<{ report: ReportDefinition; feed: Feed; windows: ReportWindow[] }> {
  const asked = opts.report === undefined ? [] : typeof opts.report === 'string' ? [opts.report] : opts.report;
  const feeds = selectFeeds(catalog, opts.report, opts.connection);
  const selected = [...new Set(feeds.map((f) => f.report))];
  const planned: Array<{ report: ReportDefinition; feed: Feed; windows: ReportWindow[] }> = [];
  for (const report of selected) {
    try {
      refusePdf(report);
      const windows = backfillWindows(report, opts.from, opts.to, 'reparse');
      for (const feed of feeds.filter((f) => f.report === report)) planned.push({ report, feed, windows });
    } catch (e) {
      // A report someone named must reparse; among every report, one with nothing to rebuild is only noted.
      if (asked.length || selected.length === 1 || !(e instanceof ConfigurationError)) throw e;
      print(`Report "${report.id}" is left out: ${e.message}`);
    }
  }
  if (!planned.length) throw new ConfigurationError(`No report has a window to rebuild in [${opts.from}, ${opts.to}).`);
  return planned;
}

/** One report's windows rebuilt, a few at a time, with progress and its summary; Ctrl-C says what is done. */
async function reparseReport(feed: Feed, windows: ReportWindow[], reparser: Reparser, opts: ReparseCommandOptions, print: (line: string) => void): Promise<BackfillSummary> {
  const report = feed.report;
  const concurrency = opts.concurrency ?? 2;
  const ended: WindowReport[] = [];
  const inFlight = new Set<ReportWindow>();
  let progress: BackfillProgress | undefined;
  const stopListening = onInterrupt(() => {
    // The bar hid the cursor and turned line wrap off: give the terminal back before saying anything.
    progress?.stop();
    const abandoned = reparser.abandon([...inFlight]);
    for (const line of reparseInterruptedLines({ windows, ended, inFlight: [...inFlight], abandoned, deployed: Boolean(opts.environment) })) print(line);
  });

  const totals: ReparseTotals = { rowsWritten: 0, rowsRejected: 0 };
  let summary: BackfillSummary;
  try {
    const raw = await reparser.rawObjects(windows);
    const range = `${windowName(windows[0]!)} .. ${windowName(windows.at(-1)!)}`;
    const where = opts.environment ? `${reparser.where} (environment ${opts.environment})` : reparser.where;
    print(
      `Reparse of "${report.id}"${report.connections.length > 1 ? ` over "${feed.connection}"` : ''}: ${windows.length} ${report.window} window(s) ${range} (${raw.size} with a raw file), ${concurrency} at a time, ` +
        `${where}, with the current definition; the gateway is not called.`,
    );
    const shown = startProgress(windows.length, { tty: opts.tty, log: print });
    progress = shown;
    try {
      summary = await runBackfill({
        windows,
        concurrency,
        // "Already done" in backfill's terms: here, nothing to rebuild.
        isLoaded: async (w) => (raw.has(rawKey(feed, w, report.format)) ? false : `no raw file at ${rawKey(feed, w, report.format)}: nothing to rebuild`),
        runWindow: async (w) => {
          inFlight.add(w);
          try {
            const outcome = await reparser.reparse(w, raw.get(rawKey(feed, w, report.format))!);
            totals.rowsWritten += outcome.rowsWritten;
            totals.rowsRejected += outcome.rowsRejected;
            return outcome.result;
          } finally {
            inFlight.delete(w);
          }
        },
        onWindow: (r) => {
          ended.push(r);
          shown.window(r);
        },
      });
    } finally {
      shown.stop();
    }
  } finally {
    stopListening();
    await reparser.close();
  }
  for (const line of reparseSummaryLines(summary, report.id, totals)) print(line);
  return summary;
}

/** The command's exit code: 1 when a window failed (a window without a raw file is not a failure: there is nothing to rebuild). */
export async function reparseCommand(opts: ReparseCommandOptions): Promise<number> {
  const summary = await runReparseCommand(opts);
  return summary.failed.length || summary.notTried ? 1 : 0;
}
