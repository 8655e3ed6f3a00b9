import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigurationError, InsecureEndpoint } from '../../functions/core/errors.js';
import {
  ACCEPT,
  ACCEPT_ENCODING,
  describeRequest,
  isLoopbackHost,
  prepareRequest,
  secureEndpoint,
  serialiseBody,
  shellQuote,
  validateGatewayUrl,
} from '../../functions/core/gateway/request.js';

/**
 * What the gateway client sends: the endpoint policy, the compact JSON body, the signed headers, and the same
 * request as a curl command (functions/core/gateway/request.ts). Signatures are checked with node:crypto over a
 * base string written out by hand (RFC 5849 §3.4.1), never with the signing code.
 */

const SECRET = { login: 'merchant-1', controlKey: 'k&y' };
const NOW = () => new Date('2026-01-02T03:04:05.678Z'); // 1767323045 s
/** Base string of a POST to https://gw.example.com/rpt?a=1 with the body left out (the default rule). */
const BASE =
  'POST&https%3A%2F%2Fgw.example.com%2Frpt&a%3D1%26oauth_consumer_key%3Dmerchant-1%26oauth_nonce%3Dn0nce' +
  '%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1767323045%26oauth_version%3D1.0';
const SIGNATURE = createHmac('sha1', 'k%26y&').update(BASE).digest('base64');

describe('the endpoint policy', () => {
  it('knows loopback hosts: localhost, 127/8, ::1 and 127/8 mapped into IPv6', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.255.0.10', '127.1.22.3', '[::1]', '[::ffff:7f00:1]', '[::FFFF:7F12:abcd]']) assert.equal(isLoopbackHost(host), true, host);
    for (const host of ['localhost.example.com', '128.0.0.1', '127.0.0.1.nip.io', 'x127.0.0.1', '127.0.0', '127.0.0.1234', '[::2]', '[::ffff:8f00:1]', '[::ffff:7f00:12345]', '[::ffff:7f0:1]', 'a[::1]', 'x[::ffff:7f00:1]', '[::ffff:7f00:1]x']) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });

  it('takes https anywhere and plain http on loopback only', () => {
    assert.equal(secureEndpoint('https://gw.example.com/rpt').href, 'https://gw.example.com/rpt');
    assert.equal(secureEndpoint(new URL('http://127.0.0.1:8080/r')).href, 'http://127.0.0.1:8080/r');
    assert.throws(() => secureEndpoint('http://gw.example.com/rpt'), InsecureEndpoint);
    assert.throws(() => secureEndpoint('http://gw.example.com/rpt'), /Refusing plain HTTP to "gw\.example\.com"/);
    assert.throws(() => secureEndpoint('gw.example.com/rpt'), (e: unknown) => e instanceof ConfigurationError && e.message === 'endpointUrl "gw.example.com/rpt" is not an absolute URL.');
    assert.throws(() => secureEndpoint('ftp://gw.example.com/rpt'), (e: unknown) => e instanceof ConfigurationError && e.message === 'endpointUrl must be an https:// URL (got the scheme "ftp:").');
  });

  it('a --gateway-url needs a host, a path, no credentials and no fragment, each said with the fix', () => {
    assert.equal(validateGatewayUrl('https://gw.example.com/paynet-ui/services/v2/rpt-engine').pathname, '/paynet-ui/services/v2/rpt-engine');
    const refused = (url: string, message: string, flag?: string) =>
      assert.throws(() => validateGatewayUrl(url, flag), (e: unknown) => e instanceof ConfigurationError && e.message === message);
    refused('gw/rpt', '--gateway-url "gw/rpt" is not a usable endpoint: endpointUrl "gw/rpt" is not an absolute URL. Give the full URL, e.g. https://<host>/paynet-ui/services/v2/rpt-engine.');
    refused('https://gw.example.com', '--url "https://gw.example.com" has no path: give the full report endpoint the provider publishes, e.g. https://<host>/paynet-ui/services/v2/rpt-engine.', '--url');
    refused('https://gw.example.com/', '--gateway-url "https://gw.example.com/" has no path: give the full report endpoint the provider publishes, e.g. https://<host>/paynet-ui/services/v2/rpt-engine.');
    refused('https://u:p@gw.example.com/r', '--gateway-url must not carry a user name or password (user:password@host): the login and key go in the secret file.');
    refused('https://u@gw.example.com/r', '--gateway-url must not carry a user name or password (user:password@host): the login and key go in the secret file.');
    refused('https://:p@gw.example.com/r', '--gateway-url must not carry a user name or password (user:password@host): the login and key go in the secret file.');
    refused('https://gw.example.com/r#part', '--gateway-url "https://gw.example.com/r#part" has a #fragment, which is never sent: remove it.');
    // Not a ConfigurationError: passed on as it is.
    assert.throws(() => validateGatewayUrl('http://gw.example.com/r'), InsecureEndpoint);
  });

  it('a file: URL (which may have no host) is refused by its scheme; an http(s) URL always has a host', () => {
    assert.throws(() => validateGatewayUrl('file:///etc/passwd'), /is not a usable endpoint: endpointUrl must be an https:\/\/ URL \(got the scheme "file:"\)/);
    assert.equal(validateGatewayUrl('https:///rpt/x').href, 'https://rpt/x');
  });
});

