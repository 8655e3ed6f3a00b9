import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { codingLabel, decodeBody, DECODABLE_CODINGS, isDecodable, parseContentEncoding, type ContentCoding } from './content-coding.js';
import { ConfigurationError, EndpointUnreachable, GatewayUnavailable, UnexpectedAnswer } from '../errors.js';
import {
  classifyAnswer,
  isRetryableStatus,
  PEEK_MAX_BYTES,
  PEEK_MIN_BYTES,
  quoteStart,
  type ReportExpectation,
  type ReportKind,
} from './answer.js';
import { prepareRequest, secureEndpoint, serialiseBody } from './request.js';
import { percentEncode, type BodySigningRule } from './oauth.js';
import { peekThenReplay, type ReplayStream } from './peek-stream.js';
import { parseRetryAfter, resolveRetryPolicy, retryDelayMs, type RetryPolicy } from '../retry.js';
import { signatureMethodOf, type GatewaySecret, type SignatureMethod } from './signature-methods.js';

/**
 * The gateway client: one signed POST to the report endpoint, retried while the gateway is busy or
 * unreachable, and an answer that is either a report stream or a typed error. Pure: no AWS here.
 *
 * Who retries what. Everything up to the hand-over of the body (connect, headers, the first bytes)
 * is retried here. Once `body` is handed back, data is flowing into the caller's sink and cannot be
 * replayed: a later failure (connection lost, total time-out) surfaces as an error of `body`, a
 * GatewayUnavailable, and the caller (the fetch handler) owns that retry, by failing the run.
 */

export interface GatewayTimeouts {
  /** From socket assignment to connected (TLS handshake included for https). */
  connectMs: number;
  /** One attempt, from the request until the consumer has read the whole body. */
  totalMs: number;
}

export const DEFAULT_TIMEOUTS: GatewayTimeouts = { connectMs: 10_000, totalMs: 300_000 };

/** What the client reports for logs. Never carries the key, the signature or the Authorization header. */
export type GatewayEvent =
  | {
      type: 'attempt';
      attempt: number;
      maxAttempts: number;
      /** Origin and path only: no query, no user info. */
      endpoint: string;
      login: string;
      signatureMethod: SignatureMethod;
    }
  | { type: 'response'; attempt: number; status: number; contentType: string; contentCoding: string; elapsedMs: number }
  | { type: 'retry'; attempt: number; problem: string; delayMs: number; retryAfterMs?: number }
  | {
      type: 'accepted';
      attempt: number;
      status: number;
      contentType: string;
      contentCoding: string;
      kind: ReportKind;
      /** CSV with a definition: whether the first line equals the definition's header. */
      headerMatches?: boolean;
      /** CSV: the first line, when it is not the definition's header (what the parse will call drift). */
      firstLine?: string;
    }
  | { type: 'body-end'; attempt: number; bytes: number; wireBytes: number; elapsedMs: number }
  | { type: 'body-error'; attempt: number; bytes: number; problem: string };

export interface GatewayClientOptions {
  endpointUrl: string | URL;
  secret: GatewaySecret;
  /** The rendered report body (a JSON value, not JSON text); sent as compact JSON. */
  body: unknown;
  bodySigning?: BodySigningRule;
  /** The report definition's format, delimiter, encoding and header: how its answer is recognised. */
  expect?: ReportExpectation;
  /** The Accept-Encoding header; false sends none. Default "gzip, deflate, br". Any coding that comes is decoded. */
  acceptEncoding?: string | false;
  timeouts?: Partial<GatewayTimeouts>;
  retry?: Partial<RetryPolicy>;
  /** Aborts the whole call (attempts, back-off waits and the body stream) with the signal's reason. */
  signal?: AbortSignal;
  onEvent?: (event: GatewayEvent) => void;
  /** Test seams. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => Date;
  nonce?: () => string;
  /** Test seam: the DNS lookup of http.request. */
  lookup?: http.RequestOptions['lookup'];
  /** CA certificates to trust instead of Node's (tests; users set NODE_EXTRA_CA_CERTS for a private CA). */
  ca?: string | Buffer;
}

