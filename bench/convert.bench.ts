import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { ChildResult } from './children/measure.js';
import { DEFAULT_ROW_GROUP_BYTES, DEFAULT_ROW_GROUP_ROWS } from '../functions/core/convert/csv-to-parquet.js';
import { footerProblems } from '../test/helpers/parquet-checks.js';
import { readParquetFooter, type ParquetFooter } from '../test/helpers/parquet-footer.js';
import { CATALOG_FLAG_DEFINE, catalogFile } from '../lib/bundling/bundling.js';
import { BUNDLED_CATALOG_FILE } from '../functions/core/definitions/catalog-files.js';
import { ensureCsv } from './generate-data.js';
import { findNode24, nodeVersion } from './node24.js';
import { stagesOf } from './profile-stages.js';

/**
 * The CSV-to-Parquet benchmark (issues 3 and 21): on a 1M-row sample-shaped CSV with the hard cases, in
 * bundled child processes (the way the Lambda function runs, no tsx), alternated run by run:
 *  - csv-parse alone with the converter's options: the floor any converter built on csv-parse can reach;
 *  - our converter inline, as the parse function runs it at 2,048 MB (PARQUET_ENCODER=inline), with the
 *    sample definition as shipped (its key tally included): the target, in CPU time of all threads;
 *  - the same without the data checks (no keys), to show what the tally costs;
 *  - our converter with the encoder on a worker thread (the parse function at >= 3,538 MB);
 *  - DuckDB's CSV-to-Parquet on one thread: the reference engine;
 *  - our converter inline on 4,000,000 rows (the file streamed four times), without data checks: its
 *    memory must not grow (the key tally's does, with the number of distinct keys).
 * CPU time is process.cpuUsage() (all threads: V8's compiler and GC helpers included) and the main
 * thread's from /proc; it moves far less with the machine's load than wall time does, and each figure is
 * the lowest of BENCH_RUNS runs (noise only ever adds). The file's layout is read back from its own footer
 * and page headers (test/helpers/parquet-footer.ts) and checked against issue 11's rules.
 * BENCH_PROFILE=1 adds a --cpu-prof run of the floor and of the inline converter and prints where the
 * main thread's time went, by stage (profile-stages.ts).
 */

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = join(here, 'data');
const distDir = join(dataDir, 'dist');
const csv1m = join(dataDir, 'transactions-1m.csv');
const MiB = 1024 * 1024;

const TARGETS = { cpuVsFloor: 1.6, rssMb: 256, rssGrowth: 0.1, parquetShare: 0.21 };

