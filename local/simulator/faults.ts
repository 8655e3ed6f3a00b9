/**
 * Fault modes, chosen when the simulator starts (never by the request), each for the first `times`
 * requests it applies to (default: all), so a test can ask for "one 500, then success".
 *
 * Two kinds, told apart by where they strike:
 * - In front of the gateway (a load balancer, a proxy, an overloaded host): `slow`, `error500`,
 *   `rateLimited`, `htmlError`, `emptyBody`. They strike every request to the endpoint path before
 *   authentication, as infrastructure would. `slow` then lets the request through to the normal answer.
 * - Inside the gateway, on a real report: `dropMidBody` (the connection dies part-way through a report) and
 *   `schemaDrift` (the provider changed the report's columns). They strike only requests that are
 *   authorised and valid, because only those get a report; refused and bad requests don't use up `times`.
 */

export type FaultMode = 'slow' | 'error500' | 'rateLimited' | 'dropMidBody' | 'htmlError' | 'emptyBody' | 'schemaDrift';

export interface FaultOptions {
  mode: FaultMode;
  /** Apply to the first N requests the fault can strike; default: all of them. */
  times?: number;
  /** `slow`: how long to wait before answering. Default 2000 ms. */
  delayMs?: number;
  /** `rateLimited`: the Retry-After header, in seconds. Default 1. */
  retryAfterSeconds?: number;
}

export const FAULT_MODES: readonly FaultMode[] = ['slow', 'error500', 'rateLimited', 'dropMidBody', 'htmlError', 'emptyBody', 'schemaDrift'];

const BEFORE_AUTH: ReadonlySet<FaultMode> = new Set(['slow', 'error500', 'rateLimited', 'htmlError', 'emptyBody']);

export const HTML_ERROR_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n' +
  '<body><h1>Bad Gateway</h1><p>The upstream server is temporarily unavailable. Please try again later.</p></body></html>\n';

/** Counts what a fault has struck, so `times` can stop it. */
export class FaultPlan {
  private struck = 0;

  constructor(readonly fault: FaultOptions | undefined) {
    if (fault && !FAULT_MODES.includes(fault.mode)) {
      throw new Error(`Unknown fault mode "${String(fault.mode)}"; use one of ${FAULT_MODES.join(', ')}.`);
    }
  }

  /** The fault to apply at this stage of this request, if any; calling it uses one of `times`. */
  take(stage: 'before-auth' | 'on-report'): FaultOptions | undefined {
    const f = this.fault;
    if (!f) return undefined;
    if (BEFORE_AUTH.has(f.mode) !== (stage === 'before-auth')) return undefined;
    if (f.times !== undefined && this.struck >= f.times) return undefined;
    this.struck += 1;
    return f;
  }
}
