import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bucketNames } from '../functions/core/naming.js';
import { loadCatalog } from '../functions/core/definitions/catalog-files.js';
import type { LoadManifest } from '../functions/parse-report/load-manifest.js';
import { parseWindowSize, windowAt } from '../functions/core/time/window.js';
import { fetchFromSimulator, startReplayGateway, type ReplayGateway } from './chain-gateway.js';
import type { ChildResult } from './children/measure.js';

/**
 * The chain benchmark (issues 13 and 21): a 1,000,000-row report through `npm start`'s whole chain (gateway,
 * fetch, the embedded lake, parse, Parquet, saved queries), against DuckDB converting the same bytes on
 * one thread, in the same run.
 *
 * The chain is the real command, `reports run` (what `npm start` runs), in a child process under
 * /usr/bin/time -v, so its peak RSS is the whole process's. Its gateway is a replay of the simulator's
 * report from disk (chain-gateway.ts): a foreign gateway, as the issue measured. The simulator's own time
 * to generate and serve that report is printed on its own line.
 *
 * Per stage, RSS and CPU (main thread, all threads) are sampled from /proc every 25 ms.
 * Stages come from three clocks on this machine, all Date.now(): the replay gateway (request arrived), the
 * load manifest the parse step writes into the lake (parse startedAt / finishedAt), and the child's exit.
 *
 * Environment:
 *   BENCH_CHAIN_RUNS=n         chain and DuckDB runs, interleaved (best wall time kept; default BENCH_RUNS, else 2)
 *   BENCH_CHAIN_ROWS=n         rows of the report (default 1,000,000)
 *   BENCH_CHAIN_NODE_FLAGS=..  extra node flags for the chain's process, e.g. "--cpu-prof --cpu-prof-dir=bench/data/prof"
 *   BENCH_CHAIN_TRACE=file     appends each run's samples to file, a JSON line per process: {spawnedAt, samples:
 *                              [[ms since epoch, RSS MB, CPU ms all threads, CPU ms main thread], ...]}: when the memory rises
 */

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const dataDir = join(here, 'data');
const MiB = 1024 * 1024;
/** A past day (a window of today or later may be refused as incomplete). Fixed, so the bytes are the same on every run. */
const DAY = '2025-11-20';
const NEXT_DAY = '2025-11-21';
/** The buckets `reports run` uses (its environment is "local"). */
const CURATED_BUCKET = bucketNames('local').curated;

export const CHAIN_TARGETS = { vsDuckDb: 5, rssMb: 300, fetchMbPerS: 150 };

const hasTime = existsSync('/usr/bin/time');

interface Timed {
  code: number | null;
  /** The node process, sampled every SAMPLE_MS from /proc. */
  samples: Sample[];
  stdout: string;
  stderr: string;
  spawnedAt: number;
  exitedAt: number;
  maxRssMb: number | undefined;
}

const SAMPLE_MS = 25;

/**
 * One sample of the node process: [Date.now(), RSS MB, CPU ms of all threads, CPU ms of the main thread, RSS
 * high-water mark MB]. The high-water mark (VmHWM) is the kernel's own peak, so a spike shorter than the
 * sampling interval still shows, in the stage where it happened.
 */
type Sample = [number, number, number, number, number];

