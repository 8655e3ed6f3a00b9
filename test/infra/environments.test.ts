import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ENVIRONMENTS_DIR, loadEnvironments, parseEnvironment, readEnvironmentSources, type EnvironmentSource } from '../../lib/environment/environments.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { egressSettings } from '../../lib/constructs/egress.js';
import { shippedEnvironment } from './helpers.js';
import { CHANNEL_EXAMPLES, EVERY_CHANNEL_KIND, OPSGENIE_URL, PAGERDUTY_URL, TEST_KEYS } from '../helpers/alarm-channels.js';

const minimal = {
  name: 'staging',
  gateway: { endpointUrl: 'https://gate.test/paynet-ui/services/v2/rpt-engine' },
  secret: { name: 'paynet-reports/staging/gateway' },
};

describe('environments configuration', () => {
  it('loads the shipped integration and production environments', () => {
    // By name, not as "all of config/environments/": an environment a user adds there changes no test.
    const names = readEnvironmentSources(ENVIRONMENTS_DIR).map((s) => s.file);
    assert.ok(names.includes('config/environments/integration.json') && names.includes('config/environments/production.json'), names.join(', '));
    assert.equal(shippedEnvironment('integration').removalPolicy, 'destroy');
    const production = shippedEnvironment('production');
    assert.equal(production.removalPolicy, 'retain');
    assert.equal(production.terminationProtection, true);
    assert.ok(production.logRetentionDays >= 365, 'PCI DSS 10.7: a year of logs in production');
  });

  it('takes Object Lock for the raw bucket as an opt-in, and refuses it where a destroy would have to empty the bucket', () => {
    assert.equal(parseEnvironment(minimal, 'x.json').raw.objectLock, undefined);
    const locked = parseEnvironment({ ...minimal, raw: { objectLock: { mode: 'GOVERNANCE', days: 30 } } }, 'x.json');
    assert.deepEqual(locked.raw.objectLock, { mode: 'GOVERNANCE', days: 30 });
    assert.equal(locked.raw.noncurrentVersionExpirationDays, 365, 'the other raw settings keep their defaults');
    assert.throws(() => parseEnvironment({ ...minimal, raw: { objectLock: { mode: 'LEGAL', days: 30 } } }, 'x.json'), /raw\.objectLock\.mode/);
    assert.throws(
      () => parseEnvironment({ ...minimal, removalPolicy: 'destroy', raw: { objectLock: { mode: 'COMPLIANCE', days: 30 } } }, 'x.json'),
      /raw\.objectLock: Object Lock keeps the raw versions past a `cdk destroy`/,
    );
  });

  it('defaults to a safe, retained, unscheduled environment', () => {
    const env = parseEnvironment(minimal, 'x.json');
    assert.equal(env.removalPolicy, 'retain');
    assert.equal(env.schedulesEnabled, false);
    assert.equal(env.connections[0]!.secret.mode, 'create');
    assert.equal(env.connections[0]!.name, 'default');
    assert.equal(env.connections[0]!.maxConcurrentRequests, 2);
    assert.deepEqual(env.raw, { transitionAfterDays: 30, storageClass: 'GLACIER_INSTANT_RETRIEVAL', noncurrentVersionExpirationDays: 365 });
    assert.equal(env.athena.resultsExpirationDays, 7);
    assert.equal(env.athena.bytesScannedCutoffPerQuery, 10 * 1024 ** 3);
    assert.deepEqual(env.fetch, { timeoutSeconds: 900, memoryMb: 512, reservedConcurrency: null });
    assert.deepEqual(env.parse, { timeoutSeconds: 120, memoryMb: 2048, reservedConcurrency: null });
    assert.equal(env.logRetentionDays, 400);
    assert.equal(env.athena.projectionStart, '2020-01-01');
    assert.equal(env.logLevel, 'INFO');
    assert.equal(env.account, undefined, 'environment-agnostic unless configured');
    // Issue 19's options are all opt-in: no VPC (no cost), no boundary, no extra tags, no chat.
    assert.equal(env.network, undefined);
    assert.equal(egressSettings(env.network), undefined);
    assert.equal(env.permissionsBoundaryArn, undefined);
    assert.deepEqual(env.tags, {});
    assert.deepEqual(env.alarmChannels, [], 'nobody hears the alarms until the file says who');
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
      ['a parse reservation below the SQS poller minimum and the reparse slots', { parse: { reservedConcurrency: 3 } }, /parse\.reservedConcurrency: must be >= 4/],
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
    const raw = { ...minimal, name: 'staging' };
    const twice: EnvironmentSource[] = [
      { file: 'a/staging.json', raw },
      { file: 'b/staging.json', raw },
    ];
    assert.throws(() => loadEnvironments(twice), /b\/staging\.json: environment "staging" has the name of a\/staging\.json/);
  });
});

