/**
 * The manifest contract moved to the core (functions/core/lake/load-manifest.ts), where every reader imports it from.
 * Kept for the benchmarks (bench/chain.bench.ts), which import it from here; remove once they import the core's.
 */
export * from '../core/lake/load-manifest.js';
