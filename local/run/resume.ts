import { resolve } from 'node:path';
import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import { showPath as show } from '../../functions/core/shown-path.js';
import type { RealGatewayFlag } from '../connections/connection-flags.js';
import { DEFAULT_RUN_CONCURRENCY } from './run-schedule.js';
import { windowEndLabel, windowLabel, type RunItem } from './run-plan.js';
import { formatLocalDate, formatLocalDateTime, parseWindowSize } from '../../functions/core/time/window.js';

/**
 * The one command that carries on an interrupted `npm start`: every feed with windows not done, from the first of
 * them to past the last, with every flag that shaped the run, so the resumed windows load the same way (a --sample
 * run must not resume on generated rows). One command, whatever number of reports and connections were cut off: the
 * range covers them all, so a window already done inside it is loaded again, which overwrites and never duplicates.
 * `--connection` is named only when some connection of those reports had nothing left. A value with spaces or quotes
 * is quoted for the shell.
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

/** `npm start -- …` for the items left: the reports and connections named, --from the first window left, --to past the last. */
export function resumeCommand(rest: readonly RunItem[], opts: ResumeOptions): string {
  const reports = [...new Set(rest.map((i) => i.report))];
  const connections = [...new Set(rest.map((i) => i.feed.connection))];
  const ofReports = new Set(reports.flatMap((r) => r.connections));
  const byStart = [...rest].sort((a, b) => (formatLocalDateTime(a.window.start) < formatLocalDateTime(b.window.start) ? -1 : 1));
  const byEnd = [...rest].sort((a, b) => (formatLocalDateTime(a.window.end) < formatLocalDateTime(b.window.end) ? -1 : 1));
  // A report of whole days reads --from as a date: an hourly window's start would skip that day's window.
  const days = reports.some((r) => parseWindowSize(r.window).unit === 'day');
  const first = byStart[0]!;
  const from = days ? formatLocalDate(first.window.start) : windowLabel(first.report, first.window);
  const last = byEnd.at(-1)!;
  const range = `--from ${from} --to ${windowEndLabel(last.report, last.window)}`;
  const narrowed = connections.length < ofReports.size ? connections.map((c) => `--connection ${c}`) : [];
  const common = commonFlags(opts, new Set(connections));
  return ['npm start --', ...reports.map((r) => `--report ${r.id}`), ...narrowed, range, ...common].join(' ');
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
