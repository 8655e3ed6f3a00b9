import type { FaultMode } from '../simulator/faults.js';
import type { PeriodToReading } from '../simulator/index.js';
import { runStandaloneSimulator, transportFrom, volumeShapeFrom } from '../simulator/index.js';
import { parseSampleOptions } from '../args/option-values.js';

/**
 * `reports simulator` (`npm run simulator`): the gateway simulator on 127.0.0.1 until Ctrl-C, from the
 * command's flags. The simulator itself is local/simulator/.
 */

export interface SimulatorCommandOptions {
  port?: number;
  pathPrefix?: string;
  secretsDir?: string;
  rowsPerDay?: number;
  weekdayVolume?: string;
  dropDate?: string[];
  fault?: FaultMode;
  times?: number;
  delayMs?: number;
  retryAfter?: number;
  contentType?: string;
  compress?: string;
  chunked?: boolean;
  sample?: string[];
  periodTo?: PeriodToReading;
  refuse?: string[];
}

export async function runSimulatorCommand(opts: SimulatorCommandOptions): Promise<void> {
  await runStandaloneSimulator({
    samples: opts.sample ? parseSampleOptions(opts.sample) : undefined,
    port: opts.port,
    pathPrefix: opts.pathPrefix,
    secretsDir: opts.secretsDir,
    rowsPerDay: opts.rowsPerDay,
    periodTo: opts.periodTo,
    refuse: opts.refuse,
    volume: volumeShapeFrom(opts),
    fault: opts.fault
      ? { mode: opts.fault, times: opts.times, delayMs: opts.delayMs, retryAfterSeconds: opts.retryAfter }
      : undefined,
    transport: transportFrom({ contentType: opts.contentType, compress: opts.compress, chunked: opts.chunked }),
  });
}
