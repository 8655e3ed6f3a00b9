import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bucketNames } from '../functions/core/naming.js';
import { loadCatalog } from '../functions/core/definitions/catalog-files.js';
import type { LoadManifest } from '../functions/parse-report/load-manifest.js';
import { parseWindowSize, windowAt } from '../functions/core/time/window.js';
import { fetchFromSimulator, startReplayGatewayProcess, type ReplayGatewayProcess } from './chain-gateway.js';
import { runNode, runNpmStart, stageUse, type StageUse } from './command-run.js';
import type { ChildResult } from './children/measure.js';

/**
 * The chain benchmark (issues 13 and 21): a 1,000,000-row report through `npm start`'s whole chain (gateway,
 * fetch, the embedded lake, parse, Parquet, saved queries), against DuckDB converting the same bytes on
 * one thread, in the same run.
 *
 * The chain is the command as the user runs it, `npm start -- --report transactions --from … --gateway-url …`,
 * timed whole in a child process under /usr/bin/time -v (command-run.ts): npm's own start, the modules, the
 * lake, the load, the saved queries and the exit, as issue 32 asks; its CPU is the whole tree's, its peak RSS
 * the run's process. Its gateway is a replay of the simulator's report from disk, in a process of its own
 * (chain-gateway.ts): a foreign gateway, as the issue measured. The simulator's own time to generate and
 * serve that report is printed on its own line.
 *
 * Per stage, RSS and CPU (main thread, all threads) are sampled from /proc every 25 ms.
 * Stages come from three clocks on this machine, all Date.now(): the replay gateway (request arrived), the
 * load manifest the parse step writes into the lake (parse startedAt / finishedAt), and the child's exit.
 *
 * Environment:
 *   BENCH_CHAIN_RUNS=n         chain and DuckDB runs, interleaved (best wall time kept; default BENCH_RUNS, else 2)
 *   BENCH_CHAIN_ROWS=n         rows of the report (default 1,000,000)
 *   BENCH_CHAIN_NODE_FLAGS=..  node flags for the chain's processes, through NODE_OPTIONS (npm's node gets them too),
 *                              e.g. "--cpu-prof --cpu-prof-dir=bench/data/prof"
 *   BENCH_CHAIN_TRACE=file     appends each run's samples to file, a JSON line per process: {spawnedAt, samples:
 *                              [[ms since epoch, RSS MB, CPU ms all threads, CPU ms main thread], ...]}: when the memory rises
 */

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = join(here, 'data');
const MiB = 1024 * 1024;
/** A past day (a window of today or later may be refused as incomplete). Fixed, so the bytes are the same on every run. */
const DAY = '2025-11-20';
const NEXT_DAY = '2025-11-21';
/** The buckets `reports run` uses (its environment is "local"). */
const CURATED_BUCKET = bucketNames('local').curated;

/** Issue 32: the whole command against DuckDB's conversion, wall and CPU; the process's peak; the fetch's speed (issue 21). */
export const CHAIN_TARGETS = { vsDuckDb: 5, cpuVsDuckDb: 7.5, rssMb: 300, fetchMbPerS: 150 };

export interface ChainRun {
  /** From spawning `npm start` to its exit. */
  wallMs: number;
  /** User + system CPU of the whole command (npm, its shell, the run's node: /usr/bin/time). */
  cpuMs: number;
  maxRssMb: number;
  /** From spawning `npm start` to the run's node process being there (npm's own start, its shell). */
  npmMs: number;
  startupMs: number;
  fetchMs: number;
  parseMs: number;
  queriesMs: number;
  /** Per stage: its peak RSS (MB: exact where the process set a new high in it, else the highest sampled), and CPU ms of all threads and of the main thread. */
  stages: Record<'startup' | 'fetch' | 'parse' | 'queries', StageUse>;
  rowsWritten: number;
  rowsRejected: number;
  parquetBytes: number;
  conversion: LoadManifest['conversion'];
  /** The run's own "Done: …" line. */
  done: string;
}

function manifestIn(lakeDir: string, curatedBucket: string): LoadManifest {
  const dir = join(lakeDir, curatedBucket, 'manifests');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json._S3rver_object'));
  if (files.length !== 1) throw new Error(`expected one manifest under ${dir}, found ${files.length}`);
  return JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as LoadManifest;
}

