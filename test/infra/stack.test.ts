import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import type * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { AwsSolutionsChecks, PCIDSS321Checks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { addCompliancePacks } from '../../lib/policies/compliance.js';
import { SHIPPED_PLACEHOLDER_HOSTS } from '../../lib/environment/placeholder-hosts.js';
import { MAX_RECEIVE_COUNT, MB_PER_VCPU, parquetEncoderFor, VISIBILITY_FACTOR } from '../../lib/constructs/parse.js';
import { REQUIRED_OUTPUTS } from '../../local/cli/status.js';
import { deployReadinessSuites } from './deploy-readiness.js';
import { CREDENTIALS_IDS, logicalIdOf, resourcesOf, shippedEnvironment, synthPipeline, type Cfn, type SynthesizedPipeline } from './helpers.js';
import { acknowledgementsOf, recordAcknowledgementUse } from './nag.js';

/**
 * The whole stack, synthesized once per shipped environment with the fixture handler and the same
 * compliance packs as bin/app.ts (a finding would fail the synthesis itself).
 */
const integration = shippedEnvironment('integration');
const production = shippedEnvironment('production');
const reports = loadCatalog().reports;
const prod: SynthesizedPipeline = synthPipeline(production, addCompliancePacks);
const integ: SynthesizedPipeline = synthPipeline(integration, addCompliancePacks);
const { stack, template } = prod;
const id = (c: { node: { defaultChild?: unknown } }) => logicalIdOf(stack, c);
const lambdaOf = (c: { function: { function: object } }) => resourcesOf(template, 'AWS::Lambda::Function')[id(c.function.function as never)]!;
const policies = () => Object.values(resourcesOf(template, 'AWS::IAM::Policy')).map((p) => p.Properties as Cfn);
const policyOfRole = (role: object) => policies().find((p) => JSON.stringify(p.Roles) === JSON.stringify([{ Ref: id(role as never) }]));

describe('ReportsPipelineStack', () => {
  it('warns of the shipped placeholder host, naming the field, in each shipped environment', () => {
    for (const [name, synthesized] of [['production', prod], ['integration', integ]] as const) {
      const warnings = Annotations.fromStack(synthesized.stack).findWarning('*', Match.stringLikeRegexp('shipped placeholder'));
      assert.equal(warnings.length, 1, name);
      assert.match(String(warnings[0]!.entry.data), new RegExp(`gateway\\.endpointUrl of "${name}" \\(connection "default"\\) is the shipped placeholder`));
    }
    // Every shipped file's host is one the warning knows (lib/environment/placeholder-hosts.ts).
    for (const env of [production, integration]) {
      for (const c of env.connections) assert.ok(SHIPPED_PLACEHOLDER_HOSTS.includes(new URL(c.gateway.endpointUrl).hostname), c.gateway.endpointUrl);
    }
  });

  it('is named after its environment and environment-agnostic unless configured', () => {
    assert.equal(stack.stackName, 'PaynetReports-production');
    assert.equal(stack.terminationProtection, true);
    assert.ok(stack.resolve(stack.account).Ref === 'AWS::AccountId', 'no account baked in');
  });

  describe('fetch', () => {
    const fetch = prod.stack.fetch;
    const fn = lambdaOf(fetch).Properties as Cfn;

    it('runs on ARM64, the newest Node.js, with X-Ray, JSON logs and the configured size', () => {
      assert.deepEqual(fn.Architectures, ['arm64']);
      assert.equal(fn.Runtime, 'nodejs24.x');
      assert.deepEqual(fn.TracingConfig, { Mode: 'Active' });
      assert.equal(fn.Timeout, production.fetch.timeoutSeconds);
      assert.equal(fn.MemorySize, production.fetch.memoryMb);
      assert.equal(fn.ReservedConcurrentExecutions, undefined, 'no reservation: a new account (quota 10) refuses any');
      assert.equal(fn.LoggingConfig.LogFormat, 'JSON');
      assert.deepEqual(fn.LoggingConfig.LogGroup, { Ref: id(fetch.function.logGroup) });
    });

    it('gets the endpoint, secret name, raw bucket and Powertools settings', () => {
      const env = fn.Environment.Variables;
      const [only] = production.connections;
      assert.deepEqual(JSON.parse(env.CONNECTIONS), { default: { endpointUrl: only!.gateway.endpointUrl, secretName: only!.secret.name } });
      assert.deepEqual(env.RAW_BUCKET, { Ref: id(prod.stack.lake.rawBucket) });
      assert.equal(env.POWERTOOLS_SERVICE_NAME, 'paynet-reports');
      assert.equal(env.POWERTOOLS_METRICS_NAMESPACE, 'PaynetReports');
      assert.equal(env.PIPELINE_ENVIRONMENT, 'production');
      assert.equal(env.NODE_OPTIONS, '--enable-source-maps');
    });

    it('is bundled as minified ESM with a require shim and a source map', () => {
      const asset = fetch.function.function.node.findChild('Code') as s3assets.Asset;
      const dir = join(prod.app.outdir, asset.assetPath);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      assert.match(code, /createRequire/);
      assert.ok(existsSync(join(dir, 'index.mjs.map')), 'source map beside the bundle');
      assert.equal(fn.Handler, 'index.handler');
    });

    it('keeps every log group encrypted for the configured retention', () => {
      template.allResourcesProperties('AWS::Logs::LogGroup', {
        RetentionInDays: production.logRetentionDays,
        KmsKeyId: { 'Fn::GetAtt': [id(prod.stack.lake.key), 'Arn'] },
      });
      template.resourceCountIs('AWS::Logs::LogGroup', 3); // fetch, parse, the freshness check
    });

    it("has one schedule per report, in its time zone, onto its connection's queue, with retries and a dead-letter queue", () => {
      // The reports' schedules: the freshness check's, in the same group, targets its function.
      const schedules = Object.values(resourcesOf(template, 'AWS::Scheduler::Schedule')).map((s) => s.Properties as Cfn).filter((s) => s.Target.SqsParameters);
      assert.equal(schedules.length, reports.length);
      for (const r of reports) {
        const s = schedules.find((x) => JSON.parse(x.Target.Input).reportId === r.id);
        assert.ok(s, r.id);
        assert.equal(s.ScheduleExpression, r.schedule.cron);
        assert.equal(s.ScheduleExpressionTimezone, r.schedule.timeZone);
        assert.deepEqual(JSON.parse(s.Target.Input), { reportId: r.id, connection: r.connections[0], scheduledTime: '<aws.scheduler.scheduled-time>' });
        // Onto the queue of the report's connection (a group per report at the default bound of 2), not to the function.
        assert.deepEqual(s.Target.Arn, { 'Fn::GetAtt': [id(fetch.queues.queueOf(r.connections[0]!)), 'Arn'] });
        assert.deepEqual(s.Target.SqsParameters, { MessageGroupId: r.id });
        assert.deepEqual(s.Target.RetryPolicy, { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 3 });
        assert.deepEqual(s.Target.DeadLetterConfig, { Arn: { 'Fn::GetAtt': [id(fetch.scheduleDeadLetterQueue), 'Arn'] } });
        assert.deepEqual(s.FlexibleTimeWindow, { Mode: 'OFF' });
        assert.equal(s.State, production.schedulesEnabled ? 'ENABLED' : 'DISABLED');
      }
    });

    it("lets the freshness check list and read the curated bucket's manifests, and nothing else of it, at the schedule's own time", () => {
      const fresh = prod.stack.freshness;
      const curated = id(prod.stack.lake.curatedBucket);
      const statements = policies()
        .filter((p) => JSON.stringify(p.Roles) === JSON.stringify([{ Ref: id(fresh.function.role) }]))
        .flatMap((p) => p.PolicyDocument.Statement as Cfn[]);
      const s3 = statements.filter((s) => [s.Action].flat().some((a: string) => a.startsWith('s3:')));
      assert.deepEqual(
        s3.map((s) => [[s.Action].flat().join(','), JSON.stringify(s.Resource), JSON.stringify(s.Condition ?? null)]),
        [
          ['s3:GetObject', JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [curated, 'Arn'] }, '/manifests/*']] }), 'null'],
          ['s3:ListBucket', JSON.stringify({ 'Fn::GetAtt': [curated, 'Arn'] }), JSON.stringify({ StringLike: { 's3:prefix': ['manifests/*'] } })],
        ],
      );
      const fn = resourcesOf(template, 'AWS::Lambda::Function')[id(fresh.function.function)]!.Properties as Cfn;
      assert.deepEqual(fn.Environment.Variables.CURATED_BUCKET, { Ref: curated });
      const schedule = resourcesOf(template, 'AWS::Scheduler::Schedule')[id(fresh.schedule)]!.Properties as Cfn;
      assert.deepEqual(JSON.parse(schedule.Target.Input), { scheduledTime: '<aws.scheduler.scheduled-time>' });
    });

    it("alarms on the freshness check's dead letters and on its absence, to the alarm topic, and lists its dead-letter queue for `reports status`", () => {
      const fresh = prod.stack.freshness;
      const alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties as Cfn);
      const byName = (name: string) => alarms.find((a) => a.AlarmName === `paynet-reports-production-${name}`);
      const topic = [{ Ref: id(prod.stack.alarms.topic) }];
      const dead = byName('dead-letters-freshness-check');
      assert.deepEqual([dead?.MetricName, dead?.Statistic, dead?.Threshold], ['ApproximateNumberOfMessagesVisible', 'Maximum', 1]);
      assert.deepEqual(dead?.Dimensions, [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id(fresh.deadLetterQueue), 'QueueName'] } }]);
      const absent = byName('freshness-not-running');
      assert.deepEqual([absent?.MetricName, absent?.Dimensions], ['Invocations', [{ Name: 'FunctionName', Value: { Ref: id(fresh.function.function) } }]]);
      for (const a of [dead, absent]) assert.deepEqual([a?.AlarmActions, a?.OKActions], [topic, topic]);
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      assert.deepEqual(outputs.DeadLettersFreshnessCheckQueueUrl?.Value, { Ref: id(fresh.deadLetterQueue) });
    });

    it('sends failed invocations, with their error, to a dead-letter queue instead of retrying blindly', () => {
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: id(fetch.function.function) },
        MaximumRetryAttempts: 0,
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [id(fetch.failedRunsQueue), 'Arn'] } } },
      });
    });
  });

  describe('parse', () => {
    const parse = prod.stack.parse;
    const fn = lambdaOf(parse).Properties as Cfn;
    const queues = resourcesOf(template, 'AWS::SQS::Queue');

    it('consumes a KMS-encrypted queue whose visibility is at least six function time-outs', () => {
      const q = queues[id(parse.queue)]!.Properties as Cfn;
      assert.ok(q.VisibilityTimeout >= VISIBILITY_FACTOR * fn.Timeout, `${q.VisibilityTimeout} >= 6 x ${fn.Timeout}`);
      assert.deepEqual(q.KmsMasterKeyId, { 'Fn::GetAtt': [id(parse.queueKey), 'Arn'] });
      assert.deepEqual(q.RedrivePolicy, { deadLetterTargetArn: { 'Fn::GetAtt': [id(parse.deadLetterQueue), 'Arn'] }, maxReceiveCount: MAX_RECEIVE_COUNT });
    });

    it('reports batch item failures, one file at a time, at most two at once', () => {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [id(parse.queue), 'Arn'] },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BatchSize: 1,
        ScalingConfig: { MaximumConcurrency: 2 },
      });
      assert.deepEqual(fn.Environment.Variables.CURATED_BUCKET, { Ref: id(prod.stack.lake.curatedBucket) });
      assert.equal(fn.Timeout, production.parse.timeoutSeconds);
    });

    it('encodes Parquet inline at the default memory size, where the Parquet worker would only cost time', () => {
      assert.equal(fn.MemorySize, 2048);
      assert.equal(fn.Environment.Variables.PARQUET_ENCODER, 'inline');
      assert.equal(parquetEncoderFor(2 * MB_PER_VCPU - 1), 'inline');
      assert.equal(parquetEncoderFor(2 * MB_PER_VCPU), 'worker');
    });

    it('is fed by ObjectCreated events under raw/ of the raw bucket', () => {
      template.hasResourceProperties('Custom::S3BucketNotifications', {
        BucketName: { Ref: id(prod.stack.lake.rawBucket) },
        NotificationConfiguration: {
          QueueConfigurations: [
            {
              Events: ['s3:ObjectCreated:*'],
              Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'raw/' }] } },
              QueueArn: { 'Fn::GetAtt': [id(parse.queue), 'Arn'] },
            },
          ],
        },
      });
    });
  });

  it('outputs what deploying, filling the secret, backfilling and querying need', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: Cfn }>;
    assert.deepEqual(Object.keys(outputs).sort(), [
      'AlarmTopicArn',
      'AnalystPolicyArn',
      'AnalystPolicyName',
      'AthenaResultsBucketName',
      'AthenaWorkGroupName',
      'CuratedBucketName',
      'DashboardName',
      'DeadLettersFetchFailuresQueueUrl',
      'DeadLettersFreshnessCheckQueueUrl',
      'DeadLettersParseQueueUrl',
      'DeadLettersScheduleQueueUrl',
      'DeadLettersScheduledRunsQueueUrl',
      'FetchFunctionName',
      'GatewaySecretArn',
      'GatewaySecretName',
      'GlueDatabaseName',
      'ParseFunctionName',
      'RawBucketName',
      'ScheduleGroupName',
    ]);
    assert.deepEqual(outputs.FetchFunctionName!.Value, { Ref: id(prod.stack.fetch.function.function) });
    assert.deepEqual(outputs.RawBucketName!.Value, { Ref: id(prod.stack.lake.rawBucket) });
    assert.equal(outputs.GatewaySecretName!.Value, production.connections[0]!.secret.name);
    // `reports status` reads these by name: a renamed output must fail here, not on a user's deploy.
    for (const key of REQUIRED_OUTPUTS) assert.ok(outputs[key], `reports status reads the output ${key}`);
  });

  describe('the opt-in deploy options (issue 19), off in the shipped environments', () => {
    for (const [name, { template: t, stack: s }] of [
      ['production', prod],
      ['integration', integ],
    ] as const) {
      it(`${name}: no VPC, no chat, no boundary, no tags but the stack's, and the fetch function outside any VPC`, () => {
        const types = Object.values(t.toJSON().Resources as Record<string, { Type: string }>).map((r) => r.Type);
        assert.deepEqual(types.filter((type) => /^AWS::(EC2|Chatbot)::/.test(type)), [], 'nothing of the network or chat options');
        for (const [roleId, role] of Object.entries(resourcesOf(t, 'AWS::IAM::Role'))) assert.equal((role.Properties as Cfn).PermissionsBoundary, undefined, roleId);
        assert.equal((t.toJSON().Outputs as Record<string, unknown>).EgressIps, undefined);
        const fetchFn = resourcesOf(t, 'AWS::Lambda::Function')[logicalIdOf(s, s.fetch.function.function)]!.Properties as Cfn;
        assert.equal(fetchFn.VpcConfig, undefined);
        assert.ok(!JSON.stringify(t.toJSON()).includes('ec2:CreateNetworkInterface'), 'no role may manage network interfaces');
        for (const [resourceId, r] of Object.entries(t.toJSON().Resources as Record<string, { Properties?: Cfn }>)) {
          const tags = r.Properties?.Tags;
          if (!Array.isArray(tags)) continue;
          // CDK's own markers (aws-cdk:auto-delete-objects on the buckets of a destroyed environment) aside.
          const extra = tags.map((tag: { Key: string }) => tag.Key).filter((k: string) => !['project', 'environment'].includes(k) && !k.startsWith('aws-cdk:'));
          assert.deepEqual(extra, [], resourceId);
        }
      });
    }
  });

  describe('queues', () => {
    it('are all KMS-encrypted, TLS-only, and keep messages 14 days', () => {
      const queues = resourcesOf(template, 'AWS::SQS::Queue');
      // Parse: notifications and their dead letters; fetch: the connection's queue, its dead letters, the scheduler's and
      // Lambda's; the freshness check's schedule: its dead letters.
      assert.equal(Object.keys(queues).length, 7);
      for (const [logicalId, q] of Object.entries(queues)) {
        assert.ok((q.Properties as Cfn).KmsMasterKeyId, logicalId);
        assert.equal((q.Properties as Cfn).MessageRetentionPeriod, 14 * 24 * 3600, logicalId);
        template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: logicalId }],
          PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
        });
      }
    });
  });

  it("keeps the gateway secret's and its key's logical ids from before connections (a new id would replace the named secret)", () => {
    assert.deepEqual(Object.keys(resourcesOf(template, 'AWS::SecretsManager::Secret')), [CREDENTIALS_IDS.secret]);
    assert.equal(id(prod.stack.credentials.key!), CREDENTIALS_IDS.key);
  });

  describe('least privilege', () => {
    it('lets only the fetch role read the gateway secret', () => {
      const readers = policies().filter((p) => JSON.stringify(p.PolicyDocument).includes('secretsmanager:GetSecretValue'));
      assert.deepEqual(readers.map((p) => p.Roles), [[{ Ref: id(prod.stack.fetch.function.role) }]]);
      const keyPolicy = JSON.stringify((resourcesOf(template, 'AWS::KMS::Key')[id(prod.stack.credentials.key as never)]!.Properties as Cfn).KeyPolicy);
      assert.ok(!keyPolicy.includes(id(prod.stack.parse.function.role)), 'the parse role is not in the credentials key policy');
    });

    it('grants exact actions: no service wildcards, "*" resources only for X-Ray', () => {
      for (const p of policies()) {
        for (const s of p.PolicyDocument.Statement) {
          const actions: string[] = [s.Action].flat();
          for (const a of actions) assert.ok(!/:\*$|^\*$/.test(a), `${p.PolicyName}: ${a}`);
          if (s.Resource === '*') assert.ok(actions.every((a) => a.startsWith('xray:')), `${p.PolicyName}: ${actions.join(',')} on *`);
        }
      }
    });

    it('lets fetch only write raw/ and parse only read raw/ and write curated', () => {
      const fetchDoc = JSON.stringify(policyOfRole(prod.stack.fetch.function.role).PolicyDocument);
      const parseDoc = JSON.stringify(policyOfRole(prod.stack.parse.function.role).PolicyDocument);
      assert.ok(!fetchDoc.includes('s3:GetObject') && !fetchDoc.includes(id(prod.stack.lake.curatedBucket)), 'fetch reads nothing, never curated');
      assert.ok(!parseDoc.includes('secretsmanager'), 'parse never sees the credentials');
      const parseStatements = policyOfRole(prod.stack.parse.function.role).PolicyDocument.Statement as Cfn[];
      const puts = parseStatements.filter((s) => [s.Action].flat().includes('s3:PutObject'));
      assert.ok(!JSON.stringify(puts).includes(id(prod.stack.lake.rawBucket)), 'parse never writes raw');
      const fetchStatements = policyOfRole(prod.stack.fetch.function.role).PolicyDocument.Statement as Cfn[];
      const tagging = fetchStatements.filter((s) => [s.Action].flat().includes('s3:PutObjectVersionTagging'));
      assert.equal(tagging.length, 1, 'fetch tags the raw files it writes with their SHA-256');
      assert.ok(JSON.stringify(tagging[0]!.Resource).includes('/raw/*'), 'and only under raw/');
      assert.ok(!parseDoc.includes('Tagging'), 'parse tags nothing');
    });
  });
});

