import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { abortReason, watchAttempt, type AttemptWatch } from './attempt-watch.js';
import { codingLabel, decodeBody, DECODABLE_CODINGS, isDecodable, parseContentEncoding, type ContentCoding, type DecodedBody } from './content-coding.js';
import { ConfigurationError, GatewayUnavailable, UnexpectedAnswer } from '../errors.js';
import {
  classifyAnswer,
  isRetryableStatus,
  PEEK_MAX_BYTES,
  PEEK_MIN_BYTES,
  quoteStart,
  type Classified,
  type ReportExpectation,
  type ReportKind,
} from './answer.js';
import { prepareRequest, secureEndpoint, serialiseBody } from './request.js';
import { percentEncode, type BodySigningRule } from './oauth.js';
import { peekThenReplay, type Peeked, type ReplayStream } from './peek-stream.js';
import { parseRetryAfter, resolveRetryPolicy, retryDelayMs, type RetryPolicy } from '../retry.js';
import { signatureMethodOf, type GatewaySecret, type SignatureMethod } from './signature-methods.js';
import { describeNetworkError, explainBodyBreak, explainTransportError, RetryableProblem } from './transport-errors.js';

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

const defaultSleep = async (ms: number, signal?: AbortSignal): Promise<void> => {
  await sleepFor(ms, undefined, { signal });
};

function resolveTimeouts(given: Partial<GatewayTimeouts> | undefined): GatewayTimeouts {
  const t = { ...DEFAULT_TIMEOUTS, ...given };
  for (const field of ['connectMs', 'totalMs'] as const) {
    if (!Number.isFinite(t[field]) || t[field] <= 0) {
      throw new ConfigurationError(`timeouts.${field} must be a positive number of milliseconds (got ${t[field]}).`);
    }
  }
  return t;
}

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
      // Stryker disable next-line OptionalChaining: without onEvent the call throws a TypeError that the catch below swallows alike
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
  const prepared = prepareRequest(ctx.url, ctx.json, ctx);
  // A server echoing our request back must not put the signature into an error message or a log.
  // Stryker disable next-line MethodExpression,ConditionalExpression,EqualityOperator: no signature method yields an empty signature (PLAINTEXT's is at least "&"); the filter guards split('') should one ever do
  const secrets = [prepared.signature, percentEncode(prepared.signature)].filter((s) => s.length > 0);
  const redact = (text: string) => secrets.reduce((t, s) => t.split(s).join('[signature]'), text);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);

  return new Promise<GatewayReport>((resolve, reject) => {
    const req = openSignedRequest(ctx, prepared.headers);
    const watch = watchAttempt(ctx, req, resolve, reject);
    req.on('socket', watch.armConnectTimeout);
    // Before the response, transport errors fail the attempt; after it, they reach the response (and
    // the body stream). The listener stays so that a late error is never unhandled.
    req.on('error', (e) => watch.fail(explainTransportError(e, ctx.url)));
    req.on('response', (res) => receiveAnswer(res, { ...ctx, redact, elapsed, watch }));
    req.end(ctx.json);
  });
}

/** The signed POST to the endpoint, its body not sent yet. */
function openSignedRequest(ctx: AttemptContext, headers: http.OutgoingHttpHeaders): http.ClientRequest {
  const { url } = ctx;
  // One connection per attempt (no keep-alive pool): a run makes one call, and a stale pooled
  // socket would only waste an attempt. It also makes "connect" mean a real connect.
  const transport = url.protocol === 'https:' ? https : http;
  return transport.request(url, {
    method: 'POST',
    headers,
    agent: false,
    ...(ctx.lookup ? { lookup: ctx.lookup } : {}),
    ...(ctx.ca && url.protocol === 'https:' ? { ca: ctx.ca } : {}),
  });
}

/** What the stages after the response need besides the attempt. */
interface AnswerContext extends AttemptContext {
  redact: (text: string) => string;
  /** Milliseconds since the request was signed. */
  elapsed: () => number;
  watch: AttemptWatch;
}

/** The answer's status line and the headers the stages read. */
interface AnswerHeaders {
  status: number;
  /** The Content-Type header ('' when absent). */
  contentType: string;
  /** The content codings in the order they were applied, unknown ones included. */
  codings: string[];
  /** The codings as logged: "identity" when none. */
  contentCoding: string;
  /** The Location header of a redirect, if any. */
  location: string | undefined;
}

function readAnswerHeaders(res: http.IncomingMessage): AnswerHeaders {
  const codings = parseContentEncoding(res.headers['content-encoding']);
  return {
    status: res.statusCode ?? 0,
    contentType: res.headers['content-type'] ?? '',
    codings,
    contentCoding: codingLabel(codings),
    location: res.headers.location,
  };
}

/**
 * The answer from its headers on: what the headers alone decide ends the attempt at once; otherwise the
 * decoded body's first bytes are peeked at, then recognised.
 */
