import { showPath as show } from '../../functions/core/shown-path.js';
import { showCount as count } from '../args/display.js';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { parseSampleOptions, simulatorVolume } from '../args/option-values.js';
import type { VolumeShape } from '../simulator/volume.js';
import type { PeriodToReading } from '../simulator/report-request.js';
import { onInterrupt } from '../pipeline/interrupt.js';
import { rejectsLines } from '../run/rejects-lines.js';
import { ensureWritableDir, startLakeThread, type LakeThread } from '../lake/lake-thread.js';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import type { LocalPipeline, WindowOutcome } from '../pipeline/pipeline.js';
import { checkMark, checkSummaryLines } from '../pipeline/check-summary.js';
import { formatTable } from '../duckdb/result-table.js';
import type { LakeDatabase, QueryFailed } from '../duckdb/duckdb.js';
import { refuseSavedQueriesTrinoCannotParse } from './saved-query-check.js';
import { parseConnectionFlags, realGatewaysOf, type RealGateway, type RealGatewayFlag } from '../connections/connection-flags.js';
import type { LocalConnection } from '../connections/local-gateways.js';
import { planRun, windowLabel, type RunItem, type RunPlan } from '../run/run-plan.js';
import { DEFAULT_RUN_CONCURRENCY, runScheduled } from '../run/run-schedule.js';
import { RunTable } from '../run/run-table.js';
import { resumeCommand } from '../run/resume.js';
import { sameFeed } from '../../functions/core/connections/feed.js';
import { connectionTotalLines, failureLines, type QueryFailure } from '../run/run-totals.js';

/**
 * `npm start` (`reports run`): the whole pipeline on this machine for some windows of every report, or of those
 * `--report` names (local/pipeline/pipeline.ts; the plan, the order and the table: local/run/), then each report's
 * saved queries (queries/<report>/*.sql, published by the stack as Athena named queries) on DuckDB over the curated
 * Parquet, and a summary of every window asked. Each connection is served by an embedded simulator of its own
 * unless `--gateway-url CONNECTION=URL` points it at a gateway. Exits non-zero when a window or a query failed, 130
 * on Ctrl-C.
 */

export interface RunLocalOptions {
  /** Reports to run (`--report`, repeatable); default: every report of the catalog. */
  report?: string | string[];
  /** Connections to run the reports over (`--connection`, repeatable); default: every connection of each report. */
  connection?: string | string[];
  /** First window start, inclusive; default: the last complete window of each report. */
  from?: string;
  /** End, exclusive. */
  to?: string;
  /** `[CONNECTION=]URL`, repeatable: a connection's gateway instead of its simulator; the plain form is `default`'s. */
  gatewayUrl?: string | string[];
  /** `[CONNECTION=]FILE`, repeatable, one per --gateway-url. */
  secretFile?: string | string[];
  /** Windows in flight at once over every connection (default 2); each connection also keeps to its maxConcurrentRequests. */
  concurrency?: number;
  /** The lake directory (default ./.lake). */
  lake: string;
  s3Endpoint?: string;
  /** Load windows that have not ended yet in the report's time zone (refused otherwise). */
  allowIncomplete?: boolean;
  /** Rows of each saved query shown (default 20; when several reports' queries run, default a line per query). */
  queryRows?: number;
  /** `--sample ID=FILE`: the simulator of report ID's connection answers it with this file. */
  sample?: string[];
  /** `--weekday-volume`, `--drop-date`: the embedded simulators' volume shape (local/simulator/volume.ts). */
  weekdayVolume?: string;
  dropDate?: string[];
  /** `--period-to`: how the embedded simulators read a period's "to" (local/simulator/report-request.ts). */
  periodTo?: PeriodToReading;
}

