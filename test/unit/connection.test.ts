import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CONNECTION_NAME,
  CONNECTION_NAME_RULE,
  connectionName,
  encodeConnectionsVariable,
  MAX_CONCURRENT_REQUESTS,
  parseConnectionsVariable,
} from '../../functions/core/connections/connection.js';
import { ConfigurationError } from '../../functions/core/errors.js';

/**
 * A connection's name and the fetch function's CONNECTIONS variable (connection.ts), alone and fast: the name rule at
 * its edges, the variable's exact text, and every way a malformed variable is refused.
 */

describe('a connection name', () => {
  const accepts = (name: string) => assert.equal(connectionName.safeParse(name).success, true, name);
  const refuses = (name: string) => {
    const parsed = connectionName.safeParse(name);
    assert.equal(parsed.success, false, name);
    assert.equal(parsed.error?.issues[0]?.message, 'must be 1-32 lower-case letters, digits or "-", starting with a letter or digit');
  };

  it('is 1 to 32 lower-case letters, digits or "-", starting with a letter or digit', () => {
    for (const name of ['a', '7', 'acme-pay', 'b2', '0-', 'a'.repeat(32), `x${'-'.repeat(31)}`]) accepts(name);
    for (const name of ['', 'a'.repeat(33), '-acme', 'Acme', 'acme_pay', 'acme pay', 'acme.pay', 'acme\n', ' acme', 'acmé']) refuses(name);
    assert.equal(CONNECTION_NAME.test('acme-pay'), true);
    assert.equal(CONNECTION_NAME_RULE, 'must be 1-32 lower-case letters, digits or "-", starting with a letter or digit');
  });

  it('the bound on requests in flight is 1 to 10, 2 by default', () => {
    assert.deepEqual(MAX_CONCURRENT_REQUESTS, { min: 1, max: 10, default: 2 });
  });
});

describe('the CONNECTIONS variable', () => {
  it('is written as {"<name>": {"endpointUrl", "secretName"}}, nothing else', () => {
    const text = encodeConnectionsVariable([
      { name: 'default', endpointUrl: 'https://a.test/r', secretName: 's/a' },
      { name: 'acme', endpointUrl: 'http://127.0.0.1:8080/r', secretName: 's/b', extra: 'dropped' } as never,
    ]);
    assert.equal(text, '{"default":{"endpointUrl":"https://a.test/r","secretName":"s/a"},"acme":{"endpointUrl":"http://127.0.0.1:8080/r","secretName":"s/b"}}');
  });

  it('is read into a map by name, each entry carrying its name; http and https are accepted', () => {
    const map = parseConnectionsVariable('{"acme":{"endpointUrl":"http://127.0.0.1:8080/r","secretName":"s/b"},"default":{"endpointUrl":"https://a.test/r","secretName":"s/a"}}');
    assert.deepEqual([...map.keys()], ['acme', 'default']);
    assert.deepEqual(map.get('acme'), { name: 'acme', endpointUrl: 'http://127.0.0.1:8080/r', secretName: 's/b' });
    assert.deepEqual(map.get('default'), { name: 'default', endpointUrl: 'https://a.test/r', secretName: 's/a' });
    assert.equal(parseConnectionsVariable('{}').size, 0);
  });

  const refusal = (text: string): string => {
    try {
      parseConnectionsVariable(text);
    } catch (e) {
      assert.ok(e instanceof ConfigurationError, String(e));
      return e.message;
    }
    return assert.fail(`accepted ${text}`);
  };
  const HOW = ': the stack sets it as {"<connection>": {"endpointUrl", "secretName"}}.';

  it('not JSON: says so and what the stack sets', () => {
    assert.equal(refusal('{'), `CONNECTIONS is not JSON${HOW}`);
  });

  it('not an object: the problem is at "(root)"', () => {
    const message = refusal('["acme"]');
    assert.ok(message.startsWith('CONNECTIONS is invalid ((root): '), message);
    assert.ok(message.endsWith(`)${HOW}`), message);
  });

  it('names the field by its dotted path: a bad name, a missing or empty secret, an unknown field', () => {
    assert.match(refusal('{"Acme":{"endpointUrl":"https://a.test/r","secretName":"s"}}'), /^CONNECTIONS is invalid \(Acme: "Acme" must be 1-32 lower-case letters, digits or "-", starting with a letter or digit\): /);
    assert.match(refusal('{"acme":{"endpointUrl":"https://a.test/r"}}'), /^CONNECTIONS is invalid \(acme\.secretName: /);
    assert.match(refusal('{"acme":{"endpointUrl":"https://a.test/r","secretName":""}}'), /^CONNECTIONS is invalid \(acme\.secretName: /);
    assert.match(refusal('{"acme":{"endpointUrl":"https://a.test/r","secretName":"s","login":"x"}}'), /^CONNECTIONS is invalid \(acme: .*"login"/);
  });

  it('several problems are all listed, separated by "; "', () => {
    const message = refusal('{"acme":{"endpointUrl":"not a url"},"b":{"secretName":"s"}}');
    assert.match(message, /^CONNECTIONS is invalid \(acme\.endpointUrl: [^;]+; acme\.secretName: [^;]+; b\.endpointUrl: [^;]+\): the stack/);
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    for (const url of ['not a url', 'ftp://a.test/r', 'httpss://a.test/r', 'xhttps://a.test/r', 'ws://a.test/r']) {
      assert.match(refusal(JSON.stringify({ acme: { endpointUrl: url, secretName: 's' } })), /^CONNECTIONS is invalid \(acme\.endpointUrl: /, url);
    }
  });
});
