import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPORTS_DIR_VARIABLE } from '../functions/core/definitions/catalog-files.js';
import { ENVIRONMENTS_DIR_VARIABLE } from '../lib/environment/environments.js';
import { QUERIES_DIR_VARIABLE } from '../lib/saved-queries/saved-queries.js';
import { root, runNode, runNpmStart, type CommandRun } from './command-run.js';

/**
 * The fleet benchmark (issue 32): `npm start` over 100 reports from the embedded simulators, as a user with a
 * catalog that size runs it: every report's latest complete window, each connection on a simulator of its own,
 * the saved queries of the reports that have some. The whole command is timed (command-run.ts): wall, CPU of
 * every process, peak RSS, against ≤ 30 s and ≤ 400 MB; and its summary is read back (every window loaded, the
 * totals per connection, how many lines it took).
 *
 * The catalog: config/reports/transactions.json under 100 ids (transactions_001 …) over 4 connections, in
 * bench/data/fleet/ (PAYNET_REPORTS_DIR, PAYNET_ENVIRONMENTS_DIR, PAYNET_QUERIES_DIR point there); 6 of the
 * reports (the share of issue 32's 30 in 500) have the shipped saved queries, reading their own table.
 *
 * Environment:
 *   BENCH_FLEET_RUNS=n         runs (best wall time kept, highest RSS; default 2)
 *   BENCH_FLEET_REPORTS=n      reports (default 100); BENCH_FLEET_CONNECTIONS=n connections (default 4)
 */

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = join(here, 'data', 'fleet');

export const FLEET_TARGETS = { wallS: 30, rssMb: 400 };
/** Reports with saved queries, per 500 (issue 32's catalog: 30 of 500). */
const WITH_QUERIES_PER_500 = 30;

/** Writes the catalog, the environments and the saved queries; returns the variables that point at them. */
function writeFleet(reports: number, connections: number): Record<string, string> {
  rmSync(dataDir, { recursive: true, force: true });
  const dirs = { reports: join(dataDir, 'reports'), environments: join(dataDir, 'environments'), queries: join(dataDir, 'queries') };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  const base = JSON.parse(readFileSync(join(root, 'config', 'reports', 'transactions.json'), 'utf8')) as Record<string, unknown>;
  delete base.$schema;
  const names = Array.from({ length: connections }, (_, i) => `provider-${i + 1}`);
  const shippedQueries = join(root, 'queries', 'transactions');
  const withQueries = Math.max(1, Math.round((reports * WITH_QUERIES_PER_500) / 500));
  for (let i = 0; i < reports; i++) {
    const id = `transactions_${String(i + 1).padStart(3, '0')}`;
    writeFileSync(join(dirs.reports, `${id}.json`), JSON.stringify({ ...base, id, connection: names[i % connections] }, null, 2));
    if (i >= withQueries) continue;
    mkdirSync(join(dirs.queries, id));
    for (const f of readdirSync(shippedQueries)) {
      writeFileSync(join(dirs.queries, id, f), readFileSync(join(shippedQueries, f), 'utf8').replace(/\bFROM transactions\b/g, `FROM ${id}`));
    }
  }
  for (const file of ['integration.json', 'production.json']) {
    const env = JSON.parse(readFileSync(join(root, 'config', 'environments', file), 'utf8')) as Record<string, unknown> & { name: string };
    delete env.$schema;
    delete env.gateway;
    delete env.secret;
    env.connections = Object.fromEntries(
      names.map((c) => [c, { gateway: { endpointUrl: `https://${c}.gateway.example/paynet-ui/services/v2/rpt-engine` }, secret: { name: `paynet-reports/${env.name}/${c}`, mode: 'create' } }]),
    );
    writeFileSync(join(dirs.environments, file), JSON.stringify(env, null, 2));
  }
  return { [REPORTS_DIR_VARIABLE]: dirs.reports, [ENVIRONMENTS_DIR_VARIABLE]: dirs.environments, [QUERIES_DIR_VARIABLE]: dirs.queries };
}