export interface RunSummary {
  /** Windows of the range asked, whether tried or not, over every report run. */
  asked: number;
  loaded: number;
  /** The reports run. */
  reports: string[];
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

/**
 * The saved queries of one report (queries/<report>/*.sql; a report may have none), with the file each came from,
 * and for a report over several connections the built-in coverage query (lib/saved-queries/coverage-query.ts).
 */
export async function savedQueriesFor(report: { id: string; connections: readonly string[] }): Promise<Array<{ name: string; description: string; sql: string; file: string; text: string }>> {
  // The file reader the stack uses (lib/constructs/catalog.ts publishes the same files), loaded when first needed.
  const [{ readReportQueries }, { COVERAGE_QUERY }] = await Promise.all([import('../../lib/saved-queries/saved-queries.js'), import('../../lib/saved-queries/coverage-query.js')]);
  // The built-in coverage query says something only of a report over several connections: a run of one keeps its output.
  const builtIn = (q: { name: string; file: string }) => q.name === COVERAGE_QUERY && q.file.startsWith('(');
  return readReportQueries(report)
    .filter((q) => report.connections.length > 1 || !builtIn(q))
    .map((q) => ({ ...q, file: builtIn(q) ? q.file : show(q.file) }));
}

/** What a run works with and what it has done so far: the Ctrl-C handler reads it too, at any moment. */
interface RunState {
  opts: RunLocalOptions;
  print: (line: string) => void;
  catalog: ReportCatalog;
  plan: RunPlan;
  /** Connections pointed at a real gateway by the flags, and their gateways (secret files read). */
  gatewayFlags: RealGatewayFlag[];
  gateways: Record<string, RealGateway>;
  volume: VolumeShape | undefined;
  started: number;
  /** By item index, as windows end (in any order). */
  outcomes: Array<WindowOutcome | undefined>;
  /** Set once the pipeline has started. */
  pipeline: LocalPipeline | undefined;
  queries: number;
  failedQueries: number;
  refusedQueries: number;
  /** The saved queries that failed or were refused, for the closing lines of a run over several reports. */
  queryFailures: QueryFailure[];
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
      const connections = new Map((await Promise.all(run.plan.connections.map((c) => pipeline.connection(c)))).map((c) => [c.name, c] as const));
      printRunHeader(run, pipeline);
      await loadWindows(run, pipeline, connections);
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

/** Everything that can refuse the run, checked before anything starts: the flags, the windows, the secret files. */
async function prepareRun(opts: RunLocalOptions, print: (line: string) => void): Promise<RunState> {
  const catalog = loadCatalog();
  const gatewayFlags = parseConnectionFlags(opts, catalog.connections());
  const plan = planRun(catalog, opts);
  const simulated = plan.connections.filter((c) => !gatewayFlags.some((g) => g.connection === c));
  // With every connection on a gateway, no simulator is there to shape or to answer with a sample.
  const volume = simulatorVolume({ ...opts, gatewayUrl: simulated.length ? undefined : 'given' });
  if (opts.sample?.length && !simulated.length) {
    throw new ConfigurationError('--sample is served by the embedded simulator; with --gateway-url the gateway answers.');
  }
  if (opts.periodTo && !simulated.length) {
    throw new ConfigurationError('--period-to says how the embedded simulator reads a period; with --gateway-url the gateway reads it its own way.');
  }
  if (opts.concurrency !== undefined && opts.concurrency < 1) throw new ConfigurationError('--concurrency must be 1 or more: windows in flight at once.');
  // Before anything starts: a lake that cannot be written fails here in one line, not as s3rver's "internal error".
  await ensureWritableDir(opts.lake);
  // The SDK's notice that future versions will need Node 22 would land in the middle of the summary; the
  // project supports Node 20 (package.json engines), and Lambda runs Node 24.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const gateways = await realGatewaysOf(gatewayFlags);
  const started = performance.now();
  const outcomes = plan.items.map(() => undefined);
  return { opts, print, catalog, plan, gatewayFlags, gateways, volume, started, outcomes, pipeline: undefined, queries: 0, failedQueries: 0, refusedQueries: 0, queryFailures: [] };
}

const ended = (run: RunState): WindowOutcome[] => run.outcomes.filter((o): o is WindowOutcome => o !== undefined);

function countOutcomes(outcomes: ReadonlyArray<Pick<WindowOutcome, 'status'>>): { loaded: number; notParsed: number; failed: number } {
  const n = (s: WindowOutcome['status']) => outcomes.filter((o) => o.status === s).length;
  return { loaded: n('loaded'), notParsed: n('not-parsed'), failed: n('failed') };
}

/** A window as the summary names it: with its report when the run has several, and its connection when a report has several. */
function itemName(run: RunState, item: { report: ReportDefinition; connection: string; window: RunItem['window'] }): string {
  const label = windowLabel(item.report, item.window);
  const report = run.plan.reports.length > 1 ? `${item.report.id} ` : '';
  const connection = run.plan.feeds.length > run.plan.reports.length ? `${item.connection} ` : '';
  return `${report}${connection}${label}`;
}

/** A window outcome or in-flight window, named as itemName names it. */
const refName = (run: RunState, ref: { reportId: string; connection: string; window: RunItem['window'] }) =>
  itemName(run, { report: run.catalog.get(ref.reportId), connection: ref.connection, window: ref.window });

/** On Ctrl-C: what is done, what was stopped in flight (its half-written table file removed), and how to resume. */
function printInterrupted(run: RunState): void {
  const { print, plan } = run;
  const abandoned = run.pipeline?.abandonInFlight() ?? [];
  const inFlight = run.pipeline?.inFlight() ?? [];
  // Parsed but not yet returned (the lake was still settling another window): done, counted by their outcome.
  const parsed = run.pipeline?.parsedInFlight() ?? [];
  const isParsed = (item: RunItem) => parsed.some((p) => sameFeed(p, item.feed) && p.window === item.window);
  const c = countOutcomes([...ended(run), ...parsed]);
  const notTried = plan.items.length - ended(run).length - parsed.length - inFlight.length;
  const name = (ref: { reportId: string; connection: string; window: RunItem['window'] }) => refName(run, ref);
  print('');
  print(
    `Interrupted: ${plan.items.length} window(s) asked: ${c.loaded} loaded, ${c.failed} failed` +
      `${c.notParsed ? `, ${c.notParsed} not-parsed` : ''}, ${inFlight.length} stopped in flight` +
      `${inFlight.length ? ` (${inFlight.map(name).join(', ')})` : ''}, ${notTried} not tried.`,
  );
  if (abandoned.length) print(`Removed the half-written table file of ${abandoned.map(name).join(', ')}: nothing partial is left to query.`);
  const rest = plan.items.filter((item, i) => run.outcomes[i] === undefined && !isParsed(item));
  if (!rest.length) return;
  print(`Re-run to resume where it stopped (a re-run overwrites, never duplicates): ${resumeCommand(rest, { ...run.opts, gateways: run.gatewayFlags })}`);
}

async function startPipeline(run: RunState, lakeThread: LakeThread | undefined): Promise<LocalPipeline> {
  const { opts, volume } = run;
  const { startLocalPipeline } = await import('../pipeline/pipeline.js');
  return startLocalPipeline({
    lakeThread,
    catalog: run.catalog,
    gateways: run.gateways,
    connections: run.plan.connections,
    lakeDir: opts.lake,
    s3Endpoint: opts.s3Endpoint,
    simulator:
      opts.sample?.length || volume || opts.periodTo
        ? { samples: opts.sample?.length ? parseSampleOptions(opts.sample) : undefined, volume, periodTo: opts.periodTo }
        : undefined,
  });
}

/** The reports and where the lake is; the table's head (each connection's heading comes with its rows). */
function printRunHeader(run: RunState, pipeline: LocalPipeline): void {
  const { print, opts, plan } = run;
  if (plan.reports.length > LISTED_REPORTS) printReportsPerConnection(run);
  else {
    for (const report of plan.reports) {
      const n = plan.items.filter((i) => i.report === report).length;
      const over = plan.feeds.filter((f) => f.report === report).map((f) => `"${f.connection}"`);
      print(`Report "${report.id}" (${report.window} windows, ${report.schedule.timeZone}) over connection${over.length > 1 ? 's' : ''} ${over.join(', ')}: ${n} window(s).`);
    }
  }
  for (const note of plan.notes) print(note);
  print(
    pipeline.lake
      ? `Lake: ${show(opts.lake)} (embedded S3 on ${pipeline.s3Endpoint}; buckets ${pipeline.buckets.raw}, ${pipeline.buckets.curated}).`
      : `S3: ${pipeline.s3Endpoint} (buckets ${pipeline.buckets.raw}, ${pipeline.buckets.curated}); tables copied to ${show(opts.lake)}/s3-cache for DuckDB.`,
  );
  print('');
}

/** Past this many reports, the run's head says what runs per connection instead of a line per report. */
const LISTED_REPORTS = 10;

/** A line per connection: how many reports and windows, of which window sizes and time zones. */
function printReportsPerConnection(run: RunState): void {
  for (const connection of run.plan.connections) {
    const items = run.plan.items.filter((i) => i.feed.connection === connection);
    const reports = [...new Set(items.map((i) => i.report))];
    const kinds = [...new Set(reports.map((r) => `${r.window} windows, ${r.schedule.timeZone}`))].join('; ');
    run.print(`${reports.length} report(s) over connection "${connection}" (${kinds}): ${items.length} window(s).`);
  }
}

/** Every window, a few at a time (local/run/run-schedule.ts), each a table row once the rows before it are shown. */
async function loadWindows(run: RunState, pipeline: LocalPipeline, connections: ReadonlyMap<string, LocalConnection>): Promise<void> {
  const table = new RunTable(run.print, run.plan.items, connections);
  await runScheduled(run.plan.items, {
    concurrency: run.opts.concurrency ?? DEFAULT_RUN_CONCURRENCY,
    boundOf: (c) => connections.get(c)!.maxConcurrentRequests,
    run: (item) => pipeline.runWindow(item.feed, item.window),
    onOutcome: (index, outcome, stopped) => {
      run.outcomes[index] = outcome;
      table.add(index, outcome, stopped);
    },
  });
}

/** Windows of this lake written under another definition than the current one, and the command that rebuilds them. */
async function printStaleNotices(run: RunState, pipeline: LocalPipeline): Promise<void> {
  const { lakeStaleNotices } = await import('../lake/stale-notice.js');
  const stale = await lakeStaleNotices({ lakeDir: run.opts.lake, buckets: pipeline.buckets, reports: run.plan.reports });
  if (stale.length) run.print([...stale, ''].join('\n'));
}

/** Each report's saved queries on DuckDB over the curated Parquet, for the reports with a window loaded. */
async function runSavedQueries(run: RunState, pipeline: LocalPipeline): Promise<void> {
  const loadedOf = (r: ReportDefinition) => ended(run).some((o) => o.reportId === r.id && o.status === 'loaded');
  printReportsNamed(run, run.plan.reports.filter((r) => !loadedOf(r)).map((r) => r.id), {
    one: (id) => `No window loaded, so the saved queries of "${id}" were not run.`,
    many: (n, ids) => `No window loaded for ${n} reports, so their saved queries were not run: ${ids}.`,
  });
  const loaded = await Promise.all(run.plan.reports.filter(loadedOf).map(async (report) => ({ report, saved: await savedQueriesFor(report) })));
  if (!loaded.length) return;
  // A run of one report shows its queries as it always did, each under its own heading; at many reports the
  // same lines a hundred times would bury the rest, so the reports without any are named on one line.
  if (loaded.length === 1) {
    const [{ report, saved }] = loaded as [(typeof loaded)[number]];
    if (!saved.length) run.print(`No saved queries for "${report.id}" (add SQL files under queries/${report.id}/ to have them run here and published to Athena).`);
  } else {
    printReportsNamed(run, loaded.filter((l) => !l.saved.length).map((l) => l.report.id), {
      one: (id) => `No saved queries for "${id}" (add SQL files under queries/${id}/ to have them run here and published to Athena).`,
      many: (n, ids) => `No saved queries for ${n} reports (add SQL files under queries/<report>/ to have them run here and published to Athena): ${ids}.`,
    });
  }
  const withQueries = loaded.filter((l) => l.saved.length);
  if (!withQueries.length) return; // DuckDB is not even loaded
  const db = await pipeline.openDatabase();
  // Imported here, not at the top: duckdb.ts brings the stale notices and with them the AWS SDK, which the
  // run's start does not wait for (the lake's thread boots meanwhile). openDatabase loaded it already.
  const { QueryFailed } = await import('../duckdb/duckdb.js');
  // One line per query when several reports' queries run, unless --query-rows asks for their rows.
  const oneLine = withQueries.length > 1 && run.opts.queryRows === undefined;
  if (oneLine) {
    run.print('');
    run.print(
      `Saved queries of ${withQueries.length} reports (queries/<report>/*.sql, the Athena named queries of the stack) on DuckDB over the curated Parquet, ` +
        'a line each (the rows: npm run query -- --file queries/<report>/<query>.sql, or --query-rows N to show N of each here):',
    );
  }
  const width = Math.max(...withQueries.flatMap(({ report, saved }) => saved.map((q) => report.id.length + q.name.length + 1)));
  try {
    for (const [i, { report, saved }] of withQueries.entries()) {
      if (!oneLine && (i > 0 || loaded.length > 1)) run.print('');
      if (!oneLine) run.print(`Saved queries of "${report.id}" (queries/${report.id}/*.sql, the Athena named queries of the stack) on DuckDB over the curated Parquet:`);
      for (const query of saved) await runSavedQuery(run, db, { ...query, report: report.id }, QueryFailed, oneLine ? width : undefined);
    }
  } finally {
    db.close();
  }
}

/** A line naming one report, or a line naming how many and the first few of them. */
function printReportsNamed(run: RunState, ids: readonly string[], say: { one: (id: string) => string; many: (n: number, ids: string) => string }): void {
  if (ids.length === 1) run.print(say.one(ids[0]!));
  const shown = ids.slice(0, 5).map((id) => `"${id}"`).join(', ');
  if (ids.length > 1) run.print(say.many(ids.length, ids.length > 5 ? `${shown} and ${ids.length - 5} more` : shown));
}

/**
 * One saved query under its title, or on one line (`oneLineWidth`: the width of its report/name column): its first
 * rows or how many, or why it was not run or failed (counted in `run`).
 */
async function runSavedQuery(run: RunState, db: LakeDatabase, query: SavedQuery & { report: string }, queryFailed: typeof QueryFailed, oneLineWidth?: number): Promise<void> {
  const { print, opts } = run;
  const oneLine = oneLineWidth !== undefined;
  const lead = `  ${`${query.report}/${query.name}`.padEnd(oneLineWidth ?? 0)}  `;
  if (!oneLine) {
    print('');
    print(`── ${query.name}: ${query.description}`);
  }
  const failed = (reason: string, refused: boolean) => {
    run.failedQueries++;
    if (refused) run.refusedQueries++;
    run.queryFailures.push({ report: query.report, name: query.name, reason });
    print(oneLine ? `${lead}${reason}` : reason);
  };
  run.queries++;
  try {
    // The check the synthesis makes (lib/constructs/catalog.ts): a query only DuckDB parses would be a green run here
    // and a failure for the analyst on Athena, so it is not run.
    await refuseSavedQueriesTrinoCannotParse([query]);
  } catch (e) {
    if (!(e instanceof ConfigurationError)) throw e;
    return failed(`Not run: ${e.message}`, true);
  }
  try {
    // Only the rows shown leave DuckDB (LIMIT n+1): a query over a year of rows costs the summary nothing.
    const rows = opts.queryRows ?? 20;
    const head = await db.head(query.sql, rows);
    if (oneLine) return print(`${lead}${head.more ? `more than ${rows} rows` : `${head.rows.length} row${head.rows.length === 1 ? '' : 's'}`}`);
    print(formatTable(head, rows));
    if (head.more) print(`   every row: npm run query -- --file ${query.file}`);
  } catch (e) {
    if (!(e instanceof queryFailed)) throw e;
    failed(`The query failed on DuckDB: ${e.message}`, false);
  }
}

/** Per connection with a window not loaded (failed, or not tried): "acme: 5 windows not loaded". */
function notLoadedPerConnection(run: RunState): string[] {
  return run.plan.connections.flatMap((connection) => {
    const n = run.plan.items.filter((item, i) => item.feed.connection === connection && (run.outcomes[i] === undefined || run.outcomes[i]!.status === 'failed')).length;
    return n ? [`${connection}: ${n} window${n === 1 ? '' : 's'} not loaded`] : [];
  });
}

/** The closing summary, the failures again on stderr (exit code 1), and the run's figures. */
function printDone(run: RunState): RunSummary {
  const { print, plan } = run;
  const outcomes = ended(run);
  const c = countOutcomes(outcomes);
  const failed = outcomes.filter((o) => o.status === 'failed');
  const notTried = plan.items.length - outcomes.length;
  const sum = (f: (o: WindowOutcome) => number) => outcomes.reduce((a, o) => a + f(o), 0);
  const durationMs = Math.round(performance.now() - run.started);
  const name = (o: WindowOutcome) => refName(run, o);
  print('');
  // A run of several reports or connections closes with what failed, then each connection's totals, then the rest.
  const several = plan.reports.length > 1 || plan.connections.length > 1;
  const windowFailures = failed.map((o) => ({ name: name(o), outcome: o }));
  if (several) {
    for (const line of failureLines(windowFailures, run.queryFailures)) print(line);
    for (const line of connectionTotalLines(plan, run.outcomes)) print(line);
  }
  // On lines of their own, before the totals: a flagged window loaded (exit 0), but someone should look.
  const checkLines = checkSummaryLines(outcomes.map((o) => ({ name: name(o), checks: o.manifest?.checks })));
  for (const line of checkLines) print(line);
  for (const line of rejectsLines(outcomes, name, { dir: run.opts.lake, embedded: !run.opts.s3Endpoint })) print(line);
  const reports = plan.reports.length > 1 ? ` of ${plan.reports.length} reports` : '';
  // Beside the totals, which providers the numbers lack: a connection's windows that failed or were not tried.
  const lacking = plan.connections.length > 1 ? notLoadedPerConnection(run) : [];
  if (lacking.length) print(`Not loaded: ${lacking.join('; ')}.`);
  print(
    `Done: ${plan.items.length} window(s)${reports} asked: ${c.loaded} loaded, ${c.failed} failed${c.notParsed ? `, ${c.notParsed} not-parsed (PDF, kept raw)` : ''}, ` +
      `${notTried} not tried; ${count(sum((o) => o.rowsRead))} rows fetched, ` +
      `${count(sum((o) => o.rowsWritten))} written, ${count(sum((o) => o.rowsRejected))} rejected; ` +
      `${count(sum((o) => o.bytes))} raw bytes; ${(durationMs / 1000).toFixed(1)} s.`,
  );
  // On stderr too, for whoever reads only that: a window a line, or at several reports alike failures on one line.
  const errorLines = several ? failureLines(windowFailures, []).slice(1, -1).map((l) => l.trim()) : failed.map((o) => `${name(o)}: ${o.error?.code}: ${o.error?.message}`);
  if (failed.length || run.failedQueries) reportFailures(run, errorLines);
  const flaggedWindows = outcomes.filter((o) => checkMark(o.manifest?.checks) === 'FLAGGED').length;
  const { queries, failedQueries, refusedQueries } = run;
  return {
    asked: plan.items.length,
    loaded: c.loaded,
    reports: plan.reports.map((r) => r.id),
    windows: outcomes,
    failedWindows: failed.length,
    notTried,
    queries,
    failedQueries,
    refusedQueries,
    flaggedWindows,
    durationMs,
  };
}

function reportFailures(run: RunState, failures: readonly string[]): void {
  for (const line of failures) console.error(line);
  const onDuckDb = run.failedQueries - run.refusedQueries;
  const queriesWord = (n: number) => `${n} saved quer${n === 1 ? 'y' : 'ies'}`;
  if (run.refusedQueries) console.error(`${queriesWord(run.refusedQueries)} not run: Athena (Trino) cannot parse (see above).`);
  if (onDuckDb) console.error(`${queriesWord(onDuckDb)} failed on DuckDB (see above).`);
  process.exitCode = 1;
}