export interface GatewayReport {
  status: number;
  /** The Content-Type header as received ('' when absent). */
  contentType: string;
  kind: ReportKind;
  /** 'csv' or 'pdf', without a dot: the raw object's extension. */
  fileExtension: ReportKind;
  /** The whole report, decoded, never buffered: errors after the hand-over arrive here as GatewayUnavailable. */
  body: Readable;
  attempts: number;
  /** The Content-Encoding the answer came in, "identity" when none (e.g. "gzip"). */
  contentCoding: string;
  /** Bytes received on the wire so far (before decoding); final once `body` ended. */
  wireBytes: () => number;
  /** CSV: the first line as received (at most 200 characters). */
  firstLine?: string;
  /** CSV with `expect`: whether the first line is exactly the definition's header. */
  headerMatches?: boolean;
}

/** A problem worth another attempt. Internal: callers only ever see GatewayUnavailable. */
class RetryableProblem extends Error {
  constructor(
    readonly problem: string,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(problem, options);
  }
}

const defaultSleep = async (ms: number, signal?: AbortSignal): Promise<void> => {
  await sleepFor(ms, undefined, { signal });
};

/** "connect ECONNREFUSED 127.0.0.1:9" -> keeps Node's message, which names no header or key. */
const describeNetworkError = (e: unknown): string => {
  const err = e as NodeJS.ErrnoException;
  const code = err?.code && !String(err.message).includes(err.code) ? ` (${err.code})` : '';
  return `${err?.message ?? String(e)}${code}`;
};

/** TLS verification failures (Node's codes): the certificate, not the network, is the problem. */
const TLS_CERT_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

/**
 * A transport error before the answer, as what the user should fix: a host that does not exist and an
 * untrusted certificate will not heal by retrying (EndpointUnreachable, thrown at once); a refused
 * connection might (a restarting gateway), so it is retried, but its words name host and port.
 */
function explainTransportError(e: unknown, url: URL): EndpointUnreachable | RetryableProblem {
  const err = e as NodeJS.ErrnoException;
  const code = err?.code ?? '';
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (code === 'ENOTFOUND') {
    return new EndpointUnreachable(
      url.hostname,
      `the host name does not resolve (DNS ${code})`,
      'Check the URL: its host is misspelt, or this machine cannot resolve it (VPN, private DNS).',
      { cause: e },
    );
  }
  if (TLS_CERT_CODES.has(code)) {
    return new EndpointUnreachable(
      url.hostname,
      `its TLS certificate was not accepted (${code}: ${err.message})`,
      "Check the URL's host (the certificate must name it) and the CA: a certificate from a private CA needs " +
        'NODE_EXTRA_CA_CERTS=/path/to/ca.pem; an expired one is for the provider to renew.',
      { cause: e },
    );
  }
  if (code === 'ECONNREFUSED') {
    return new RetryableProblem(`connection refused by ${url.hostname}:${port} (ECONNREFUSED): nothing accepts connections there; check the URL's host and port`, undefined, {
      cause: e,
    });
  }
  return new RetryableProblem(describeNetworkError(e), undefined, { cause: e });
}

function resolveTimeouts(given: Partial<GatewayTimeouts> | undefined): GatewayTimeouts {
  const t = { ...DEFAULT_TIMEOUTS, ...given };
  for (const field of ['connectMs', 'totalMs'] as const) {
    if (!Number.isFinite(t[field]) || t[field] <= 0) {
      throw new ConfigurationError(`timeouts.${field} must be a positive number of milliseconds (got ${t[field]}).`);
    }
  }
  return t;
}

const abortReason = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException('The gateway call was aborted.', 'AbortError');

/**
 * POSTs the report request and hands back the report as a stream, or throws InsecureEndpoint,
 * ConfigurationError, AuthenticationRefused, UnexpectedAnswer, GatewayUnavailable (after the retries),
 * or the signal's reason when aborted.
 */
