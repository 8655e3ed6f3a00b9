import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { projectPath } from '../../lib/constructs/pipeline-function.js';
import { ControlTowerChecks, runControlTower, type ControlTowerResult } from '../../lib/control-tower/checks.js';
import { CONTROL_TOWER_EXEMPTIONS } from '../../lib/control-tower/exemptions.js';
import { DEAD_LETTER_QUEUE } from '../../lib/policies/dead-letters.js';
import { controlTowerRules, resourceTypesOf, rulesNotApplying } from '../../lib/control-tower/rule-selection.js';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { addCompliancePacks } from '../../lib/policies/compliance.js';
import { EVERY_CHANNEL_KIND } from '../helpers/alarm-channels.js';
import { logicalIdOf, shippedEnvironment, synthPipeline, testConfig, type Cfn, type SynthesizedPipeline } from './helpers.js';

/**
 * Issue 33: AWS Control Tower's proactive controls (cfn-guard rules, run at synth by lib/control-tower/checks.ts) over
 * the environments. Two syntheses with every pack: integration (destroy, 30-day logs, no network) and a governed
 * environment with every option a governed account uses (static egress IP, boundary, Object Lock, every alarm channel kind). That they
 * synthesize at all is the first check: a finding outside lib/control-tower/exemptions.ts fails the synthesis.
 * stack.test.ts and governed-deploy.test.ts synthesize production and the other option sets with the same packs.
 */

const BOUNDARY = 'arn:aws:iam::123456789012:policy/org/paynet-boundary';
const integration = synthPipeline(shippedEnvironment('integration'), addCompliancePacks);
const governed = synthPipeline(
  testConfig({
    name: 'governed',
    network: { staticEgressIp: true },
    permissionsBoundaryArn: BOUNDARY,
    raw: { objectLock: { mode: 'COMPLIANCE', days: 400 } },
    alarmChannels: EVERY_CHANNEL_KIND,
  }),
  addCompliancePacks,
);

/** The stack's template and its nested ones as the synthesis wrote them, and the controls run over them. */
function checked(p: SynthesizedPipeline, exemptions = CONTROL_TOWER_EXEMPTIONS): { files: string[]; result: ControlTowerResult } {
  const assembly = p.app.synth();
  const parent = assembly.getStackByName(p.stack.stackName).templateFullPath;
  const files = [parent, ...readdirSync(assembly.directory).filter((f) => f.endsWith('.nested.template.json')).map((f) => join(assembly.directory, f))];
  return { files, result: runControlTower(p.app, [parent], exemptions) };
}

const runs = { integration: checked(integration), governed: checked(governed) };
const exemptedKeys = (r: ControlTowerResult) => r.exempted.map(({ finding }) => `${finding.control} ${finding.resource}`).sort();

