import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EnvironmentConfig } from '../../lib/environment/environments.js';
import { PARSE_MAX_CONCURRENCY } from '../../lib/constructs/parse.js';
import { unpinnedServiceGrants, walkDeliveryPaths, type DeliveryPath, type PathKind } from './delivery-paths.js';
import { logicalIdOf, type Cfn, type SynthesizedPipeline } from './helpers.js';

/**
 * The shipped environments' templates read as a first `cdk deploy` into a fresh account, and its first failure,
 * would meet them (issue 10): every delivery path lets its service in, nothing reserves concurrency, a failed
 * create leaves no named resource behind, lifecycle rules and schedules are accepted, freshness alarms will
 * notify once schedules start, and the analysts' policy is an output.
 */

type Resource = { Type: string; Properties?: Cfn; DeletionPolicy?: string; UpdateReplacePolicy?: string; DependsOn?: string[] };
type Json = { Resources: Record<string, Resource>; Outputs: Record<string, { Value: Cfn }> };

const ALL_KINDS: PathKind[] = [
  'alarm-to-topic',
  's3-notification-to-queue',
  'scheduler-to-queue',
  'scheduler-to-function',
  'scheduler-to-dead-letter-queue',
  'queue-to-function',
  'lambda-failure-to-queue',
  'logs-to-log-group',
];

/** Every path works, and the walk found every kind of path: a walk that matches nothing proves nothing. */
function assertDeliverable(template: Json): DeliveryPath[] {
  const paths = walkDeliveryPaths(template);
  assert.ok(paths.length > 0, 'the walk matched no delivery path at all');
  const missing = ALL_KINDS.filter((k) => !paths.some((p) => p.kind === k));
  assert.deepEqual(missing, [], `no path of kind ${missing.join(', ')} found: the walk no longer recognises the template`);
  const broken = paths.filter((p) => p.problems.length).map((p) => `${p.kind} ${p.from} -> ${p.to}: ${p.problems.join('; ')}`);
  assert.deepEqual(broken, []);
  return paths;
}

const clone = (t: Json): Json => structuredClone(t);
const byType = (t: Json, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);