export async function fetchReport(options: GatewayClientOptions): Promise<GatewayReport> {
  const url = secureEndpoint(options.endpointUrl);
  const json = serialiseBody(options.body);
  const retry = resolveRetryPolicy(options.retry);
  const timeouts = resolveTimeouts(options.timeouts);
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const now = options.now ?? (() => new Date());
  const { signal } = options;
  const emit = (event: GatewayEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A failing logger must not fail the report.
    }
  };

  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw abortReason(signal);
    emit({
      type: 'attempt',
      attempt,
      maxAttempts: retry.attempts,
      endpoint: `${url.origin}${url.pathname}`,
      login: options.secret.login,
      signatureMethod: signatureMethodOf(options.secret),
    });
    try {
      return await attemptOnce({ ...options, url, json, timeouts, attempt, now, emit });
    } catch (e) {
      if (signal?.aborted) throw abortReason(signal);
      if (!(e instanceof RetryableProblem)) throw e;
      if (attempt >= retry.attempts) {
        throw new GatewayUnavailable(attempt, e.problem, { cause: e.cause });
      }
      const delayMs = retryDelayMs(attempt, retry, random, e.retryAfterMs);
      emit({ type: 'retry', attempt, problem: e.problem, delayMs, retryAfterMs: e.retryAfterMs });
      try {
        await sleep(delayMs, signal);
      } catch (sleepError) {
        if (signal?.aborted) throw abortReason(signal);
        throw sleepError;
      }
    }
  }
}

interface AttemptContext extends GatewayClientOptions {
  url: URL;
  json: string;
  timeouts: GatewayTimeouts;
  attempt: number;
  now: () => Date;
  emit: (event: GatewayEvent) => void;
}

