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

export const FAULT_MODES = ['slow', 'error500', 'rateLimited', 'dropMidBody', 'htmlError', 'emptyBody', 'schemaDrift'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

/** Where a fault strikes: in front of the gateway, before authentication, or on a report the gateway sends. */
export type FaultStage = 'before-auth' | 'on-report';

/**
 * Each mode's stage and what it does (the --fault help). server.ts answers each mode of a stage in a switch
 * that must name them all, so a new mode is this entry plus its answer there.
 */
export const FAULTS = {
  slow: { stage: 'before-auth', does: 'waits (--delay-ms, default 2000), then answers as usual' },
  error500: { stage: 'before-auth', does: 'HTTP 500' },
  rateLimited: { stage: 'before-auth', does: 'HTTP 429 with Retry-After (--retry-after, default 1 s)' },
  htmlError: { stage: 'before-auth', does: 'a 200 text/html error page, as a proxy sends' },
  emptyBody: { stage: 'before-auth', does: 'a 200 text/csv answer of zero bytes' },
  dropMidBody: { stage: 'on-report', does: 'half the report, then the connection drops' },
  schemaDrift: { stage: 'on-report', does: 'a report whose header renamed one column and added another' },
} as const satisfies Record<FaultMode, { stage: FaultStage; does: string }>;

/** The modes that strike at `stage`. */
export type FaultModeAt<S extends FaultStage> = { [M in FaultMode]: (typeof FAULTS)[M]['stage'] extends S ? M : never }[FaultMode];

export interface FaultOptions {
  mode: FaultMode;
  /** Apply to the first N requests the fault can strike; default: all of them. */
  times?: number;
  /** `slow`: how long to wait before answering. Default 2000 ms. */
  delayMs?: number;
  /** `rateLimited`: the Retry-After header, in seconds. Default 1. */
  retryAfterSeconds?: number;
}

export const HTML_ERROR_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n' +
  '<body><h1>Bad Gateway</h1><p>The upstream server is temporarily unavailable. Please try again later.</p></body></html>\n';

/** Counts what a fault has struck, so `times` can stop it. */
export class FaultPlan {
  private struck = 0;

  constructor(readonly fault: FaultOptions | undefined) {
    if (fault && !(FAULT_MODES as readonly string[]).includes(fault.mode)) {
      throw new Error(`Unknown fault mode "${String(fault.mode)}"; use one of ${FAULT_MODES.join(', ')}.`);
    }
  }

  /** The fault to apply at this stage of this request, if any; calling it uses one of `times`. */
  take<S extends FaultStage>(stage: S): (FaultOptions & { mode: FaultModeAt<S> }) | undefined {
    const f = this.fault;
    if (!f || !strikesAt(f, stage)) return undefined;
    if (f.times !== undefined && this.struck >= f.times) return undefined;
    this.struck += 1;
    return f;
  }
}

const strikesAt = <S extends FaultStage>(f: FaultOptions, stage: S): f is FaultOptions & { mode: FaultModeAt<S> } => FAULTS[f.mode].stage === stage;
