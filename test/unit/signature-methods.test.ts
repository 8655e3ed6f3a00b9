import assert from 'node:assert/strict';
import { createHmac, createSign } from 'node:crypto';
import { describe, it } from 'node:test';
import { AuthenticationRefused, ConfigurationError } from '../../functions/core/errors.js';
import {
  SECRET_FIELD_NAMES,
  SIGNING,
  gatewayAccountOf,
  hmacSha1Signature,
  loadRsaPrivateKey,
  rsaSha256Signature,
  signatureOf,
  verifierOf,
} from '../../functions/core/gateway/signature-methods.js';
import { testKey } from '../helpers/test-keys.js';

/**
 * The methods' entries as the gateway side uses them (the simulator's accounts and checks): what it keeps for a
 * login and how it verifies. Expected signatures come from node:crypto directly, never from the entries.
 */

const BASE = 'POST&https%3A%2F%2Fgw.example.com%2Fpaynet-ui%2Frpt&oauth_consumer_key%3Dmerchant';

describe('HMAC-SHA1', () => {
  it('keys the HMAC with the percent-encoded control key and token secret joined by "&" (RFC 5849 §3.4.2)', () => {
    assert.equal(hmacSha1Signature(BASE, 'k y&'), createHmac('sha1', 'k%20y%26&').update(BASE).digest('base64'));
    assert.equal(hmacSha1Signature(BASE, 'k', 't/s'), createHmac('sha1', 'k&t%2Fs').update(BASE).digest('base64'));
    assert.equal(signatureOf({ login: 'm', controlKey: 'k y&' }, BASE), createHmac('sha1', 'k%20y%26&').update(BASE).digest('base64'));
  });

  it('the gateway keeps the control key and accepts exactly its signature; one of another length is refused, not an error', () => {
    const account = gatewayAccountOf({ login: 'merchant', controlKey: 'secret' });
    assert.deepEqual(account, { login: 'merchant', signatureMethod: 'HMAC-SHA1', controlKey: 'secret' });
    const verify = verifierOf(account);
    const right = createHmac('sha1', 'secret&').update(BASE).digest('base64');
    assert.equal(verify(BASE, right), true);
    assert.equal(verify(`${BASE}x`, right), false, 'another base string');
    assert.equal(verify(BASE, createHmac('sha1', 'other&').update(BASE).digest('base64')), false, 'another key');
    // A signature of another length (timingSafeEqual alone would throw on it) is refused, not an error.
    assert.equal(verify(BASE, 'AAAA'), false);
    assert.equal(verify(BASE, ''), false);
  });
});

describe('RSA-SHA256', () => {
  const secret = { login: 'merchant', signatureMethod: 'RSA-SHA256', privateKeyPem: testKey('rsa-2048.pkcs1') } as const;

  it('signs with PKCS#1 v1.5 over SHA-256, the same bytes as node:crypto with the key', () => {
    const expected = createSign('RSA-SHA256').update(BASE).sign(testKey('rsa-2048.pkcs8'), 'base64');
    assert.equal(rsaSha256Signature(BASE, testKey('rsa-2048.pkcs1')), expected, 'PKCS#1 and PKCS#8 forms of one key sign alike');
    assert.equal(signatureOf(secret, BASE), expected);
  });

  it('the gateway keeps the SPKI public key, as openssl writes it, and accepts exactly the key\'s signatures', () => {
    const account = gatewayAccountOf(secret);
    assert.deepEqual(account, { login: 'merchant', signatureMethod: 'RSA-SHA256', publicKeyPem: testKey('rsa-2048.public') });
    const verify = verifierOf(account);
    const right = createSign('RSA-SHA256').update(BASE).sign(testKey('rsa-2048.pkcs8'), 'base64');
    assert.equal(verify(BASE, right), true);
    assert.equal(verify(`${BASE}x`, right), false, 'another base string');
    assert.equal(verify(BASE, createSign('RSA-SHA256').update(BASE).sign(testKey('rsa-4096.pkcs8'), 'base64')), false, 'another key');
    assert.equal(verify(BASE, 'AAAA'), false);
  });

  it('a held key that cannot verify RSA-SHA256 (Ed25519) refuses the signature instead of throwing', () => {
    const held = testKey('ed25519');
    const account = gatewayAccountOf({ login: 'merchant', signatureMethod: 'RSA-SHA256', privateKeyPem: held });
    assert.ok('publicKeyPem' in account && account.publicKeyPem.startsWith('-----BEGIN PUBLIC KEY-----\n'));
    assert.equal(verifierOf(account)(BASE, 'AAAA'), false);
  });

  it('an unreadable key: the error names both PEM forms it reads, never the key', () => {
    const garbage = '-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5\n-----END RSA PRIVATE KEY-----';
    assert.throws(
      () => loadRsaPrivateKey(garbage),
      (e: unknown) =>
        e instanceof ConfigurationError &&
        e.message === 'privateKeyPem is not a readable unencrypted PEM private key (PKCS#1 "BEGIN RSA PRIVATE KEY" or PKCS#8 "BEGIN PRIVATE KEY").',
    );
  });

  it('an EC key is refused for its type, whatever its size; a type node:crypto does not name is "unknown"', () => {
    assert.throws(
      () => loadRsaPrivateKey(testKey('ec-p256')),
      (e: unknown) => e instanceof ConfigurationError && e.message === 'privateKeyPem must be an RSA key of 2048 to 4096 bits (got ec, 0 bits).',
    );
    assert.throws(
      () => loadRsaPrivateKey(testKey('sm2')),
      (e: unknown) => e instanceof ConfigurationError && e.message === 'privateKeyPem must be an RSA key of 2048 to 4096 bits (got unknown, 0 bits).',
    );
    assert.equal(loadRsaPrivateKey(testKey('rsa-2048.pkcs1')).asymmetricKeyDetails?.modulusLength, 2048);
    assert.equal(loadRsaPrivateKey(testKey('rsa-4096.pkcs8')).asymmetricKeyDetails?.modulusLength, 4096);
  });
});

describe('what to check when the gateway refuses', () => {
  it('names, per method, what the merchant holds that the gateway must agree with, in the refusal a user reads', () => {
    const advice = (method: 'HMAC-SHA1' | 'RSA-SHA256') => new AuthenticationRefused('m', method, 'denied', SIGNING[method].whenRefused).message;
    assert.match(advice('HMAC-SHA1'), / Check the login and the control key, and that this machine's clock is right\./);
    assert.match(advice('RSA-SHA256'), / Check that the provider holds your public key, and that this machine's clock is right\./);
  });
});

describe('secret fields', () => {
  it('names every method\'s key material once, for the log redaction', () => {
    assert.deepEqual(SECRET_FIELD_NAMES, ['controlKey', 'privateKeyPem']);
  });
});
