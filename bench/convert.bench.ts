import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { ChildResult } from './children/measure.js';
import { DEFAULT_ROW_GROUP_BYTES, DEFAULT_ROW_GROUP_ROWS } from '../functions/core/csv-to-parquet.js';
import { footerProblems } from '../test/helpers/parquet-checks.js';
import { readParquetFooter, type ParquetFooter } from '../test/helpers/parquet-footer.js';
import { catalogDefine } from '../lib/bundling.js';
import { ensureCsv } from './generate-data.js';

/**
 * The CSV-to-Parquet benchmark (issue 3): csv-parse alone (the floor), our converter file to file, and
 * DuckDB's CSV-to-Parquet on one thread (the reference), on a 1M-row sample-shaped CSV with the hard
 * cases; then our converter on 4M rows to show memory does not grow with the input. The file's layout
 * (rows per row group, page version and encodings per column, created_by) is read back from its own
 * footer and page headers (test/helpers/parquet-footer.ts) and checked against issue 11's rules.
 *
 * Each measurement runs in its own child process, so peak RSS is per measurement (/usr/bin/time -v
 * when present). The children are bundled with esbuild first, the way the Lambda function is
 * deployed, with the encoder worker as a second entry beside the converter (no tsx in the process).
 * The machine may be shared: each measurement runs BENCH_RUNS times (default 3), interleaved, and
 * the best wall time is kept (noise only ever adds time); RSS is the highest seen.
 */

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = join(here, 'data');
const distDir = join(dataDir, 'dist');
const csv1m = join(dataDir, 'transactions-1m.csv');
const MiB = 1024 * 1024;

const TARGETS = { vsFloor: 1.5, rssMb: 256, rssGrowth: 0.1, parquetShare: 0.2 };

