/**
 * The manifest contract moved to the core (functions/core/load-manifest.ts), where every reader imports it from.
 * Kept for the benchmarks (bench/chain.bench.ts), which import it from here; remove once they import the core's.
 */
export * from '../core/load-manifest.js';
