import { codingLabel } from './content-coding.js';
import { EndpointUnreachable, GatewayUnavailable } from '../errors.js';
import type { WrapSourceError } from './peek-stream.js';

/**
 * What a failure on the wire means for the gateway client (client.ts): before the body is handed over,
 * another attempt (RetryableProblem) or a fault to fix (EndpointUnreachable); after, a GatewayUnavailable
 * of the body, whose retry the caller owns.
 */

/** A problem worth another attempt. Internal: callers only ever see GatewayUnavailable. */
export class RetryableProblem extends Error {
  constructor(
    readonly problem: string,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(problem, options);
  }
}

/** "connect ECONNREFUSED 127.0.0.1:9" -> keeps Node's message, which names no header or key. */
export const describeNetworkError = (e: unknown): string => {
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
export function explainTransportError(e: unknown, url: URL): EndpointUnreachable | RetryableProblem {
  const err = e as NodeJS.ErrnoException;
  // Stryker disable next-line StringLiteral: any text that is not one of the codes below reads the same as ''
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

/**
 * How a break of the body after its first bytes reads, as GatewayUnavailable: the bytes before it may
 * already be in the caller's sink, so it is the caller's to retry. On a compressed answer, zlib's
 * error (Z_BUF_ERROR, Z_DATA_ERROR) means the coded stream was cut short or corrupt, not the socket.
 */
export function explainBodyBreak(attempt: number, codings: readonly string[], wireBytes: () => number): WrapSourceError {
  const compressed = codings.length > 0;
  const contentCoding = codingLabel(codings);
  return (e: Error, bytes: number) => {
    // Stryker disable next-line StringLiteral: any text not starting with Z_ reads the same as ''
    const zlibCode = (e as NodeJS.ErrnoException).code ?? '';
    const problem =
      compressed && zlibCode.startsWith('Z_')
        ? `the ${contentCoding}-compressed answer broke off after ${bytes} decoded byte(s) (${wireBytes()} on the wire): ${describeNetworkError(e)}`
        : `the connection broke after ${bytes} byte(s) of the report: ${describeNetworkError(e)}`;
    return new GatewayUnavailable(attempt, problem, { cause: e });
  };
}