describe('Control Tower proactive controls at synth', () => {
  it('read every template a deploy creates: the stack and each report shard', () => {
    for (const { files, result } of Object.values(runs)) {
      assert.ok(files.length > 1, 'the fixture catalog fills at least one shard');
      assert.deepEqual([...result.templates].sort(), [...files].sort());
    }
  });

  it('find nothing outside the exemption list', () => {
    for (const [name, { result }] of Object.entries(runs)) assert.deepEqual(result.findings, [], name);
  });

  it('name the control and the resource of each finding once its exemption is gone', () => {
    const { result } = checked(integration, []);
    assert.deepEqual(result.findings.map((f) => `${f.control} ${f.resource}`).sort(), exemptedKeys(runs.integration.result));
    const logs = result.findings.find((f) => f.resource === 'Lake/AccessLogs/Resource' && f.control === 'CT.S3.PR.2');
    assert.equal(logs?.logicalId, logicalIdOf(integration.stack, integration.stack.lake.accessLogsBucket));
  });

  it('pass CT.SQS.PR.1 on every dead-letter queue by its RedriveAllowPolicy, with no exemption', () => {
    for (const p of [integration, governed]) {
      const { result } = checked(p, []);
      assert.deepEqual(result.findings.filter((f) => f.control === 'CT.SQS.PR.1'), [], p.stack.stackName);
      const s = p.stack;
      const deadLetterQueues = [s.fetch.scheduleDeadLetterQueue, s.fetch.failedRunsQueue, s.fetch.queues.deadLetterQueue, s.parse.deadLetterQueue, s.freshness.deadLetterQueue];
      const queues = p.template.toJSON().Resources as Record<string, { Type: string; Properties: Cfn }>;
      for (const q of deadLetterQueues) {
        assert.deepEqual(queues[logicalIdOf(s, q)]?.Properties.RedriveAllowPolicy, { redrivePermission: 'allowAll' }, q.node.path);
      }
      // Every other queue has a dead-letter queue of its own.
      const others = Object.entries(queues).filter(([id, r]) => r.Type === 'AWS::SQS::Queue' && !deadLetterQueues.some((q) => logicalIdOf(s, q) === id));
      assert.ok(others.length >= 2);
      for (const [id, r] of others) assert.ok(r.Properties.RedrivePolicy?.deadLetterTargetArn, id);
    }
  });

  it('fail CT.SQS.PR.1 on a dead-letter queue without a RedriveAllowPolicy or with denyAll, and pass it with allowAll', () => {
    const findingsFor = (redriveAllowPolicy?: sqs.RedriveAllowPolicy) => {
      const app = new App();
      const stack = new Stack(app, 'Bare');
      const dlq = new sqs.Queue(stack, 'DeadLetters', { enforceSSL: true, redriveAllowPolicy });
      new sqs.Queue(stack, 'Work', { enforceSSL: true, deadLetterQueue: { queue: dlq, maxReceiveCount: 1 } });
      const assembly = app.synth();
      const { findings } = runControlTower(app, [assembly.getStackByName('Bare').templateFullPath], []);
      return findings.filter((f) => f.control === 'CT.SQS.PR.1').map((f) => `${f.control} ${f.resource}`);
    };
    assert.deepEqual(findingsFor(), ['CT.SQS.PR.1 DeadLetters/Resource']);
    assert.deepEqual(findingsFor({ redrivePermission: sqs.RedrivePermission.DENY_ALL }), ['CT.SQS.PR.1 DeadLetters/Resource']);
    assert.deepEqual(findingsFor(DEAD_LETTER_QUEUE.redriveAllowPolicy), []);
  });

  it("find with each template's own rules exactly what every rule finds (the selection only spares time)", () => {
    const { files } = runs.governed;
    // Every one of Control Tower's rules over every template, as the validator runs them unselected.
    const all = new CfnGuardValidator({ maxBuffer: 256 * 1024 * 1024 }).validate({ templatePaths: files } as never).violations;
    const controlOf = (v: { ruleName: string; description: string }) => /^\[(CT\.[A-Z0-9]+\.PR\.\d+)\]/.exec(v.description)?.[1] ?? v.ruleName;
    const everyRule = all.flatMap((v) => v.violatingResources.map((r) => `${controlOf(v)} ${r.resourceLogicalId}`)).sort();
    const { result } = checked(governed, []);
    assert.ok(everyRule.length >= 8, `${everyRule.length} findings`);
    assert.deepEqual(result.findings.map((f) => `${f.control} ${f.logicalId}`).sort(), everyRule);
    // A shard holds schedules, Glue tables and named queries: no rule names those types, so none reads it.
    const shard = files.find((f) => f.endsWith('.nested.template.json'))!;
    assert.equal(rulesNotApplying(resourceTypesOf(shard)).length, controlTowerRules().length);
    assert.ok(rulesNotApplying(new Set(['AWS::SQS::Queue'])).length < controlTowerRules().length, 'a queue has rules');
  });

  it('fail the synthesis with the control and the construct of a finding', () => {
    const app = new App();
    const stack = new Stack(app, 'Bare');
    new sqs.Queue(stack, 'Orphan', { enforceSSL: true });
    Validations.of(app).addPlugins(new ControlTowerChecks([]));
    let report = '';
    assert.throws(
      () => app.synth(),
      (e: Error) => {
        // The message points to the report CDK writes (and prints): the violations are read from there.
        report = readFileSync(/found in: (\S+\.json)/.exec(e.message)?.[1] ?? '', 'utf8');
        return true;
      },
    );
    const json = JSON.parse(report) as Cfn;
    const violations = JSON.stringify(json);
    assert.match(violations, /CT\.SQS\.PR\.1/);
    assert.match(violations, /Bare\/Orphan\/Resource/);
  });

  it('use every exemption in some synthesized environment (none is left over)', () => {
    const used = new Set([...runs.integration.result.exempted, ...runs.governed.result.exempted].map(({ exemption }) => exemption));
    // The default-security-group cleaner exists only with network, the fetch exemption only without: both runs together cover all.
    for (const e of CONTROL_TOWER_EXEMPTIONS) assert.ok(used.has(e), `${e.control} ${e.resources} is used`);
  });

  it('are exempted nowhere else: no construct acknowledges a Control Tower finding (CDK would let it)', () => {
    for (const p of [integration, governed]) {
      const acknowledged = p.app.node
        .findAll()
        .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY).flatMap((m) => Object.keys(m.data as object)))
        .filter((id) => id.startsWith('control-tower::'));
      assert.deepEqual(acknowledged, []);
    }
  });

  it('give every exemption its reason, an AWS documentation page, and what the customer does', () => {
    for (const e of CONTROL_TOWER_EXEMPTIONS) {
      assert.match(e.control, /^CT\.[A-Z0-9]+\.PR\.\d+$/);
      assert.ok(e.reason.length > 40, e.control);
      assert.match(e.documentation, /^https:\/\/docs\.aws\.amazon\.com\//);
      assert.ok(e.customer.length > 10, e.control);
    }
  });

  it('are each listed in docs/deploy.md "Governed accounts" with the resources they cover', () => {
    const deploy = readFileSync(projectPath('docs/deploy.md'), 'utf8');
    const section = deploy.slice(deploy.indexOf('## Governed accounts'));
    const rows = section.split('\n').filter((l) => l.startsWith('| CT.'));
    for (const e of CONTROL_TOWER_EXEMPTIONS) {
      assert.ok(
        rows.some((r) => r.startsWith(`| ${e.control} |`) && r.includes(e.what)),
        `a row "| ${e.control} | ${e.what} | ..." in docs/deploy.md`,
      );
    }
    assert.equal(rows.length, CONTROL_TOWER_EXEMPTIONS.length, 'one row per exemption');
  });
});

