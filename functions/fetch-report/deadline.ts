import { GatewayUnavailable } from '../core/errors.js';

/**
 * Lambda ends a function at its time-out without a word in the log and with a multipart upload left
 * half done. Stopping the gateway call a little earlier instead gives a typed, retryable error, an
 * aborted upload and the run's normal failure path (metrics, the windows not fetched named).
 */
export const DEADLINE_MARGIN_MS = 15_000;

export interface Deadline {
  signal: AbortSignal;
  /** When the signal aborts (epoch ms): the run's windows share the time until then (window-budget.ts). */
  at: number;
  clear(): void;
}

export function deadlineBefore(remainingMs: number, marginMs = DEADLINE_MARGIN_MS): Deadline {
  const controller = new AbortController();
  const delayMs = Math.max(0, remainingMs - marginMs);
  const timer = setTimeout(
    () =>
      controller.abort(
        new GatewayUnavailable(
          1,
          `the fetch function's time-out was ${Math.round(marginMs / 1000)} s away, so the gateway call was stopped ` +
            '(a slow gateway or a large report: raise fetch.timeoutSeconds if it keeps happening)',
        ),
      ),
    delayMs,
  );
  return { signal: controller.signal, at: Date.now() + delayMs, clear: () => clearTimeout(timer) };
}
