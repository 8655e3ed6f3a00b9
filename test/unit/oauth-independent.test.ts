import assert from 'node:assert/strict';
import { createHmac, createSign } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import OAuth from 'oauth-1.0a';
import { parseAuthorizationHeader, percentEncode, signRequest } from '../../functions/core/gateway/oauth.js';
import { testKey } from '../helpers/test-keys.js';

/**
 * Our signer against an independent OAuth 1.0a implementation (the oauth-1.0a package): the same
 * request, nonce and timestamp must give the same base string and signature, for arbitrary logins,
 * keys, paths and query parameters. This is what a gateway-side library checks.
 */

const arbitraryRequest = fc.record({
  login: fc.string({ minLength: 1, maxLength: 30, unit: 'grapheme' }),
  controlKey: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
  nonce: fc.stringMatching(/^[A-Za-z0-9]{11,32}$/),
  timestamp: fc.integer({ min: 1_000_000_000, max: 2_000_000_000 }),
  path: fc.array(fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/), { minLength: 1, maxLength: 4 }),
  query: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), fc.string({ maxLength: 12, unit: 'grapheme' }), { maxKeys: 3 }),
});

/** Query values written with %20, not "+": the package reads "+" literally, RFC 5849 as a space. */
function urlOf(path: string[], query: Record<string, string>): URL {
  const search = Object.entries(query).map(([k, v]) => `${k}=${percentEncode(v)}`).join('&');
  return new URL(`https://gateway.example.com/${path.join('/')}${search ? `?${search}` : ''}`);
}

describe('signing agrees with the oauth-1.0a package', () => {
  it('HMAC-SHA1: same signature for arbitrary requests', () => {
    fc.assert(
      fc.property(arbitraryRequest, ({ login, controlKey, nonce, timestamp, path, query }) => {
        const url = urlOf(path, query);
        const ours = signRequest({ login, controlKey }, { url, nonce, timestamp: String(timestamp), body: '{"a":1}' });
        const oracle = new OAuth({
          consumer: { key: login, secret: controlKey },
          signature_method: 'HMAC-SHA1',
          hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
        });
        oracle.getNonce = () => nonce;
        oracle.getTimeStamp = () => timestamp;
        const theirs = oracle.authorize({ url: url.href, method: 'POST' });
        assert.equal(ours.signature, theirs.oauth_signature);
        assert.equal(parseAuthorizationHeader(ours.authorization)?.oauth_signature, theirs.oauth_signature);
      }),
      { numRuns: 300 },
    );
  });

  it('RSA-SHA256: signs the same base string the package builds', () => {
    const privateKey = testKey('rsa-2048.pkcs1');
    fc.assert(
      fc.property(arbitraryRequest, ({ login, nonce, timestamp, path, query }) => {
        const url = urlOf(path, query);
        const ours = signRequest(
          { login, signatureMethod: 'RSA-SHA256', privateKeyPem: privateKey },
          { url, nonce, timestamp: String(timestamp) },
        );
        const oracle = new OAuth({
          consumer: { key: login, secret: '' },
          signature_method: 'RSA-SHA256',
          hash_function: (base) => createSign('RSA-SHA256').update(base).sign(privateKey, 'base64'),
        });
        oracle.getNonce = () => nonce;
        oracle.getTimeStamp = () => timestamp;
        assert.equal(ours.signature, oracle.authorize({ url: url.href, method: 'POST' }).oauth_signature);
      }),
      { numRuns: 50 },
    );
  });
});
