import { runBundlesBench } from './bundles.bench.js';
import { runConvertBench } from './convert.bench.js';

/**
 * `npm run bench [-- convert|bundles]`: both benchmarks by default, the converter's first; a name runs that one alone.
 * Environment:
 *   BENCH_RUNS=n        runs of each converter measurement (best wall time kept; default 3)
 *   BENCH_4M=0          skip the converter's 4M-row memory run
 *   BENCH_LOAD_RUNS=n   cold node processes per bundle load time (median kept; default 7)
 * Generated data and bundles go to bench/data/ (git-ignored); the Lambda bundles to a temporary directory.
 */
const only = process.argv[2];
if (only !== undefined && only !== 'convert' && only !== 'bundles') {
  console.error(`unknown benchmark "${only}": npm run bench [-- convert|bundles]`);
  process.exit(2);
}
const positive = (value: string | undefined, fallback: number) => (Number(value) > 0 ? Number(value) : fallback);

let allPass = true;
if (only !== 'bundles') {
  allPass = (await runConvertBench({ runs: positive(process.env.BENCH_RUNS, 3), with4m: process.env.BENCH_4M !== '0' })) && allPass;
}
if (only !== 'convert') {
  allPass = (await runBundlesBench({ loadRuns: positive(process.env.BENCH_LOAD_RUNS, 7) })) && allPass;
}
console.log(allPass ? '\nall targets met' : '\nsome targets missed (see MISS above)');