describe('cdk-nag: AWS Solutions and PCI DSS 3.2.1', () => {
  const used = recordAcknowledgementUse();
  const variants: Array<[string, App]> = [
    ['production (retain)', prod.app],
    ['integration (destroy)', integ.app],
  ];

  for (const [name, app] of variants) {
    it(`finds nothing unacknowledged in ${name}`, () => {
      for (const pack of [new AwsSolutionsChecks(), new PCIDSS321Checks()]) {
        const report = pack.validateScope(app);
        const findings = report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
        assert.deepEqual(findings, [], `${pack.readPackName}: ${findings.join('\n')}`);
      }
    });
  }

  it('acknowledges narrowly, each with a reason, and only what is found', () => {
    const all: Array<{ path: string; id: string; reason: unknown; construct: IConstruct }> = [];
    for (const [, app] of variants) {
      for (const c of app.node.findAll()) for (const a of acknowledgementsOf(c)) all.push({ path: c.node.path, ...a, construct: c });
    }
    assert.ok(all.length > 0);
    for (const a of all) {
      assert.ok(!(a.construct instanceof App) && !Stack.isStack(a.construct), `${a.id} is acknowledged app- or stack-wide at "${a.path}"`);
      assert.ok(!/^(AwsSolutions|PCI\.DSS\.321)-IAM5$/.test(a.id), `${a.path}: IAM5 acknowledged without naming the finding`);
      assert.equal(typeof a.reason, 'string');
      assert.ok((a.reason as string).length >= 40, `${a.path} ${a.id}: the reason says why`);
      assert.ok(used.has(`${a.path} ${a.id}`), `${a.path} ${a.id} suppresses nothing: remove it`);
    }
  });
});

// Issue 10: delivery paths and a first deploy into a fresh account, on the same two templates (deploy-readiness.ts).
deployReadinessSuites(production, prod);
deployReadinessSuites(integration, integ);
