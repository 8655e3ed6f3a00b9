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

export async function measure(work: () => Promise<{ rows: number; outBytes: number; extra?: Record<string, unknown> }>): Promise<void> {
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
