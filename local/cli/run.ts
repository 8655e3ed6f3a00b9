import { resolve } from 'node:path';
import { showPath as show } from '../../functions/core/shown-path.js';
import { showCount as count, showKib as kib } from '../args/display.js';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { GatewaySecret } from '../../functions/core/gateway/signature-methods.js';
import { ConfigurationError, RUN_STOPPING_CODES, type ErrorCode } from '../../functions/core/errors.js';
import { validateGatewayUrl } from '../../functions/core/gateway/request.js';
import { formatLocalDate, formatLocalDateTime, parseWindowSize, windowsStartingIn, type ReportWindow } from '../../functions/core/time/window.js';
import { parseSampleOptions, simulatorVolume } from '../args/option-values.js';
import type { VolumeShape } from '../simulator/volume.js';
import { windowRangeOf } from '../args/windows.js';
import { refuseIncompleteWindows } from '../pipeline/incomplete-window.js';
import { localProjectionSetting } from '../args/projection-setting.js';
import { refuseUnprojectedWindows } from '../../functions/core/lake/partition-projection.js';
import { onInterrupt } from '../pipeline/interrupt.js';
import { ensureWritableDir, startLakeThread, type LakeThread } from '../lake/lake-thread.js';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import type { LocalPipeline, WindowOutcome } from '../pipeline/pipeline.js';
import { checkMark, checkSummaryLines, findingsOf } from '../pipeline/check-summary.js';
import { formatTable } from '../duckdb/result-table.js';
import type { LakeDatabase, QueryFailed } from '../duckdb/duckdb.js';
import { readSecretFile } from '../args/secret-file.js';
import { refuseSavedQueriesTrinoCannotParse } from './saved-query-check.js';

/**
 * `npm start` (`reports run`): the whole pipeline on this machine for some windows (local/pipeline/pipeline.ts),
 * then the report's saved queries (queries/<report>/*.sql, published by the stack as Athena named queries) on
 * DuckDB over the curated Parquet, and a summary of every window asked. Exits non-zero when a window or a
 * query failed, 130 on Ctrl-C.
 */

export interface RunLocalOptions {
  /** Default: the catalog's only report. */
  report?: string;
  /** First window start, inclusive; default: the last complete window. */
  from?: string;
  /** End, exclusive. */
  to?: string;
  gatewayUrl?: string;
  secretFile?: string;
  /** The lake directory (default ./.lake). */
  lake: string;
  s3Endpoint?: string;
  /** Load windows that have not ended yet in the report's time zone (refused otherwise). */
  allowIncomplete?: boolean;
  /** Rows of each saved query shown (default 20). */
  queryRows?: number;
  /** `--sample ID=FILE`: the embedded simulator answers report ID with this file. */
  sample?: string[];
  /** `--weekday-volume`, `--drop-date`: the embedded simulator's volume shape (local/simulator/volume.ts). */
  weekdayVolume?: string;
  dropDate?: string[];
}

export interface RunSummary {
  /** Windows of the range asked, whether tried or not. */
  asked: number;
  loaded: number;
  windows: WindowOutcome[];
  failedWindows: number;
  /** Not tried: a run-stopping failure came first. */
  notTried: number;
  /** Saved queries taken up, run or refused (none when no window loaded). */
  queries: number;
  /** Failed on DuckDB, or refused before it (refusedQueries). */
  failedQueries: number;
  /** Not run: Athena (Trino) cannot parse them (lib/saved-queries/saved-query-grammar.ts), as the synthesis would refuse them. */
  refusedQueries: number;
  /** Windows whose data checks found something (they loaded: the exit code does not count them). */
  flaggedWindows: number;
  durationMs: number;
}

/** The saved queries of one report (queries/<report>/*.sql; a report may have none), with the file each came from. */
export async function savedQueriesFor(reportId: string): Promise<Array<{ name: string; description: string; sql: string; file: string; text: string }>> {
  // The file reader the stack uses (lib/constructs/catalog.ts publishes the same files), loaded when first needed.
  const { readReportQueries } = await import('../../lib/saved-queries/saved-queries.js');
  return readReportQueries(reportId).map((q) => ({ ...q, file: show(q.file) }));
}

