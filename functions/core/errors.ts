/**
 * Typed errors of the pipeline. Each says what went wrong and what to do, and none ever carries a key,
 * a private key or a signature: messages end up in logs, alarms and test snapshots.
 * `code` is stable: handlers map it to metrics and the README's fault table refers to it.
 */
export type ErrorCode =
  | 'AuthenticationRefused'
  | 'GatewayUnavailable'
  | 'UnexpectedAnswer'
  | 'SchemaDrift'
  | 'TooManyRejectedRows'
  | 'ConfigurationError'
  | 'InsecureEndpoint'
  | 'EndpointUnreachable'
  | 'MalformedReport';

export abstract class PipelineError extends Error {
  abstract readonly code: ErrorCode;
  /** Whether trying the same call again later may succeed (drives Lambda/Scheduler retries). */
  abstract readonly retryable: boolean;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Whose refusal it is, when a run knows: the connection (its gateway and login), where its credentials are kept and
 * which reports of the catalog read over it. A refusal stops all of them, so the message names them all.
 */
export interface RefusalScope {
  readonly connection: string;
  /** Every report over the connection (catalog.reportsOver), not only the one that ran. */
  readonly reports: readonly string[];
  /** Where a person puts a new value: 'Secrets Manager secret "paynet-reports/prod/acme"', a --secret-file. */
  readonly credentials?: string;
  /**
   * What reading the secret again after a refusal found (functions/core/connections/run-credentials.ts): said in
   * the message, so a value swapped during a run is never re-read without a word.
   */
  readonly reread?: 'changed' | 'unchanged' | 'unreadable';
}

/** How a refusal ends: what re-reading its secret found, then that it is not retried (again). */
const REREAD_SAID = {
  changed: 'Its secret was re-read after a first refusal and had changed: the window was tried with the new value, which was refused too. Not retried again.',
  unchanged: 'Its secret was re-read after the refusal: unchanged, so not retried.',
  unreadable: 'Its secret could not be re-read after the refusal: not retried.',
} as const satisfies Record<NonNullable<RefusalScope['reread']>, string>;

/** The gateway answered with its "not authorised" body: wrong login, key, signature method or clock. */
export class AuthenticationRefused extends PipelineError {
  readonly code = 'AuthenticationRefused' as const;
  readonly retryable = false;
  constructor(
    readonly login: string,
    readonly signatureMethod: string,
    readonly gatewaySaid: string,
    /** What to check for that method: its entry's `whenRefused` (signature-methods.ts). */
    readonly whatToCheck: string,
    readonly scope?: RefusalScope,
  ) {
    super(
      scope
        ? scopedRefusal(login, signatureMethod, gatewaySaid, whatToCheck, scope)
        : `The gateway refused to authorise login "${login}" signing with ${signatureMethod}: it said "${gatewaySaid}". ` +
            `Check ${whatToCheck}, and that this machine's clock is right. Not retried.`,
    );
  }

  /** The same refusal, said with its connection, its credentials' place and the reports it stops. */
  within(scope: RefusalScope): AuthenticationRefused {
    return new AuthenticationRefused(this.login, this.signatureMethod, this.gatewaySaid, this.whatToCheck, scope);
  }
}

function scopedRefusal(login: string, method: string, said: string, whatToCheck: string, scope: RefusalScope): string {
  const where = scope.credentials ? `, ${scope.credentials}` : '';
  const reports = scope.reports.length ? scope.reports.map((r) => `"${r}"`).join(', ') : 'none';
  return (
    `The gateway of connection "${scope.connection}" refused to authorise login "${login}" signing with ${method}: it said "${said}". ` +
    `Every report over this connection stops until it is fixed: ${reports}. Check ${whatToCheck} (with that provider), ` +
    `and that this machine's clock is right; put the new value into the connection's secret${where}. ` +
    (scope.reread ? REREAD_SAID[scope.reread] : 'Not retried.')
  );
}

/** 5xx, 429, time-outs and network errors, after every retry was spent. */
export class GatewayUnavailable extends PipelineError {
  readonly code = 'GatewayUnavailable' as const;
  readonly retryable = true;
  constructor(
    readonly attempts: number,
    readonly lastProblem: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The gateway was unavailable after ${attempts} attempt(s); last problem: ${lastProblem}. ` +
        'Nothing was saved. The run can be retried as is; if it persists, ask the provider about the endpoint.',
      options,
    );
  }
}

/** Something that is not a report: an HTML page, an empty body, an unknown content type or status. */
export class UnexpectedAnswer extends PipelineError {
  readonly code = 'UnexpectedAnswer' as const;
  readonly retryable = false;
  constructor(
    readonly status: number,
    readonly contentType: string,
    readonly firstBytes: string,
    reason: string,
    /** What a report of this definition would have begun with (its header row), when known. */
    readonly expectedStart?: string,
  ) {
    const expected = expectedStart ? ` A report of this definition would have begun with ${JSON.stringify(expectedStart)}.` : '';
    super(
      `The gateway's answer is not a report (${reason}; HTTP ${status}, content type "${contentType || 'none'}"). ` +
        `It began: ${JSON.stringify(firstBytes)}.${expected} Nothing was saved. Check the endpoint URL and the report body; ` +
        "if they are right, send this text to the provider's support.",
    );
  }
}

