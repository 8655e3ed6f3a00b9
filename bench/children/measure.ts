import { readFileSync } from 'node:fs';

/**
 * What every benchmark child prints as its last line: one JSON object. Wall time is measured inside
 * the child around the work only (no process start, no module loading); peak RSS comes from
 * /usr/bin/time -v in the parent when present (the whole process, worker threads included), else
 * from process.resourceUsage().maxRSS here.
 */
export interface ChildResult {
  wallMs: number;
  /** CPU of the whole process (all threads). */
  cpuMs: number;
  /** CPU of the main thread alone (Linux), which bounds the wall time when work overlaps on a worker. */
  mainCpuMs: number | null;
  maxRssMb: number;
  rows: number;
  outBytes: number;
  /** CPU (all threads, ms) spent while each tenth of the input was read: see cpuByTenth. */
  tenths?: number[];
  extra?: Record<string, unknown>;
}

function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 10 ms ticks
  } catch {
    return null;
  }
}

/**
 * Where in the input the CPU went: the process's CPU (all threads) sampled every few milliseconds beside the
 * bytes the read stream has read, and split at each tenth of the file. A cold process pays to compile its
 * hot functions (on V8's helper threads) and runs them slower until then, so the first tenths cost more
 * than the rest; the later tenths are the steady state a warm process runs at. Sampled from a timer, not
 * from the data path, so the measured code is the same with or without it; the timer only fires between
 * chunks, when the event loop turns, so each split is as late as the chunk being worked on.
 */
export function cpuByTenth(input: { readonly bytesRead: number }, totalBytes: number): () => number[] {
  const cpu0 = process.cpuUsage();
  const marks: number[] = [];
  const sample = () => {
    while (marks.length < 9 && input.bytesRead >= ((marks.length + 1) * totalBytes) / 10) {
      const c = process.cpuUsage(cpu0);
      marks.push((c.user + c.system) / 1000);
    }
  };
  const timer = setInterval(sample, 2);
  timer.unref();
  return () => {
    clearInterval(timer);
    const c = process.cpuUsage(cpu0);
    const all = [...marks, (c.user + c.system) / 1000];
    return all.map((ms, i) => Math.round(ms - (i ? all[i - 1]! : 0)));
  };
}

export async function measure(work: () => Promise<{ rows: number; outBytes: number; tenths?: number[]; extra?: Record<string, unknown> }>): Promise<void> {
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMs();
  const t0 = performance.now();
  const r = await work();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpuMs();
  const result: ChildResult = {
    wallMs: Math.round(wallMs),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    mainCpuMs: main0 === null || main1 === null ? null : main1 - main0,
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    ...r,
  };
  console.log(JSON.stringify(result));
}
