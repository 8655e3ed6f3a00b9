import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import {
  BODY_SIGNING,
  baseStringUri,
  makeNonce,
  parseAuthorizationHeader,
  signRequest,
  signatureBaseString,
  unixSeconds,
  type OAuthParams,
} from '../../functions/core/gateway/oauth.js';
import { parseGatewaySecret } from '../../functions/core/gateway/secret.js';
import { testKey } from '../helpers/test-keys.js';

/**
 * The signing edges no other test reaches (issue 36): every expectation is a literal from RFC 5849 or worked by
 * hand, never computed by the code under test.
 */

const OAUTH: OAuthParams = {
  oauth_consumer_key: 'login',
  oauth_nonce: 'abcdefghijk',
  oauth_signature_method: 'HMAC-SHA1',
  oauth_timestamp: '1700000000',
  oauth_version: '1.0',
};

describe('base string URI (RFC 5849 §3.4.1.2)', () => {
  it('keeps a port that is not the scheme default, drops one that is', () => {
    assert.equal(baseStringUri(new URL('https://gw.example.com:8443/paynet-ui/rpt')), 'https://gw.example.com:8443/paynet-ui/rpt');
    assert.equal(baseStringUri(new URL('HTTP://Example.COM:80/r?b5=x')), 'http://example.com/r');
    // Each default belongs to its own scheme: 80 is not https's, 443 is not http's.
    assert.equal(baseStringUri(new URL('https://example.com:80/r')), 'https://example.com:80/r');
    assert.equal(baseStringUri(new URL('http://example.com:443/r')), 'http://example.com:443/r');
    assert.equal(baseStringUri(new URL('http://example.com')), 'http://example.com/');
  });
});

describe('parameter normalisation', () => {
  it('reproduces the base string of RFC 5849 §3.4.1.1, repeated "a3" sorted by value', () => {
    // The RFC's request: query b5, a3, c@, a2; form body c2 and a3 (here a JSON body signed as form fields); no oauth_version.
    const url = new URL('http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b');
    const oauth = {
      oauth_consumer_key: '9djdj82h48djs9d2',
      oauth_token: 'kkk9d7dh3k39sjv7',
      oauth_signature_method: 'HMAC-SHA1',
      oauth_timestamp: '137131201',
      oauth_nonce: '7d8f3e4a',
    } as unknown as OAuthParams;
    assert.equal(
      signatureBaseString('post', url, oauth, JSON.stringify({ c2: '', a3: '2 q' }), 'asFormParameters'),
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7',
    );
  });

  it('sorts values of one name in code-unit order, not numerically, whatever order they came in', () => {
    const sorted = 'POST&http%3A%2F%2Fh%2Fp&B%3D0%26a%3D1%26a%3D10%26a%3D2%26oauth_consumer_key%3Dlogin';
    for (const query of ['a=2&a=10&a=1&B=0', 'a=1&a=10&a=2&B=0', 'B=0&a=10&a=2&a=1', 'a=10&B=0&a=1&a=2']) {
      const base = signatureBaseString('POST', new URL(`http://h/p?${query}`), OAUTH, undefined);
      assert.ok(base.startsWith(sorted), `${query}: ${base}`);
    }
    // A name that is a prefix of another sorts first ("a" before "a2"), whatever their values; an identical pair stays twice.
    const base = signatureBaseString('POST', new URL('http://h/p?a2=0&a=z&a=z'), OAUTH, undefined);
    assert.ok(base.startsWith('POST&http%3A%2F%2Fh%2Fp&a%3Dz%26a%3Dz%26a2%3D0%26oauth_consumer_key'), base);
  });

  it('asFormParameters: no body and a JSON array, null or scalar add nothing; scalars and objects as compact JSON', () => {
    const url = new URL('http://h/p');
    const excluded = 'POST&http%3A%2F%2Fh%2Fp&oauth_consumer_key%3Dlogin%26oauth_nonce%3Dabcdefghijk%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1700000000%26oauth_version%3D1.0';
    for (const body of [undefined, '', '[{"a":"1"}]', 'null', '7', '"text"']) {
      assert.equal(signatureBaseString('POST', url, OAUTH, body, 'asFormParameters'), excluded, String(body));
    }
    assert.equal(signatureBaseString('POST', url, OAUTH, '{"n":1,"t":true,"o":{"x":[1]}}', 'excluded'), excluded);
    assert.equal(
      signatureBaseString('POST', url, OAUTH, '{"n":1,"t":true,"o":{"x":[1]}}', 'asFormParameters'),
      `${excluded.replace('oauth_consumer_key', 'n%3D1%26o%3D%257B%2522x%2522%253A%255B1%255D%257D%26oauth_consumer_key')}%26t%3Dtrue`,
    );
  });
});