describe('the body and the signed headers', () => {
  it('writes the body as compact JSON and refuses what JSON cannot hold, saying why', () => {
    assert.equal(serialiseBody({ a: [1, 'x'], b: null }), '{"a":[1,"x"],"b":null}');
    assert.throws(() => serialiseBody(undefined), (e: unknown) => e instanceof ConfigurationError && e.message === 'the report body is missing (undefined is not JSON).');
    assert.throws(() => serialiseBody({ n: 1n }), (e: unknown) => e instanceof ConfigurationError && /^the report body cannot be written as JSON: .*BigInt/.test(e.message));
  });

  it('signs with the given nonce and clock, and sends a fixed length, the report types and the codings', () => {
    const json = '{"name":"Ромашка"}';
    const prepared = prepareRequest(new URL('https://gw.example.com/rpt?a=1'), json, { secret: SECRET, now: NOW, nonce: () => 'n0nce' });
    assert.equal(prepared.signature, SIGNATURE);
    assert.equal(prepared.nonce, 'n0nce');
    assert.deepEqual(prepared.headers, {
      'Content-Type': 'application/json',
      'Content-Length': '25',
      Accept: 'text/csv, application/csv, application/pdf, application/octet-stream;q=0.5, */*;q=0.1',
      'Accept-Encoding': 'gzip, deflate, br',
      'User-Agent': 'paynet-reports-pipeline',
      Authorization:
        `OAuth realm="", oauth_consumer_key="merchant-1", oauth_nonce="n0nce", oauth_signature="${encodeURIComponent(SIGNATURE)}", ` +
        'oauth_signature_method="HMAC-SHA1", oauth_timestamp="1767323045", oauth_version="1.0"',
    });
    assert.equal(ACCEPT_ENCODING, 'gzip, deflate, br');
    const none = prepareRequest(new URL('https://gw.example.com/rpt'), '{}', { secret: SECRET, acceptEncoding: false });
    assert.equal('Accept-Encoding' in none.headers, false);
    assert.equal(prepareRequest(new URL('https://gw.example.com/rpt'), '{}', { secret: SECRET, acceptEncoding: 'gzip' }).headers['Accept-Encoding'], 'gzip');
  });

  it('a fresh nonce and the present time when none is given', () => {
    const before = Math.floor(Date.now() / 1000);
    const a = prepareRequest(new URL('https://gw.example.com/rpt'), '{}', { secret: SECRET });
    const b = prepareRequest(new URL('https://gw.example.com/rpt'), '{}', { secret: SECRET });
    assert.notEqual(a.nonce, b.nonce);
    const stamp = Number(/oauth_timestamp="(\d+)"/.exec(a.headers.Authorization!)?.[1]);
    assert.ok(stamp >= before && stamp <= Math.floor(Date.now() / 1000), `${stamp}`);
  });
});

describe('the request as a curl command', () => {
  it('quotes for a POSIX shell', () => {
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
    assert.equal(shellQuote("a'b'c"), `'a'\\''b'\\''c'`);
    assert.equal(shellQuote(''), `''`);
  });

  it('prints the signed call, ready to run, and keeps the endpoint policy', () => {
    const d = describeRequest({ endpointUrl: 'https://gw.example.com/rpt?a=1', body: { q: "it's" }, secret: SECRET, now: NOW, nonce: () => 'n0nce' });
    assert.equal(d.body, `{"q":"it's"}`);
    assert.match(d.authorization, new RegExp(`^OAuth realm="", oauth_consumer_key="merchant-1", oauth_nonce="n0nce", oauth_signature="${encodeURIComponent(SIGNATURE).replace(/[+%]/g, (c) => `\\${c}`)}"`));
    assert.equal(
      d.curl,
      `curl -sS --compressed -X POST 'https://gw.example.com/rpt?a=1' -H 'Content-Type: application/json' -H 'Accept: ${ACCEPT}' ` +
        `-H 'Authorization: ${d.authorization}' --data-binary '{"q":"it'\\''s"}'`,
    );
    assert.throws(() => describeRequest({ endpointUrl: 'http://gw.example.com/r', body: {}, secret: SECRET }), InsecureEndpoint);
    assert.throws(() => describeRequest({ endpointUrl: 'https://gw.example.com/r', body: undefined, secret: SECRET }), /the report body is missing/);
  });
});
