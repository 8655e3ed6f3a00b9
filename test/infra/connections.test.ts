import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, PCIDSS321Checks } from 'cdk-nag';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { addCompliancePacks } from '../../lib/policies/compliance.js';
import { CREDENTIALS_IDS, logicalIdOf, resourcesOf, synthPipeline, testConfig, type Cfn } from './helpers.js';

/**
 * An environment with two connections (issue 31): the default one, created by the stack, and "acme", a secret the
 * security team manages under its own KMS key, bounded to one request at a time; a report on each.
 */
const ACME_KEY = 'arn:aws:kms:eu-central-1:123456789012:key/0f7d1d1e-1111-2222-3333-444455556666';
const config = testConfig({
  connections: {
    acme: {
      gateway: { endpointUrl: 'https://reports.acme.example/paynet-ui/services/v2/rpt-engine' },
      secret: { name: 'security/acme-gateway', mode: 'existing', kmsKeyArn: ACME_KEY },
      maxConcurrentRequests: 1,
    },
  },
});

/** The fixture report's definition as written, fetched over `connection` under another id (built here, not added to config/). */
function definitionOver(id: string, connection: string): ReportDefinition {
  const raw = JSON.parse(readFileSync(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8')) as Record<string, unknown>;
  return parseReportDefinition({ ...raw, id, connection }, `test: report ${id} over ${connection}`);
}

const reports = [...loadCatalog().reports, definitionOver('acme_transactions', 'acme'), definitionOver('acme_payouts', 'acme')];
const { stack, template, app } = synthPipeline(config, addCompliancePacks, reports);
const id = (c: { node: { defaultChild?: unknown } }) => logicalIdOf(stack, c);
const json = template.toJSON() as { Resources: Record<string, { Type: string; Properties: Cfn }>; Outputs: Record<string, { Value: Cfn }> };
const fetchRoleId = id(stack.fetch.function.role);

/**
 * What applies to a role: the statements of its policies (AWS::IAM::Policy, its own managed and inline ones), and the
 * AWS managed policies it has, by ARN (not in the template, so named instead of read).
 */
function policiesOfRole(roleId: string): { statements: Cfn[]; awsManaged: string[] } {
  const role = json.Resources[roleId]!;
  assert.equal(role.Type, 'AWS::IAM::Role');
  const attached = Object.values(json.Resources).filter(
    (r) => (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') && JSON.stringify(r.Properties.Roles ?? []).includes(`"Ref":"${roleId}"`),
  );
  const arns = (role.Properties.ManagedPolicyArns ?? []) as Cfn[];
  const own = arns.filter((a) => a.Ref).map((a) => json.Resources[a.Ref]!);
  const inline = ((role.Properties.Policies ?? []) as Cfn[]).map((p) => ({ Properties: p }));
  return {
    statements: [...attached, ...own, ...inline].flatMap((p) => p.Properties.PolicyDocument.Statement),
    awsManaged: arns.filter((a) => !a.Ref).map((a) => JSON.stringify(a)),
  };
}
const statementsOfRole = (roleId: string) => policiesOfRole(roleId).statements;

const secretActions = (s: Cfn) => [s.Action].flat().filter((a: string) => a.startsWith('secretsmanager:'));

describe('an environment with two connections', () => {
  const defaultSecretId = CREDENTIALS_IDS.secret;
  const secretArn = (resource: string) => ({
    'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':secretsmanager:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:secret:${resource}`]],
  });
  const acmeSecretArn = secretArn('security/acme-gateway');

  it('has a secret per connection: the created one (keeping its logical id, under the credentials key) and the existing one, referenced', () => {
    const secrets = resourcesOf(template, 'AWS::SecretsManager::Secret');
    assert.deepEqual(Object.keys(secrets), [defaultSecretId], 'the existing secret is referenced, not created');
    assert.deepEqual(secrets[defaultSecretId]!.Properties.KmsKeyId, { 'Fn::GetAtt': [CREDENTIALS_IDS.key, 'Arn'] });
    assert.equal(stack.credentials.secretOf('acme').secretName, 'security/acme-gateway');
    const fn = resourcesOf(template, 'AWS::Lambda::Function')[id(stack.fetch.function.function)]!.Properties;
    assert.deepEqual(JSON.parse(fn.Environment.Variables.CONNECTIONS), {
      default: { endpointUrl: 'https://gateway.test/paynet-ui/services/v2/rpt-engine', secretName: 'paynet-reports/test/gateway' },
      acme: { endpointUrl: 'https://reports.acme.example/paynet-ui/services/v2/rpt-engine', secretName: 'security/acme-gateway' },
    });
  });

  it('lets the fetch role read both secrets and nothing else, and no other role read any', () => {
    const statements = statementsOfRole(fetchRoleId);
    const reads = statements.filter((s) => secretActions(s).length);
    for (const s of reads) {
      assert.equal(s.Effect, 'Allow');
      assert.deepEqual(secretActions(s), ['secretsmanager:GetSecretValue'], 'the value only: the function never describes the secret');
    }
    const resources = reads.flatMap((s) => [s.Resource].flat());
    assert.deepEqual(
      resources.map((r) => JSON.stringify(r)).sort(),
      // The existing secret by its name and whatever suffix Secrets Manager gave it.
      [JSON.stringify({ Ref: defaultSecretId }), JSON.stringify(secretArn('security/acme-gateway-??????'))].sort(),
      'exactly the two secrets, each by its own ARN',
    );
    // The existing secret's key: decrypt only, only through Secrets Manager, only that key.
    const acmeKey = statements.filter((s) => JSON.stringify(s.Resource) === JSON.stringify(ACME_KEY));
    assert.deepEqual(acmeKey.map((s) => [s.Action, s.Condition]), [['kms:Decrypt', { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } } }]]);
    assert.deepEqual(policiesOfRole(fetchRoleId).awsManaged, [], 'no AWS managed policy on the fetch role');
    for (const roleId of Object.keys(resourcesOf(template, 'AWS::IAM::Role')).filter((r) => r !== fetchRoleId)) {
      const { statements: others, awsManaged } = policiesOfRole(roleId);
      assert.deepEqual(others.filter((s) => secretActions(s).length), [], `${roleId} reads no secret`);
      // CDK's bucket-notifications handler has the basic execution role (its own logs), nothing that reads secrets.
      for (const arn of awsManaged) assert.match(arn, /service-role\/AWSLambdaBasicExecutionRole/, roleId);
    }
    // The credentials key lets the fetch role decrypt through Secrets Manager, and no other role of the stack.
    const keyPolicy = json.Resources[CREDENTIALS_IDS.key]!.Properties.KeyPolicy.Statement as Cfn[];
    const roleGrants = keyPolicy.filter((s) => JSON.stringify(s.Principal).includes('Fn::GetAtt'));
    assert.ok(roleGrants.length > 0);
    for (const s of roleGrants) {
      assert.deepEqual(s.Principal, { AWS: { 'Fn::GetAtt': [fetchRoleId, 'Arn'] } });
      assert.ok(s.Condition.StringEquals['kms:ViaService'], 'through Secrets Manager only');
    }
  });

  it("bounds each connection in the template: event sources' maximum concurrency, one message group for a bound of 1", () => {
    const mappings = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping')).map((m) => m.Properties);
    const mappingOf = (connection: string) => mappings.find((m) => m.EventSourceArn['Fn::GetAtt'][0] === id(stack.fetch.queues.queueOf(connection)))!;
    assert.deepEqual(mappingOf('default').ScalingConfig, { MaximumConcurrency: 2 });
    assert.equal(mappingOf('default').FunctionName.Ref, id(stack.fetch.function.function));
    // Lambda's floor is 2: the single message group of "acme" is what keeps it to one run in flight.
    assert.deepEqual(mappingOf('acme').ScalingConfig, { MaximumConcurrency: 2 });
    for (const c of ['default', 'acme']) assert.equal(mappingOf(c).BatchSize, 1);
  });

  it("sends each report's runs to its connection's queue: a group per report on default, one group for every acme report", () => {
    // The reports' schedules (the freshness check's targets its function, not a queue).
    const schedules = Object.values(resourcesOf(template, 'AWS::Scheduler::Schedule')).map((s) => s.Properties.Target).filter((t) => t.SqsParameters);
    assert.equal(schedules.length, 3);
    const targetOf = (reportId: string) => schedules.find((t) => JSON.parse(t.Input).reportId === reportId)!;
    const expected = [
      ['transactions', 'default', 'transactions'],
      ['acme_transactions', 'acme', 'acme'],
      ['acme_payouts', 'acme', 'acme'],
    ] as const;
    for (const [reportId, connection, group] of expected) {
      const t = targetOf(reportId);
      assert.deepEqual(t.Arn, { 'Fn::GetAtt': [id(stack.fetch.queues.queueOf(connection)), 'Arn'] }, reportId);
      assert.deepEqual(t.SqsParameters, { MessageGroupId: group }, reportId);
      assert.deepEqual(JSON.parse(t.Input), { reportId, connection, scheduledTime: '<aws.scheduler.scheduled-time>' });
    }
  });

  it("lets the Scheduler's role send only to the connections' queues and its dead-letter queue", () => {
    // The reports' schedules' role (the freshness check's schedule has its own).
    const reportSchedule = Object.values(resourcesOf(template, 'AWS::Scheduler::Schedule')).find((s) => s.Properties.Target.SqsParameters)!;
    const roleId = reportSchedule.Properties.Target.RoleArn['Fn::GetAtt'][0];
    const sends = statementsOfRole(roleId).filter((s) => [s.Action].flat().some((a: string) => a.startsWith('sqs:')));
    const queues = [stack.fetch.queues.queueOf('default'), stack.fetch.queues.queueOf('acme'), stack.fetch.scheduleDeadLetterQueue].map((q) => id(q)).sort();
    assert.deepEqual(sends.flatMap((s) => [s.Resource].flat().map((r: Cfn) => r['Fn::GetAtt'][0])).sort(), queues);
    for (const s of sends) assert.equal(s.Action, 'sqs:SendMessage');
    assert.ok(!JSON.stringify(statementsOfRole(roleId)).includes('lambda:InvokeFunction'), 'the Scheduler no longer invokes the function');
  });

  it('outputs each secret, the default under the names it always had, and the runs\' dead-letter queue', () => {
    assert.deepEqual(json.Outputs.GatewaySecretArn!.Value, { Ref: defaultSecretId });
    assert.equal(json.Outputs.GatewaySecretName!.Value, 'paynet-reports/test/gateway');
    assert.deepEqual(json.Outputs.GatewaySecretAcmeArn!.Value, acmeSecretArn);
    assert.equal(json.Outputs.GatewaySecretAcmeName!.Value, 'security/acme-gateway');
    assert.deepEqual(json.Outputs.DeadLettersScheduledRunsQueueUrl!.Value, { Ref: id(stack.fetch.queues.deadLetterQueue) });
  });

  it('shows on the dashboard the runs waiting in each connection\'s queue', () => {
    const body = JSON.stringify(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
    assert.match(body, /Scheduled runs waiting per connection/);
    for (const c of ['default', 'acme']) assert.ok(body.includes(`"${c} oldest (s)"`) || body.includes(`\\"${c} oldest (s)\\"`), c);
  });

  it("does not call the user's own *.example host the shipped placeholder", () => {
    // Before: acme's reports.acme.example (the user's own, as a test's or a demo's) was warned of as "the shipped placeholder".
    assert.deepEqual(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('placeholder')), []);
  });

  it('passes the AWS Solutions and PCI DSS checks with nothing new acknowledged', () => {
    for (const pack of [new AwsSolutionsChecks(), new PCIDSS321Checks()]) {
      const findings = pack.validateScope(app).violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
      assert.deepEqual(findings, [], pack.readPackName);
    }
  });
});

describe('a connection no report names', () => {
  it('is warned of at synth, naming where it is defined, and still deployed', () => {
    // Before: the default connection's secret, queue and alarms were synthesized without a word.
    const idle = synthPipeline(config, undefined, [definitionOver('acme_only', 'acme')]);
    const warnings = Annotations.fromStack(idle.stack).findWarning('*', Match.stringLikeRegexp('no report names'));
    assert.deepEqual(
      warnings.map((w) => String(w.entry.data)),
      [
        'no report names the connection "default" (the top-level gateway and secret of config/environments/test.json), yet it gets a secret, ' +
          'a scheduled-runs queue and alarms of its own: name it in a report\'s "connection", or remove it from the file. ' +
          '[ack: paynet-reports:unusedConnection:default]',
      ],
    );
    idle.template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    assert.ok(idle.stack.fetch.queues.queueOf('default'));
    // Every connection used: no such warning.
    assert.deepEqual(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('no report names')), []);
  });
});

describe('an environment of named connections only, in a VPC', () => {
  const named = testConfig({
    gateway: undefined,
    secret: undefined,
    network: { staticEgressIp: true },
    connections: {
      'north-eu': { gateway: { endpointUrl: 'https://north.test:8443/rpt' }, secret: { name: 'paynet-reports/test/north' }, maxConcurrentRequests: 4 },
      south: { gateway: { endpointUrl: 'https://south.test/rpt' }, secret: { name: 'paynet-reports/test/south' } },
    },
  });
  const s = synthPipeline(named, undefined, [definitionOver('north', 'north-eu'), definitionOver('south', 'south')]);
  const outputs = s.template.toJSON().Outputs as Record<string, unknown>;

  it('names every secret output after its connection, and has no default one', () => {
    for (const key of ['GatewaySecretNorthEuArn', 'GatewaySecretNorthEuName', 'GatewaySecretSouthArn', 'GatewaySecretSouthName']) assert.ok(outputs[key], key);
    assert.equal(outputs.GatewaySecretArn, undefined);
    // Both created: two secrets under the one credentials key.
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 2);
    s.template.allResourcesProperties('AWS::SecretsManager::Secret', { KmsKeyId: { 'Fn::GetAtt': [CREDENTIALS_IDS.key, 'Arn'] } });
  });

  it("bounds north-eu at 4 with a group per report, and opens the fetch function's egress to every gateway's port", () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 4 } });
    const rules = Object.values(resourcesOf(s.template, 'AWS::EC2::SecurityGroup')).flatMap((g) => g.Properties.SecurityGroupEgress ?? []);
    assert.deepEqual(rules.map((r: Cfn) => r.FromPort).sort(), [443, 8443]);
  });
});

describe('one report over two connections: each feed is a contributor of its own connection\'s alarms', () => {
  const raw = JSON.parse(readFileSync(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8')) as Record<string, unknown>;
  const both = parseReportDefinition({ ...raw, id: 'shared_transactions', connections: ['default', 'acme'] }, 'test: one report over two connections');
  const synthesized = synthPipeline(config, undefined, [both]);
  const alarms = Object.values(resourcesOf(synthesized.template, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties as Cfn);
  const queryOf = (a: Cfn): string | undefined => (a.Metrics ?? []).map((m: Cfn) => m.Expression).find((e: unknown) => typeof e === 'string' && e.startsWith('SELECT'));

  for (const connection of ['default', 'acme']) {
    it(`${connection}: four alarms named after it, each filtering its series and naming the report as the contributor`, () => {
      const own = alarms.filter((a) => String(a.AlarmName).endsWith(`-${connection}`) && queryOf(a));
      assert.deepEqual(own.map((a) => String(a.AlarmName).replace(/^paynet-reports-[a-z]+-/, '')).sort(), [
        `auth-refused-${connection}`,
        `data-quality-${connection}`,
        `no-fresh-data-${connection}`,
        `rejected-rows-${connection}`,
      ]);
      for (const a of own) {
        const q = queryOf(a)!;
        // The connection narrows the series to this feed's; the report, grouped by, is the contributor the
        // notification and `reports status` name: together, the feed.
        assert.match(q, new RegExp(`WHERE .*"connection" = '${connection}'`), a.AlarmName);
        assert.match(q, / GROUP BY report ORDER BY /, a.AlarmName);
        assert.doesNotMatch(q, /report = /, `${a.AlarmName}: no report is left out`);
      }
    });
  }
});
