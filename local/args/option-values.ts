import { InvalidArgumentError } from 'commander';
import { ConfigurationError } from '../../functions/core/errors.js';
import { volumeShapeFrom, type VolumeShape } from '../simulator/volume.js';

/**
 * Option values that more than one command reads, turned into what the commands use. Kept apart from the
 * commands so bin/reports.ts can give `wholeNumber` to commander without loading any command's module.
 */

/** `--port`, `--concurrency`, …: a whole number, or commander's error naming the option. */
export const wholeNumber = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number');
  return n;
};

/** `--sample ID=FILE` values as the simulator's samples option. */
export function parseSampleOptions(values: readonly string[]): Record<string, string> {
  const samples: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq < 1 || eq === v.length - 1) throw new ConfigurationError(`--sample ${v}: expected ID=FILE, for example --sample payouts=./payouts-sample.csv`);
    samples[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return samples;
}

/**
 * `--weekday-volume` and `--drop-date` of `run` and `backfill`: the embedded simulator's volume shape. With
 * --gateway-url the gateway answers, so they are refused rather than silently ignored.
 */
export function simulatorVolume(opts: { gatewayUrl?: string; weekdayVolume?: string; dropDate?: readonly string[] }): VolumeShape | undefined {
  if (opts.gatewayUrl && (opts.weekdayVolume !== undefined || opts.dropDate?.length)) {
    throw new ConfigurationError("--weekday-volume and --drop-date shape the embedded simulator's answers; with --gateway-url the gateway answers.");
  }
  return volumeShapeFrom(opts);
}
