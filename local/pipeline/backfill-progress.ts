import cliProgress from 'cli-progress';
import { windowLine, type WindowReport } from './backfill-runner.js';

/**
 * Progress of a backfill. On a terminal: one bar (on stderr) with the counts, and each failed window
 * printed above it as it happens. Elsewhere (CI, a log file, a pipe): no bar, whose redraws would fill
 * the log with carriage returns, but one line per window on stdout.
 */

export interface BackfillProgress {
  window(report: WindowReport): void;
  stop(): void;
}

export function startProgress(total: number, options: { tty?: boolean; log?: (line: string) => void } = {}): BackfillProgress {
  const tty = options.tty ?? Boolean(process.stderr.isTTY);
  const log = options.log ?? ((line: string) => console.log(line));
  if (!tty) return { window: (r) => log(windowLine(r)), stop: () => undefined };

  const counts: Record<WindowReport['status'], number> = { done: 0, failed: 0, skipped: 0, 'not-tried': 0 };
  const bars = new cliProgress.MultiBar({
    format: ' {bar} {value}/{total} windows | {done} done, {failed} failed, {skipped} skipped | {duration_formatted}',
    hideCursor: true,
    barsize: 24,
    // Updated on every window; the timer redraws the elapsed time between windows that take minutes.
    fps: 2,
  });
  const bar = bars.create(total, 0, counts);
  return {
    window(report) {
      counts[report.status]++;
      // Failures and flagged windows above the bar as they happen; the summary lists them again.
      if (report.status === 'failed' || report.findings?.length) bars.log(`${windowLine(report)}\n`);
      bar.increment(1, counts);
    },
    stop: () => bars.stop(),
  };
}
