import { resolve } from 'node:path';
import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import { showPath as show } from '../../functions/core/shown-path.js';
import type { RealGatewayFlag } from '../connections/connection-flags.js';
import { DEFAULT_RUN_CONCURRENCY } from './run-schedule.js';
import { windowEndLabel, windowLabel, type RunItem } from './run-plan.js';

/**
 * The command that carries on an interrupted `npm start`: for the windows not done, every flag that shaped the run,
 * so the resumed windows load the same way (a --sample run must not resume on generated rows). Reports whose windows
 * left span the same range share one command; a value with spaces or quotes is quoted for the shell.
 */

export interface ResumeOptions {
  gateways: readonly RealGatewayFlag[];
  s3Endpoint?: string;
  lake: string;
  sample?: readonly string[];
  weekdayVolume?: string;
  dropDate?: readonly string[];
  allowIncomplete?: boolean;
  concurrency?: number;
}

const arg = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);

/** One `npm start -- …` per range of windows left: the reports named, --from the first window left, --to past the last. */
export function resumeCommands(rest: readonly RunItem[], opts: ResumeOptions): string[] {
  const ranges = new Map<string, string[]>();
  for (const report of [...new Set(rest.map((i) => i.report))]) {
    const windows = rest.filter((i) => i.report === report).map((i) => i.window);
    const range = `--from ${windowLabel(report, windows[0]!)} --to ${windowEndLabel(report, windows.at(-1)!)}`;
    ranges.set(range, [...(ranges.get(range) ?? []), report.id]);
  }
  const common = commonFlags(opts, new Set(rest.map((i) => i.report.connection)));
  return [...ranges].map(([range, ids]) => ['npm start --', ...ids.map((id) => `--report ${id}`), range, ...common].join(' '));
}

function commonFlags(opts: ResumeOptions, connections: ReadonlySet<string>): string[] {
  const flags: string[] = [];
  for (const g of opts.gateways.filter((g) => connections.has(g.connection))) {
    const named = g.connection === DEFAULT_CONNECTION ? '' : `${g.connection}=`;
    flags.push(`--gateway-url ${arg(named + g.url)}`, `--secret-file ${arg(named + g.secretFile)}`);
  }
  if (opts.s3Endpoint) flags.push(`--s3-endpoint ${arg(opts.s3Endpoint)}`);
  if (resolve(opts.lake) !== resolve('.lake')) flags.push(`--lake ${arg(show(opts.lake))}`);
  for (const sample of opts.sample ?? []) flags.push(`--sample ${arg(sample)}`);
  if (opts.weekdayVolume !== undefined) flags.push(`--weekday-volume ${arg(opts.weekdayVolume)}`);
  for (const drop of opts.dropDate ?? []) flags.push(`--drop-date ${arg(drop)}`);
  if (opts.allowIncomplete) flags.push('--allow-incomplete');
  if (opts.concurrency !== undefined && opts.concurrency !== DEFAULT_RUN_CONCURRENCY) flags.push(`--concurrency ${opts.concurrency}`);
  return flags;
}