/** What a run works with and what it has done so far: the Ctrl-C handler reads it too, at any moment. */
interface RunState {
  opts: RunLocalOptions;
  print: (line: string) => void;
  catalog: ReportCatalog;
  report: ReportDefinition;
  windows: ReportWindow[];
  daily: boolean;
  /** A window as the table, the summary and the resume command name it. */
  label: (w: ReportWindow) => string;
  secret: GatewaySecret | undefined;
  volume: VolumeShape | undefined;
  started: number;
  /** One per window tried, in the order tried. */
  outcomes: WindowOutcome[];
  /** Set once the pipeline has started. */
  pipeline: LocalPipeline | undefined;
  queries: number;
  failedQueries: number;
  refusedQueries: number;
}

type SavedQuery = Awaited<ReturnType<typeof savedQueriesFor>>[number];

export async function runLocal(opts: RunLocalOptions, print: (line: string) => void = (l) => console.log(l)): Promise<RunSummary> {
  const run = await prepareRun(opts, print);
  // Ctrl-C: no half-written table file, a count of what is done, and the command that carries on.
  const stopListening = onInterrupt(() => printInterrupted(run));
  // The lake's server boots on its own thread while this one loads the AWS SDK and the handlers: ~0.2 s each.
  const lakeThread = opts.s3Endpoint ? undefined : startLakeThread({ dir: opts.lake, buckets: bucketNames(LOCAL_ENVIRONMENT) });
  try {
    const pipeline = await startPipeline(run, lakeThread);
    run.pipeline = pipeline; // for the Ctrl-C handler
    try {
      printRunHeader(run, pipeline);
      await loadWindows(run, pipeline);
      print('');
      await printStaleNotices(run, pipeline);
      await runSavedQueries(run, pipeline);
    } finally {
      await pipeline.close();
    }
  } finally {
    stopListening();
    // Stopped here only if no lake took it (the pipeline failed to start); otherwise the pipeline closed it.
    await lakeThread?.discard();
  }
  return printDone(run);
}

/** Everything that can refuse the run, checked before anything starts: the flags, the windows, the secret file. */
async function prepareRun(opts: RunLocalOptions, print: (line: string) => void): Promise<RunState> {
  refuseClashingFlags(opts);
  const volume = simulatorVolume(opts);
  // Scheme, host and path, before the lake or the simulator starts: a mistyped URL should cost nothing.
  if (opts.gatewayUrl) validateGatewayUrl(opts.gatewayUrl);
  // Before anything starts: a lake that cannot be written fails here in one line, not as s3rver's "internal error".
  await ensureWritableDir(opts.lake);
  // The SDK's notice that future versions will need Node 22 would land in the middle of the summary; the
  // project supports Node 20 (package.json engines), and Lambda runs Node 24.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const catalog = loadCatalog();
  const report = catalog.chosen(opts.report);
  const windows = windowsToLoad(opts, report);
  const daily = parseWindowSize(report.window).unit === 'day';
  const label = (w: ReportWindow) => (daily ? formatLocalDate(w.start) : formatLocalDateTime(w.start));
  const secret = opts.secretFile ? await readSecretFile(opts.secretFile) : undefined;
  const started = performance.now();
  return { opts, print, catalog, report, windows, daily, label, secret, volume, started, outcomes: [], pipeline: undefined, queries: 0, failedQueries: 0, refusedQueries: 0 };
}

function refuseClashingFlags(opts: RunLocalOptions): void {
  if (opts.gatewayUrl && !opts.secretFile) {
    throw new ConfigurationError('--gateway-url needs --secret-file: the JSON with the login and the control key or private key.');
  }
  if (opts.sample?.length && opts.gatewayUrl) {
    throw new ConfigurationError('--sample is served by the embedded simulator; with --gateway-url the gateway answers.');
  }
  if (opts.secretFile && !opts.gatewayUrl) {
    throw new ConfigurationError('--secret-file goes with --gateway-url: the embedded simulator has its own test accounts.');
  }
}

