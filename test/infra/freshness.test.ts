import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sns from 'aws-cdk-lib/aws-sns';
import { FRESHNESS_CHECK_EVERY, FRESHNESS_MISSED_PERIODS, FRESHNESS_RETRY_ATTEMPTS, Freshness } from '../../lib/constructs/freshness.js';
import { emptyStack, FIXTURE_ENTRY, logicalIdOf, resourcesOf, type Cfn } from './helpers.js';

/**
 * The freshness check's own watchdog (issue 44): its schedule retries what it could not deliver and then leaves it in a
 * dead-letter queue, and an alarm fires when the check has not been invoked for two of its periods.
 */

function build(schedulesEnabled: boolean) {
  const stack = emptyStack();
  const key = new kms.Key(stack, 'Key');
  const topic = new sns.Topic(stack, 'Topic');
  const freshness = new Freshness(stack, 'Freshness', {
    environment: 'test',
    timeout: Duration.minutes(1),
    memorySize: 256,
    logLevel: 'INFO',
    logRetention: logs.RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
    grace: Duration.hours(6),
    schedulesEnabled,
    key,
    curatedBucket: new s3.Bucket(stack, 'Curated', { encryption: s3.BucketEncryption.KMS, encryptionKey: key }),
    scheduleGroup: new scheduler.ScheduleGroup(stack, 'Group', { scheduleGroupName: 'paynet-reports-test' }),
    entry: FIXTURE_ENTRY,
  });
  const alarm = freshness.alarmWhenNotRunning(topic);
  const template = Template.fromStack(stack);
  const props = (c: { node: { defaultChild?: unknown } }, type: string) => resourcesOf(template, type)[logicalIdOf(stack, c)]!.Properties as Cfn;
  return { stack, key, topic, freshness, alarm, template, props };
}

describe('the freshness check watched', () => {
  const on = build(true);
  const off = build(false);

  it('alarms when the check has not been invoked for two of its periods, missing data breaching', () => {
    const a = on.props(on.alarm, 'AWS::CloudWatch::Alarm');
    assert.equal(a.AlarmName, 'paynet-reports-test-freshness-not-running');
    assert.deepEqual([a.Namespace, a.MetricName, a.Statistic], ['AWS/Lambda', 'Invocations', 'Sum']);
    assert.deepEqual(a.Dimensions, [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(on.stack, on.freshness.function.function) } }]);
    assert.equal(a.Period, FRESHNESS_CHECK_EVERY.toSeconds());
    assert.equal(a.Period, 900, "one of the check's periods");
    assert.deepEqual([a.EvaluationPeriods, a.DatapointsToAlarm], [FRESHNESS_MISSED_PERIODS, FRESHNESS_MISSED_PERIODS]);
    assert.equal(FRESHNESS_MISSED_PERIODS, 2);
    assert.deepEqual([a.ComparisonOperator, a.Threshold], ['LessThanThreshold', 1]);
    assert.equal(a.TreatMissingData, 'breaching', 'a check never invoked writes no data point at all');
    const topic = { Ref: logicalIdOf(on.stack, on.topic) };
    assert.deepEqual([a.AlarmActions, a.OKActions], [[topic], [topic]]);
    assert.match(a.AlarmDescription, /dead-letters-freshness-check/);
  });

  it('expects nothing of the check while the schedules are off: missing data is then not breaching', () => {
    const a = off.props(off.alarm, 'AWS::CloudWatch::Alarm');
    assert.equal(a.TreatMissingData, 'notBreaching');
    assert.equal(off.props(off.freshness.schedule, 'AWS::Scheduler::Schedule').State, 'DISABLED');
  });

  it('retries an invocation the Scheduler could not deliver within one period, then leaves it in a dead-letter queue', () => {
    const s = on.props(on.freshness.schedule, 'AWS::Scheduler::Schedule');
    assert.equal(s.State, 'ENABLED');
    assert.deepEqual(s.Target.RetryPolicy, { MaximumRetryAttempts: FRESHNESS_RETRY_ATTEMPTS, MaximumEventAgeInSeconds: FRESHNESS_CHECK_EVERY.toSeconds() });
    assert.ok(FRESHNESS_RETRY_ATTEMPTS > 0);
    assert.deepEqual(s.Target.DeadLetterConfig, { Arn: { 'Fn::GetAtt': [logicalIdOf(on.stack, on.freshness.deadLetterQueue), 'Arn'] } });
  });

  it('keeps the dead letters in a standard, KMS-encrypted, TLS-only queue marked as a dead-letter queue', () => {
    const q = on.props(on.freshness.deadLetterQueue, 'AWS::SQS::Queue');
    // The Scheduler's page on dead-letter queues: a standard queue; it does not support FIFO ones.
    assert.equal(q.FifoQueue, undefined);
    assert.deepEqual(q.KmsMasterKeyId, { 'Fn::GetAtt': [logicalIdOf(on.stack, on.key), 'Arn'] });
    assert.equal(q.MessageRetentionPeriod, 14 * 24 * 3600);
    assert.deepEqual(q.RedriveAllowPolicy, { redrivePermission: 'allowAll' });
    const policy = Object.values(resourcesOf(on.template, 'AWS::SQS::QueuePolicy')).map((p) => p.Properties as Cfn).find((p) => JSON.stringify(p.Queues).includes(logicalIdOf(on.stack, on.freshness.deadLetterQueue)));
    assert.ok(JSON.stringify(policy?.PolicyDocument).includes('aws:SecureTransport'));
  });

  it("lets the schedule's role send to the dead-letter queue and use its key, besides invoking the function", () => {
    const role = on.freshness.node.findChild('SchedulerRole') as { node: { defaultChild?: unknown } };
    const statements = Object.values(resourcesOf(on.template, 'AWS::IAM::Policy'))
      .map((p) => p.Properties as Cfn)
      .filter((p) => JSON.stringify(p.Roles) === JSON.stringify([{ Ref: logicalIdOf(on.stack, role) }]))
      .flatMap((p) => p.PolicyDocument.Statement as Cfn[]);
    const actions = (resource: unknown) => statements.filter((s) => JSON.stringify(s.Resource) === JSON.stringify(resource)).flatMap((s) => [s.Action].flat()).sort();
    assert.deepEqual(actions({ 'Fn::GetAtt': [logicalIdOf(on.stack, on.freshness.deadLetterQueue), 'Arn'] }), ['sqs:SendMessage']);
    assert.deepEqual(actions({ 'Fn::GetAtt': [logicalIdOf(on.stack, on.key), 'Arn'] }), ['kms:Decrypt', 'kms:GenerateDataKey']);
    assert.deepEqual(actions({ 'Fn::GetAtt': [logicalIdOf(on.stack, on.freshness.function.function), 'Arn'] }), ['lambda:InvokeFunction']);
  });
});
