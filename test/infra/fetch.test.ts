import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Credentials } from '../../lib/constructs/credentials.js';
import { Egress } from '../../lib/constructs/egress.js';
import { Fetch, type FetchProps, type ScheduledReport } from '../../lib/constructs/fetch.js';
import { MIN_EVENT_SOURCE_CONCURRENCY, VISIBILITY_MARGIN, maximumConcurrencyOf, messageGroupIdOf } from '../../lib/constructs/fetch-queues.js';
import { emptyStack, FIXTURE_ENTRY, resourcesOf, type Cfn } from './helpers.js';

const DEFAULT = { name: 'default', endpointUrl: 'https://gateway.test/rpt', secretName: 's', maxConcurrentRequests: 2 };

/** A report due daily over a connection (default: "default"). */
const daily = (id: string, connection = 'default'): ScheduledReport => ({ id, cron: 'cron(0 1 * * ? *)', timeZone: 'UTC', lookback: 0, connections: [connection] });

/**
 * The schedule switch, the queues and the synth-time checks; the wiring itself is asserted on the whole stack (stack.test.ts).
 * `network`: the function in a created VPC, as an environment with `network` puts it.
 */
function build(reports: ScheduledReport[], overrides: Partial<FetchProps> = {}, { network = false } = {}) {
  const stack = emptyStack();
  const key = new kms.Key(stack, 'Key');
  const egress = network
    ? new Egress(stack, 'Egress', { environment: 'test', settings: { kind: 'created' }, ports: [443], key, logRetention: logs.RetentionDays.ONE_WEEK, removalPolicy: RemovalPolicy.DESTROY })
    : undefined;
  const connections = overrides.connections ?? [DEFAULT];
  new Fetch(stack, 'Fetch', {
    environment: 'test',
    reports,
    connections,
    credentials: new Credentials(stack, 'Credentials', {
      environment: 'test',
      connections: connections.map((c) => ({ connection: c.name, secretName: c.secretName, mode: 'create' })),
      removalPolicy: RemovalPolicy.DESTROY,
    }),
    rawBucket: new s3.Bucket(stack, 'Raw', { encryptionKey: key }),
    key,
    schedulesEnabled: true,
    projectionStart: '2020-01-01',
    timeout: Duration.minutes(15),
    memorySize: 256,
    logLevel: 'INFO',
    logRetention: logs.RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.DESTROY,
    entry: FIXTURE_ENTRY,
    egress,
    ...overrides,
  });
  return Template.fromStack(stack);
}