/** The windows of --from/--to, refused when there are none, or when one is incomplete or outside Athena's projection. */
function windowsToLoad(opts: RunLocalOptions, report: ReportDefinition): ReportWindow[] {
  // Without --from and --to, the last complete window: yesterday for a daily report.
  const windows = windowsStartingIn(report, windowRangeOf(opts.from, opts.to));
  if (windows.length === 0) {
    throw new ConfigurationError(
      opts.to
        ? `No ${report.window} window starts in [--from, --to): --from must be before --to (to is exclusive).`
        : `No ${report.window} window starts in [--from, now): without --to the run ends where the current window starts, ` +
            'since that window is not complete yet. To load it anyway, give --to (the end, exclusive) and --allow-incomplete.',
    );
  }
  refuseIncompleteWindows(report, windows, { allowIncomplete: opts.allowIncomplete });
  // Athena would never show a window outside its projected dates: refuse it before anything is fetched.
  refuseUnprojectedWindows(report.id, windows, localProjectionSetting(), new Date());
  return windows;
}

function countOutcomes(outcomes: readonly WindowOutcome[]): { loaded: number; notParsed: number; failed: number } {
  const n = (s: WindowOutcome['status']) => outcomes.filter((o) => o.status === s).length;
  return { loaded: n('loaded'), notParsed: n('not-parsed'), failed: n('failed') };
}

/** On Ctrl-C: what is done, what was stopped in flight (its half-written table file removed), and how to resume. */
function printInterrupted(run: RunState): void {
  const { print, windows, outcomes, label } = run;
  const abandoned = run.pipeline?.abandonInFlight() ?? [];
  const inFlight = run.pipeline?.inFlight() ?? [];
  const c = countOutcomes(outcomes);
  const notTried = windows.length - outcomes.length - inFlight.length;
  print('');
  print(
    `Interrupted: ${windows.length} window(s) asked: ${c.loaded} loaded, ${c.failed} failed` +
      `${c.notParsed ? `, ${c.notParsed} not-parsed` : ''}, ${inFlight.length} stopped in flight` +
      `${inFlight.length ? ` (${inFlight.map(label).join(', ')})` : ''}, ${notTried} not tried.`,
  );
  if (abandoned.length) print(`Removed the half-written table file of ${abandoned.map(label).join(', ')}: nothing partial is left to query.`);
  const rest = windows.slice(outcomes.length);
  if (rest.length) {
    print(`Re-run to resume where it stopped (a re-run overwrites, never duplicates): npm start -- ${resumeFlags(run, rest).join(' ')}`);
  }
}

/** The flags of the command that loads `rest`, the windows not done. */
function resumeFlags(run: RunState, rest: readonly ReportWindow[]): string[] {
  const { opts, report, daily, label } = run;
  // Every flag that shaped the run, so the resumed windows load the same way (a --sample run must not resume on
  // generated rows); a value with spaces or quotes is quoted for the shell.
  const arg = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);
  const flags = [`--report ${report.id}`, `--from ${label(rest[0]!)}`, `--to ${daily ? formatLocalDate(rest.at(-1)!.end) : formatLocalDateTime(rest.at(-1)!.end)}`];
  if (opts.gatewayUrl) flags.push(`--gateway-url ${arg(opts.gatewayUrl)}`, `--secret-file ${arg(opts.secretFile ?? '')}`);
  if (opts.s3Endpoint) flags.push(`--s3-endpoint ${arg(opts.s3Endpoint)}`);
  if (resolve(opts.lake) !== resolve('.lake')) flags.push(`--lake ${arg(show(opts.lake))}`);
  for (const sample of opts.sample ?? []) flags.push(`--sample ${arg(sample)}`);
  if (opts.weekdayVolume !== undefined) flags.push(`--weekday-volume ${arg(opts.weekdayVolume)}`);
  for (const drop of opts.dropDate ?? []) flags.push(`--drop-date ${arg(drop)}`);
  if (opts.allowIncomplete) flags.push('--allow-incomplete');
  return flags;
}