const num = (n: number, digits = 2) => n.toFixed(digits);

export async function runFleetBench(options: { runs?: number; reports?: number; connections?: number } = {}): Promise<boolean> {
  const runs = options.runs ?? 2;
  const reports = options.reports ?? 100;
  const connections = options.connections ?? 4;
  const t0 = Date.now();
  const env = { ...process.env, ...writeFleet(reports, connections) };
  const lake = join(dataDir, 'lake');
  console.log(`fleet: ${reports} reports over ${connections} connections in ${dataDir}, each its latest complete window from the embedded simulators`);
  console.log(`load average before: ${loadavg().map((l) => num(l)).join(' ')} (the machine may be shared; best of ${runs} runs kept)`);
  // `npm start` compiles the command on its first run after a change (bin/reports.mjs): done here, unmeasured.
  const warm = await runNode(['bin/reports.mjs', '--help']);
  if (warm.code !== 0) throw new Error(`bin/reports.mjs --help failed (exit ${warm.code}):\n${warm.stderr.slice(-2000)}`);
  let best: CommandRun | undefined;
  let peakRss = 0;
  for (let i = 0; i < runs; i++) {
    rmSync(lake, { recursive: true, force: true });
    const r = await runNpmStart(['--lake', lake], env);
    if (r.code !== 0) throw new Error(`npm start failed (exit ${r.code}):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
    const wall = r.exitedAt - r.spawnedAt;
    console.log(`  run ${i + 1}: ${num(wall / 1000)} s wall, ${num((r.cpuMs ?? NaN) / 1000)} s CPU, ${r.maxRssMb} MB peak RSS`);
    peakRss = Math.max(peakRss, r.maxRssMb ?? Infinity);
    if (!best || wall < best.exitedAt - best.spawnedAt) best = r;
  }
  if (!best) throw new Error('no measurement');
  const lines = best.stdout.trimEnd().split('\n');
  const done = lines.find((l) => l.startsWith('Done:')) ?? '';
  const expected = `Done: ${reports} window(s) of ${reports} reports asked: ${reports} loaded, 0 failed, 0 not tried`;
  if (!done.startsWith(expected)) throw new Error(`expected "${expected}…", the run said:\n${best.stdout.slice(-3000)}`);
  const totals = lines.indexOf('Per connection:');
  const wallS = (best.exitedAt - best.spawnedAt) / 1000;
  console.log('');
  console.log(`npm start over ${reports} reports: ${num(wallS)} s wall, ${num((best.cpuMs ?? NaN) / 1000)} s CPU (every process and thread), ${peakRss} MB peak RSS`);
  console.log(`the summary, ${lines.length} lines; its closing lines:`);
  for (const line of lines.slice(totals)) console.log(`  | ${line}`);
  console.log(`load average after: ${loadavg().map((l) => num(l)).join(' ')}`);
  const checks: Array<[string, boolean, string]> = [
    [`whole command <= ${FLEET_TARGETS.wallS} s`, wallS <= FLEET_TARGETS.wallS, `${num(wallS)} s (CPU ${num((best.cpuMs ?? NaN) / 1000)} s)`],
    [`peak RSS <= ${FLEET_TARGETS.rssMb} MB`, peakRss <= FLEET_TARGETS.rssMb, `${peakRss} MB`],
    ['totals per connection in the summary', totals > 0 && lines.slice(totals + 2, totals + 2 + connections).length === connections, totals > 0 ? 'shown' : 'missing'],
  ];
  console.log('');
  for (const [what, ok, value] of checks) console.log(`${ok ? 'PASS' : 'MISS'}  ${what}: ${value}`);
  console.log(`\n(bench took ${Math.round((Date.now() - t0) / 1000)} s)`);
  return checks.every(([, ok]) => ok);
}
