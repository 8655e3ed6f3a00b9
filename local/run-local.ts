import { isAbsolute, relative, resolve } from 'node:path';
import { loadCatalog } from '../config/reports/index.js';
import { ConfigurationError, RUN_STOPPING_CODES, type ErrorCode } from '../functions/core/errors.js';
import { formatLocalDate, formatLocalDateTime, parseWindowSize, type ReportWindow } from '../functions/core/window.js';
import { windowsForRun } from './cli/dates.js';
import { QueryFailed } from './lake-query.js';
import { startLocalPipeline, type WindowOutcome } from './pipeline.js';
import { formatTable } from './result-table.js';
import { readSecretFile } from './secret-file.js';

/**
 * `npm start` (`reports run`): the whole pipeline on this machine for some windows (local/pipeline.ts),
 * then the report's saved queries (queries/<report>/*.sql, published by the stack as Athena named queries) on
 * DuckDB over the curated Parquet, and a summary. Exits non-zero when a window or a query failed.
 */

export interface RunLocalOptions {
  report: string;
  /** First window start, inclusive; default: the last complete window. */
  from?: string;
  /** End, exclusive. */
  to?: string;
  gatewayUrl?: string;
  secretFile?: string;
  /** The lake directory (default ./.lake). */
  lake: string;
  s3Endpoint?: string;
  /** `--sample ID=FILE`: the embedded simulator answers report ID with this file. */
  sample?: string[];
}

export interface RunSummary {
  windows: WindowOutcome[];
  failedWindows: number;
  failedQueries: number;
  durationMs: number;
}

/** A path as the user would type it: relative below the working directory, absolute elsewhere. */
const show = (path: string) => {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? resolve(path) : rel;
};
const kib = (bytes: number) => (bytes < 10_240 ? `${bytes} B` : `${Math.round(bytes / 1024).toLocaleString('en-US')} KiB`);
const count = (n: number) => n.toLocaleString('en-US');

/** `--sample ID=FILE` values as the simulator's samples option. */
export function parseSampleOptions(values: readonly string[]): Record<string, string> {
  const samples: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq < 1 || eq === v.length - 1) throw new ConfigurationError(`--sample ${v}: expected ID=FILE, for example --sample payouts=./payouts-sample.csv`);
    samples[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return samples;
}

export async function runLocal(opts: RunLocalOptions, print: (line: string) => void = (l) => console.log(l)): Promise<RunSummary> {
  if (opts.gatewayUrl && !opts.secretFile) {
    throw new ConfigurationError('--gateway-url needs --secret-file: the JSON with the login and the control key or private key.');
  }
  if (opts.sample?.length && opts.gatewayUrl) {
    throw new ConfigurationError('--sample is served by the embedded simulator; with --gateway-url the gateway answers.');
  }
  if (opts.secretFile && !opts.gatewayUrl) {
    throw new ConfigurationError('--secret-file goes with --gateway-url: the embedded simulator has its own test accounts.');
  }
  // The SDK's notice that future versions will need Node 22 would land in the middle of the summary; the
  // project supports Node 20 (package.json engines), and Lambda runs Node 24.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const catalog = loadCatalog();
  const report = catalog.get(opts.report);
  const windows = windowsForRun(report, opts.from, opts.to);
  if (windows.length === 0) throw new ConfigurationError(`No ${report.window} window starts in [--from, --to): --from must be before --to (to is exclusive).`);
  const daily = parseWindowSize(report.window).unit === 'day';
  const label = (w: ReportWindow) => (daily ? formatLocalDate(w.start) : formatLocalDateTime(w.start));
  const secret = opts.secretFile ? await readSecretFile(opts.secretFile) : undefined;

  const started = performance.now();
  const pipeline = await startLocalPipeline({
    reportId: report.id,
    catalog,
    gatewayUrl: opts.gatewayUrl,
    secret,
    lakeDir: opts.lake,
    s3Endpoint: opts.s3Endpoint,
    simulator: opts.sample?.length ? { samples: parseSampleOptions(opts.sample) } : undefined,
  });
  const outcomes: WindowOutcome[] = [];
  let failedQueries = 0;
  try {
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
    print(`  ${'window'.padEnd(daily ? 10 : 19)}  format  status       rows  rejected      raw bytes       parquet      ms`);
    for (const [i, window] of windows.entries()) {
      const o = await pipeline.runWindow(window);
      outcomes.push(o);
      const format = o.fetched ? o.fetched.kind.toUpperCase() : '—';
      print(
        `  ${label(window)}  ${format.padEnd(6)}  ${o.status.padEnd(10)}  ${count(o.rowsWritten).padStart(5)}  ${count(o.rowsRejected).padStart(8)}` +
          `  ${kib(o.bytes).padStart(13)}  ${kib(o.parquetBytes).padStart(12)}  ${String(o.durationMs).padStart(6)}`,
      );
      if (o.error) print(`      ${o.error.stage} failed: ${o.error.code}: ${o.error.message}`);
      if (o.error && RUN_STOPPING_CODES.has(o.error.code as ErrorCode) && i < windows.length - 1) {
        print(`      the ${windows.length - 1 - i} later window(s) were not tried: every one would fail the same way`);
        break;
      }
    }

    print('');
    // Loaded late: it is the CDK construct module (with the file reader the stack uses), not needed before here.
    const { readReportQueries } = await import('../lib/catalog.js');
    // The saved queries of the report that ran (queries/<report>/*.sql); a report may have none.
    const savedQueries = readReportQueries(report.id);
    print(
      savedQueries.length
        ? `Saved queries of "${report.id}" (queries/${report.id}/*.sql, the Athena named queries of the stack) on DuckDB over the curated Parquet:`
        : `No saved queries for "${report.id}" (add SQL files under queries/${report.id}/ to have them run here and published to Athena).`,
    );
    const db = await pipeline.openDatabase();
    try {
      for (const saved of savedQueries) {
        print('');
        print(`── ${saved.name}: ${saved.description}`);
        try {
          print(formatTable(await db.query(saved.sql), 20));
        } catch (e) {
          if (!(e instanceof QueryFailed)) throw e;
          failedQueries++;
          print(`The query failed on DuckDB: ${e.message}`);
        }
      }
    } finally {
      db.close();
    }
  } finally {
    await pipeline.close();
  }

  const failed = outcomes.filter((o) => o.status === 'failed');
  const sum = (f: (o: WindowOutcome) => number) => outcomes.reduce((a, o) => a + f(o), 0);
  const durationMs = Math.round(performance.now() - started);
  const statuses = (['loaded', 'not-parsed', 'failed'] as const)
    .map((s) => [s, outcomes.filter((o) => o.status === s).length] as const)
    .filter(([s, n]) => n > 0 || s !== 'not-parsed')
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  print('');
  print(
    `Done: ${outcomes.length} window(s): ${statuses}; ${count(sum((o) => o.rowsRead))} rows fetched, ` +
      `${count(sum((o) => o.rowsWritten))} written, ${count(sum((o) => o.rowsRejected))} rejected; ` +
      `${count(sum((o) => o.bytes))} raw bytes; ${(durationMs / 1000).toFixed(1)} s.`,
  );
  if (failed.length || failedQueries) {
    for (const o of failed) console.error(`${label(o.window)}: ${o.error?.code}: ${o.error?.message}`);
    if (failedQueries) console.error(`${failedQueries} saved quer${failedQueries === 1 ? 'y' : 'ies'} failed on DuckDB (see above).`);
    process.exitCode = 1;
  }
  return { windows: outcomes, failedWindows: failed.length, failedQueries, durationMs };
}