function receiveAnswer(res: http.IncomingMessage, ctx: AnswerContext): void {
  const { attempt, watch } = ctx;
  const answer = readAnswerHeaders(res);
  const { status, contentType, contentCoding } = answer;
  const timeToFirstByteMs = ctx.elapsed();
  ctx.emit({ type: 'response', attempt, status, contentType, contentCoding, elapsedMs: timeToFirstByteMs });

  const failure = failureFromHeaders(res, answer, ctx);
  if (failure) {
    res.destroy();
    watch.fail(failure);
    return;
  }
  const decoded = decodeBody(res, answer.codings as ContentCoding[]);
  const wrapBodyError = explainBodyBreak(attempt, answer.codings, decoded.wireBytes);
  peekThenReplay(decoded.body, { min: PEEK_MIN_BYTES, max: PEEK_MAX_BYTES }, wrapBodyError).then(
    (peeked) => recogniseAnswer(peeked, answer, decoded, ctx),
    (e: unknown) => {
      // Nothing was handed over yet, so this attempt can still be retried whole.
      const problem = `the answer broke off in its first bytes: ${describeNetworkError(e)}`;
      watch.fail(new RetryableProblem(problem, undefined, { cause: e }));
    },
  );
}

/**
 * A busy status (retried, after the Retry-After the gateway asks for) or a content coding this client
 * cannot decode; undefined when the body has to be read.
 */
function failureFromHeaders(res: http.IncomingMessage, answer: AnswerHeaders, ctx: AnswerContext): Error | undefined {
  const { status, contentType, codings } = answer;
  if (isRetryableStatus(status)) {
    const retryAfterMs = parseRetryAfter(res.headers['retry-after'], ctx.now().getTime());
    const asked = retryAfterMs === undefined ? '' : ` (Retry-After: ${retryAfterMs / 1000} s)`;
    return new RetryableProblem(`HTTP ${status} ${http.STATUS_CODES[status] ?? ''}`.trim() + asked, retryAfterMs);
  }
  const unknown = codings.find((c) => !isDecodable(c));
  if (unknown === undefined) return undefined;
  return new UnexpectedAnswer(
    status,
    contentType,
    quoteStart(Buffer.alloc(0)),
    `an answer in the content coding "${quoteStart(Buffer.from(unknown), ctx.redact)}", which this client cannot decode ` +
      `(it asks for ${DECODABLE_CODINGS.join(', ')} and decodes those whether asked or not)`,
  );
}

/** Tells a report from a refusal by its first bytes: hands the report over, or fails the attempt. */
function recogniseAnswer(peeked: Peeked, answer: AnswerHeaders, decoded: DecodedBody, ctx: AnswerContext): void {
  const { head, complete, body: replay } = peeked;
  if (ctx.watch.settled) {
    replay.destroy();
    return;
  }
  try {
    const { status, contentType, location } = answer;
    const classified = classifyAnswer(
      { status, contentType, head, complete, location },
      { login: ctx.secret.login, signatureMethod: signatureMethodOf(ctx.secret), redact: ctx.redact },
      ctx.expect,
    );
    handOverBody(replay, classified, answer, decoded, ctx);
  } catch (e) {
    replay.destroy();
    // AuthenticationRefused or UnexpectedAnswer: not retried, the loop rethrows them as they are.
    ctx.watch.fail(e as Error);
  }
}

/** Resolves the attempt with the recognised report, its body watched for its end, failure and close. */
function handOverBody(replay: ReplayStream, classified: Classified, answer: AnswerHeaders, decoded: DecodedBody, ctx: AnswerContext): void {
  const { attempt, emit, redact, watch } = ctx;
  const { status, contentType, contentCoding } = answer;
  const { kind, firstLine, headerMatches } = classified;
  watch.adoptBody(replay);
  // Until the consumer attaches its own listener (it may await something first), an error
  // must not crash the process; it stays in body.errored, which pipeline() and for-await report.
  replay.on('error', (e) => {
    const problem = e instanceof GatewayUnavailable ? e.lastProblem : e.message;
    emit({ type: 'body-error', attempt, bytes: replay.bytesReceived, problem });
  });
  replay.once('end', () => {
    emit({ type: 'body-end', attempt, bytes: replay.bytesReceived, wireBytes: decoded.wireBytes(), elapsedMs: ctx.elapsed() });
  });
  replay.once('close', watch.cleanup);
  emit({
    type: 'accepted',
    attempt,
    status,
    contentType,
    contentCoding,
    kind,
    ...(headerMatches !== undefined ? { headerMatches } : {}),
    // Stryker disable next-line ConditionalExpression: a header verdict of false always comes with the first line it was made on
    ...(headerMatches === false && firstLine !== undefined ? { firstLine: redact(firstLine) } : {}),
  });
  watch.succeed({
    status,
    contentType,
    kind,
    fileExtension: kind,
    body: replay,
    attempts: attempt,
    contentCoding,
    wireBytes: decoded.wireBytes,
    ...(firstLine !== undefined ? { firstLine: redact(firstLine) } : {}),
    ...(headerMatches !== undefined ? { headerMatches } : {}),
  });
}
