import { GatewayUnavailable } from '../core/errors.js';

/**
 * A run's time shared fairly between its windows. A scheduled run fetches its window and `lookback` more, one
 * gateway call each (with the client's retries), inside one Lambda time-out. Without a share, one slow provider
 * answer (the client allows 300 s an attempt) could use the whole time-out on the first window and cut every other
 * window off; with it, each window may use what is left of the run divided by the windows still to come, and an
 * attempt that would run past its window's share is stopped with a typed, retryable error while the next window
 * still gets its own. A window that finishes early leaves its time to the ones after it.
 */

/** The least share a window may get: a connect, a slow first byte and a modest report. lib/constructs/fetch.ts checks it at synth. */
export const MIN_WINDOW_SHARE_MS = 60_000;

/** Milliseconds window `index` (0-based, of `count`) may use, given when the run must have ended. */
export function windowShareMs(runDeadlineAt: number, nowMs: number, index: number, count: number): number {
  return Math.max(0, Math.floor((runDeadlineAt - nowMs) / (count - index)));
}

/** The share a window of a scheduled run gets at its start when every window before it used all of its own. */
export function worstCaseShareMs(usableMs: number, windows: number): number {
  return Math.floor(usableMs / windows);
}

export interface WindowBudget {
  signal: AbortSignal;
  clear(): void;
}

/** A signal that aborts when `parent` does (with its reason) or when the window's share runs out. */
export function windowBudget(parent: AbortSignal | undefined, shareMs: number, label: string, windowsLeft: number): WindowBudget {
  const controller = new AbortController();
  const onParent = () => controller.abort(parent!.reason);
  if (parent?.aborted) onParent();
  parent?.addEventListener('abort', onParent, { once: true });
  const timer = setTimeout(
    () =>
      controller.abort(
        new GatewayUnavailable(
          1,
          `window ${label} used its share of the run's time (${Math.round(shareMs / 1000)} s: what was left of the fetch function's time-out ` +
            `divided by the ${windowsLeft} window(s) still to fetch), so its gateway call was stopped and the next window keeps its own ` +
            '(a slow gateway or a large report: raise fetch.timeoutSeconds, or lower the lookback, if it keeps happening)',
        ),
      ),
    shareMs,
  );
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
    },
  };
}
