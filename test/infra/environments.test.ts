import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { environmentSources, loadEnvironments, parseEnvironment } from '../../config/environments.js';
import { ConfigurationError } from '../../functions/core/errors.js';

const minimal = {
  name: 'staging',
  gateway: { endpointUrl: 'https://gate.test/paynet-ui/services/v2/rpt-engine' },
  secret: { name: 'paynet-reports/staging/gateway' },
};

describe('environments configuration', () => {
  it('loads the shipped integration and production environments', () => {
    const envs = loadEnvironments();
    assert.deepEqual(envs.map((e) => e.name), ['integration', 'production']);
    const production = envs.find((e) => e.name === 'production')!;
    assert.equal(production.removalPolicy, 'retain');
    assert.equal(production.terminationProtection, true);
    assert.ok(production.logRetentionDays >= 365, 'PCI DSS 10.7: a year of logs in production');
  });

  it('defaults to a safe, retained, unscheduled environment', () => {
    const env = parseEnvironment(minimal, 'x.json');
    assert.equal(env.removalPolicy, 'retain');
    assert.equal(env.schedulesEnabled, false);
    assert.equal(env.secret.mode, 'create');
    assert.deepEqual(env.raw, { transitionAfterDays: 30, storageClass: 'GLACIER_INSTANT_RETRIEVAL', noncurrentVersionExpirationDays: 365 });
    assert.equal(env.athena.resultsExpirationDays, 7);
    assert.equal(env.athena.bytesScannedCutoffPerQuery, 10 * 1024 ** 3);
    assert.deepEqual(env.fetch, { timeoutSeconds: 900, memoryMb: 512, reservedConcurrency: null });
    assert.deepEqual(env.parse, { timeoutSeconds: 120, memoryMb: 2048, reservedConcurrency: null });
    assert.equal(env.logRetentionDays, 400);
    assert.equal(env.athena.projectionStart, '2020-01-01');
    assert.equal(env.logLevel, 'INFO');
    assert.equal(env.account, undefined, 'environment-agnostic unless configured');
  });

  it("refuses a log level at which Lambda's filter would drop the alarms' metric lines, saying why", () => {
    for (const level of ['WARN', 'ERROR']) {
      assert.throws(
        () => parseEnvironment({ ...minimal, logLevel: level }, 'config/environments/production.json'),
        (e: unknown) =>
          e instanceof ConfigurationError &&
          /config\/environments\/production\.json/.test(e.message) &&
          /logLevel: must be one of DEBUG, INFO: .*drops the metric lines every alarm reads/.test(e.message),
      );
    }
    assert.equal(parseEnvironment({ ...minimal, logLevel: 'DEBUG' }, 'x.json').logLevel, 'DEBUG');
  });

  it('takes a projection start that is a real date, and refuses one that is not', () => {
    assert.equal(parseEnvironment({ ...minimal, athena: { projectionStart: '2015-03-01' } }, 'x.json').athena.projectionStart, '2015-03-01');
    for (const bad of ['2015-02-30', '2015-3-1', 'NOW-3YEARS']) {
      assert.throws(() => parseEnvironment({ ...minimal, athena: { projectionStart: bad } }, 'x.json'), /athena\.projectionStart: must be a date YYYY-MM-DD/);
    }
  });

  it('refuses a plain-http endpoint, naming the file and the field', () => {
    assert.throws(
      () => parseEnvironment({ ...minimal, gateway: { endpointUrl: 'http://gate.test/rpt' } }, 'config/environments/x.json'),
      (e: unknown) =>
        e instanceof ConfigurationError && /config\/environments\/x\.json/.test(e.message) && /gateway\.endpointUrl/.test(e.message),
    );
  });

  it('refuses values AWS would refuse at deploy time', () => {
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['IA before 30 days', { raw: { storageClass: 'INFREQUENT_ACCESS', transitionAfterDays: 10 } }, /raw\.transitionAfterDays/],
      ['a log retention CloudWatch lacks', { logRetentionDays: 100 }, /logRetentionDays/],
      ['a Lambda time-out over 15 min', { parse: { timeoutSeconds: 1200 } }, /parse\.timeoutSeconds/],
      ['an Athena cut-off under 10 MB', { athena: { bytesScannedCutoffPerQuery: 1000 } }, /athena\.bytesScannedCutoffPerQuery/],
      ['a key ARN for a created secret', { secret: { name: 's', mode: 'create', kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/x' } }, /secret\.kmsKeyArn/],
      ['a parse reservation below the SQS poller minimum', { parse: { reservedConcurrency: 1 } }, /parse\.reservedConcurrency/],
      ['an upper-case name', { name: 'Prod' }, /name/],
      ['a name too long for bucket names', { name: 'integration-eu' }, /name/],
      ['a bad e-mail', { alarmEmails: ['ops'] }, /alarmEmails/],
      ['an unknown field', { shedulesEnabled: true }, /shedulesEnabled|unrecognized/i],
    ];
    for (const [what, override, field] of bad) {
      assert.throws(() => parseEnvironment({ ...minimal, ...override }, 'x.json'), field, what);
    }
  });

  it('refuses two environments with one name', () => {
    const twice = [environmentSources[0]!, { file: 'copy.json', raw: environmentSources[0]!.raw }];
    assert.throws(() => loadEnvironments(twice), /share the name "integration"/);
  });
});