async function startPipeline(run: RunState, lakeThread: LakeThread | undefined): Promise<LocalPipeline> {
  const { opts, volume } = run;
  const { startLocalPipeline } = await import('../pipeline/pipeline.js');
  return startLocalPipeline({
    lakeThread,
    reportId: run.report.id,
    catalog: run.catalog,
    gatewayUrl: opts.gatewayUrl,
    secret: run.secret,
    lakeDir: opts.lake,
    s3Endpoint: opts.s3Endpoint,
    simulator: opts.sample?.length || volume ? { samples: opts.sample?.length ? parseSampleOptions(opts.sample) : undefined, volume } : undefined,
  });
}

/** Which gateway is called and as whom, where the lake is, and the head of the windows' table. */
function printRunHeader(run: RunState, pipeline: LocalPipeline): void {
  const { print, report, opts } = run;
  print(
    `Report "${report.id}" (${report.window} windows, ${report.schedule.timeZone}) from ${pipeline.endpointUrl}` +
      `${pipeline.simulator ? ' (embedded simulator)' : ''}, login "${pipeline.login}" signing with ${pipeline.signatureMethod}.`,
  );
  print(
    pipeline.lake
      ? `Lake: ${show(opts.lake)} (embedded S3 on ${pipeline.s3Endpoint}; buckets ${pipeline.buckets.raw}, ${pipeline.buckets.curated}).`
      : `S3: ${pipeline.s3Endpoint} (buckets ${pipeline.buckets.raw}, ${pipeline.buckets.curated}); tables copied to ${show(opts.lake)}/s3-cache for DuckDB.`,
  );
  print('');
  print(`  ${'window'.padEnd(run.daily ? 10 : 19)}  format  status       rows  rejected      raw bytes       parquet      ms  checks`);
}

/** The windows in order, a table row each, until the last or the first failure that every later window would share. */
async function loadWindows(run: RunState, pipeline: LocalPipeline): Promise<void> {
  const { print, windows } = run;
  for (const [i, window] of windows.entries()) {
    const o = await pipeline.runWindow(window);
    run.outcomes.push(o);
    printWindowRow(run, window, o);
    if (o.error && RUN_STOPPING_CODES.has(o.error.code as ErrorCode) && i < windows.length - 1) {
      print(`      the ${windows.length - 1 - i} later window(s) were not tried: every one would fail the same way`);
      break;
    }
  }
}

function printWindowRow(run: RunState, window: ReportWindow, o: WindowOutcome): void {
  const { print, label } = run;
  const format = o.fetched ? o.fetched.kind.toUpperCase() : '—';
  print(
    `  ${label(window)}  ${format.padEnd(6)}  ${o.status.padEnd(10)}  ${count(o.rowsWritten).padStart(5)}  ${count(o.rowsRejected).padStart(8)}` +
      `  ${kib(o.bytes).padStart(13)}  ${kib(o.parquetBytes).padStart(12)}  ${String(o.durationMs).padStart(6)}  ${checkMark(o.manifest?.checks)}`,
  );
  if (o.error) print(`      ${o.error.stage} failed: ${o.error.code}: ${o.error.message}`);
  for (const finding of findingsOf(o.manifest?.checks)) print(`      ${finding}`);
}

/** Windows of this lake written under another definition than the current one, and the command that rebuilds them. */
async function printStaleNotices(run: RunState, pipeline: LocalPipeline): Promise<void> {
  const { lakeStaleNotices } = await import('../lake/stale-notice.js');
  const stale = await lakeStaleNotices({ lakeDir: run.opts.lake, curatedBucket: pipeline.buckets.curated, reports: [run.report] });
  if (stale.length) run.print([...stale, ''].join('\n'));
}

/** The report's saved queries on DuckDB over the curated Parquet, when some window loaded. */
async function runSavedQueries(run: RunState, pipeline: LocalPipeline): Promise<void> {
  const { print, report } = run;
  if (countOutcomes(run.outcomes).loaded === 0) {
    print(`No window loaded, so the saved queries of "${report.id}" were not run.`);
    return;
  }
  const saved = await savedQueriesFor(report.id);
  print(
    saved.length
      ? `Saved queries of "${report.id}" (queries/${report.id}/*.sql, the Athena named queries of the stack) on DuckDB over the curated Parquet:`
      : `No saved queries for "${report.id}" (add SQL files under queries/${report.id}/ to have them run here and published to Athena).`,
  );
  const db = await pipeline.openDatabase();
  // Imported here, not at the top: duckdb.ts brings the stale notices and with them the AWS SDK, which the
  // run's start does not wait for (the lake's thread boots meanwhile). openDatabase loaded it already.
  const { QueryFailed } = await import('../duckdb/duckdb.js');
  try {
    for (const query of saved) await runSavedQuery(run, db, query, QueryFailed);
  } finally {
    db.close();
  }
}

