import { ConfigurationError } from './errors.js';

/**
 * Back-off for the gateway client: exponential with full jitter (AWS Architecture Blog, "Exponential
 * Backoff And Jitter"), so that many schedules failing together do not come back in lock-step.
 */
export interface RetryPolicy {
  /** Total attempts, the first one included (1 = never retry). */
  attempts: number;
  /** Ceiling of the first back-off; each later one doubles it. */
  baseDelayMs: number;
  /** No single wait is longer, Retry-After included. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 1_000, maxDelayMs: 30_000 };

export function resolveRetryPolicy(given: Partial<RetryPolicy> | undefined): RetryPolicy {
  const policy = { ...DEFAULT_RETRY, ...given };
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1) {
    throw new ConfigurationError(`retry.attempts must be a whole number of at least 1 (got ${policy.attempts}).`);
  }
  for (const field of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!Number.isFinite(policy[field]) || policy[field] < 0) {
      throw new ConfigurationError(`retry.${field} must be a number of milliseconds, 0 or more (got ${policy[field]}).`);
    }
  }
  return policy;
}

/**
 * How long to wait after the `failedAttempt`-th attempt (1-based): a uniform draw in
 * [0, min(max, base * 2^(n-1))). A server's Retry-After is a floor (it knows its own load better
 * than our jitter does), and everything is capped at maxDelayMs so one answer cannot park a Lambda
 * for an hour: a longer ask simply uses up the attempts sooner and the run fails as GatewayUnavailable.
 */
export function retryDelayMs(
  failedAttempt: number,
  policy: RetryPolicy,
  random: () => number,
  retryAfterMs?: number,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failedAttempt - 1));
  const jittered = Math.floor(Math.min(Math.max(random(), 0), 1) * ceiling);
  const wanted = retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
  return Math.min(wanted, policy.maxDelayMs);
}

/**
 * Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Returns milliseconds from `nowMs`
 * (0 for a date in the past), or undefined when the header is absent or unreadable.
 */
export function parseRetryAfter(header: string | string[] | undefined, nowMs: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP-date always names a weekday or a month; without a letter, Date.parse would guess wildly.
  if (!/[A-Za-z]/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
