import { RUN_STOPPING_CODES, type ErrorCode } from '../../functions/core/errors.js';
import type { WindowOutcome } from '../pipeline/pipeline.js';
import type { RunItem } from './run-plan.js';

/**
 * The order and overlap of a local run's windows: at most `concurrency` at once, at most each connection's bound
 * on one connection (the pipeline's limiter holds the requests to it as well), and the first window of each
 * connection alone: a refused login is refused once, not once per window in flight, which could lock the
 * merchant's account. A failure every later window would share (RUN_STOPPING_CODES) stops the rest of its
 * scope: the same connection (its gateway and login), or for a ConfigurationError the same report.
 */

/** Windows in flight at once unless `--concurrency` says otherwise. */
export const DEFAULT_RUN_CONCURRENCY = 2;

export interface ScheduleOptions {
  concurrency: number;
  boundOf: (connection: string) => number;
  run: (item: RunItem) => Promise<WindowOutcome>;
  /** Each window as it ends, with the indexes of the items its failure stopped (not tried). */
  onOutcome: (index: number, outcome: WindowOutcome, stopped: number[]) => void;
}

/** What a window's failure stops: nothing, its report, or its connection. */
export function stopScopeOf(outcome: WindowOutcome): 'report' | 'connection' | undefined {
  const code = outcome.error?.code;
  if (!code || !RUN_STOPPING_CODES.has(code as ErrorCode)) return undefined;
  return code === 'ConfigurationError' ? 'report' : 'connection';
}

export function runScheduled(items: readonly RunItem[], options: ScheduleOptions): Promise<void> {
  const pending = items.map((_, i) => i);
  const active = new Map<string, number>();
  const proven = new Set<string>();
  let running = 0;
  const connectionOf = (i: number) => items[i]!.feed.connection;
  const free = (i: number) => (active.get(connectionOf(i)) ?? 0) < (proven.has(connectionOf(i)) ? options.boundOf(connectionOf(i)) : 1);

  return new Promise<void>((resolve, reject) => {
    let failed = false;
    const finished = (i: number, outcome: WindowOutcome) => {
      const item = items[i]!;
      proven.add(item.feed.connection);
      const scope = stopScopeOf(outcome);
      const stopped = scope ? pending.filter((j) => (scope === 'report' ? items[j]!.report.id === item.report.id : connectionOf(j) === item.feed.connection)) : [];
      for (const j of stopped) pending.splice(pending.indexOf(j), 1);
      options.onOutcome(i, outcome, stopped);
    };
    const pump = () => {
      while (!failed && running < options.concurrency) {
        const at = pending.findIndex(free);
        if (at < 0) break;
        const i = pending.splice(at, 1)[0]!;
        const connection = connectionOf(i);
        running++;
        active.set(connection, (active.get(connection) ?? 0) + 1);
        options
          .run(items[i]!)
          .then((outcome) => finished(i, outcome))
          .catch((e: unknown) => {
            failed = true;
            reject(e);
          })
          .finally(() => {
            running--;
            active.set(connection, active.get(connection)! - 1);
            pump();
          });
      }
      if (!failed && running === 0) resolve();
    };
    pump();
  });
}