describe('Authorization header', () => {
  it('parses only an OAuth header, whole', () => {
    assert.equal(parseAuthorizationHeader('Bearer OAuth realm=""'), null);
    assert.equal(parseAuthorizationHeader('OAuthrealm=""'), null);
    assert.equal(parseAuthorizationHeader(''), null);
    assert.equal(parseAuthorizationHeader('OAuth oauth_nonce="%E0%A4%A"'), null, 'a value that does not percent-decode');
    assert.equal(parseAuthorizationHeader('OAuth realm="" trailing'), null);
    assert.deepEqual(parseAuthorizationHeader('oauth  oauth_nonce = "a%20b" ,realm=""'), { oauth_nonce: 'a b', realm: '' });
    assert.deepEqual(parseAuthorizationHeader('OAuth realm="",'), { realm: '' });
    // Blanks before the scheme and after the last pair; names of any letter case, digits and underscores.
    assert.deepEqual(parseAuthorizationHeader(' \tOAuth Realm_2="x",  '), { Realm_2: 'x' });
    assert.deepEqual(parseAuthorizationHeader('OAuth\tAZ09="1",xy="2"'), { AZ09: '1', xy: '2' });
    assert.equal(parseAuthorizationHeader('XOAuth realm=""'), null);
    assert.equal(parseAuthorizationHeader('OAuth realm="", a-b="1"'), null, 'a name with a character outside [A-Za-z0-9_]');
  });
});

describe('nonce, timestamp and the body-signing help', () => {
  it('makes nonces of exactly the length asked, 24 by default, from letters and digits', () => {
    assert.match(makeNonce(), /^[A-Za-z0-9]{24}$/);
    assert.match(makeNonce(11), /^[A-Za-z0-9]{11}$/);
    assert.equal(makeNonce(0), '');
  });

  it('counts whole seconds since 1970, rounded down, now by default', () => {
    assert.equal(unixSeconds(new Date('2023-11-14T22:13:20.999Z')), '1700000000');
    assert.equal(unixSeconds(new Date(0)), '0');
    const before = Math.floor(Date.now() / 1000);
    const now = Number(unixSeconds());
    assert.ok(now >= before && now <= Math.floor(Date.now() / 1000), String(now));
  });

  it('explains each body-signing rule for --body-signing', () => {
    assert.match(BODY_SIGNING.excluded.meaning, /^the body stays out of the base string /);
    assert.match(BODY_SIGNING.asFormParameters.meaning, /^top-level JSON members enter it as if they were form fields \(objects and arrays as compact JSON\)/);
  });
});

describe('an RSA key is checked wherever it signs', () => {
  const url = new URL('https://gw.example.com/paynet-ui/rpt');
  const refusal = (privateKeyPem: string) => {
    try {
      signRequest({ login: 'merchant', signatureMethod: 'RSA-SHA256', privateKeyPem }, { url });
    } catch (e) {
      assert.ok(e instanceof ConfigurationError, String(e));
      assert.ok(!e.message.includes(privateKeyPem.split('\n')[1]!), 'the key is not echoed');
      return e.message;
    }
    assert.fail('signed with a key that must be refused');
  };

  it('refuses an 8192-bit RSA key, an RSA-PSS, a DSA and an Ed25519 key, naming type and size', () => {
    assert.equal(refusal(testKey('rsa-8192')), 'privateKeyPem must be an RSA key of 2048 to 4096 bits (got rsa, 8192 bits).');
    assert.equal(refusal(testKey('rsa-pss-2048')), 'privateKeyPem must be an RSA key of 2048 to 4096 bits (got rsa-pss, 2048 bits).');
    assert.equal(refusal(testKey('dsa-2048')), 'privateKeyPem must be an RSA key of 2048 to 4096 bits (got dsa, 2048 bits).');
    assert.equal(refusal(testKey('ed25519')), 'privateKeyPem must be an RSA key of 2048 to 4096 bits (got ed25519, 0 bits).');
  });
});

describe('secret file shapes', () => {
  const refused = (text: string) => assert.throws(() => parseGatewaySecret(text, 'secret.json'), ConfigurationError);

  it('refuses JSON null, a number, a string and an array as the secret, naming the file', () => {
    for (const text of ['null', '42', '"controlKey"', '[]']) {
      assert.throws(
        () => parseGatewaySecret(text, 'secret.json'),
        (e: unknown) => e instanceof ConfigurationError && e.message.startsWith('secret.json: the gateway secret must be a JSON object. Expected {"login": "...", "controlKey": "..."} for HMAC-SHA1'),
        text,
      );
    }
  });

  it('an HMAC control key of one character is enough; none is not', () => {
    assert.deepEqual(parseGatewaySecret('{"login":"m","controlKey":"k"}', 's'), { login: 'm', controlKey: 'k' });
    refused('{"login":"m","controlKey":""}');
  });
});
