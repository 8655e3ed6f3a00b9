import type { ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { GatewayReport, GatewayTimeouts } from './client.js';
import { GatewayUnavailable } from '../errors.js';
import type { ReplayStream } from './peek-stream.js';
import { RetryableProblem } from './transport-errors.js';

/**
 * The life of one attempt of the gateway client (client.ts): its connect and total time-outs and the
 * caller's abort act on the request until the body is handed over, and on the body after; the
 * attempt's promise is settled once.
 */

export const abortReason = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException('The gateway call was aborted.', 'AbortError');

/** What the watch of an attempt needs to know of it. */
export interface WatchedAttempt {
  url: URL;
  timeouts: GatewayTimeouts;
  attempt: number;
  signal?: AbortSignal;
}

/** How the stages of one attempt end it, and what the attempt's time-outs and abort act on. */
export interface AttemptWatch {
  /** The attempt has ended: failed, or its body handed over. */
  readonly settled: boolean;
  /** Before the hand-over: give up on this attempt. */
  fail(error: Error): void;
  /** From now on the total time-out and an abort destroy `body` instead of failing the attempt. */
  adoptBody(body: ReplayStream): void;
  succeed(report: GatewayReport): void;
  /** Stops the time-outs and the abort listener: once the handed-over body closes. */
  cleanup(): void;
  /** The listener of the request's 'socket' event. */
  armConnectTimeout(socket: Socket): void;
}

/** Starts the total time-out and the abort listener of one attempt, whose request is `req`. */
export function watchAttempt(
  { url, timeouts, attempt, signal }: WatchedAttempt,
  req: ClientRequest,
  resolve: (report: GatewayReport) => void,
  reject: (error: Error) => void,
): AttemptWatch {
  let settled = false;
  let body: ReplayStream | undefined;
  let connectTimer: NodeJS.Timeout | undefined;

  // Runs only after the attempt is wired up, so it may use what is declared below.
  const totalTimer = setTimeout(() => {
    if (body) {
      const problem = `the total time-out of ${timeouts.totalMs} ms ran out after ${body.bytesReceived} byte(s) of the report`;
      body.destroy(new GatewayUnavailable(attempt, problem));
    } else {
      fail(new RetryableProblem(`no complete answer within the total time-out of ${timeouts.totalMs} ms`));
    }
  }, timeouts.totalMs);

  const cleanup = () => {
    clearTimeout(totalTimer);
    clearTimeout(connectTimer);
    signal?.removeEventListener('abort', onAbort);
  };
  const fail = (error: Error) => {
    if (settled) return;
    settled = true;
    cleanup();
    req.destroy();
    reject(error);
  };

  const onAbort = () => {
    const reason = abortReason(signal!);
    if (body) {
      body.destroy(reason instanceof Error ? reason : new Error(String(reason)));
    } else {
      // The loop sees the aborted signal and throws its reason instead of retrying.
      // Stryker disable next-line StringLiteral: never shown: the loop sees the aborted signal and throws its reason instead
      fail(new Error('aborted'));
    }
  };
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal dispatches 'abort' once, so once: true changes nothing but intent
  signal?.addEventListener('abort', onAbort, { once: true });

  const armConnectTimeout = (socket: Socket) => {
    if (!socket.connecting) return;
    connectTimer = setTimeout(() => fail(new RetryableProblem(`could not connect within ${timeouts.connectMs} ms`)), timeouts.connectMs);
    socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
  };

  const adoptBody = (handedOver: ReplayStream) => {
    body = handedOver;
  };
  const succeed = (report: GatewayReport) => {
    settled = true;
    resolve(report);
  };
  return { get settled() { return settled; }, fail, adoptBody, succeed, cleanup, armConnectTimeout };
}