/** One signed request. Resolves with the report, or rejects with RetryableProblem or a PipelineError. */
function attemptOnce(ctx: AttemptContext): Promise<GatewayReport> {
  const { url, timeouts, attempt, emit, signal } = ctx;
  const prepared = prepareRequest(url, ctx.json, ctx);
  // A server echoing our request back must not put the signature into an error message or a log.
  const secrets = [prepared.signature, percentEncode(prepared.signature)].filter((s) => s.length > 0);
  const redact = (text: string) => secrets.reduce((t, s) => t.split(s).join('[signature]'), text);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);

  return new Promise<GatewayReport>((resolve, reject) => {
    let settled = false;
    let body: ReplayStream | undefined;
    let connectTimer: NodeJS.Timeout | undefined;

    // One connection per attempt (no keep-alive pool): a run makes one call, and a stale pooled
    // socket would only waste an attempt. It also makes "connect" mean a real connect.
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      method: 'POST',
      headers: prepared.headers,
      agent: false,
      ...(ctx.lookup ? { lookup: ctx.lookup } : {}),
      ...(ctx.ca && url.protocol === 'https:' ? { ca: ctx.ca } : {}),
    });

    // Runs only after the attempt is wired up, so it may use what is declared below.
    const totalTimer = setTimeout(() => {
      if (body) {
        body.destroy(
          new GatewayUnavailable(
            attempt,
            `the total time-out of ${timeouts.totalMs} ms ran out after ${body.bytesReceived} byte(s) of the report`,
          ),
        );
      } else {
        fail(new RetryableProblem(`no complete answer within the total time-out of ${timeouts.totalMs} ms`));
      }
    }, timeouts.totalMs);

    const cleanup = () => {
      clearTimeout(totalTimer);
      clearTimeout(connectTimer);
      signal?.removeEventListener('abort', onAbort);
    };
    /** Before the hand-over: give up on this attempt. */
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      cleanup();
      req.destroy();
      reject(error);
    };
    const succeed = (report: GatewayReport) => {
      settled = true;
      resolve(report);
    };

    const onAbort = () => {
      const reason = abortReason(signal!);
      if (body) body.destroy(reason instanceof Error ? reason : new Error(String(reason)));
      // The loop sees the aborted signal and throws its reason instead of retrying.
      else fail(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      connectTimer = setTimeout(
        () => fail(new RetryableProblem(`could not connect within ${timeouts.connectMs} ms`)),
        timeouts.connectMs,
      );
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });

    // Before the response, transport errors fail the attempt; after it, they reach the response (and
    // the body stream). The listener stays so that a late error is never unhandled.
    req.on('error', (e) => fail(explainTransportError(e, url)));

    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const contentType = res.headers['content-type'] ?? '';
      const codings = parseContentEncoding(res.headers['content-encoding']);
      const contentCoding = codingLabel(codings);
      const timeToFirstByteMs = elapsed();
      emit({ type: 'response', attempt, status, contentType, contentCoding, elapsedMs: timeToFirstByteMs });

      if (isRetryableStatus(status)) {
        const retryAfterMs = parseRetryAfter(res.headers['retry-after'], ctx.now().getTime());
        const asked = retryAfterMs === undefined ? '' : ` (Retry-After: ${retryAfterMs / 1000} s)`;
        res.destroy();
        fail(new RetryableProblem(`HTTP ${status} ${http.STATUS_CODES[status] ?? ''}`.trim() + asked, retryAfterMs));
        return;
      }
      const unknown = codings.find((c) => !isDecodable(c));
      if (unknown !== undefined) {
        res.destroy();
        fail(
          new UnexpectedAnswer(
            status,
            contentType,
            quoteStart(Buffer.alloc(0)),
            `an answer in the content coding "${quoteStart(Buffer.from(unknown), redact)}", which this client cannot decode ` +
              `(it asks for ${DECODABLE_CODINGS.join(', ')} and decodes those whether asked or not)`,
          ),
        );
        return;
      }

      const decoded = decodeBody(res, codings as ContentCoding[]);
      const compressed = codings.length > 0;
      const wrapBodyError = (e: Error, bytes: number) => {
        const zlibCode = (e as NodeJS.ErrnoException).code ?? '';
        const problem =
          compressed && zlibCode.startsWith('Z_')
            ? `the ${contentCoding}-compressed answer broke off after ${bytes} decoded byte(s) (${decoded.wireBytes()} on the wire): ${describeNetworkError(e)}`
            : `the connection broke after ${bytes} byte(s) of the report: ${describeNetworkError(e)}`;
        return new GatewayUnavailable(attempt, problem, { cause: e });
      };
      peekThenReplay(decoded.body, { min: PEEK_MIN_BYTES, max: PEEK_MAX_BYTES }, wrapBodyError).then(
        ({ head, complete, body: replay }) => {
          if (settled) {
            replay.destroy();
            return;
          }
          try {
            const classified = classifyAnswer(
              { status, contentType, head, complete, location: res.headers.location },
              { login: ctx.secret.login, signatureMethod: signatureMethodOf(ctx.secret), redact },
              ctx.expect,
            );
            const { kind, firstLine, headerMatches } = classified;
            body = replay;
            // Until the consumer attaches its own listener (it may await something first), an error
            // must not crash the process; it stays in body.errored, which pipeline() and for-await report.
            body.on('error', (e) => {
              const problem = e instanceof GatewayUnavailable ? e.lastProblem : e.message;
              emit({ type: 'body-error', attempt, bytes: replay.bytesReceived, problem });
            });
            body.once('end', () => {
              emit({ type: 'body-end', attempt, bytes: replay.bytesReceived, wireBytes: decoded.wireBytes(), elapsedMs: elapsed() });
            });
            body.once('close', cleanup);
            emit({
              type: 'accepted',
              attempt,
              status,
              contentType,
              contentCoding,
              kind,
              ...(headerMatches !== undefined ? { headerMatches } : {}),
              ...(headerMatches === false && firstLine !== undefined ? { firstLine: redact(firstLine) } : {}),
            });
            succeed({
              status,
              contentType,
              kind,
              fileExtension: kind,
              body,
              attempts: attempt,
              contentCoding,
              wireBytes: decoded.wireBytes,
              ...(firstLine !== undefined ? { firstLine: redact(firstLine) } : {}),
              ...(headerMatches !== undefined ? { headerMatches } : {}),
            });
          } catch (e) {
            replay.destroy();
            // AuthenticationRefused or UnexpectedAnswer: not retried, the loop rethrows them as they are.
            fail(e as Error);
          }
        },
        (e: unknown) => {
          // Nothing was handed over yet, so this attempt can still be retried whole.
          const problem = `the answer broke off in its first bytes: ${describeNetworkError(e)}`;
          fail(new RetryableProblem(problem, undefined, { cause: e }));
        },
      );
    });

    req.end(ctx.json);
  });
}
