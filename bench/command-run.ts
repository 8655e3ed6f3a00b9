import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A command as the user runs it, timed whole: `npm start -- …` (npm, its shell, then node bin/reports.mjs) in a
 * child process under /usr/bin/time -v, from spawn to exit. /usr/bin/time gives the CPU of the whole tree (npm's
 * own start-up included) and its peak RSS (the largest process's high-water mark: the run's node). The run's
 * node process is also sampled from /proc every 25 ms (RSS, CPU of all its threads and of its main thread), so
 * stages can be cut from clocks the command itself leaves (a gateway's request times, a manifest's).
 */

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..');
const hasTime = existsSync('/usr/bin/time');
const SAMPLE_MS = 25;

/**
 * One sample of the run's node process: [Date.now(), RSS MB, CPU ms of all threads, CPU ms of the main thread,
 * RSS high-water mark MB]. The high-water mark (VmHWM) is the kernel's own peak, so a spike shorter than the
 * sampling interval still shows, in the stage where it happened.
 */
export type Sample = [number, number, number, number, number];

export interface CommandRun {
  code: number | null;
  samples: Sample[];
  stdout: string;
  stderr: string;
  spawnedAt: number;
  exitedAt: number;
  /** Peak RSS of the largest process of the tree (/usr/bin/time -v), MB. */
  maxRssMb: number | undefined;
  /** User + system CPU of the whole tree (/usr/bin/time -v), ms. */
  cpuMs: number | undefined;
}

/** utime + stime of a /proc stat line, in ms (USER_HZ is 100 on Linux). */
const statCpuMs = (stat: string) => {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

const childrenOf = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

const nodeBinary = realpathSync(process.execPath);

/** The node process under `pid` (itself included) whose command line holds `marker` (not the shell that started it). */
function findProcess(pid: number, marker: string): number | undefined {
  for (let queue = [pid]; queue.length; ) {
    const p = queue.shift()!;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker) && readlinkSync(`/proc/${p}/exe`) === nodeBinary) return p;
    } catch {
      continue;
    }
    queue.push(...childrenOf(p));
  }
  return undefined;
}

function sample(pid: number): Sample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    if (!kb || !hwm) return undefined;
    const all = statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const main = statCpuMs(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
    return [Date.now(), Number(kb[1]) / 1024, all, main, Number(hwm[1]) / 1024];
  } catch {
    return undefined;
  }
}

/**
 * Runs `command args` (under /usr/bin/time -v when present) and samples the descendant whose command line holds
 * `marker`; never rejects on a non-zero exit. BENCH_CHAIN_TRACE=file appends the samples, a JSON line per run.
 */
export function runCommand(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; marker: string }): Promise<CommandRun> {
  const [file, argv] = hasTime ? ['/usr/bin/time', ['-v', command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    const spawnedAt = Date.now();
    const child = spawn(file, argv, { cwd: root, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const samples: Sample[] = [];
    let target: number | undefined;
    const sampler = setInterval(() => {
      if (child.pid === undefined) return;
      target ??= findProcess(child.pid, options.marker);
      const s = target === undefined ? undefined : sample(target);
      if (s) samples.push(s);
    }, SAMPLE_MS);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (e) => {
      clearInterval(sampler);
      reject(e);
    });
    child.on('close', (code) => {
      clearInterval(sampler);
      if (process.env.BENCH_CHAIN_TRACE) appendFileSync(process.env.BENCH_CHAIN_TRACE, JSON.stringify({ spawnedAt, samples }) + '\n');
      const max = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      const user = /User time \(seconds\): ([\d.]+)/.exec(stderr);
      const system = /System time \(seconds\): ([\d.]+)/.exec(stderr);
      resolve({
        code,
        samples,
        stdout,
        stderr,
        spawnedAt,
        exitedAt: Date.now(),
        maxRssMb: max ? Math.round(Number(max[1]) / 1024) : undefined,
        cpuMs: user && system ? Math.round((Number(user[1]) + Number(system[1])) * 1000) : undefined,
      });
    });
  });
}

/** `node args`, timed and sampled the same way (the process itself is the one sampled). */
export const runNode = (args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CommandRun> =>
  runCommand(process.execPath, args, { env, marker: args.find((a) => !a.startsWith('-')) ?? process.execPath });

/**
 * `npm start -- args`, as the user types it: npm from the PATH npm run gives the bench (npm_execpath), else the
 * one on the PATH. The run's node process is the one whose command line names bin/reports.mjs.
 */
export function runNpmStart(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CommandRun> {
  const npmCli = process.env.npm_execpath;
  const [command, lead] = npmCli && npmCli.endsWith('.js') ? [process.execPath, [npmCli]] : ['npm', []];
  return runCommand(command, [...lead, 'start', '--', ...args], { env, marker: 'bin/reports.mjs' });
}

/** The peak of the samples within [from, to] and the CPU spent between them (all threads, main thread). */
export interface StageUse {
  rssMb: number;
  cpuMs: number;
  mainCpuMs: number;
}

/** `fromProcessStart`: the process began within the stage, so its CPU counts from zero, not from the first sample. */
export function stageUse(samples: Sample[], from: number, to: number, fromProcessStart = false): StageUse {
  const within = samples.filter(([t]) => t >= from && t <= to);
  // CPU counted from the last sample before the stage, so a short stage is not read as idle.
  const before: Sample | undefined = fromProcessStart ? [from, 0, 0, 0, 0] : (samples.filter(([t]) => t < from).at(-1) ?? within[0]);
  const last = within.at(-1);
  // Where the high-water mark rose during the stage, the process's new peak was reached in it (within one
  // interval of its start): that is its exact peak. Otherwise the highest sampled RSS, a lower bound.
  const hwmRose = before !== undefined && last !== undefined && last[4] > before[4];
  return {
    rssMb: Math.round(Math.max(0, ...within.map(([, mb]) => mb), hwmRose ? last[4] : 0)),
    cpuMs: before && last ? last[2] - before[2] : 0,
    mainCpuMs: before && last ? last[3] - before[3] : 0,
  };
}
