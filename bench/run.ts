import { runConvertBench } from './convert.bench.js';

/**
 * `npm run bench`. Environment:
 *   BENCH_RUNS=n   runs of each measurement (best wall time kept; default 3)
 *   BENCH_4M=0     skip the 4M-row memory run
 * Generated data and bundles go to bench/data/ (git-ignored).
 */
const runs = Number(process.env.BENCH_RUNS ?? 3);
const allPass = await runConvertBench({ runs: runs > 0 ? runs : 3, with4m: process.env.BENCH_4M !== '0' });
console.log(allPass ? '\nall targets met' : '\nsome targets missed (see MISS above)');
