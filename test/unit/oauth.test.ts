import assert from 'node:assert/strict';
import { createPublicKey, createVerify } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  authorizationHeader,
  baseStringUri,
  makeNonce,
  parseAuthorizationHeader,
  percentEncode,
  signRequest,
  signatureBaseString,
  type OAuthParams,
} from '../../functions/core/gateway/oauth.js';
import { hmacSha1Signature, loadRsaPrivateKey } from '../../functions/core/gateway/signature-methods.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { testKey } from '../helpers/test-keys.js';

describe('OAuth 1.0 appendix A.5 vector', () => {
  const url = new URL('http://photos.example.net/photos?file=vacation.jpg&size=original');
  const oauth: OAuthParams = {
    oauth_consumer_key: 'dpf43f3p2l4k3l03',
    oauth_nonce: 'kllo9940pd9333jh',
    oauth_signature_method: 'HMAC-SHA1' as never,
    oauth_timestamp: '1191242096',
    oauth_version: '1.0',
    oauth_token: 'nnch734d00sl2jdk',
  };

  it('builds the A.5.1 base string', () => {
    assert.equal(
      signatureBaseString('GET', url, oauth, undefined),
      'GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3Dkllo9940pd9333jh%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1191242096%26oauth_token%3Dnnch734d00sl2jdk%26oauth_version%3D1.0%26size%3Doriginal',
    );
  });

  it('computes the A.5.2 signature', () => {
    const base = signatureBaseString('GET', url, oauth, undefined);
    assert.equal(hmacSha1Signature(base, 'kd94hf93k423kf44', 'pfkkdhi9sl3r4s00'), 'tR3+Ty81lMeYAr/Fid0kMTYa/WM=');
  });
});

describe('percentEncode (RFC 3986)', () => {
  it('encodes the reserved examples of the spec', () => {
    assert.equal(percentEncode('%/='), '%25%2F%3D');
    assert.equal(percentEncode("!*'()"), '%21%2A%27%28%29');
    assert.equal(percentEncode('a b+c'), 'a%20b%2Bc');
    assert.equal(percentEncode('Ж'), '%D0%96');
  });

  it('leaves exactly the unreserved set alone', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        const enc = percentEncode(s);
        assert.match(enc, /^([A-Za-z0-9\-._~]|%[0-9A-F]{2})*$/);
        assert.equal(decodeURIComponent(enc), s);
      }),
      { numRuns: 2000 },
    );
  });

  it('is idempotent only on unreserved text', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9\-._~]*$/), (s) => percentEncode(s) === s),
    );
  });
});

describe('base string rules', () => {
  const oauth: OAuthParams = {
    oauth_consumer_key: 'login',
    oauth_nonce: 'abcdefghijk',
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: '1700000000',
    oauth_version: '1.0',
  };
  const url = new URL('https://GW.Example.com:443/paynet-ui/services/v2/rpt-engine');

  it('normalises scheme, host and default port', () => {
    assert.equal(baseStringUri(url), 'https://gw.example.com/paynet-ui/services/v2/rpt-engine');
    assert.equal(baseStringUri(new URL('http://127.0.0.1:8080/a?b=c')), 'http://127.0.0.1:8080/a');
  });

  it('excludes the JSON body by default, and signs it as parameters when the rule says so', () => {
    const body = JSON.stringify({ reportIdentifier: 'r1', filters: { gates: [] } });
    const excluded = signatureBaseString('POST', url, oauth, body);
    assert.equal(excluded, signatureBaseString('POST', url, oauth, undefined));
    const included = signatureBaseString('POST', url, oauth, body, 'asFormParameters');
    assert.notEqual(included, excluded);
    assert.ok(included.includes(percentEncode('reportIdentifier=r1')));
    assert.ok(included.includes(percentEncode(`filters=${percentEncode('{"gates":[]}')}`)));
  });
});