async function bundle(): Promise<void> {
  await build({
    entryPoints: {
      'csv-parse-floor': join(here, 'children/csv-parse-floor.ts'),
      convert: join(here, 'children/convert.ts'),
      duckdb: join(here, 'children/duckdb.ts'),
      // beside convert.mjs, where encoder-thread.ts looks for it: as in the Lambda bundle
      'parquet-worker': join(here, '../functions/core/parquet/parquet-worker.ts'),
    },
    outdir: distDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['@duckdb/*'],
    // The report catalog beside the bundle, as the Lambda bundle carries it: bench/data/dist/ has no
    // config/reports/ beside it to read.
    define: { ...CATALOG_FLAG_DEFINE },
    // some dependencies are CommonJS and call require(): give the ESM bundle one
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  copyFileSync(catalogFile(), join(distDir, BUNDLED_CATALOG_FILE));
}

const hasTime = existsSync('/usr/bin/time');

/**
 * The node binary the children run on: this one, or BENCH_NODE's. Node.js 24, what the Lambda functions run,
 * runs the same measurements beside it (node24.ts finds it): the ratios move with V8's compilers.
 */
const childNode = process.env.BENCH_NODE ?? process.execPath;

/** Runs one bundled child on `node`; returns its result with the peak RSS of the whole process. */
function runChild(script: string, args: string[], nodeFlags: string[] = [], node = childNode): Promise<ChildResult> {
  const nodeArgs = [...nodeFlags, join(distDir, script), ...args];
  const argv = hasTime ? ['-v', node, ...nodeArgs] : nodeArgs;
  return new Promise((resolve, reject) => {
    const child = spawn(hasTime ? '/usr/bin/time' : node, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{')) {
        reject(new Error(`${script} ${args.join(' ')} failed (exit ${code}):\n${err.slice(-2000)}`));
        return;
      }
      const result = JSON.parse(last) as ChildResult;
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(err);
      if (rss) result.maxRssMb = Math.round(Number(rss[1]) / 1024);
      resolve(result);
    });
  });
}

/** The lowest wall and CPU times of the runs (noise only adds), the highest RSS, the rest from the lowest-CPU run. */
interface Best {
  runs: number;
  wallMs: number;
  mainCpuMs: number | null;
  cpuMs: number;
  maxRssMb: number;
  rows: number;
  outBytes: number;
  tenths?: number[];
  extra?: Record<string, unknown>;
}

function keepBest(prev: Best | undefined, r: ChildResult): Best {
  if (!prev) return { ...r, runs: 1 };
  const lowerCpu = r.cpuMs < prev.cpuMs ? r : prev;
  return {
    ...lowerCpu,
    runs: prev.runs + 1,
    wallMs: Math.min(prev.wallMs, r.wallMs),
    cpuMs: Math.min(prev.cpuMs, r.cpuMs),
    mainCpuMs: prev.mainCpuMs === null || r.mainCpuMs === null ? null : Math.min(prev.mainCpuMs, r.mainCpuMs),
    maxRssMb: Math.max(prev.maxRssMb, r.maxRssMb),
  };
}

const pad = (s: string, n: number) => s.padEnd(n);

/** Rows per row group ("131072 x7, 82496"), then per column: page types, data page encodings, dictionary, statistics. */
function printLayout(footer: ParquetFooter): void {
  const groups: Array<[bigint, number]> = [];
  for (const g of footer.rowGroups) {
    const last = groups.at(-1);
    if (last && last[0] === g.numRows) last[1]++;
    else groups.push([g.numRows, 1]);
  }
  console.log(`layout: ${footer.rowGroups.length} row groups, rows per group ${groups.map(([n, k]) => `${n}${k > 1 ? ` x${k}` : ''}`).join(', ')}; created_by "${footer.createdBy}"`);
  console.log(`${pad('  column', 22)}${pad('pages', 34)}${pad('data page encodings', 36)}statistics`);
  footer.columns.forEach((column, c) => {
    const chunks = footer.rowGroups.map((g) => g.columns[c]!);
    const pageTypes = new Set(chunks.flatMap((ch) => ch.pages.map((p) => (p.type === 'DATA_PAGE' ? 'DATA_PAGE (v1)' : p.type === 'DATA_PAGE_V2' ? 'DATA_PAGE_V2' : p.type))));
    const dataEncodings = new Set(chunks.flatMap((ch) => ch.pages.filter((p) => p.type.startsWith('DATA_PAGE')).map((p) => `${p.encoding}${p.definitionLevelEncoding && column.repetition === 'OPTIONAL' ? ` (levels ${p.definitionLevelEncoding})` : ''}`)));
    const stats = chunks.every((ch) => ch.statistics?.nullCount !== undefined) ? `null_count${chunks.every((ch) => ch.statistics?.minValue) ? ', min/max' : ''}` : 'MISSING';
    console.log(`${pad(`  ${column.name}`, 22)}${pad([...pageTypes].join(' + '), 34)}${pad([...dataEncodings].join(', '), 36)}${stats}`);
  });
}
const num = (n: number, digits = 2) => n.toFixed(digits);

/**
 * A run's CPU by tenth of its input (measure.ts's cpuByTenth) split in two: the steady state, the mean of
 * the last seven tenths (what a warm process pays; they close six of the eight row groups, about the
 * file's share), and the warm-up, what the first three tenths cost above it (compiling and running the
 * hot code before it is compiled).
 */
function warmAndSteady(tenths: number[] | undefined): { steady: number; warmUp: number } | undefined {
  if (!tenths || tenths.length !== 10) return undefined;
  const steady = tenths.slice(3).reduce((a, b) => a + b, 0) / 7;
  return { steady, warmUp: tenths.slice(0, 3).reduce((a, b) => a + b, 0) - 3 * steady };
}

type Manifest = { timings?: unknown; rowGroups?: number; encoder?: string; tally?: unknown; encodeMsByColumn?: Record<string, number> };

export async function runConvertBench(options: { runs?: number; with4m?: boolean; profile?: boolean } = {}): Promise<boolean> {
  const runs = options.runs ?? 3;
  const t0 = Date.now();
  const { bytes, generated } = await ensureCsv(csv1m, 1_000_000);
  console.log(`input: ${csv1m} (1,000,000 rows, ${num(bytes / MiB, 1)} MiB${generated ? ', generated now' : ', reused'})`);
  await bundle();
  const out1m = join(dataDir, 'out-1m.parquet');
  const outOther = join(dataDir, 'out-other.parquet');
  const outDuck = join(dataDir, 'out-duckdb.parquet');
  const out4m = join(dataDir, 'out-4m.parquet');
  const loadBefore = loadavg();
  console.log(`load average before: ${loadBefore.map((l) => num(l)).join(' ')} (2 cores shared with other work; each measurement ${runs} times, alternated, lowest times kept)`);
  const primaryVersion = nodeVersion(childNode);
  console.log(`children run on Node.js ${primaryVersion}${process.env.BENCH_NODE ? ` (BENCH_NODE=${childNode})` : ''}`);
  const found = findNode24();
  // Lambda's Node, unless the children run on a 24 already: its runs alternate with the others, under the same load.
  const node24 = 'node' in found && !primaryVersion.startsWith('v24.') ? found.node : undefined;
  if ('missing' in found) console.log(found.missing);
  else if (node24) console.log(`and beside it on Node.js ${nodeVersion(node24)}, what the Lambda functions run (${node24})`);

  const measurements: Array<{ name: string; script: string; args: string[] }> = [
    { name: 'csv-parse alone (floor)', script: 'csv-parse-floor.mjs', args: [csv1m, 'patched'] },
    { name: 'csv-parse as published', script: 'csv-parse-floor.mjs', args: [csv1m, 'stock'] },
    { name: 'converter inline (target)', script: 'convert.mjs', args: [csv1m, out1m, '1', 'inline', 'sample'] },
    { name: 'inline, no data checks', script: 'convert.mjs', args: [csv1m, outOther, '1', 'inline', 'none'] },
    { name: 'encoder on a worker', script: 'convert.mjs', args: [csv1m, outOther, '1', 'worker', 'sample'] },
    { name: 'DuckDB, threads=1', script: 'duckdb.mjs', args: [csv1m, outDuck] },
  ];
  const best = new Map<string, Best>();
  const best24 = new Map<string, Best>();
  for (let i = 0; i < runs; i++) {
    for (const m of measurements) {
      best.set(m.name, keepBest(best.get(m.name), await runChild(m.script, m.args)));
      if (node24) best24.set(m.name, keepBest(best24.get(m.name), await runChild(m.script, m.args, [], node24)));
    }
  }
  // Without the data checks: the key tally holds every distinct key by design (8 bytes a rising id, 16 in its
  // hash table), and the 4M run repeats the 1M file's ids, which turns its rising array into the hash table.
  // What must not grow with the input is the converter itself, compared with the same 1M measurement.
  const big = options.with4m === false ? undefined : keepBest(undefined, await runChild('convert.mjs', [csv1m, out4m, '4', 'inline', 'none']));
  rmSync(out4m, { force: true });
  rmSync(outOther, { force: true });
  const loadAfter = loadavg();
  const floor = best.get('csv-parse alone (floor)')!;
  const ours = best.get('converter inline (target)')!;
  const noChecks = best.get('inline, no data checks')!;
  const worker = best.get('encoder on a worker')!;
  const duck = best.get('DuckDB, threads=1')!;
  const stock = best.get('csv-parse as published')!;
  for (const [name, r] of [...best].slice(2)) {
    if (r.rows !== 1_000_000) throw new Error(`${name} wrote ${r.rows} rows, not 1,000,000`);
  }
  if (big && big.rows !== 4_000_000) throw new Error(`the 4M run wrote ${big.rows} rows`);

  const rows: Array<[string, Best]> = [...best, ...(big ? ([['inline, no checks, 4M rows', big]] as Array<[string, Best]>) : [])];
  console.log('');
  console.log(`${pad('measurement', 28)}${pad('wall s', 8)}${pad('main CPU s', 12)}${pad('all CPU s', 11)}${pad('CPU/floor', 11)}${pad('peak RSS MB', 13)}output MiB`);
  for (const [name, r] of rows) {
    const scale = r === big ? 4 : 1;
    console.log(
      `${pad(name, 28)}${pad(num(r.wallMs / 1000), 8)}${pad(r.mainCpuMs === null ? '-' : num(r.mainCpuMs / 1000), 12)}${pad(num(r.cpuMs / 1000), 11)}` +
        `${pad(r === floor ? '1.00x' : `${num(r.cpuMs / scale / floor.cpuMs)}x`, 11)}${pad(String(r.maxRssMb), 13)}${r.outBytes ? num(r.outBytes / MiB, 1) : '-'}`,
    );
  }
  const cpuVsFloor = ours.cpuMs / floor.cpuMs;
  const share = ours.outBytes / bytes;
  console.log('');
  console.log(`inline converter / floor: ${num(cpuVsFloor)}x CPU (all threads), ${num(ours.wallMs / floor.wallMs)}x wall; / DuckDB: ${num(ours.cpuMs / duck.cpuMs)}x CPU, ${num(ours.wallMs / duck.wallMs)}x wall`);
  console.log(
    `csv-parse as published / patched: ${num(stock.cpuMs / floor.cpuMs)}x CPU; the inline converter / csv-parse as published: ${num(ours.cpuMs / stock.cpuMs)}x CPU ` +
      '(the floor is the patched csv-parse the converter runs, patches/csv-parse+7.0.3.patch: the stricter reference)',
  );
  console.log(`encoder on a worker / floor: ${num(worker.cpuMs / floor.cpuMs)}x CPU, ${num(worker.wallMs / floor.wallMs)}x wall (two threads: its wall time needs a second free core)`);
  console.log(`the data checks (key tally of the sample): ${Math.round(ours.cpuMs - noChecks.cpuMs)} ms CPU per million rows (${num(((ours.cpuMs - noChecks.cpuMs) / noChecks.cpuMs) * 100, 1)}%), ${ours.maxRssMb - noChecks.maxRssMb} MB peak RSS`);
  console.log(`Parquet: ${num(share * 100, 1)}% of the CSV (DuckDB's: ${num((duck.outBytes / bytes) * 100, 1)}%)`);
  const manifest = ours.extra?.manifest as Manifest | undefined;
  if (manifest) {
    console.log(`inline manifest: ${manifest.rowGroups} row groups, timings ${JSON.stringify(manifest.timings)}, tally ${JSON.stringify(manifest.tally)}`);
    if (manifest.encodeMsByColumn) console.log(`  encoding by column (ms): ${Object.entries(manifest.encodeMsByColumn).map(([c, ms]) => `${c} ${ms}`).join(', ')}`);
  }
  const floorSplit = warmAndSteady(floor.tenths);
  const oursSplit = warmAndSteady(ours.tenths);
  if (floorSplit && oursSplit) {
    console.log('CPU by tenth of the input (ms, all threads; the lowest-CPU run of each):');
    console.log(`  floor      ${floor.tenths!.join(' ')}`);
    console.log(`  converter  ${ours.tenths!.join(' ')}`);
    console.log(
      `  steady (the mean of the last seven tenths): floor ${Math.round(floorSplit.steady)} ms, converter ${Math.round(oursSplit.steady)} ms a tenth = ${num(oursSplit.steady / floorSplit.steady)}x; ` +
        `warm-up (the first three tenths above that): floor ${Math.round(floorSplit.warmUp)} ms, converter ${Math.round(oursSplit.warmUp)} ms`,
    );
  }
  if (node24) printBeside(primaryVersion, best, nodeVersion(node24), best24);
  console.log(`load average after: ${loadAfter.map((l) => num(l)).join(' ')}`);
  console.log(
    'trustworthy under load: CPU times (each the lowest of its runs; a busy machine adds ~5-15% to both sides, so the ratio moves less) and peak RSS. ' +
      'Wall times and wall ratios only when the load average stayed below ~1 (the worker encoder and DuckDB need a free core).',
  );

  if (options.profile) await printProfile();

  const footer = readParquetFooter(readFileSync(out1m));
  printLayout(footer);
  const problems = footerProblems(footer, { minRowsPerGroup: DEFAULT_ROW_GROUP_ROWS, maxGroupBytes: BigInt(DEFAULT_ROW_GROUP_BYTES) });
  for (const p of problems) console.log(`  layout problem: ${p}`);

  const checks: Array<[string, boolean, string]> = [
    [`layout: created_by, TIMESTAMP_MILLIS, v1 pages, no DELTA_BYTE_ARRAY, statistics, groups >= ${DEFAULT_ROW_GROUP_ROWS} rows`, problems.length === 0, `${problems.length} problem(s)`],
    // Judged against the csv-parse the converter runs (patched), as docs/benchmarks.md states the target. It
    // was set when the converter ran csv-parse as published; the patch made parsing ~2x cheaper and left
    // encoding as it was, so against the published one this bound would pass while typing and encoding still
    // cost more than 60% of what parsing does. That ratio is printed beside the verdict, not as it.
    [
      `inline converter CPU (all threads) <= ${TARGETS.cpuVsFloor}x the floor's (csv-parse patched, as the converter runs it), same run`,
      cpuVsFloor <= TARGETS.cpuVsFloor,
      `${num(cpuVsFloor)}x: typing and encoding cost ${Math.round((cpuVsFloor - 1) * 100)}% of what parsing does` +
        (floorSplit && oursSplit ? `; warm: ${num(oursSplit.steady / floorSplit.steady)}x, the rest is warm-up, ${Math.round(oursSplit.warmUp - floorSplit.warmUp)} ms more than the floor's` : '') +
        ` (against csv-parse as published, the floor this target was set against: ${num(ours.cpuMs / stock.cpuMs)}x)`,
    ],
    [`peak RSS <= ${TARGETS.rssMb} MB at 1M rows (inline)`, ours.maxRssMb <= TARGETS.rssMb, `${ours.maxRssMb} MB`],
    ...(big
      ? ([[`peak RSS at 4M rows < ${TARGETS.rssGrowth * 100}% above 1M (no data checks: the key set grows with the keys)`, big.maxRssMb < noChecks.maxRssMb * (1 + TARGETS.rssGrowth), `${big.maxRssMb} MB against ${noChecks.maxRssMb} MB (${num((big.maxRssMb / noChecks.maxRssMb - 1) * 100, 1)}%)`]] as Array<[string, boolean, string]>)
      : []),
    [`Parquet <= ${TARGETS.parquetShare * 100}% of the CSV`, share <= TARGETS.parquetShare, `${num(share * 100, 1)}%`],
    ...(node24
      ? ([[`on Node.js 24 (Lambda's): inline converter CPU (all threads) <= ${TARGETS.cpuVsFloor}x the floor's, same run`, cpu24VsFloor(best24) <= TARGETS.cpuVsFloor, `${num(cpu24VsFloor(best24))}x`]] as Array<[string, boolean, string]>)
      : []),
  ];
  console.log('');
  for (const [what, ok, value] of checks) console.log(`${ok ? 'PASS' : 'MISS'}  ${what}: ${value}`);
  console.log(`\n(bench took ${Math.round((Date.now() - t0) / 1000)} s; Parquet output kept at ${out1m}, ${num(statSync(out1m).size / MiB, 1)} MiB)`);
  return checks.every(([, ok]) => ok);
}

const cpu24VsFloor = (best24: Map<string, Best>) => best24.get('converter inline (target)')!.cpuMs / best24.get('csv-parse alone (floor)')!.cpuMs;

/** Each measurement on both Nodes, wall time beside CPU (main thread / all threads), and Node 24's CPU over Node 20's. */
function printBeside(version: string, best: Map<string, Best>, version24: string, best24: Map<string, Best>): void {
  const secs = (ms: number | null) => (ms === null ? '-' : num(ms / 1000));
  const cell = (r: Best) => pad(`${secs(r.wallMs)} / ${secs(r.mainCpuMs)} / ${secs(r.cpuMs)}`, 22);
  console.log('');
  console.log(`Node.js ${version} beside ${version24} (what the Lambda functions run, so Lambda's bill): the same runs, alternated`);
  console.log(`${pad('measurement', 28)}${pad(`${version}: wall / main CPU / all CPU s`, 40)}${pad(`${version24}: wall / main CPU / all CPU s`, 40)}24 / 20 all CPU`);
  for (const [name, r] of best) {
    const r24 = best24.get(name)!;
    console.log(`${pad(name, 28)}${pad(cell(r), 40)}${pad(cell(r24), 40)}${num(r24.cpuMs / r.cpuMs)}x`);
  }
  const floor24 = best24.get('csv-parse alone (floor)')!;
  const ours24 = best24.get('converter inline (target)')!;
  console.log(`on ${version24}: inline converter / floor ${num(ours24.cpuMs / floor24.cpuMs)}x CPU (all threads), ${num(ours24.wallMs / floor24.wallMs)}x wall; peak RSS ${ours24.maxRssMb} MB`);
}

/** Prints the main thread's time by stage, floor beside converter (one profiled run each). */
async function printProfile(): Promise<void> {
  const [floorProfile, oursProfile] = await profileStages();
  const names = new Set([...floorProfile!.stages.keys(), ...oursProfile!.stages.keys()]);
  console.log('');
  console.log('main thread by stage, one --cpu-prof run each (sampled wall time of the thread, ms; profiling adds ~10%):');
  console.log(`  ${pad('stage', 46)}${pad('floor', 10)}inline converter`);
  const sorted = [...names].sort((a, b) => (oursProfile!.stages.get(b) ?? 0) - (oursProfile!.stages.get(a) ?? 0));
  for (const name of sorted) {
    console.log(`  ${pad(name, 46)}${pad(String(Math.round(floorProfile!.stages.get(name) ?? 0)), 10)}${Math.round(oursProfile!.stages.get(name) ?? 0)}`);
  }
  const busy = (p: typeof floorProfile) => p!.totalMs - p!.idleMs;
  console.log(`  ${pad('total (not idle)', 46)}${pad(String(Math.round(busy(floorProfile))), 10)}${Math.round(busy(oursProfile))}`);
}

/** The main thread's time by stage in a --cpu-prof run of the floor and of the inline converter. */
async function profileStages(): Promise<Array<{ name: string; stages: Map<string, number>; totalMs: number; idleMs: number }>> {
  const dir = join(dataDir, 'prof');
  const out: Array<{ name: string; stages: Map<string, number>; totalMs: number; idleMs: number }> = [];
  for (const [name, script, args] of [
    ['floor', 'csv-parse-floor.mjs', [csv1m]],
    ['inline converter', 'convert.mjs', [csv1m, join(dataDir, 'out-prof.parquet'), '1', 'inline', 'sample']],
  ] as const) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await runChild(script, [...args], ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no CPU profile from ${script}`);
    out.push({ name, ...stagesOf(join(dir, file), join(distDir, script)) });
  }
  rmSync(join(dataDir, 'out-prof.parquet'), { force: true });
  return out;
}
