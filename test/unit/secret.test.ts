import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import { parseGatewaySecret } from '../../functions/core/gateway/secret.js';

/** Every secret-file problem names the field, never a value (the file may hold a key). */

const VALUE = 'sEcReT-vAlUe-1234';

function problem(json: object | string): string {
  const text = typeof json === 'string' ? json : JSON.stringify(json);
  try {
    parseGatewaySecret(text, 'secret.json');
  } catch (e) {
    assert.ok(e instanceof ConfigurationError, String(e));
    assert.ok(!e.message.includes(VALUE), `the message shows a value: ${e.message}`);
    assert.match(e.message, /^secret\.json: /);
    assert.doesNotMatch(e.message, /\(root\)/);
    return e.message;
  }
  assert.fail(`accepted ${text}`);
}

describe('gateway secret errors name the field', () => {
  it('a missing controlKey', () => {
    assert.match(problem({ login: VALUE }), /HMAC-SHA1 gateway secret is not right: "controlKey" is missing\./);
  });

  it('a misspelled field, once, with the documented spelling', () => {
    for (const key of ['controlkey', 'control_key', 'contolKey', 'ControlKey']) {
      const message = problem({ login: 'merchant', [key]: VALUE });
      assert.match(message, new RegExp(`"${key}" is not a field: did you mean "controlKey"\\?`));
      assert.doesNotMatch(message, /"controlKey" is missing/, 'the misspelling already says it');
    }
    assert.match(problem({ Login: 'm', controlKey: VALUE }), /"Login" is not a field: did you mean "login"\?/);
  });

  it('RSA-SHA256: a missing or misspelled privateKeyPem, a missing signatureMethod, a bad method', () => {
    assert.match(problem({ login: 'm', signatureMethod: 'RSA-SHA256' }), /RSA-SHA256 gateway secret is not right: "privateKeyPem" is missing/);
    assert.match(problem({ login: 'm', signatureMethod: 'RSA-SHA256', privateKey: VALUE }), /"privateKey" is not a field: did you mean "privateKeyPem"\?/);
    assert.match(problem({ login: 'm', privateKeyPem: `-----BEGIN ${VALUE}` }), /has "privateKeyPem" but no "signatureMethod": add "signatureMethod": "RSA-SHA256"/);
    assert.match(problem({ login: 'm', signatureMethod: 'HMAC-SHA256', controlKey: VALUE }), /"signatureMethod" must be "HMAC-SHA1" or "RSA-SHA256"/);
    assert.match(problem({ login: 'm', signatureMethod: 'RSA-SHA256', privateKeyPem: VALUE }), /"privateKeyPem" must be a PEM private key/);
  });

  it('empty, wrong-typed and unknown fields; not an object; not JSON', () => {
    assert.match(problem({ login: '', controlKey: VALUE }), /"login" is empty/);
    assert.match(problem({ login: 42, controlKey: VALUE }), /"login" must be a string/);
    assert.match(problem({ login: 'm', controlKey: VALUE, comment: VALUE }), /"comment" is not a field of this secret/);
    assert.match(problem([VALUE]), /must be a JSON object/);
    assert.match(problem(`{"login": "${VALUE}",`), /not valid JSON/);
  });

  it('accepts both documented shapes', () => {
    assert.deepEqual(parseGatewaySecret('{"login":"m","controlKey":"k"}', 's'), { login: 'm', controlKey: 'k' });
    const rsa = { login: 'm', signatureMethod: 'RSA-SHA256', privateKeyPem: '-----BEGIN PRIVATE KEY-----' };
    assert.deepEqual(parseGatewaySecret(JSON.stringify(rsa), 's'), rsa);
  });
});
