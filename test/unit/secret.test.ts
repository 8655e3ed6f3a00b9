import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import { SECRET_SHAPES, parseGatewaySecret } from '../../functions/core/gateway/secret.js';

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

  it('every message ends with both documented shapes, after a full stop or the question it asks', () => {
    const shapes =
      'Expected {"login": "...", "controlKey": "..."} for HMAC-SHA1, or {"login": "...", "signatureMethod": "RSA-SHA256", "privateKeyPem": "-----BEGIN ..."} for RSA-SHA256.';
    assert.equal(SECRET_SHAPES, shapes.slice('Expected '.length, -1));
    assert.equal(problem({ login: VALUE }), `secret.json: the HMAC-SHA1 gateway secret is not right: "controlKey" is missing. ${shapes}`);
    assert.equal(problem({ login: 'm', contolKey: VALUE }), `secret.json: the HMAC-SHA1 gateway secret is not right: "contolKey" is not a field: did you mean "controlKey"? ${shapes}`);
    assert.equal(problem('{'), `secret.json: the gateway secret is not valid JSON. ${shapes}`);
    assert.equal(
      problem({ login: 'm', signatureMethod: null, controlKey: VALUE }),
      `secret.json: "signatureMethod" must be "HMAC-SHA1" or "RSA-SHA256" (or left out for HMAC-SHA1). ${shapes}`,
    );
    assert.equal(problem({}), `secret.json: the HMAC-SHA1 gateway secret is not right: "login" is missing; "controlKey" is missing. ${shapes}`);
  });

  it('guesses the meant field within two edits, or from a name cut short or padded, among fields not given', () => {
    const guess = (json: object) => /"(\w+)" is not a field(?:: did you mean "(\w+)"\?| of this secret)/.exec(problem(json))?.slice(1);
    assert.deepEqual(guess({ login: 'm', contrlKy: VALUE }), ['contrlKy', 'controlKey'], 'two deletions');
    assert.deepEqual(guess({ login: 'm', kontrolKei: VALUE }), ['kontrolKei', 'controlKey'], 'two substitutions, the last one at the end');
    assert.deepEqual(guess({ login: 'm', contxrolKexy: VALUE }), ['contxrolKexy', 'controlKey'], 'two insertions');
    assert.deepEqual(guess({ login: 'm', cntrlKy: VALUE }), ['cntrlKy', undefined], 'three edits: no guess');
    assert.match(problem({ login: 'm', cntrlKy: VALUE }), /"controlKey" is missing; "cntrlKy" is not a field of this secret\./);
    assert.deepEqual(guess({ login: 'm', key: VALUE }), ['key', 'controlKey'], 'cut short');
    assert.deepEqual(guess({ login: 'm', ke: VALUE }), ['ke', undefined], 'two characters are too few to tell');
    assert.deepEqual(guess({ login: 'm', myControlKeyValue: VALUE }), ['myControlKeyValue', 'controlKey'], 'padded');
    assert.deepEqual(guess({ login: 'm', controlKey: VALUE, SignatureMethod: 'HMAC-SHA1' }), ['SignatureMethod', 'signatureMethod']);
    assert.deepEqual(guess({ login: 'm', controlKey: VALUE, controlkey: VALUE }), ['controlkey', undefined], 'controlKey is given: not meant');
    assert.deepEqual(guess({ signatureMethod: 'RSA-SHA256', privateKeyPem: '-----BEGIN x', lgin: 'm' }), ['lgin', 'login']);
  });

  it('another method\'s field beside the default\'s is not taken for a missing signatureMethod', () => {
    assert.equal(
      problem({ login: 'm', controlKey: VALUE, privateKeyPem: `-----BEGIN ${VALUE}` }).split(' Expected')[0],
      'secret.json: the HMAC-SHA1 gateway secret is not right: "privateKeyPem" is not a field of this secret.',
    );
    assert.match(problem({ login: 'm', controlKey: 42 }), /: "controlKey" must be a string\. /);
    assert.match(problem({ login: 'm', signatureMethod: 'RSA-SHA256', privateKeyPem: 42 }), /: "privateKeyPem" must be a string\. /);
  });

  it('accepts both documented shapes', () => {
    assert.deepEqual(parseGatewaySecret('{"login":"m","controlKey":"k"}', 's'), { login: 'm', controlKey: 'k' });
    const rsa = { login: 'm', signatureMethod: 'RSA-SHA256', privateKeyPem: '-----BEGIN PRIVATE KEY-----' };
    assert.deepEqual(parseGatewaySecret(JSON.stringify(rsa), 's'), rsa);
  });
});