describe('Authorization header', () => {
  it('puts realm first and percent-encodes every value', () => {
    // Every one of the six values holds a character that must be encoded (the version's only through the cast).
    const h = authorizationHeader(
      { oauth_consumer_key: 'me@shop', oauth_nonce: 'n/1', oauth_signature_method: 'RSA SHA256' as never, oauth_timestamp: '1 2', oauth_version: '1.0&' as never },
      'a+b/c=',
    );
    assert.equal(
      h,
      'OAuth realm="", oauth_consumer_key="me%40shop", oauth_nonce="n%2F1", oauth_signature="a%2Bb%2Fc%3D", oauth_signature_method="RSA%20SHA256", oauth_timestamp="1%202", oauth_version="1.0%26"',
    );
  });

  it('round-trips through the parser in any order, with or without spaces', () => {
    fc.assert(
      fc.property(
        fc.record({
          login: fc.string({ minLength: 1, unit: 'grapheme' }),
          nonce: fc.stringMatching(/^[A-Za-z0-9]{11,40}$/),
          sig: fc.base64String({ minLength: 4 }),
          ts: fc.integer({ min: 0, max: 2 ** 31 }).map(String),
        }),
        fc.boolean(),
        fc.boolean(),
        ({ login, nonce, sig, ts }, reverse, spaces) => {
          const h = authorizationHeader(
            { oauth_consumer_key: login, oauth_nonce: nonce, oauth_signature_method: 'RSA-SHA256', oauth_timestamp: ts, oauth_version: '1.0' },
            sig,
          );
          let pairs = h.replace(/^OAuth /, '').split(', ');
          if (reverse) pairs = pairs.reverse();
          const rebuilt = `OAuth ${pairs.join(spaces ? ', ' : ',')}`;
          const parsed = parseAuthorizationHeader(rebuilt);
          assert.deepEqual(parsed, {
            realm: '',
            oauth_consumer_key: login,
            oauth_nonce: nonce,
            oauth_signature: sig,
            oauth_signature_method: 'RSA-SHA256',
            oauth_timestamp: ts,
            oauth_version: '1.0',
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('accepts the provider sample form and rejects garbage', () => {
    assert.deepEqual(parseAuthorizationHeader('OAuth realm="",oauth_version="1.0",oauth_consumer_key="login"'), {
      realm: '',
      oauth_version: '1.0',
      oauth_consumer_key: 'login',
    });
    assert.equal(parseAuthorizationHeader('Basic abc'), null);
    assert.equal(parseAuthorizationHeader('OAuth realm="",junk'), null);
    assert.equal(parseAuthorizationHeader(undefined), null);
  });
});

describe('nonce and timestamp', () => {
  it('makes crypto-random alphanumeric nonces of 20 to 30 characters (what oauthlib accepts), never repeating', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const n = makeNonce();
      assert.match(n, /^[A-Za-z0-9]{20,30}$/);
      seen.add(n);
    }
    assert.equal(seen.size, 1000);
  });

  it('uses a fresh nonce per request unless one is injected', () => {
    const secret = { login: 'l', controlKey: 'k' };
    const url = new URL('https://gw.example.com/x');
    const a = signRequest(secret, { url });
    const b = signRequest(secret, { url });
    assert.notEqual(a.oauth.oauth_nonce, b.oauth.oauth_nonce);
    const c = signRequest(secret, { url, nonce: 'fixednonce123', timestamp: '42' });
    const d = signRequest(secret, { url, nonce: 'fixednonce123', timestamp: '42' });
    assert.equal(c.authorization, d.authorization);
    assert.equal(c.oauth.oauth_timestamp, '42');
  });
});

describe('RSA-SHA256', () => {
  const url = new URL('https://gw.example.com/paynet-ui/services/v2/rpt-engine');
  // The edges of the accepted sizes, each in both PEM forms, checked against the pair's own public key.
  for (const bits of [2048, 4096] as const) {
    for (const type of ['pkcs1', 'pkcs8'] as const) {
      it(`signs with a ${bits}-bit ${type.toUpperCase()} key, verified by node:crypto`, () => {
        const privateKey = testKey(`rsa-${bits}.${type}`);
        const publicKey = testKey(`rsa-${bits}.public`);
        const signed = signRequest(
          { login: 'merchant', signatureMethod: 'RSA-SHA256', privateKeyPem: privateKey },
          { url, body: '{"a":1}' },
        );
        assert.equal(signed.oauth.oauth_signature_method, 'RSA-SHA256');
        const ok = createVerify('RSA-SHA256').update(signed.baseString).verify(createPublicKey(publicKey), signed.signature, 'base64');
        assert.equal(ok, true);
        const parsed = parseAuthorizationHeader(signed.authorization);
        assert.equal(parsed?.oauth_signature, signed.signature);
      });
    }
  }

  it('refuses keys that are too small, not RSA, or unreadable, without echoing the key', () => {
    assert.throws(() => loadRsaPrivateKey(testKey('rsa-1024')), (e: unknown) => e instanceof ConfigurationError && /2048 to 4096/.test(e.message) && !e.message.includes('BEGIN'));
    assert.throws(() => loadRsaPrivateKey(testKey('ec-p256')), ConfigurationError);
    assert.throws(() => loadRsaPrivateKey('-----BEGIN RSA PRIVATE KEY-----\nnope\n-----END RSA PRIVATE KEY-----'), ConfigurationError);
  });
});
