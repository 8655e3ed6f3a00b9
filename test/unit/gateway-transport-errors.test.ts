import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EndpointUnreachable, GatewayUnavailable } from '../../functions/core/errors.js';
import { describeNetworkError, explainBodyBreak, explainTransportError, RetryableProblem } from '../../functions/core/gateway/transport-errors.js';

/** What a failure on the wire tells the user (functions/core/gateway/transport-errors.ts): literal messages. */

/** The problem a body break names: it must be a GatewayUnavailable, the caller's to retry. */
const problemOf = (e: Error): string => {
  assert.ok(e instanceof GatewayUnavailable, String(e));
  return e.lastProblem;
};
const errno = (message: string, code?: string): NodeJS.ErrnoException => Object.assign(new Error(message), code === undefined ? {} : { code });

describe('describeNetworkError', () => {
  it("keeps Node's message and adds the code only when the message lacks it", () => {
    assert.equal(describeNetworkError(errno('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED')), 'connect ECONNREFUSED 127.0.0.1:9');
    assert.equal(describeNetworkError(errno('socket hang up', 'ECONNRESET')), 'socket hang up (ECONNRESET)');
    assert.equal(describeNetworkError(errno('socket hang up')), 'socket hang up');
    assert.equal(describeNetworkError('a string thrown'), 'a string thrown');
    assert.equal(describeNetworkError(undefined), 'undefined');
  });
});

describe('explainTransportError', () => {
  const url = new URL('https://gw.example.com/rpt');

  it('a host that does not resolve is EndpointUnreachable at once, naming the host and what to check', () => {
    const cause = errno('getaddrinfo ENOTFOUND gw.example.com', 'ENOTFOUND');
    const e = explainTransportError(cause, url);
    assert.ok(e instanceof EndpointUnreachable);
    assert.equal(e.host, 'gw.example.com');
    assert.equal(e.problem, 'the host name does not resolve (DNS ENOTFOUND)');
    assert.equal(e.fix, 'Check the URL: its host is misspelt, or this machine cannot resolve it (VPN, private DNS).');
    assert.equal(e.cause, cause);
  });

  it('every untrusted certificate is EndpointUnreachable, naming the code, the message and the CA fix', () => {
    const codes = [
      'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_REVOKED', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'CERT_SIGNATURE_FAILURE',
      'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH',
    ];
    for (const code of codes) {
      const cause = errno('certificate problem', code);
      const e = explainTransportError(cause, url);
      assert.ok(e instanceof EndpointUnreachable, code);
      assert.equal(e.problem, `its TLS certificate was not accepted (${code}: certificate problem)`);
      assert.equal(
        e.fix,
        "Check the URL's host (the certificate must name it) and the CA: a certificate from a private CA needs NODE_EXTRA_CA_CERTS=/path/to/ca.pem; an expired one is for the provider to renew.",
      );
      assert.equal(e.cause, cause);
    }
  });

  it('a refused connection is retried, naming host and port (the scheme default when the URL has none)', () => {
    const cause = errno('connect ECONNREFUSED 10.0.0.1:443', 'ECONNREFUSED');
    const cases: Array<[string, string]> = [
      ['https://gw.example.com/rpt', 'gw.example.com:443'],
      ['http://127.0.0.1/rpt', '127.0.0.1:80'],
      ['http://127.0.0.1:8080/rpt', '127.0.0.1:8080'],
      ['https://gw.example.com:8443/rpt', 'gw.example.com:8443'],
    ];
    for (const [endpoint, where] of cases) {
      const e = explainTransportError(cause, new URL(endpoint));
      assert.ok(e instanceof RetryableProblem);
      assert.equal(e.problem, `connection refused by ${where} (ECONNREFUSED): nothing accepts connections there; check the URL's host and port`);
      assert.equal(e.message, e.problem);
      assert.equal(e.retryAfterMs, undefined);
      assert.equal(e.cause, cause);
    }
  });

  it('anything else is retried with Node\'s words', () => {
    const cause = errno('read ETIMEDOUT', 'ETIMEDOUT');
    const e = explainTransportError(cause, url);
    assert.ok(e instanceof RetryableProblem);
    assert.equal(e.problem, 'read ETIMEDOUT');
    assert.equal(e.cause, cause);
    const plain = explainTransportError(new Error('boom'), url);
    assert.ok(plain instanceof RetryableProblem);
    assert.equal(plain.problem, 'boom');
    // Something thrown that is not an Error at all.
    const odd = explainTransportError(undefined, url);
    assert.ok(odd instanceof RetryableProblem);
    assert.equal(odd.problem, 'undefined');
    assert.equal(new RetryableProblem('busy', 1500).retryAfterMs, 1500);
  });
});

describe('explainBodyBreak', () => {
  it('a zlib error of a compressed body says the coded stream broke, with decoded and wire bytes', () => {
    const wrap = explainBodyBreak(2, ['gzip'], () => 77);
    const cause = errno('unexpected end of file', 'Z_BUF_ERROR');
    const e = wrap(cause, 1234);
    assert.ok(e instanceof GatewayUnavailable);
    assert.equal(e.attempts, 2);
    assert.equal(e.lastProblem, 'the gzip-compressed answer broke off after 1234 decoded byte(s) (77 on the wire): unexpected end of file (Z_BUF_ERROR)');
    assert.equal(e.cause, cause);
    assert.equal(problemOf(explainBodyBreak(1, ['deflate', 'br'], () => 5)(errno('bad', 'Z_DATA_ERROR'), 9)), 'the deflate, br-compressed answer broke off after 9 decoded byte(s) (5 on the wire): bad (Z_DATA_ERROR)');
  });

  it('a socket error, or any break of an uncompressed body, is a broken connection', () => {
    const compressed = explainBodyBreak(3, ['gzip'], () => 1)(errno('aborted', 'ECONNRESET'), 10);
    assert.equal(problemOf(compressed), 'the connection broke after 10 byte(s) of the report: aborted (ECONNRESET)');
    const plain = explainBodyBreak(1, [], () => 1)(errno('zlib-like', 'Z_BUF_ERROR'), 0);
    assert.equal(problemOf(plain), 'the connection broke after 0 byte(s) of the report: zlib-like (Z_BUF_ERROR)');
    assert.equal(problemOf(explainBodyBreak(1, [], () => 1)(new Error('premature close'), 4)), 'the connection broke after 4 byte(s) of the report: premature close');
  });
});