describe('Fetch', () => {
  it('enables the schedules when the environment says so, one per report', () => {
    const template = build([
      { id: 'a', cron: 'cron(0 1 * * ? *)', timeZone: 'Europe/Berlin', lookback: 0, connections: ['default'] },
      { id: 'b', cron: 'cron(30 */6 * * ? *)', timeZone: 'UTC', lookback: 0, connections: ['default'] },
    ]);
    template.resourceCountIs('AWS::Scheduler::Schedule', 2);
    template.allResourcesProperties('AWS::Scheduler::Schedule', { State: 'ENABLED', GroupName: 'paynet-reports-test' });
    template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'cron(30 */6 * * ? *)', ScheduleExpressionTimezone: 'UTC' });
  });

  it('refuses, naming the report, a cron or time zone the scheduler would refuse at deploy time', () => {
    assert.throws(() => build([{ id: 'x', cron: '15 3 * * ? *', timeZone: 'UTC', lookback: 0, connections: ['default'] }]), /Report "x": schedule\.cron/);
    assert.throws(() => build([{ id: 'y', cron: 'cron(15 3 * * ? *)', timeZone: 'Europe/Atlantis', lookback: 0, connections: ['default'] }]), /Report "y": schedule\.timeZone/);
    assert.throws(() => build([{ id: 'z', cron: 'cron(15 25 * * ? *)', timeZone: 'UTC', lookback: 0, connections: ['default'] }]), /Report "z": schedule\.cron .*25 is outside 0-23/);
  });

  it('synthesizes every expression a definition may load with: rate() as well as cron()', () => {
    const template = build([{ id: 'r', cron: 'rate(6 hours)', timeZone: 'UTC', lookback: 0, connections: ['default'] }]);
    template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(6 hours)' });
  });

  it("refuses a time-out that cannot give each window of a scheduled run a share of a minute, naming the report and both settings", () => {
    // 900 s: 885 s after the margin, 3 windows of 295 s; 300 s with lookback 6: 7 windows of 40 s.
    build([{ id: 'ok', cron: 'cron(15 3 * * ? *)', timeZone: 'UTC', lookback: 2, connections: ['default'] }]);
    assert.throws(
      () => build([{ id: 'many', cron: 'cron(15 3 * * ? *)', timeZone: 'UTC', lookback: 6, connections: ['default'] }], { timeout: Duration.seconds(300) }),
      /Report "many": a scheduled run fetches 7 windows \(lookback 6\) within fetch\.timeoutSeconds 300, 40 s each .*at least 60 s\. Raise fetch\.timeoutSeconds/,
    );
  });

  it("gives the fetch function, and only it, the projection's first date (its refusal of earlier windows: fetch-handler.test.ts)", () => {
    const template = build([{ id: 'a', cron: 'cron(0 1 * * ? *)', timeZone: 'UTC', lookback: 0, connections: ['default'] }], { projectionStart: '2018-06-01' });
    const functions = Object.values(resourcesOf(template, 'AWS::Lambda::Function')).map((f) => (f.Properties as Cfn).Environment?.Variables ?? {});
    const given = functions.filter((variables) => 'PROJECTION_START' in variables);
    assert.equal(given.length, 1);
    assert.equal(given[0].PROJECTION_START, '2018-06-01');
    assert.ok('CONNECTIONS' in given[0] && 'RAW_BUCKET' in given[0], 'the function that fetches windows');
  });

  it('says how to synthesize while a handler is missing', () => {
    assert.throws(() => build([], { entry: '/nonexistent/handler.ts' }), /does not exist.*-c handlerEntry=/s);
  });

  describe('the keep-alive of a function in a VPC', () => {
    /** The fetch function, told from CDK's default-security-group cleaner by its description. */
    const fetchFunctionId = (template: Template) =>
      Object.entries(resourcesOf(template, 'AWS::Lambda::Function')).find(([, f]) => /fetch a report/.test(f.Properties.Description))![0];
    const keepAlives = (template: Template) =>
      Object.values(resourcesOf(template, 'AWS::Scheduler::Schedule')).filter((x) => x.Properties.Target.Input === '{"keepAlive":true}');
    /** The one keep-alive schedule of the template. */
    const theKeepAlive = (template: Template) => {
      const found = keepAlives(template);
      assert.equal(found.length, 1, 'one keep-alive');
      return found[0]!;
    };

    it('invokes the fetch function with {"keepAlive": true} once a day, in the group, enabled while the report schedules are off', () => {
      const template = build([daily('a')], { schedulesEnabled: false }, { network: true });
      const fnId = fetchFunctionId(template);
      const keepAlive = theKeepAlive(template);
      assert.equal(keepAlive.Properties.ScheduleExpression, 'rate(1 day)');
      assert.equal(keepAlive.Properties.State, 'ENABLED');
      assert.equal(keepAlive.Properties.GroupName, 'paynet-reports-test');
      assert.deepEqual(keepAlive.Properties.FlexibleTimeWindow, { Mode: 'OFF' });
      assert.deepEqual(keepAlive.Properties.Target.Arn, { 'Fn::GetAtt': [fnId, 'Arn'] });
      assert.deepEqual(keepAlive.Properties.Target.RetryPolicy, { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 86400 });
      assert.ok((keepAlive as { DependsOn?: string[] }).DependsOn?.some((d: string) => d.startsWith('FetchSchedules')), 'created after its group');
      // The report's own schedule follows the switch.
      const report = Object.values(resourcesOf(template, 'AWS::Scheduler::Schedule')).find((x) => x.Properties.Target.SqsParameters)!;
      assert.equal(report.Properties.State, 'DISABLED');
    });

    it("runs as a role of its own that only this account's Scheduler may assume and that may invoke that function and nothing else", () => {
      const template = build([daily('a')], {}, { network: true });
      const fnId = fetchFunctionId(template);
      const keepAlive = theKeepAlive(template);
      const roleId = keepAlive.Properties.Target.RoleArn['Fn::GetAtt'][0] as string;
      const role = resourcesOf(template, 'AWS::IAM::Role')[roleId]!;
      assert.deepEqual(role.Properties.AssumeRolePolicyDocument.Statement, [
        {
          Action: 'sts:AssumeRole',
          Effect: 'Allow',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
        },
      ]);
      const statements = Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
        .filter((x) => JSON.stringify(x.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
        .flatMap((x) => x.Properties.PolicyDocument.Statement);
      assert.deepEqual(statements, [{ Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: { 'Fn::GetAtt': [fnId, 'Arn'] } }]);
      const reportRoles = Object.values(resourcesOf(template, 'AWS::Scheduler::Schedule')).filter((x) => x.Properties.Target.SqsParameters).map((x) => x.Properties.Target.RoleArn['Fn::GetAtt'][0]);
      assert.ok(!reportRoles.includes(roleId), 'not the role that sends to the queues');
    });

    it('is not there outside a VPC, where a function does not turn Inactive for idling', () => {
      assert.deepEqual(keepAlives(build([daily('a')], { schedulesEnabled: false })), []);
      assert.deepEqual(keepAlives(build([daily('a')])), []);
    });
  });

  describe('the queues that bound each connection', () => {
    const acme = { name: 'acme', endpointUrl: 'https://acme.test/rpt', secretName: 'acme', maxConcurrentRequests: 1 };
    const wide = { name: 'wide', endpointUrl: 'https://wide.test/rpt', secretName: 'wide', maxConcurrentRequests: 5 };
    const template = build([daily('a'), daily('b', 'acme'), daily('c', 'acme'), daily('d', 'wide')], { connections: [DEFAULT, acme, wide] });
    const queues = Object.entries(resourcesOf(template, 'AWS::SQS::Queue'));
    const fifo = queues.filter(([, q]) => q.Properties.FifoQueue === true);
    const work = fifo.filter(([, q]) => q.Properties.RedrivePolicy);

    it('one FIFO queue per connection, deduplicating by content, redriving after one receive to one FIFO dead-letter queue', () => {
      assert.equal(work.length, 3);
      assert.equal(fifo.length, 4);
      const [dlqId] = fifo.find(([, q]) => !q.Properties.RedrivePolicy)!;
      for (const [id, q] of work) {
        assert.equal(q.Properties.ContentBasedDeduplication, true, id);
        assert.deepEqual(q.Properties.RedrivePolicy, { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 1 }, id);
        // A received run stays invisible past the function's time-out (900 s), so no second invocation takes it meanwhile.
        assert.equal(q.Properties.VisibilityTimeout, 900 + VISIBILITY_MARGIN.toSeconds(), id);
        assert.ok(q.Properties.KmsMasterKeyId, id);
      }
    });

    it('reads each queue one run at a time, at most maxConcurrentRequests at once (the floor of 2 where one group bounds it to 1)', () => {
      const mappings = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping')).map((m) => m.Properties);
      assert.equal(mappings.length, 3);
      const byQueue = new Map(mappings.map((m) => [m.EventSourceArn['Fn::GetAtt'][0] as string, m]));
      const concurrency = work.map(([id]) => byQueue.get(id)!.ScalingConfig.MaximumConcurrency).sort();
      assert.deepEqual(concurrency, [2, 2, 5]);
      for (const m of mappings) {
        assert.equal(m.BatchSize, 1);
        assert.deepEqual(m.FunctionResponseTypes, ['ReportBatchItemFailures']);
      }
    });

    it('sends each report to its connection\'s queue: a group per report, or one group per connection bounded to 1', () => {
      const schedules = Object.values(resourcesOf(template, 'AWS::Scheduler::Schedule')).map((x) => x.Properties.Target);
      const group = (reportId: string) => schedules.find((t) => JSON.parse(t.Input).reportId === reportId)!.SqsParameters.MessageGroupId;
      assert.deepEqual(['a', 'b', 'c', 'd'].map(group), ['a', 'acme', 'acme', 'd']);
      assert.equal(messageGroupIdOf(acme, 'b'), 'acme');
      assert.equal(messageGroupIdOf(wide, 'd'), 'd');
      assert.equal(maximumConcurrencyOf(acme), MIN_EVENT_SOURCE_CONCURRENCY);
    });

    it('schedules each feed: a report over three connections has a schedule on each connection\'s queue, naming its connection', () => {
      const shared: ScheduledReport = { id: 'shared', cron: 'cron(0 1 * * ? *)', timeZone: 'UTC', lookback: 0, connections: ['default', 'acme', 'wide'] };
      const feeds = build([shared], { connections: [DEFAULT, acme, wide] });
      const ids = Object.fromEntries(
        Object.entries(resourcesOf(feeds, 'AWS::SQS::Queue'))
          .filter(([, q]) => q.Properties.FifoQueue === true && q.Properties.RedrivePolicy)
          .map(([id, q]) => [q.Properties.QueueName?.['Fn::Join']?.[1]?.join?.('') ?? id, id]),
      );
      const targets = Object.values(resourcesOf(feeds, 'AWS::Scheduler::Schedule')).map((x) => x.Properties.Target);
      assert.equal(targets.length, 3, 'one schedule per feed');
      const byConnection = new Map(targets.map((t) => [JSON.parse(t.Input).connection as string, t]));
      assert.deepEqual([...byConnection.keys()].sort(), ['acme', 'default', 'wide']);
      for (const [connection, t] of byConnection) {
        assert.deepEqual(JSON.parse(t.Input), { reportId: 'shared', connection, scheduledTime: '<aws.scheduler.scheduled-time>' });
        // On its own connection's queue: three schedules, three queues.
        const queueId = t.Arn['Fn::GetAtt'][0] as string;
        assert.ok(Object.values(ids).includes(queueId), queueId);
      }
      assert.equal(new Set(targets.map((t) => t.Arn['Fn::GetAtt'][0])).size, 3);
      assert.deepEqual(targets.map((t) => t.SqsParameters.MessageGroupId).sort(), ['acme', 'shared', 'shared']);
    });

    it('refuses a report over a connection without a queue, and a reservation below what the queues may start', () => {
      assert.throws(() => build([daily('x', 'nowhere')]), /no queue for connection "nowhere" \(there are default\)/);
      assert.throws(
        () => build([daily('a')], { connections: [DEFAULT, wide], reservedConcurrency: 6 }),
        /fetch\.reservedConcurrency 6 is below the 7 runs the connections' queues may start at once.*Raise it to 7 or more, or leave it null/,
      );
      build([daily('a')], { connections: [DEFAULT, wide], reservedConcurrency: 7 });
    });
  });
});