describe('a governed environment: static egress IP, Object Lock, permissions boundary', () => {
  const resources = governed.template.toJSON().Resources as Record<string, { Type: string; Properties: Cfn }>;

  it('locks the raw bucket in the mode and for the days the environment says', () => {
    const raw = resources[logicalIdOf(governed.stack, governed.stack.lake.rawBucket)]!;
    assert.equal(raw.Properties.ObjectLockEnabled, true);
    assert.deepEqual(raw.Properties.ObjectLockConfiguration, { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 400 } } });
    assert.equal(raw.Properties.VersioningConfiguration.Status, 'Enabled');
    const curated = resources[logicalIdOf(governed.stack, governed.stack.lake.curatedBucket)]!;
    assert.equal(curated.Properties.ObjectLockConfiguration, undefined, 'only the raw bucket');
  });

  it('passes the controls Object Lock and network answer: no exemption for the raw bucket or the fetch function', () => {
    const keys = exemptedKeys(runs.governed.result);
    assert.ok(!keys.includes('CT.S3.PR.9 Lake/Raw/Resource'), keys.join('\n'));
    assert.ok(!keys.includes('CT.LAMBDA.PR.3 Fetch/Fetch/Function/Resource'), keys.join('\n'));
    assert.ok(exemptedKeys(runs.integration.result).includes('CT.S3.PR.9 Lake/Raw/Resource'), 'without objectLock it is exempted');
    const fetch = resources[logicalIdOf(governed.stack, governed.stack.fetch.function.function)]!;
    assert.equal(fetch.Properties.VpcConfig.SubnetIds.length, 2);
  });

  it('denies KMS grants to anything but AWS services on every key, in the shape CT.KMS.PR.3 accepts', () => {
    const keys = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::KMS::Key');
    assert.ok(keys.length >= 3);
    for (const [id, key] of keys) {
      const deny = (key.Properties.KeyPolicy.Statement as Cfn[]).find((s) => s.Effect === 'Deny' && s.Action === 'kms:CreateGrant');
      assert.deepEqual(
        { Principal: deny?.Principal, Resource: deny?.Resource, Condition: deny?.Condition },
        { Principal: { AWS: '*' }, Resource: '*', Condition: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } } },
        id,
      );
    }
  });

  it('sends the events of the buckets without a queue to EventBridge', () => {
    const lake = governed.stack.lake;
    for (const bucket of [lake.curatedBucket, lake.resultsBucket, lake.accessLogsBucket]) {
      const b = resources[logicalIdOf(governed.stack, bucket)]!;
      assert.deepEqual(b.Properties.NotificationConfiguration, { EventBridgeConfiguration: { EventBridgeEnabled: true } });
    }
  });
});
