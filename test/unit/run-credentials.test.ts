import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunCredentials, secretFingerprint, type SecretSource } from '../../functions/core/connections/run-credentials.js';
import { AuthenticationRefused, ConfigurationError } from '../../functions/core/errors.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';

/** A secret store that answers its values in turn (the last one for ever), and records whether each read was fresh. */
function storeOf(...answers: Array<GatewaySecret | Error>): SecretSource & { reads: Array<boolean> } {
  const reads: boolean[] = [];
  return {
    reads,
    async loadSecret(options) {
      const answer = answers[Math.min(reads.length, answers.length - 1)]!;
      reads.push(options?.fresh === true);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}

const OLD: GatewaySecret = { login: 'merchant-a', controlKey: 'old-control-key' };
const NEW: GatewaySecret = { login: 'merchant-a', controlKey: 'new-control-key' };

describe('secretFingerprint', () => {
  it('is the same for one value whatever its key order, and differs when any field does', () => {
    const reordered = JSON.parse('{"controlKey": "old-control-key", "login": "merchant-a"}') as GatewaySecret;
    assert.equal(secretFingerprint(reordered), secretFingerprint(OLD));
    assert.notEqual(secretFingerprint(NEW), secretFingerprint(OLD));
    assert.notEqual(secretFingerprint({ ...OLD, login: 'merchant-b' }), secretFingerprint(OLD));
    assert.match(secretFingerprint(OLD), /^[0-9a-f]{64}$/);
    assert.ok(!secretFingerprint(OLD).includes('old-control-key'));
  });

  it('is the SHA-256 of the fields as [name, value] pairs sorted by name (vectors from `sha256sum`)', () => {
    // printf '%s' '[["controlKey","old-control-key"],["login","merchant-a"]]' | sha256sum
    assert.equal(secretFingerprint(OLD), '29ec1f8574c55bf2361877f363206e9576ce405cfcbe15b39ea967b12fbd03a6');
    // Four fields given out of order: printf '%s' '[["controlKey","k"],["login","m"],["rsaPrivateKey","p"],["signatureMethod","RSA-SHA256"]]' | sha256sum
    const rsa = JSON.parse('{"signatureMethod": "RSA-SHA256", "login": "m", "rsaPrivateKey": "p", "controlKey": "k"}') as GatewaySecret;
    assert.equal(secretFingerprint(rsa), '957532861795fadcf70ada33504f4030ebe01b69960b607da1e506f6caceab72');
  });
});

describe('RunCredentials', () => {
  it('reads through the cache first; after a refusal reads past it once and keeps a changed value', async () => {
    const store = storeOf(OLD, NEW);
    const credentials = new RunCredentials(store);
    assert.deepEqual(await credentials.load(), OLD);
    assert.deepEqual(await credentials.renewAfterRefusal(), { outcome: 'changed' });
    assert.deepEqual(credentials.secret, NEW);
    assert.deepEqual(store.reads, [false, true]);
    // Once per run: a second refusal (of the new value) reads nothing more.
    assert.deepEqual(await credentials.renewAfterRefusal(), { outcome: 'already' });
    assert.deepEqual(store.reads, [false, true]);
  });

  it('an unchanged value leaves the refusal standing', async () => {
    const store = storeOf(OLD, { ...OLD });
    const credentials = new RunCredentials(store);
    await credentials.load();
    assert.deepEqual(await credentials.renewAfterRefusal(), { outcome: 'unchanged' });
    assert.deepEqual(credentials.secret, OLD);
  });

  it('a secret that cannot be read again is said as such, and the run keeps what it had', async () => {
    const problem = new ConfigurationError('Secrets Manager secret "x" may not be read by this function\'s role');
    const credentials = new RunCredentials(storeOf(OLD, problem));
    await credentials.load();
    assert.deepEqual(await credentials.renewAfterRefusal(), { outcome: 'unreadable', error: problem });
    assert.deepEqual(credentials.secret, OLD);
  });

  it('keeps what its one re-read found, for the refusal to say', async () => {
    for (const [answers, said] of [[[OLD, NEW], 'changed'], [[OLD, OLD], 'unchanged'], [[OLD, new Error('gone')], 'unreadable']] as const) {
      const credentials = new RunCredentials(storeOf(...answers));
      await credentials.load();
      assert.equal(credentials.reread, undefined);
      await credentials.renewAfterRefusal();
      assert.equal(credentials.reread, said);
      const refused = new AuthenticationRefused('merchant-a', 'HMAC-SHA1', 'no', 'the login').within({ connection: 'a', reports: ['r'], reread: credentials.reread });
      assert.match(refused.message, said === 'changed' ? /had changed: the window was tried with the new value, which was refused too\. Not retried again\.$/ : said === 'unchanged' ? /re-read after the refusal: unchanged, so not retried\.$/ : /could not be re-read after the refusal: not retried\.$/);
    }
  });

  it('refuses to sign before the first read', () => {
    assert.throws(() => new RunCredentials(storeOf(OLD)).secret, /load\(\) was not awaited/);
  });
});

describe('AuthenticationRefused within a connection', () => {
  const refused = new AuthenticationRefused('merchant-b', 'RSA-SHA256', 'You are not authorized to perform this request.', 'that the provider holds your public key');

  it('names the connection, the login, the method, every report over it and where the new value goes', () => {
    const scoped = refused.within({ connection: 'provider-b', reports: ['payouts', 'refunds'], credentials: 'Secrets Manager secret "paynet-reports/prod/provider-b"' });
    assert.ok(scoped instanceof AuthenticationRefused);
    assert.equal(scoped.code, 'AuthenticationRefused');
    assert.equal(scoped.retryable, false);
    assert.deepEqual([scoped.login, scoped.signatureMethod, scoped.scope?.connection], ['merchant-b', 'RSA-SHA256', 'provider-b']);
    assert.equal(
      scoped.message,
      'The gateway of connection "provider-b" refused to authorise login "merchant-b" signing with RSA-SHA256: it said "You are not authorized to perform this request.". ' +
        'Every report over this connection stops until it is fixed: "payouts", "refunds". Check that the provider holds your public key (with that provider), ' +
        'and that this machine\'s clock is right; put the new value into the connection\'s secret, Secrets Manager secret "paynet-reports/prod/provider-b". Not retried.',
    );
  });

  it('without a scope, says what it always said', () => {
    assert.match(refused.message, /^The gateway refused to authorise login "merchant-b" signing with RSA-SHA256: .* Check that the provider holds your public key, and that this machine's clock is right\. Not retried\.$/);
  });
});