/** utime + stime of a /proc stat line, in ms (USER_HZ is 100 on Linux). */
const statCpuMs = (stat: string) => {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

/** A sample of `pid`, or of its only child when `pid` is /usr/bin/time; undefined when gone (or not Linux). */
function sample(pid: number, viaTime: boolean): Sample | undefined {
  try {
    const target = viaTime ? Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0]) : pid;
    if (!target) return undefined;
    const status = readFileSync(`/proc/${target}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    if (!kb || !hwm) return undefined;
    const all = statCpuMs(readFileSync(`/proc/${target}/stat`, 'utf8'));
    const main = statCpuMs(readFileSync(`/proc/${target}/task/${target}/stat`, 'utf8'));
    return [Date.now(), Number(kb[1]) / 1024, all, main, Number(hwm[1]) / 1024];
  } catch {
    return undefined;
  }
}

/** Runs `node <args>` (under /usr/bin/time -v when present); never rejects on a non-zero exit. */
function runNode(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Timed> {
  const argv = hasTime ? ['-v', process.execPath, ...args] : args;
  return new Promise((resolve, reject) => {
    const spawnedAt = Date.now();
    const child = spawn(hasTime ? '/usr/bin/time' : process.execPath, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const samples: Sample[] = [];
    const sampler = setInterval(() => {
      const s = child.pid === undefined ? undefined : sample(child.pid, hasTime);
      if (s) samples.push(s);
    }, SAMPLE_MS);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (e) => {
      clearInterval(sampler);
      reject(e);
    });
    child.on('close', (code) => {
      clearInterval(sampler);
      if (process.env.BENCH_CHAIN_TRACE) appendFileSync(process.env.BENCH_CHAIN_TRACE, JSON.stringify({ spawnedAt, samples }) + '\n');
      const max = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      resolve({ code, samples, stdout, stderr, spawnedAt, exitedAt: Date.now(), maxRssMb: max ? Math.round(Number(max[1]) / 1024) : undefined });
    });
  });
}

function manifestIn(lakeDir: string, curatedBucket: string): LoadManifest {
  const dir = join(lakeDir, curatedBucket, 'manifests');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json._S3rver_object'));
  if (files.length !== 1) throw new Error(`expected one manifest under ${dir}, found ${files.length}`);
  return JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as LoadManifest;
}

export interface StageUse {
  rssMb: number;
  cpuMs: number;
  mainCpuMs: number;
}

/** What the samples within [from, to] say: the highest RSS, and the CPU spent between the first and last. */
function stageUse(samples: Sample[], from: number, to: number): StageUse {
  const within = samples.filter(([t]) => t >= from && t <= to);
  // CPU counted from the last sample before the stage, so a short stage is not read as idle.
  const before = samples.filter(([t]) => t < from).at(-1) ?? within[0];
  const last = within.at(-1);
  // Where the high-water mark rose during the stage, the process's new peak was reached in it (within one
  // interval of its start): that is its exact peak. Otherwise the highest sampled RSS, a lower bound.
  const hwmRose = before !== undefined && last !== undefined && last[4] > before[4];
  return {
    rssMb: Math.round(Math.max(0, ...within.map(([, mb]) => mb), hwmRose ? last[4] : 0)),
    cpuMs: before && last ? last[2] - before[2] : 0,
    mainCpuMs: before && last ? last[3] - before[3] : 0,
  };
}

export interface ChainRun {
  wallMs: number;
  maxRssMb: number;
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

/**
 * What `npm start` runs, read from package.json so the bench cannot drift from it: its environment
 * (`VAR=value` before `node`) and the arguments after `node`. No shell: the script is words.
 */
function npmStart(): { env: Record<string, string>; args: string[] } {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
  const words = script.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
    const word = words.shift()!;
    env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
  }
  if (words.shift() !== 'node') throw new Error(`npm start is "${script}": the bench expects [VAR=value ...] node <args>`);
  return { env, args: words };
}

async function runChain(gateway: ReplayGateway, secretFile: string, lakeDir: string): Promise<ChainRun> {
  rmSync(lakeDir, { recursive: true, force: true });
  const before = gateway.requests.length;
  const flags = (process.env.BENCH_CHAIN_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const start = npmStart();
  const args = [...flags, ...start.args, '--report', 'transactions', '--from', DAY, '--to', NEXT_DAY];
  args.push('--gateway-url', gateway.url, '--secret-file', secretFile, '--lake', lakeDir);
  const r = await runNode(args, { ...process.env, ...start.env });
  if (r.code !== 0) throw new Error(`reports run failed (exit ${r.code}):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  const request = gateway.requests[before];
  if (!request || gateway.requests.length !== before + 1) throw new Error(`expected one gateway request, saw ${gateway.requests.length - before}`);
  const m = manifestIn(lakeDir, CURATED_BUCKET);
  if (m.outcome !== 'loaded') throw new Error(`the window did not load: ${JSON.stringify(m.error)}`);
  const parseStart = Date.parse(m.startedAt);
  const parseEnd = Date.parse(m.finishedAt);
  return {
    stages: {
      startup: stageUse(r.samples, r.spawnedAt, request.arrivedAt),
      fetch: stageUse(r.samples, request.arrivedAt, parseStart),
      parse: stageUse(r.samples, parseStart, parseEnd),
      queries: stageUse(r.samples, parseEnd, r.exitedAt),
    },
    wallMs: r.exitedAt - r.spawnedAt,
    maxRssMb: r.maxRssMb ?? NaN,
    startupMs: request.arrivedAt - r.spawnedAt,
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
  const warm = await runNode([npmStart().args[0]!, '--help']);
  if (warm.code !== 0) throw new Error(`bin/reports.mjs --help failed (exit ${warm.code}):\n${warm.stderr.slice(-2000)}`);
  const gateway = await startReplayGateway(csv);
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
  console.log('chain: `reports run` (npm start), one process:');
  const st = chain.stages;
  line('  start-up (node, modules, lake) to request', chain.startupMs, String(st.startup.rssMb), st.startup, false);
  line('  fetch-and-store (gateway to raw object)', chain.fetchMs, String(st.fetch.rssMb), st.fetch);
  line('  parse to Parquet (+ rejects, manifest)', chain.parseMs, String(st.parse.rssMb), st.parse);
  line('  saved queries, summary, exit', chain.queriesMs, String(st.queries.rssMb), st.queries, false);
  const total = Object.values(st).reduce((a, u) => ({ rssMb: 0, cpuMs: a.cpuMs + u.cpuMs, mainCpuMs: a.mainCpuMs + u.mainCpuMs }));
  line('  whole run', chain.wallMs, String(peakRss), total);
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
  const cpuVsDuck = total.cpuMs / duck.cpuMs;
  console.log(`whole run / DuckDB: ${num(vsDuck)}x wall (${num(withoutQueries / duck.wallMs)}x without the saved queries), ${num(cpuVsDuck)}x CPU (all threads)`);
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
    [`whole run <= ${CHAIN_TARGETS.vsDuckDb}x DuckDB's wall time`, vsDuck <= CHAIN_TARGETS.vsDuckDb, `${num(vsDuck)}x (CPU: ${num(cpuVsDuck)}x)`],
    [`peak RSS <= ${CHAIN_TARGETS.rssMb} MB`, peakRss <= CHAIN_TARGETS.rssMb, `${peakRss} MB`],
    [`fetch-and-store >= ${CHAIN_TARGETS.fetchMbPerS} MB/s on loopback (counted in MiB/s, the stricter)`, fetchMbps >= CHAIN_TARGETS.fetchMbPerS, `${num(fetchMbps, 1)} MiB/s`],
  ];
  console.log('');
  for (const [what, ok, value] of checks) console.log(`${ok ? 'PASS' : 'MISS'}  ${what}: ${value}`);
  console.log(`\n(bench took ${Math.round((Date.now() - t0) / 1000)} s)`);
  return checks.every(([, ok]) => ok);
}