/** The arguments after `npm start --`, as a user pointing the run at a gateway would type them. */
const chainArgs = (gatewayUrl: string, secretFile: string, lakeDir: string) =>
  ['--report', 'transactions', '--from', DAY, '--to', NEXT_DAY, '--gateway-url', gatewayUrl, '--secret-file', secretFile, '--lake', lakeDir];

async function runChain(gateway: ReplayGatewayProcess, secretFile: string, lakeDir: string): Promise<ChainRun> {
  rmSync(lakeDir, { recursive: true, force: true });
  const before = (await gateway.requests()).length;
  // Node flags (--cpu-prof …) reach the run's node, and npm's, through NODE_OPTIONS: the command stays `npm start`.
  const flags = process.env.BENCH_CHAIN_NODE_FLAGS;
  const env = flags ? { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${flags}`.trim() } : process.env;
  const r = await runNpmStart(chainArgs(gateway.url, secretFile, lakeDir), env);
  if (r.code !== 0) throw new Error(`npm start failed (exit ${r.code}):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  const requests = await gateway.requests();
  const request = requests[before];
  if (!request || requests.length !== before + 1) throw new Error(`expected one gateway request, saw ${requests.length - before}`);
  const m = manifestIn(lakeDir, CURATED_BUCKET);
  if (m.outcome !== 'loaded') throw new Error(`the window did not load: ${JSON.stringify(m.error)}`);
  const parseStart = Date.parse(m.startedAt);
  const parseEnd = Date.parse(m.finishedAt);
  return {
    stages: {
      startup: stageUse(r.samples, r.spawnedAt, request.arrivedAt, true),
      fetch: stageUse(r.samples, request.arrivedAt, parseStart),
      parse: stageUse(r.samples, parseStart, parseEnd),
      queries: stageUse(r.samples, parseEnd, r.exitedAt),
    },
    wallMs: r.exitedAt - r.spawnedAt,
    cpuMs: r.cpuMs ?? NaN,
    maxRssMb: r.maxRssMb ?? NaN,
    startupMs: request.arrivedAt - r.spawnedAt,
    // The first sample of the run's node: within 25 ms of npm and its shell starting it.
    npmMs: (r.samples[0]?.[0] ?? r.spawnedAt) - r.spawnedAt,
    fetchMs: parseStart - request.arrivedAt,
    parseMs: parseEnd - parseStart,
    queriesMs: r.exitedAt - parseEnd,
    rowsWritten: m.rows?.written ?? 0,
    rowsRejected: m.rows?.rejected ?? 0,
    parquetBytes: m.table?.bytes ?? 0,
    conversion: m.conversion,
    done: r.stdout.split('\n').find((l) => l.startsWith('Done:')) ?? '',
  };
}

async function runDuckDb(csv: string, out: string): Promise<ChildResult> {
  const r = await runNode(['--import', 'tsx', join(here, 'children/duckdb.ts'), csv, out]);
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  if (r.code !== 0 || !last.startsWith('{')) throw new Error(`duckdb child failed (exit ${r.code}):\n${r.stderr.slice(-2000)}`);
  const result = JSON.parse(last) as ChildResult;
  if (r.maxRssMb !== undefined) result.maxRssMb = r.maxRssMb;
  return result;
}

/**
 * Rows in one Parquet file and not the other (a multiset difference, both ways), every column compared
 * as the Glue table types it. The chain's file is read where the lake keeps it (s3rver's file per object).
 */
async function rowsDiffering(lakeDir: string, duckOut: string): Promise<number> {
  const tables = join(lakeDir, CURATED_BUCKET, 'tables');
  const files = readdirSync(tables, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.parquet._S3rver_object'));
  if (files.length !== 1) throw new Error(`expected one Parquet file under ${tables}, found ${files.length}`);
  const ours = join(tables, files[0]!).replace(/'/g, "''");
  const theirs = duckOut.replace(/'/g, "''");
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    const a = `SELECT merchant_name, transaction_id, merchant_oid, CAST(created_date AS TIMESTAMP) AS c, amount, currency, transaction_type, order_description, date_of_report FROM read_parquet('${ours}')`;
    const b = `SELECT Merchant_Name, Transaction_id, Merchant_OID, CAST(Created_date AS TIMESTAMP), Amount, Currency, Transaction_type, Order_description, Date_of_report FROM read_parquet('${theirs}')`;
    const reader = await db.runAndReadAll(`SELECT (SELECT count(*) FROM (${a} EXCEPT ALL ${b})) + (SELECT count(*) FROM (${b} EXCEPT ALL ${a}))`);
    return Number(reader.getRows()[0]![0]);
  } finally {
    db.closeSync();
    instance.closeSync();
  }
}

const pad = (s: string, n: number) => s.padEnd(n);
const num = (n: number, digits = 2) => n.toFixed(digits);

export async function runChainBench(options: { runs?: number; rows?: number } = {}): Promise<boolean> {
  const runs = options.runs ?? 2;
  const rows = options.rows ?? 1_000_000;
  const t0 = Date.now();
  mkdirSync(dataDir, { recursive: true });
  const report = loadCatalog().get('transactions');
  const window = windowAt({ year: 2025, month: 11, day: 20, hour: 0, minute: 0, second: 0 }, parseWindowSize(report.window));
  const csv = join(dataDir, `chain-${rows}.csv`);
  const sim = await fetchFromSimulator(report, window, rows, csv);
  const bytes = sim.bytes;
  console.log(`input: ${csv} (the simulator's ${rows.toLocaleString('en-US')}-row report for ${DAY}, ${num(bytes / MiB, 1)} MiB)`);

  const secretFile = join(dataDir, 'chain-secret.json');
  writeFileSync(secretFile, JSON.stringify({ login: 'bench', controlKey: 'bench-control-key' }));
  const lakeDir = join(dataDir, 'chain-lake');
  const duckOut = join(dataDir, 'chain-duckdb.parquet');
  console.log(`load average before: ${loadavg().map((l) => num(l)).join(' ')} (the machine may be shared; best of ${runs} runs kept)`);

  // `npm start` compiles the command on its first run after a change (bin/reports.mjs): done here, unmeasured.
  const warm = await runNode(['bin/reports.mjs', '--help']);
  if (warm.code !== 0) throw new Error(`bin/reports.mjs --help failed (exit ${warm.code}):\n${warm.stderr.slice(-2000)}`);
  const gateway = await startReplayGatewayProcess(csv);
  let chain: ChainRun | undefined;
  let duck: ChildResult | undefined;
  let peakRss = 0;
  try {
    for (let i = 0; i < runs; i++) {
      const c = await runChain(gateway, secretFile, lakeDir);
      peakRss = Math.max(peakRss, c.maxRssMb);
      if (!chain || c.wallMs < chain.wallMs) chain = c;
      const d = await runDuckDb(csv, duckOut);
      if (!duck || d.wallMs < duck.wallMs) duck = { ...d, maxRssMb: Math.max(d.maxRssMb, duck?.maxRssMb ?? 0) };
    }
  } finally {
    await gateway.close();
  }
  if (!chain || !duck) throw new Error('no measurement');
  if (chain.rowsWritten !== rows || chain.rowsRejected !== 0) throw new Error(`the chain wrote ${chain.rowsWritten} rows (${chain.rowsRejected} rejected), not ${rows}`);
  if (duck.rows !== rows) throw new Error(`DuckDB wrote ${duck.rows} rows, not ${rows}`);

  const differing = await rowsDiffering(lakeDir, duckOut);
  if (differing !== 0) throw new Error(`the chain's Parquet and DuckDB's differ in ${differing} rows`);

  const mbps = (ms: number) => num(bytes / MiB / (ms / 1000), 1);
  console.log('');
  console.log(`${pad('stage', 44)}${pad('wall s', 9)}${pad('MiB/s', 8)}${pad('peak RSS MB', 13)}CPU s: main thread / all threads`);
  const line = (name: string, ms: number, rss: string, use?: StageUse | { mainCpuMs: number | null; cpuMs: number }, throughput = true) =>
    console.log(
      `${pad(name, 44)}${pad(num(ms / 1000), 9)}${pad(throughput ? mbps(ms) : '-', 8)}${pad(rss, 13)}` +
        (use ? `${use.mainCpuMs === null ? '-' : num(use.mainCpuMs / 1000)} / ${num(use.cpuMs / 1000)}` : '-'),
    );
  line('simulator: generate and serve the report', sim.wallMs, '-');
  console.log('chain: `npm start -- --report transactions --from … --gateway-url …`, timed whole:');
  const st = chain.stages;
  const total = Object.values(st).reduce((a, u) => ({ rssMb: 0, cpuMs: a.cpuMs + u.cpuMs, mainCpuMs: a.mainCpuMs + u.mainCpuMs }));
  line('  npm and its shell, until node starts', chain.npmMs, '-', { mainCpuMs: null, cpuMs: chain.cpuMs - total.cpuMs }, false);
  line('  start-up (node, modules, lake) to request', chain.startupMs - chain.npmMs, String(st.startup.rssMb), st.startup, false);
  line('  fetch-and-store (gateway to raw object)', chain.fetchMs, String(st.fetch.rssMb), st.fetch);
  line('  parse to Parquet (+ rejects, manifest)', chain.parseMs, String(st.parse.rssMb), st.parse);
  line('  saved queries, summary, exit', chain.queriesMs, String(st.queries.rssMb), st.queries, false);
  line('  whole command (CPU: every process)', chain.wallMs, String(peakRss), { mainCpuMs: total.mainCpuMs, cpuMs: chain.cpuMs });
  line('DuckDB CSV-to-Parquet, threads=1', duck.wallMs, String(duck.maxRssMb), duck);
  console.log('');
  console.log(`the run's own summary: ${chain.done}`);
  console.log(`every row exact: the chain's Parquet and DuckDB's hold the same ${rows.toLocaleString('en-US')} rows (EXCEPT ALL both ways, every column)`);
  if (chain.conversion) {
    const split = chain.conversion.split;
    console.log(
      `converter: ${chain.conversion.rowGroups} row groups, encoder ${chain.conversion.encoder}, timings ${JSON.stringify(chain.conversion.timings)}` +
        (split ? `; second part on a worker from byte ${split.atByte}: ${split.rowsRead} rows, parse ${split.parseMs} ms, encode ${split.encodeMs} ms` : '; one parsing thread'),
    );
  }
  const withoutQueries = chain.wallMs - chain.queriesMs;
  const vsDuck = chain.wallMs / duck.wallMs;
  const cpuVsDuck = chain.cpuMs / duck.cpuMs;
  console.log(
    `whole command / DuckDB: ${num(vsDuck)}x wall (${num(withoutQueries / duck.wallMs)}x without the saved queries, ` +
      `${num((chain.wallMs - chain.npmMs) / duck.wallMs)}x without npm's own start), ${num(cpuVsDuck)}x CPU (every process and thread)`,
  );
  // On a shared machine wall time stretches with the load; CPU time much less so. The fetch's CPU says how
  // fast it would go with a core to itself per busy thread (the lake's server runs on its own thread).
  const fetchCpuBound = Math.max(st.fetch.mainCpuMs, st.fetch.cpuMs - st.fetch.mainCpuMs);
  if (fetchCpuBound > 0) console.log(`fetch-and-store if no thread waited for a core: ~${mbps(fetchCpuBound)} MiB/s (the busier thread's CPU time)`);
  console.log(`load average after: ${loadavg().map((l) => num(l)).join(' ')}`);
  console.log(
    'trustworthy under load: the CPU columns, the CPU ratio and peak RSS. The wall ratio needs both cores free: ' +
      'DuckDB runs on one, the chain on two (the parse splits large files over both), so other work on the machine stretches the chain more than DuckDB; read it when the load average stayed below ~1.',
  );

  const fetchMbps = bytes / MiB / (chain.fetchMs / 1000);
  const checks: Array<[string, boolean, string]> = [
    [`whole command <= ${CHAIN_TARGETS.vsDuckDb}x DuckDB's wall time`, vsDuck <= CHAIN_TARGETS.vsDuckDb, `${num(vsDuck)}x`],
    [`whole command <= ${CHAIN_TARGETS.cpuVsDuckDb}x DuckDB's CPU time`, cpuVsDuck <= CHAIN_TARGETS.cpuVsDuckDb, `${num(cpuVsDuck)}x`],
    [`peak RSS <= ${CHAIN_TARGETS.rssMb} MB`, peakRss <= CHAIN_TARGETS.rssMb, `${peakRss} MB`],
    [`fetch-and-store >= ${CHAIN_TARGETS.fetchMbPerS} MB/s on loopback (counted in MiB/s, the stricter)`, fetchMbps >= CHAIN_TARGETS.fetchMbPerS, `${num(fetchMbps, 1)} MiB/s`],
  ];
  console.log('');
  for (const [what, ok, value] of checks) console.log(`${ok ? 'PASS' : 'MISS'}  ${what}: ${value}`);
  console.log(`\n(bench took ${Math.round((Date.now() - t0) / 1000)} s)`);
  return checks.every(([, ok]) => ok);
}