/** One saved query under its title: its first rows, or why it was not run or failed (counted in `run`). */
async function runSavedQuery(run: RunState, db: LakeDatabase, query: SavedQuery, queryFailed: typeof QueryFailed): Promise<void> {
  const { print, opts } = run;
  print('');
  print(`── ${query.name}: ${query.description}`);
  run.queries++;
  try {
    // The check the synthesis makes (lib/constructs/catalog.ts): a query only DuckDB parses would be a green run here
    // and a failure for the analyst on Athena, so it is not run.
    await refuseSavedQueriesTrinoCannotParse([query]);
  } catch (e) {
    if (!(e instanceof ConfigurationError)) throw e;
    run.failedQueries++;
    run.refusedQueries++;
    print(`Not run: ${e.message}`);
    return;
  }
  try {
    // Only the rows shown leave DuckDB (LIMIT n+1): a query over a year of rows costs the summary nothing.
    const head = await db.head(query.sql, opts.queryRows ?? 20);
    print(formatTable(head, opts.queryRows ?? 20));
    if (head.more) print(`   every row: npm run query -- --file ${query.file}`);
  } catch (e) {
    if (!(e instanceof queryFailed)) throw e;
    run.failedQueries++;
    print(`The query failed on DuckDB: ${e.message}`);
  }
}

/** The closing summary, the failures again on stderr (exit code 1), and the run's figures. */
function printDone(run: RunState): RunSummary {
  const { print, windows, outcomes, label } = run;
  const c = countOutcomes(outcomes);
  const failed = outcomes.filter((o) => o.status === 'failed');
  const notTried = windows.length - outcomes.length;
  const sum = (f: (o: WindowOutcome) => number) => outcomes.reduce((a, o) => a + f(o), 0);
  const durationMs = Math.round(performance.now() - run.started);
  print('');
  // On lines of their own, before the totals: a flagged window loaded (exit 0), but someone should look.
  const checkLines = checkSummaryLines(outcomes.map((o) => ({ name: label(o.window), checks: o.manifest?.checks })));
  for (const line of checkLines) print(line);
  print(
    `Done: ${windows.length} window(s) asked: ${c.loaded} loaded, ${c.failed} failed${c.notParsed ? `, ${c.notParsed} not-parsed (PDF, kept raw)` : ''}, ` +
      `${notTried} not tried; ${count(sum((o) => o.rowsRead))} rows fetched, ` +
      `${count(sum((o) => o.rowsWritten))} written, ${count(sum((o) => o.rowsRejected))} rejected; ` +
      `${count(sum((o) => o.bytes))} raw bytes; ${(durationMs / 1000).toFixed(1)} s.`,
  );
  if (failed.length || run.failedQueries) reportFailures(run, failed);
  const flaggedWindows = outcomes.filter((o) => checkMark(o.manifest?.checks) === 'FLAGGED').length;
  const { queries, failedQueries, refusedQueries } = run;
  return { asked: windows.length, loaded: c.loaded, windows: outcomes, failedWindows: failed.length, notTried, queries, failedQueries, refusedQueries, flaggedWindows, durationMs };
}

function reportFailures(run: RunState, failed: readonly WindowOutcome[]): void {
  for (const o of failed) console.error(`${run.label(o.window)}: ${o.error?.code}: ${o.error?.message}`);
  const onDuckDb = run.failedQueries - run.refusedQueries;
  const queriesWord = (n: number) => `${n} saved quer${n === 1 ? 'y' : 'ies'}`;
  if (run.refusedQueries) console.error(`${queriesWord(run.refusedQueries)} not run: Athena (Trino) cannot parse (see above).`);
  if (onDuckDb) console.error(`${queriesWord(onDuckDb)} failed on DuckDB (see above).`);
  process.exitCode = 1;
}
