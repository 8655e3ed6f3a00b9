import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AuthenticationRefused,
  ConfigurationError,
  EndpointUnreachable,
  GatewayUnavailable,
  InsecureEndpoint,
  isPipelineError,
  MalformedReport,
  RUN_STOPPING_CODES,
  SchemaDrift,
  TooManyRejectedRows,
  UnexpectedAnswer,
} from '../../functions/core/errors.js';

/**
 * The pipeline's typed errors (errors.ts): each one's stable code, whether a retry may help, and a message that names
 * what went wrong and what to do. Handlers map `code` to metrics; a person acts on the message.
 */

/** The code, the retry flag and the class name, which `name` carries into logs and stack traces. */
const identity = (e: Error & { code: string; retryable: boolean }) => [e.name, e.code, e.retryable];

describe('each error names its code and whether a retry may help', () => {
  it('only GatewayUnavailable is retryable', () => {
    assert.deepEqual(identity(new AuthenticationRefused('l', 'HMAC-SHA1', 'no', 'x')), ['AuthenticationRefused', 'AuthenticationRefused', false]);
    assert.deepEqual(identity(new GatewayUnavailable(4, 'HTTP 503')), ['GatewayUnavailable', 'GatewayUnavailable', true]);
    assert.deepEqual(identity(new UnexpectedAnswer(200, 'text/html', '<html>', 'markup')), ['UnexpectedAnswer', 'UnexpectedAnswer', false]);
    assert.deepEqual(identity(new EndpointUnreachable('h', 'p', 'f')), ['EndpointUnreachable', 'EndpointUnreachable', false]);
    assert.deepEqual(identity(new SchemaDrift('r', [], [], [])), ['SchemaDrift', 'SchemaDrift', false]);
    assert.deepEqual(identity(new TooManyRejectedRows('r', 1, 2, 0)), ['TooManyRejectedRows', 'TooManyRejectedRows', false]);
    assert.deepEqual(identity(new ConfigurationError('m')), ['ConfigurationError', 'ConfigurationError', false]);
    assert.deepEqual(identity(new InsecureEndpoint('h')), ['InsecureEndpoint', 'InsecureEndpoint', false]);
    assert.deepEqual(identity(new MalformedReport('r', 'p')), ['MalformedReport', 'MalformedReport', false]);
  });

  it('a run stops at a refused login, a configuration error, an insecure or unreachable endpoint, and nothing else', () => {
    assert.deepEqual([...RUN_STOPPING_CODES].sort(), ['AuthenticationRefused', 'ConfigurationError', 'EndpointUnreachable', 'InsecureEndpoint']);
  });

  it('isPipelineError tells them from any other error', () => {
    assert.equal(isPipelineError(new ConfigurationError('m')), true);
    assert.equal(isPipelineError(new Error('m')), false);
    assert.equal(isPipelineError('ConfigurationError'), false);
  });

  it('keeps the cause it was given', () => {
    const cause = new Error('ECONNRESET');
    assert.equal(new GatewayUnavailable(4, 'reset', { cause }).cause, cause);
    assert.equal(new ConfigurationError('m', { cause }).cause, cause);
    assert.equal(new EndpointUnreachable('h', 'p', 'f', { cause }).cause, cause);
    assert.equal(new MalformedReport('r', 'p', { cause }).cause, cause);
  });
});