async function bundle(): Promise<void> {
  await build({
    entryPoints: {
      'csv-parse-floor': join(here, 'children/csv-parse-floor.ts'),
      convert: join(here, 'children/convert.ts'),
      duckdb: join(here, 'children/duckdb.ts'),
      // beside convert.mjs, where encoder-thread.ts looks for it: as in the Lambda bundle
      'parquet-worker': join(here, '../functions/core/parquet-worker.ts'),
    },
    outdir: distDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['@duckdb/*'],
    // The report catalog carried in the bundle, as the Lambda bundle carries it: bench/data/dist/ has no
    // config/reports/ beside it to read.
    define: catalogDefine(),
    // some dependencies are CommonJS and call require(): give the ESM bundle one
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}

const hasTime = existsSync('/usr/bin/time');

/** Runs one bundled child; returns its result with the peak RSS of the whole process. */
function runChild(script: string, args: string[]): Promise<ChildResult> {
  const node = process.execPath;
  const argv = hasTime ? ['-v', node, join(distDir, script), ...args] : [join(distDir, script), ...args];
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

interface Best {
  wallMs: number;
  mainCpuMs: number | null;
  cpuMs: number;
  maxRssMb: number;
  rows: number;
  outBytes: number;
  extra?: Record<string, unknown>;
}

function keepBest(prev: Best | undefined, r: ChildResult): Best {
  if (!prev) return { ...r };
  const better = r.wallMs < prev.wallMs ? r : prev;
  return { ...better, maxRssMb: Math.max(prev.maxRssMb, r.maxRssMb) };
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

export async function runConvertBench(options: { runs?: number; with4m?: boolean } = {}): Promise<boolean> {
  const runs = options.runs ?? 3;
  const t0 = Date.now();
  const { bytes, generated } = await ensureCsv(csv1m, 1_000_000);
  console.log(`input: ${csv1m} (1,000,000 rows, ${num(bytes / MiB, 1)} MiB${generated ? ', generated now' : ', reused'})`);
  await bundle();
  const out1m = join(dataDir, 'out-1m.parquet');
  const outDuck = join(dataDir, 'out-duckdb.parquet');
  const out4m = join(dataDir, 'out-4m.parquet');
  console.log(`load average before: ${loadavg().map((l) => num(l)).join(' ')} (the machine may be shared; best of ${runs} runs kept)`);

  let floor: Best | undefined;
  let ours: Best | undefined;
  let duck: Best | undefined;
  for (let i = 0; i < runs; i++) {
    floor = keepBest(floor, await runChild('csv-parse-floor.mjs', [csv1m]));
    ours = keepBest(ours, await runChild('convert.mjs', [csv1m, out1m, '1']));
    duck = keepBest(duck, await runChild('duckdb.mjs', [csv1m, outDuck]));
  }
  const big = options.with4m === false ? undefined : await runChild('convert.mjs', [csv1m, out4m, '4']);
  rmSync(out4m, { force: true });
  if (!floor || !ours || !duck) throw new Error('no measurement');
  for (const [name, r] of [['converter', ours], ['DuckDB', duck]] as const) {
    if (r.rows !== 1_000_000) throw new Error(`${name} wrote ${r.rows} rows, not 1,000,000`);
  }
  if (big && big.rows !== 4_000_000) throw new Error(`the 4M run wrote ${big.rows} rows`);

  const mbps = (r: Best) => num(bytes / MiB / (r.wallMs / 1000), 1);
  const rows: Array<[string, Best]> = [
    ['csv-parse alone (floor)', floor],
    ['our converter (1M rows)', ours],
    ['DuckDB, threads=1', duck],
    ...(big ? ([['our converter (4M rows)', big]] as Array<[string, Best]>) : []),
  ];
  console.log('');
  console.log(`${pad('measurement', 26)}${pad('wall s', 9)}${pad('MiB/s', 8)}${pad('main CPU s', 12)}${pad('all CPU s', 11)}${pad('peak RSS MB', 13)}output MiB`);
  for (const [name, r] of rows) {
    const scale = r === big ? 4 : 1;
    console.log(
      `${pad(name, 26)}${pad(num(r.wallMs / 1000), 9)}${pad(mbps({ ...r, wallMs: r.wallMs / scale }), 8)}` +
        `${pad(r.mainCpuMs === null ? '-' : num(r.mainCpuMs / 1000), 12)}${pad(num(r.cpuMs / 1000), 11)}${pad(String(r.maxRssMb), 13)}${r.outBytes ? num(r.outBytes / MiB, 1) : '-'}`,
    );
  }
  const vsFloor = ours.wallMs / floor.wallMs;
  const vsDuck = ours.wallMs / duck.wallMs;
  const share = ours.outBytes / bytes;
  console.log('');
  console.log(`converter / floor: ${num(vsFloor)}x   converter / DuckDB: ${num(vsDuck)}x   Parquet: ${num(share * 100, 1)}% of the CSV (DuckDB's: ${num((duck.outBytes / bytes) * 100, 1)}%)`);
  const manifest = ours.extra?.manifest as { timings?: unknown; rowGroups?: number; encoder?: string } | undefined;
  if (manifest) console.log(`converter manifest: encoder ${manifest.encoder}, ${manifest.rowGroups} row groups, timings ${JSON.stringify(manifest.timings)}`);
  console.log(`load average after: ${loadavg().map((l) => num(l)).join(' ')}`);

  const footer = readParquetFooter(readFileSync(out1m));
  printLayout(footer);
  const problems = footerProblems(footer, { minRowsPerGroup: DEFAULT_ROW_GROUP_ROWS, maxGroupBytes: BigInt(DEFAULT_ROW_GROUP_BYTES) });
  for (const p of problems) console.log(`  layout problem: ${p}`);

  const checks: Array<[string, boolean, string]> = [
    [`layout: created_by, TIMESTAMP_MILLIS, v1 pages, no DELTA_BYTE_ARRAY, statistics, groups >= ${DEFAULT_ROW_GROUP_ROWS} rows`, problems.length === 0, `${problems.length} problem(s)`],
    [`converter wall time <= ${TARGETS.vsFloor}x the csv-parse floor`, vsFloor <= TARGETS.vsFloor, `${num(vsFloor)}x`],
    [`peak RSS <= ${TARGETS.rssMb} MB at 1M rows`, ours.maxRssMb <= TARGETS.rssMb, `${ours.maxRssMb} MB`],
    ...(big
      ? ([[`peak RSS at 4M rows < ${TARGETS.rssGrowth * 100}% above 1M`, big.maxRssMb < ours.maxRssMb * (1 + TARGETS.rssGrowth), `${big.maxRssMb} MB (${num((big.maxRssMb / ours.maxRssMb - 1) * 100, 1)}%)`]] as Array<[string, boolean, string]>)
      : []),
    [`Parquet <= ${TARGETS.parquetShare * 100}% of the CSV`, share <= TARGETS.parquetShare, `${num(share * 100, 1)}%`],
  ];
  console.log('');
  for (const [what, ok, value] of checks) console.log(`${ok ? 'PASS' : 'MISS'}  ${what}: ${value}`);
  console.log(`\n(bench took ${Math.round((Date.now() - t0) / 1000)} s; Parquet output kept at ${out1m}, ${num(statSync(out1m).size / MiB, 1)} MiB)`);
  return checks.every(([, ok]) => ok);
}