/** The suites for one synthesized environment; stack.test.ts calls it with the stacks it synthesizes anyway. */
export function deployReadinessSuites(config: EnvironmentConfig, { stack, template }: SynthesizedPipeline): void {
  const json = template.toJSON() as Json;

  describe(`${config.name}: delivery paths`, () => {
    it('lets every service that delivers into the stack in, through the resource policy and the key policy', () => {
      const paths = assertDeliverable(json);
      // One alarm-to-topic path per alarm, one dead-letter path per report's schedule: the walk sees them all.
      assert.equal(paths.filter((p) => p.kind === 'alarm-to-topic').length, byType(json, 'AWS::CloudWatch::Alarm').length);
      assert.equal(paths.filter((p) => p.kind === 'scheduler-to-dead-letter-queue').length, byType(json, 'AWS::Scheduler::Schedule').length - 1);
      assert.equal(paths.filter((p) => p.kind === 'scheduler-to-function').length, 1, 'the freshness check');
      assert.equal(paths.filter((p) => p.kind === 'logs-to-log-group').length, 3);
      // A walk that recognises nothing must not pass as "nothing broken".
      assert.throws(() => assertDeliverable({ Resources: {}, Outputs: {} }), /matched no delivery path/);
      const withoutSchedules = clone(json);
      for (const [id] of byType(withoutSchedules, 'AWS::Scheduler::Schedule')) delete withoutSchedules.Resources[id];
      assert.throws(() => assertDeliverable(withoutSchedules), /no path of kind scheduler-to-queue, scheduler-to-function, scheduler-to-dead-letter-queue found/);
    });

    it('fails on a topic policy that holds only the TLS deny (the policy before issue 10)', () => {
      const broken = clone(json);
      for (const [, p] of byType(broken, 'AWS::SNS::TopicPolicy')) {
        p.Properties.PolicyDocument.Statement = p.Properties.PolicyDocument.Statement.filter((s: Cfn) => s.Effect === 'Deny');
      }
      assert.throws(() => assertDeliverable(broken), /alarm-to-topic .*does not allow .*cloudwatch.*sns:Publish/);
    });

    it('fails when a key policy leaves a delivering service out', () => {
      const broken = clone(json);
      for (const [, k] of byType(broken, 'AWS::KMS::Key')) {
        k.Properties.KeyPolicy.Statement = k.Properties.KeyPolicy.Statement.filter((s: Cfn) => !JSON.stringify(s.Principal).includes('logs.'));
      }
      assert.throws(() => assertDeliverable(broken), /logs-to-log-group .*does not allow .*kms:Encrypt/);
      const noS3 = clone(json);
      for (const [, k] of byType(noS3, 'AWS::KMS::Key')) {
        k.Properties.KeyPolicy.Statement = k.Properties.KeyPolicy.Statement.filter((s: Cfn) => !JSON.stringify(s.Principal).includes('s3.amazonaws.com'));
      }
      assert.throws(() => assertDeliverable(noS3), /s3-notification-to-queue .*kms:GenerateDataKey/);
    });

    it("lets S3 use the parse queue and its key only for the raw bucket's notifications, in this account", () => {
      const rawArn = { 'Fn::GetAtt': [logicalIdOf(stack, stack.lake.rawBucket), 'Arn'] };
      const pinned = { ArnLike: { 'aws:SourceArn': rawArn }, StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } };
      const s3Statements = (doc: Cfn) => (doc.Statement as Cfn[]).filter((st) => JSON.stringify(st.Principal).includes('s3.amazonaws.com'));
      const queueKey = json.Resources[logicalIdOf(stack, stack.parse.queueKey)]!;
      const queuePolicy = byType(json, 'AWS::SQS::QueuePolicy').find(([, p]) => JSON.stringify(p.Properties.Queues).includes(logicalIdOf(stack, stack.parse.queue)))!;
      for (const statements of [s3Statements(queueKey.Properties.KeyPolicy), s3Statements(queuePolicy[1].Properties.PolicyDocument)]) {
        assert.ok(statements.length > 0);
        for (const st of statements) assert.deepEqual(st.Condition, pinned);
      }
      // Read as IAM would: a notification from another bucket meets neither policy.
      const foreign = clone(json);
      for (const [, n] of byType(foreign, 'Custom::S3BucketNotifications')) n.Properties.BucketName = { Ref: 'SomeOtherBucket' };
      assert.throws(() => assertDeliverable(foreign), /s3-notification-to-queue .*only under conditions this delivery does not meet/);
    });

    it("leaves no service principal's grant unpinned to a source (CDK's S3-to-SQS wiring added one to the queue key)", () => {
      assert.deepEqual(unpinnedServiceGrants(json), []);
      const widened = clone(json);
      const key = widened.Resources[logicalIdOf(stack, stack.parse.queueKey)]!;
      for (const st of key.Properties.KeyPolicy.Statement as Cfn[]) if (JSON.stringify(st.Principal).includes('s3.amazonaws.com')) delete st.Condition;
      assert.match(unpinnedServiceGrants(widened).join('\n'), /s3\.amazonaws\.com kms:GenerateDataKey/);
    });

    it('fails when a role may not send to its dead-letter queue', () => {
      const broken = clone(json);
      for (const [, p] of byType(broken, 'AWS::IAM::Policy')) {
        p.Properties.PolicyDocument.Statement = p.Properties.PolicyDocument.Statement.filter((s: Cfn) => ![s.Action].flat().includes('sqs:SendMessage'));
      }
      assert.throws(() => assertDeliverable(broken), /scheduler-to-dead-letter-queue .*may not sqs:SendMessage[\s\S]*lambda-failure-to-queue/);
    });
  });

  describe(`${config.name}: a first deploy into a fresh account`, () => {
    const parseStatements = () => {
      const roleId = logicalIdOf(stack, stack.parse.function.role);
      const [[, policy]] = byType(json, 'AWS::IAM::Policy').filter(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }])) as [[string, Resource]];
      return policy.Properties.PolicyDocument.Statement as Cfn[];
    };
    it('reserves no concurrency (a new account has a quota of 10), and the queues still bound the load', () => {
      for (const [id, fn] of byType(json, 'AWS::Lambda::Function')) assert.equal(fn.Properties.ReservedConcurrentExecutions, undefined, id);
      const mappings = byType(json, 'AWS::Lambda::EventSourceMapping');
      const of = (fn: { node: { defaultChild?: unknown } }) => mappings.filter(([, m]) => m.Properties.FunctionName.Ref === logicalIdOf(stack, fn)).map(([, m]) => m.Properties.ScalingConfig);
      assert.deepEqual(of(stack.parse.function.function), [{ MaximumConcurrency: PARSE_MAX_CONCURRENCY }]);
      // Every run of a connection waits in its queue, read at most maxConcurrentRequests at a time (at least Lambda's 2).
      assert.deepEqual(of(stack.fetch.function.function), config.connections.map((c) => ({ MaximumConcurrency: Math.max(2, c.maxConcurrentRequests) })));
      assert.equal(mappings.length, 1 + config.connections.length);
    });

    it(config.removalPolicy === 'retain' ? 'retains named resources, except when the create itself rolls back' : 'deletes everything', () => {
      const named = [
        ...byType(json, 'AWS::S3::Bucket').filter(([, b]) => b.Properties?.BucketName),
        ...byType(json, 'AWS::SecretsManager::Secret'),
        ...byType(json, 'AWS::Glue::Database'),
      ];
      assert.ok(named.length >= 4, `${named.length} named resources`);
      const expected = config.removalPolicy === 'retain' ? ['RetainExceptOnCreate', 'Retain'] : ['Delete', 'Delete'];
      for (const [id, r] of named) assert.deepEqual([r.DeletionPolicy, r.UpdateReplacePolicy], expected, id);
      // Plain Retain would keep a half-created stack's resources and make the retry fail "already exists".
      for (const [id, r] of Object.entries(json.Resources)) assert.notEqual(r.DeletionPolicy, 'Retain', id);
    });

    it('creates each schedule after its schedule group', () => {
      const groups = new Map(byType(json, 'AWS::Scheduler::ScheduleGroup').map(([id, g]) => [g.Properties.Name, id]));
      const schedules = byType(json, 'AWS::Scheduler::Schedule');
      assert.ok(schedules.length > 0);
      for (const [id, s] of schedules) {
        const groupId = groups.get(s.Properties.GroupName);
        assert.ok(groupId, `${id}: group ${JSON.stringify(s.Properties.GroupName)} is in the stack`);
        assert.ok((s.DependsOn ?? []).includes(groupId), `${id} depends on ${groupId}`);
      }
    });

    it('runs the freshness check only while schedules run, its alarms with actions on, so switching schedules on notifies', () => {
      const fresh = byType(json, 'AWS::CloudWatch::Alarm').filter(([, a]) => /no-fresh-data/.test(a.Properties.AlarmName));
      assert.ok(fresh.length > 0);
      // The check writes ReportStale only for late reports: no series is no breach, in OK until a check names one.
      for (const [id, a] of fresh) {
        assert.equal(a.Properties.TreatMissingData, 'notBreaching', id);
        assert.notEqual(a.Properties.ActionsEnabled, false, id);
      }
      const checkId = logicalIdOf(stack, stack.freshness.schedule);
      assert.equal(json.Resources[checkId]!.Properties!.State, config.schedulesEnabled ? 'ENABLED' : 'DISABLED');
    });

    it('lets the parse function list the raw bucket, so a deleted raw key reads as 404 (skipped), not 403', () => {
      const list = parseStatements().filter((s) => [s.Action].flat().includes('s3:ListBucket'));
      // And the curated bucket: a week without a history manifest reads as 404 (no history), not 403.
      assert.deepEqual(list.map((s) => s.Resource), [
        { 'Fn::GetAtt': [logicalIdOf(stack, stack.lake.rawBucket), 'Arn'] },
        { 'Fn::GetAtt': [logicalIdOf(stack, stack.lake.curatedBucket), 'Arn'] },
      ]);
    });

    it('lets the parse function read the manifests of the curated bucket (the volume check\'s history), and nothing else there', () => {
      const reads = parseStatements().filter((s) => [s.Action].flat().includes('s3:GetObject'));
      const curated = reads.filter((s) => JSON.stringify(s.Resource).includes(logicalIdOf(stack, stack.lake.curatedBucket)));
      assert.equal(curated.length, 1);
      assert.match(JSON.stringify(curated[0]!.Resource), /\/manifests\/\*/);
      assert.doesNotMatch(JSON.stringify(curated[0]!.Resource), /tables|rejected/);
    });

    it("outputs the analysts' policy", () => {
      const policyId = logicalIdOf(stack, stack.analysts.policy);
      assert.deepEqual(json.Outputs.AnalystPolicyArn!.Value, { Ref: policyId });
      assert.equal(json.Resources[policyId]!.Properties.ManagedPolicyName, `paynet-reports-${config.name}-analysts`);
      assert.equal(json.Resources[policyId]!.Properties.Roles, undefined, 'attached to nothing unless analystRoleArns says so');
    });
  });
}
