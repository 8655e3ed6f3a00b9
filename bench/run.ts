import { runBundlesBench } from './bundles.bench.js';
import { runChainBench } from './chain.bench.js';
import { runConvertBench } from './convert.bench.js';
import { runFleetBench } from './fleet.bench.js';
import { runSynthBench } from './synth.bench.js';

/**
 * `npm run bench [-- convert|bundles|chain|fleet|synth]`: every benchmark by default (converter, bundles, chain, fleet, synth); a name runs that one alone.
 * Environment:
 *   BENCH_RUNS=n        runs of each converter measurement, alternated (lowest times kept; default 3)
 *   BENCH_4M=0          skip the converter's 4M-row memory run
 *   BENCH_PROFILE=1     also profile the floor and the inline converter (--cpu-prof) and print the main thread's time by stage
 *   NODE24=<node>       the Node.js 24 the converter's measurements also run on (default: the one .ci/node24 installed)
 *   BENCH_LOAD_RUNS=n   cold node processes per bundle load time (median kept; default 7)
 *   BENCH_CHAIN_RUNS=n  chain runs, each beside a DuckDB run (best wall time kept; default BENCH_RUNS, else 2)
 *   BENCH_CHAIN_ROWS=n  rows of the chain's report (default 1,000,000); see chain.bench.ts for more
 *   BENCH_FLEET_RUNS=n  runs of `npm start` over 100 reports (best wall time kept; default 2); see fleet.bench.ts for more
 * Generated data and bundles go to bench/data/ (git-ignored); the Lambda bundles to a temporary directory.
 */
const only = process.argv[2];
const names = ['convert', 'bundles', 'chain', 'fleet', 'synth'];
if (only !== undefined && !names.includes(only)) {
  console.error(`unknown benchmark "${only}": npm run bench [-- ${names.join('|')}]`);
  process.exit(2);
}
const positive = (value: string | undefined, fallback: number) => (Number(value) > 0 ? Number(value) : fallback);

let allPass = true;
if (only === undefined || only === 'convert') {
  allPass = (await runConvertBench({ runs: positive(process.env.BENCH_RUNS, 3), with4m: process.env.BENCH_4M !== '0', profile: process.env.BENCH_PROFILE === '1' })) && allPass;
}
if (only === undefined || only === 'bundles') {
  allPass = (await runBundlesBench({ loadRuns: positive(process.env.BENCH_LOAD_RUNS, 7) })) && allPass;
}
if (only === undefined || only === 'chain') {
  // BENCH_RUNS is the converter's (default 3); the chain's runs take ~10 s each, so it keeps 2 unless told.
  allPass = (await runChainBench({ runs: positive(process.env.BENCH_CHAIN_RUNS ?? process.env.BENCH_RUNS, 2), rows: positive(process.env.BENCH_CHAIN_ROWS, 1_000_000) })) && allPass;
}
if (only === undefined || only === 'fleet') {
  const fleet = { runs: positive(process.env.BENCH_FLEET_RUNS, 2), reports: positive(process.env.BENCH_FLEET_REPORTS, 100), connections: positive(process.env.BENCH_FLEET_CONNECTIONS, 4) };
  allPass = (await runFleetBench(fleet)) && allPass;
}
if (only === undefined || only === 'synth') {
  allPass = (await runSynthBench()) && allPass;
}
console.log(allPass ? '\nall targets met' : '\nsome targets missed (see MISS above)');