describe('each message says what went wrong and what to do', () => {
  it('GatewayUnavailable: the attempts, the last problem, that nothing was saved and a retry is safe', () => {
    assert.equal(
      new GatewayUnavailable(4, 'HTTP 503').message,
      'The gateway was unavailable after 4 attempt(s); last problem: HTTP 503. Nothing was saved. ' +
        'The run can be retried as is; if it persists, ask the provider about the endpoint.',
    );
  });

  it('UnexpectedAnswer: the reason, status, content type, first bytes and, when known, what a report would begin with', () => {
    const message = new UnexpectedAnswer(302, 'text/html', '<html>moved', 'a redirect', 'id;amount').message;
    assert.equal(
      message,
      'The gateway\'s answer is not a report (a redirect; HTTP 302, content type "text/html"). It began: "<html>moved". ' +
        'A report of this definition would have begun with "id;amount". Nothing was saved. Check the endpoint URL and the report body; ' +
        "if they are right, send this text to the provider's support.",
    );
    const bare = new UnexpectedAnswer(200, '', '', 'an empty body');
    assert.ok(bare.message.includes('(an empty body; HTTP 200, content type "none"). It began: "". Nothing was saved.'), bare.message);
    assert.equal(bare.expectedStart, undefined);
  });

  it('EndpointUnreachable: the host, the problem and the fix, not retried', () => {
    assert.equal(
      new EndpointUnreachable('gw.example.com', 'the host name does not resolve', 'Check the endpoint URL.').message,
      'Cannot reach the gateway at "gw.example.com": the host name does not resolve. Check the endpoint URL. Nothing was saved; not retried.',
    );
  });

  it('SchemaDrift: each kind of difference with its columns quoted, only the kinds there are', () => {
    const all = new SchemaDrift('payouts', ['fee'], ['Fee', 'note'], ['amount']);
    assert.ok(all.message.startsWith('The header row of report "payouts" differs from its definition: missing "fee"; extra "Fee", "note"; moved "amount". '), all.message);
    assert.ok(all.message.includes('Nothing was written to the table; the raw file is kept.'), all.message);
    assert.ok(all.message.endsWith('Update the report definition\'s columns (`reports infer-schema` proposes them) and re-run the window.'), all.message);
    assert.ok(new SchemaDrift('r', [], ['x'], []).message.includes('definition: extra "x". '));
    assert.ok(new SchemaDrift('r', [], [], ['y']).message.includes('definition: moved "y". '));
    assert.ok(new SchemaDrift('r', ['z'], [], []).message.includes('definition: missing "z". '));
    assert.deepEqual([all.reportId, all.missing, all.extra, all.moved], ['payouts', ['fee'], ['Fee', 'note'], ['amount']]);
  });

  it('TooManyRejectedRows: rejected of read against the share, and the two fixes', () => {
    assert.equal(
      new TooManyRejectedRows('payouts', 3, 10, 0.1).message,
      'Report "payouts": 3 of 10 row(s) failed typing, above the allowed share 0.1. Nothing was written to the table; the rejected rows were kept ' +
        'with their reasons. Fix the definition (types, patterns, nullability) or raise rejects.maxShare, then re-run the window.',
    );
  });

  it('InsecureEndpoint: the host and the https fix', () => {
    assert.equal(
      new InsecureEndpoint('gw.example.com').message,
      'Refusing plain HTTP to "gw.example.com": only loopback hosts may be called without TLS. Use the https:// URL the provider publishes.',
    );
  });

  it('MalformedReport: the report, the problem, and what to check', () => {
    assert.equal(
      new MalformedReport('payouts', 'an unclosed quote on line 7').message,
      'Report "payouts" is not a well-formed CSV file: an unclosed quote on line 7. Nothing was written to the table; the raw file is kept. ' +
        "Check the report definition's encoding and delimiter; if they are right, send the raw file to the provider's support.",
    );
  });

  it('AuthenticationRefused within a connection with no reports and no credentials place says "none" and adds nothing', () => {
    const scoped = new AuthenticationRefused('m', 'HMAC-SHA1', 'denied', 'the key').within({ connection: 'acme', reports: [] });
    assert.ok(scoped.message.includes('stops until it is fixed: none. Check the key (with that provider)'), scoped.message);
    assert.ok(scoped.message.endsWith("put the new value into the connection's secret. Not retried."), scoped.message);
    assert.deepEqual(scoped.scope, { connection: 'acme', reports: [] });
  });
});