describe('environments are files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'environments-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const folder = (files: Record<string, string>) => {
    const d = mkdtempSync(join(dir, 'set-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
    return d;
  };

  it('takes every *.json of the folder, in file-name order, and nothing else', () => {
    const d = folder({
      'staging.json': JSON.stringify(minimal),
      'alpha.json': JSON.stringify({ ...minimal, name: 'alpha', secret: { name: 'paynet-reports/alpha/gateway' } }),
      'notes.md': 'not an environment',
    });
    assert.deepEqual(loadEnvironments(readEnvironmentSources(d)).map((e) => e.name), ['alpha', 'staging']);
    assert.deepEqual(loadEnvironments(readEnvironmentSources(folder({}))), [], 'an empty folder: no environment, no error');
  });

  it('reports every broken file at once: syntax with line and column, fields by name, a name that is not the file', () => {
    const d = folder({
      'broken.json': '{\n  "name": "broken",\n  "gateway": {"endpointUrl": "https://g.test/x"},,\n}',
      'fields.json': JSON.stringify({ ...minimal, name: 'fields', network: { elasticIpAllocationIds: ['eipalloc-1'] }, tags: { project: 'x' } }),
      'other.json': JSON.stringify({ ...minimal, name: 'renamed' }),
      'staging.json': JSON.stringify(minimal),
    });
    assert.throws(
      () => loadEnvironments(readEnvironmentSources(d)),
      (e: unknown) => {
        assert.ok(e instanceof ConfigurationError);
        const m = e.message;
        assert.match(m, /^3 environment problems \(every config\/environments\/\*\.json must load\)/);
        assert.match(m, /broken\.json:3:50: not valid JSON: property name expected\. Fix the file \(or move it out of .*\/\)/);
        assert.match(m, /fields\.json: environment is invalid:\n {2}network\.elasticIpAllocationIds\.0: must be an Elastic IP allocation id/);
        assert.match(m, /tags\.project: the stack sets project and environment itself/);
        assert.match(m, /other\.json: environment is invalid:\n {2}name: "renamed" is not the file's name/);
        assert.doesNotMatch(m, /staging/);
        return true;
      },
    );
  });
});

describe('network, governance and chat settings', () => {
  const env = (extra: Record<string, unknown>) => parseEnvironment({ ...minimal, ...extra }, 'config/environments/staging.json');
  const refuses = (extra: Record<string, unknown>, field: RegExp, what: string) =>
    assert.throws(() => env(extra), (e: unknown) => e instanceof ConfigurationError && /config\/environments\/staging\.json/.test(e.message) && field.test(e.message), what);

  it('takes each of the three network forms and tells them apart', () => {
    assert.deepEqual(egressSettings(env({ network: { staticEgressIp: true } }).network), { kind: 'created' });
    const ids = ['eipalloc-0123456789abcdef0', 'eipalloc-0fedcba9'];
    assert.deepEqual(egressSettings(env({ network: { elasticIpAllocationIds: ids } }).network), { kind: 'created', allocationIds: ids });
    assert.deepEqual(egressSettings(env({ network: { staticEgressIp: true, elasticIpAllocationIds: ids } }).network), { kind: 'created', allocationIds: ids });
    const subnetIds = ['subnet-0123456789abcdef0'];
    assert.deepEqual(egressSettings(env({ network: { vpcId: 'vpc-0123456789abcdef0', subnetIds } }).network), {
      kind: 'existing',
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds,
    });
    assert.equal(egressSettings(env({ network: { staticEgressIp: false } }).network), undefined, 'false: outside a VPC, as without the field');
  });

  it('refuses network forms that contradict or lack something, naming the field', () => {
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['an empty network', {}, /network: say which/],
      ['subnets without their VPC', { subnetIds: ['subnet-0123456789abcdef0'] }, /network\.vpcId: subnetIds need their vpcId/],
      ['a VPC without subnets', { vpcId: 'vpc-0123456789abcdef0' }, /network\.subnetIds: the private subnets/],
      ['a created address in an existing VPC', { vpcId: 'vpc-01234567', subnetIds: ['subnet-01234567'], staticEgressIp: true }, /network\.staticEgressIp: not with vpcId/],
      ['allocations in an existing VPC', { vpcId: 'vpc-01234567', subnetIds: ['subnet-01234567'], elasticIpAllocationIds: ['eipalloc-01234567'] }, /network\.elasticIpAllocationIds: not with vpcId/],
      ['false with allocations', { staticEgressIp: false, elasticIpAllocationIds: ['eipalloc-01234567'] }, /network\.staticEgressIp: false, yet/],
      ['three allocations', { elasticIpAllocationIds: ['eipalloc-01234567', 'eipalloc-01234568', 'eipalloc-01234569'] }, /at most 2: .*two Availability Zones/],
      ['an allocation twice', { elasticIpAllocationIds: ['eipalloc-01234567', 'eipalloc-01234567'] }, /lists an allocation twice/],
      ['an IP for an allocation id', { elasticIpAllocationIds: ['3.120.1.2'] }, /network\.elasticIpAllocationIds\.0: must be an Elastic IP allocation id/],
      ['a malformed VPC id', { vpcId: 'vpc-xyz', subnetIds: ['subnet-01234567'] }, /network\.vpcId: must be a VPC id/],
      ['17 subnets', { vpcId: 'vpc-01234567', subnetIds: Array.from({ length: 17 }, (_, i) => `subnet-${String(i).padStart(8, '0')}`) }, /at most 16/],
      ['an unknown field', { natGateways: 2, staticEgressIp: true }, /natGateways|unrecognized/i],
    ];
    for (const [what, network, field] of bad) refuses({ network }, field, what);
  });

  it('takes a permissions boundary ARN, tags and chat channels, and refuses what AWS would', () => {
    const e = env({
      permissionsBoundaryArn: 'arn:aws:iam::123456789012:policy/org/boundary',
      tags: { 'cost-center': 'payments 42', owner: 'data@merchant.test', empty: '' },
      alarmChat: { slack: [{ workspaceId: 'T012ABCDE', channelId: 'C0123ABCD' }] },
    });
    assert.equal(e.permissionsBoundaryArn, 'arn:aws:iam::123456789012:policy/org/boundary');
    assert.deepEqual(e.tags, { 'cost-center': 'payments 42', owner: 'data@merchant.test', empty: '' });
    assert.deepEqual(e.alarmChannels, [{ kind: 'slack', workspaceId: 'T012ABCDE', channelId: 'C0123ABCD' }], 'alarmChat is read as alarmChannels entries');

    const teams = { teamId: '74361522-da01-538d-aa2e-ac7918c6bb92', channelId: '19%3ab6ef35dc342d56ba5654e6fc6d25a071%40thread.tacv2', tenantId: '11111111-2222-3333-4444-555555555555' };
    assert.deepEqual(env({ alarmChat: { teams: [teams] } }).alarmChannels, [{ kind: 'teams', ...teams }]);

    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a role for a boundary', { permissionsBoundaryArn: 'arn:aws:iam::123456789012:role/x' }, /permissionsBoundaryArn: must be an IAM managed policy ARN/],
      ['a reserved tag key', { tags: { 'aws:team': 'x' } }, /tags\.aws:team: the aws: prefix is reserved/],
      ['a tag the stack sets', { tags: { environment: 'prod' } }, /tags\.environment: the stack sets project and environment itself/],
      ['a tag value AWS refuses', { tags: { team: 'a#b' } }, /tags\.team: a tag value holds/],
      ['46 tags', { tags: Object.fromEntries(Array.from({ length: 46 }, (_, i) => [`t${i}`, 'v'])) }, /tags: at most 45 tags/],
      ['a Slack channel name for its id', { alarmChat: { slack: [{ workspaceId: 'T012ABCDE', channelId: '#ops' }] } }, /alarmChat\.slack\.0\.channelId: must be the Slack channel id/],
      ['a lower-case workspace id', { alarmChat: { slack: [{ workspaceId: 't012abcde', channelId: 'C0123ABCD' }] } }, /alarmChat\.slack\.0\.workspaceId/],
      ['a Teams channel id not URL-encoded', { alarmChat: { teams: [{ ...teams, channelId: '19:abc@thread.tacv2' }] } }, /alarmChat\.teams\.0\.channelId: must be the channel id as Teams copies it/],
      ['a team id that is no UUID', { alarmChat: { teams: [{ ...teams, teamId: 'payments' }] } }, /alarmChat\.teams\.0\.teamId/],
      ['a channel twice', { alarmChat: { slack: [{ workspaceId: 'T1', channelId: 'C1' }, { workspaceId: 'T1', channelId: 'C1' }] } }, /alarmChat\.slack: lists a channel twice/],
      ['an email channel', { alarmChat: { email: ['a@b.test'] } }, /email|unrecognized/i],
    ];
    for (const [what, extra, field] of bad) refuses(extra, field, what);
  });

  it('reads alarmChannels, each entry by its kind, the older alarmEmails and alarmChat after them as the same entries (issue 46)', () => {
    const e = env({ alarmChannels: EVERY_CHANNEL_KIND, alarmEmails: ['finance@merchant.test'], alarmChat: { slack: [{ workspaceId: 'T012ABCDE', channelId: 'C0123ABCD' }] } });
    assert.deepEqual(e.alarmChannels, [
      ...EVERY_CHANNEL_KIND,
      { kind: 'email', address: 'finance@merchant.test' },
      { kind: 'slack', workspaceId: 'T012ABCDE', channelId: 'C0123ABCD' },
    ]);
    assert.equal('alarmEmails' in e || 'alarmChat' in e, false, 'one list past the load');
    // Opsgenie's EU host, and PagerDuty's.
    env({ alarmChannels: [{ kind: 'pagerduty', integrationUrl: PAGERDUTY_URL.replace('events.', 'events.eu.') }, { kind: 'opsgenie', integrationUrl: OPSGENIE_URL.replace('.eu.', '.') }] });
  });

  it('refuses an Events API v2 URL, an http:// URL, an unknown kind, each naming the entry and the fix in our words, never the key', () => {
    const pd = TEST_KEYS.pagerduty;
    const bad: Array<[string, unknown, RegExp]> = [
      [
        'Events API v2',
        { kind: 'pagerduty', integrationUrl: `https://events.pagerduty.com/v2/enqueue?routing_key=${pd}` },
        /alarmChannels\.1\.integrationUrl: is the Events API v2 endpoint, which cannot read the messages SNS sends .*: add an "Amazon CloudWatch" integration to the PagerDuty service and copy its Integration URL \(https:\/\/events\.pagerduty\.com\/integration\/<key>\/enqueue\)/,
      ],
      ['http://', { kind: 'pagerduty', integrationUrl: PAGERDUTY_URL.replace('https:', 'http:') }, /alarmChannels\.1\.integrationUrl: must be https:\/\/: SNS would send the alarms, and the key in the URL, in clear/],
      ['http:// Opsgenie', { kind: 'opsgenie', integrationUrl: OPSGENIE_URL.replace('https:', 'http:') }, /alarmChannels\.1\.integrationUrl: must be https:\/\//],
      ['another host', { kind: 'opsgenie', integrationUrl: OPSGENIE_URL.replace('api.eu.opsgenie.com', 'api.opsgenie.example') }, /alarmChannels\.1\.integrationUrl: is not a URL of Opsgenie \(host api\.opsgenie\.example\): add an "Amazon CloudWatch" integration/],
      ['a PagerDuty URL under opsgenie', { kind: 'opsgenie', integrationUrl: PAGERDUTY_URL }, /alarmChannels\.1\.integrationUrl: is not a URL of Opsgenie/],
      ['an unknown kind', { kind: 'pager', integrationUrl: PAGERDUTY_URL }, /alarmChannels\.1\.kind: "kind" "pager" is not a channel kind: write one of "email", "slack", "teams", "pagerduty", "opsgenie"/],
      ['no kind', { address: 'a@b.test' }, /alarmChannels\.1\.kind: no "kind": write one of "email"/],
      ['a field of another kind', { kind: 'email', address: 'a@b.test', integrationUrl: PAGERDUTY_URL }, /alarmChannels\.1: "integrationUrl" is not a field of a "email" entry, which takes address: \{"kind": "email"/],
      ['a missing field', { kind: 'slack', channelId: 'C1' }, /alarmChannels\.1\.workspaceId: a "slack" entry needs workspaceId as a string: \{"kind": "slack"/],
      ['the same channel twice', { kind: 'email', address: 'ops@merchant.test' }, /alarmChannels: alarmEmails or alarmChat names the channel of entry 1 again: list each channel once/],
    ];
    for (const [what, entry, message] of bad) {
      assert.throws(
        () => env({ alarmChannels: [CHANNEL_EXAMPLES.slack, entry], alarmEmails: ['ops@merchant.test'] }),
        (err: unknown) => {
          const text = (err as Error).message;
          assert.match(text, message, what);
          assert.doesNotMatch(text, /Invalid input|Unrecognized key|expected/, `${what}: zod's words`);
          for (const key of Object.values(TEST_KEYS)) assert.ok(!text.includes(key), `${what}: the key is in the message`);
          return true;
        },
        what,
      );
    }
  });
});