/**
 * The endpoint cannot be reached for a reason no retry fixes: its host name does not resolve, or its TLS
 * certificate is not trusted. Said at once instead of after four attempts, with what to check.
 */
export class EndpointUnreachable extends PipelineError {
  readonly code = 'EndpointUnreachable' as const;
  readonly retryable = false;
  constructor(
    readonly host: string,
    readonly problem: string,
    readonly fix: string,
    options?: { cause?: unknown },
  ) {
    super(`Cannot reach the gateway at "${host}": ${problem}. ${fix} Nothing was saved; not retried.`, options);
  }
}

/** The report's header row differs from its definition: nothing is written to the table. */
export class SchemaDrift extends PipelineError {
  readonly code = 'SchemaDrift' as const;
  readonly retryable = false;
  constructor(
    readonly reportId: string,
    readonly missing: string[],
    readonly extra: string[],
    readonly moved: string[],
  ) {
    const parts = [
      missing.length ? `missing ${missing.map((c) => `"${c}"`).join(', ')}` : '',
      extra.length ? `extra ${extra.map((c) => `"${c}"`).join(', ')}` : '',
      moved.length ? `moved ${moved.map((c) => `"${c}"`).join(', ')}` : '',
    ].filter(Boolean);
    super(
      `The header row of report "${reportId}" differs from its definition: ${parts.join('; ')}. ` +
        'Nothing was written to the table; the raw file is kept. Update the report definition\'s columns ' +
        '(`reports infer-schema` proposes them) and re-run the window.',
    );
  }
}

/** More rows failed typing than the report allows. */
export class TooManyRejectedRows extends PipelineError {
  readonly code = 'TooManyRejectedRows' as const;
  readonly retryable = false;
  constructor(
    readonly reportId: string,
    readonly rejected: number,
    readonly read: number,
    readonly maxShare: number,
  ) {
    super(
      `Report "${reportId}": ${rejected} of ${read} row(s) failed typing, above the allowed share ${maxShare}. ` +
        'Nothing was written to the table; the rejected rows were kept with their reasons. Fix the definition ' +
        "(types, patterns, nullability) or raise rejects.maxShare, then re-run the window.",
    );
  }
}

/** Bad configuration: names the file, the report and the field. */
export class ConfigurationError extends PipelineError {
  readonly code = 'ConfigurationError' as const;
  readonly retryable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A plain-HTTP endpoint on a host other than loopback: credentials and reports would cross the network in clear. */
export class InsecureEndpoint extends PipelineError {
  readonly code = 'InsecureEndpoint' as const;
  readonly retryable = false;
  constructor(readonly host: string) {
    super(
      `Refusing plain HTTP to "${host}": only loopback hosts may be called without TLS. Use the https:// URL the provider publishes.`,
    );
  }
}

/**
 * The report file itself is broken (not rows in it): CSV syntax RFC 4180 does not allow (an unclosed
 * quote, a quote inside an unquoted field), or bytes that are not the report's encoding.
 */
export class MalformedReport extends PipelineError {
  readonly code = 'MalformedReport' as const;
  readonly retryable = false;
  constructor(
    readonly reportId: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Report "${reportId}" is not a well-formed CSV file: ${problem}. Nothing was written to the table; the raw file is kept. ` +
        "Check the report definition's encoding and delimiter; if they are right, send the raw file to the provider's support.",
      options,
    );
  }
}

/**
 * Failures every window of a run would repeat (the same credentials, endpoint or configuration): a run stops
 * at the first instead of trying the rest, because a refused login repeated for many windows risks the
 * merchant account being locked.
 */
export const RUN_STOPPING_CODES: ReadonlySet<ErrorCode> = new Set([
  'AuthenticationRefused',
  'ConfigurationError',
  'InsecureEndpoint',
  'EndpointUnreachable',
]);

export const isPipelineError = (e: unknown): e is PipelineError => e instanceof PipelineError;
