import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Dimension, METRIC_NAMESPACE } from '../../functions/aws/metrics.js';
import { FINDING_LOG_MESSAGE } from '../../functions/core/quality/checks.js';
import { Alarms, type AlarmsProps } from '../../lib/constructs/alarms.js';
import { PipelineDashboard } from '../../lib/constructs/dashboard.js';
import { emptyStack, logicalIdOf, resourcesOf, type Cfn } from './helpers.js';

/** Stand-ins: the alarms only need the functions' and queues' names. */
function fixtures(stack: Stack) {
  const fn = (id: string) =>
    new lambda.Function(stack, id, { runtime: lambda.Runtime.NODEJS_24_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler=async()=>{}') });
  return {
    key: new kms.Key(stack, 'Key'),
    fetchFunction: fn('FetchFn'),
    parseFunction: fn('ParseFn'),
    freshnessFunction: fn('FreshnessFn'),
    deadLetterQueues: { schedule: new sqs.Queue(stack, 'Dlq1'), 'fetch-failures': new sqs.Queue(stack, 'Dlq2'), parse: new sqs.Queue(stack, 'Dlq3') },
    parseQueue: new sqs.Queue(stack, 'Work'),
    parseLogGroup: new logs.LogGroup(stack, 'ParseLogs'),
  };
}

function build(overrides: Partial<AlarmsProps> = {}) {
  const stack = emptyStack();
  const f = fixtures(stack);
  const alarms = new Alarms(stack, 'Alarms', {
    environment: 'test',
    fetchFunction: f.fetchFunction,
    parseFunction: f.parseFunction,
    freshnessFunction: f.freshnessFunction,
    deadLetterQueues: f.deadLetterQueues,
    connections: ['default', 'payouts-eu'],
    key: f.key,
    ...overrides,
  });
  new PipelineDashboard(stack, 'Dashboard', {
    environment: 'test',
    fetchFunction: f.fetchFunction,
    parseFunction: f.parseFunction,
    parseQueue: f.parseQueue,
    deadLetterQueues: f.deadLetterQueues,
    reports: [{ id: 'transactions', connection: 'default' }, { id: 'hourly', connection: 'acme' }],
    parseLogGroup: f.parseLogGroup,
  });
  return { stack, f, alarms, template: Template.fromStack(stack) };
}

const REPORT_KINDS = ['auth-refused', 'rejected-rows', 'data-quality', 'no-fresh-data'] as const;

describe('Alarms', () => {
  const { stack, f, alarms, template } = build();
  const alarmByName = (name: string) =>
    Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).find((a) => (a.Properties as Cfn).AlarmName === `paynet-reports-test-${name}`)
      ?.Properties as Cfn;

  it('sends to a KMS-encrypted, TLS-only topic, which the channels subscribe to (test/infra/alarm-channels.test.ts), not the alarms', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [logicalIdOf(stack, f.key), 'Arn'] } });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    const endpoints = Object.values(resourcesOf(template, 'AWS::SNS::Subscription')).map((s) => (s.Properties as Cfn).Endpoint);
    assert.deepEqual(endpoints, []);
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' } })]) },
    });
    // AWS's statement for services publishing to encrypted topics, as written: a condition CloudWatch's KMS
    // requests do not carry would drop every notification without an error anywhere.
    const keyStatements = Object.values(resourcesOf(template, 'AWS::KMS::Key')).flatMap((k) => (k.Properties as Cfn).KeyPolicy.Statement as Cfn[]);
    const forCloudWatch = keyStatements.filter((s) => s.Principal?.Service === 'cloudwatch.amazonaws.com');
    assert.equal(forCloudWatch.length, 1);
    assert.deepEqual([...forCloudWatch[0].Action].sort(), ['kms:Decrypt', 'kms:GenerateDataKey*']);
    assert.equal(forCloudWatch[0].Resource, '*');
    assert.equal(forCloudWatch[0].Condition, undefined);
  });

  it('lets CloudWatch alarms of this account, and nothing else, publish beside the TLS deny', () => {
    // A topic policy replaces SNS's default one: without this Allow every alarm action fails "not authorized".
    const [policy] = Object.values(resourcesOf(template, 'AWS::SNS::TopicPolicy')).map((p) => p.Properties as Cfn);
    const statements = policy.PolicyDocument.Statement as Cfn[];
    const allow = statements.filter((s) => s.Effect === 'Allow');
    assert.equal(allow.length, 1);
    assert.deepEqual(allow[0].Principal, { Service: 'cloudwatch.amazonaws.com' });
    assert.equal(allow[0].Action, 'sns:Publish');
    assert.deepEqual(allow[0].Resource, { Ref: logicalIdOf(stack, alarms.topic) });
    assert.deepEqual(allow[0].Condition.StringEquals, { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    assert.match(JSON.stringify(allow[0].Condition.ArnLike['aws:SourceArn']), /:cloudwatch:.*:alarm:paynet-reports-[a-z]+-\*/);
    // The prefix must cover every alarm of the stack, or that alarm's notifications are refused.
    const prefix = /:alarm:([^"*]+)\*/.exec(JSON.stringify(allow[0].Condition.ArnLike['aws:SourceArn']))![1]!;
    const names = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map((a) => (a.Properties as Cfn).AlarmName as string);
    assert.ok(names.length > 0);
    for (const name of names) assert.ok(name.startsWith(prefix), `${name} outside the topic policy's ${prefix}*`);
    assert.ok(statements.some((s) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false'));
  });

  it('notifies on alarm and on recovery, every alarm: three function alarms, one per dead-letter queue, four per connection', () => {
    const topic = { Ref: logicalIdOf(stack, alarms.topic) };
    const all = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm'));
    assert.equal(all.length, 3 + 3 + 2 * REPORT_KINDS.length);
    for (const a of all) {
      assert.deepEqual((a.Properties as Cfn).AlarmActions, [topic]);
      assert.deepEqual((a.Properties as Cfn).OKActions, [topic]);
      assert.notEqual((a.Properties as Cfn).ActionsEnabled, false);
    }
  });

  it('alarms on any fetch, parse or freshness-check function error', () => {
    for (const [name, fn] of [['fetch', f.fetchFunction], ['parse', f.parseFunction], ['freshness', f.freshnessFunction]] as const) {
      const a = alarmByName(`${name}-errors`);
      assert.equal(a.Namespace, 'AWS/Lambda');
      assert.equal(a.MetricName, 'Errors');
      assert.deepEqual(a.Dimensions, [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(stack, fn) } }]);
      assert.deepEqual([a.Statistic, a.ComparisonOperator, a.Threshold, a.TreatMissingData], ['Sum', 'GreaterThanOrEqualToThreshold', 1, 'notBreaching']);
    }
  });

  it('alarms on any message in each dead-letter queue', () => {
    for (const [name, queue] of Object.entries(f.deadLetterQueues)) {
      const a = alarmByName(`dead-letters-${name}`);
      assert.equal(a.MetricName, 'ApproximateNumberOfMessagesVisible');
      assert.deepEqual(a.Dimensions, [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(stack, queue), 'QueueName'] } }]);
      assert.deepEqual([a.Statistic, a.ComparisonOperator, a.Threshold, a.TreatMissingData], ['Maximum', 'GreaterThanOrEqualToThreshold', 1, 'notBreaching']);
    }
  });

  // `connection` is a Metrics Insights reserved keyword: AWS reads it only double-quoted (lib/metrics-insights/).
  const perReportDims = `"${Dimension.connection}", ${Dimension.environment}, ${Dimension.report}, ${Dimension.service}`;
  const expected: Record<(typeof REPORT_KINDS)[number], (connection: string) => { query: string; period: number }> = {
    'auth-refused': (c) => ({
      query: `SELECT SUM(FetchOutcome) FROM SCHEMA(${METRIC_NAMESPACE}, "connection", environment, outcome, report, service) WHERE environment = 'test' AND "connection" = '${c}' AND outcome = 'AuthenticationRefused' GROUP BY report ORDER BY SUM() DESC LIMIT 100`,
      period: 300,
    }),
    'rejected-rows': (c) => ({
      query: `SELECT SUM(RowsRejected) FROM SCHEMA(${METRIC_NAMESPACE}, ${perReportDims}) WHERE environment = 'test' AND "connection" = '${c}' GROUP BY report ORDER BY SUM() DESC LIMIT 100`,
      period: 300,
    }),
    'data-quality': (c) => ({
      query: `SELECT SUM(QualityFindings) FROM SCHEMA(${METRIC_NAMESPACE}, ${perReportDims}) WHERE environment = 'test' AND "connection" = '${c}' GROUP BY report ORDER BY SUM() DESC LIMIT 100`,
      period: 300,
    }),
    'no-fresh-data': (c) => ({
      query: `SELECT MAX(ReportStale) FROM SCHEMA(${METRIC_NAMESPACE}, ${perReportDims}) WHERE environment = 'test' AND "connection" = '${c}' GROUP BY report ORDER BY MAX() DESC LIMIT 100`,
      period: 3600,
    }),
  };

  it('per connection, one Metrics Insights alarm of each kind grouped by report, on the dimensions the handlers write', () => {
    for (const connection of ['default', 'payouts-eu']) {
      for (const kind of REPORT_KINDS) {
        const a = alarmByName(`${kind}-${connection}`);
        assert.ok(a, `${kind}-${connection}`);
        const { query, period } = expected[kind](connection);
        assert.deepEqual(a.Metrics, [{ Id: 'reports', Expression: query, Period: period, ReturnData: true }]);
        assert.deepEqual([a.ComparisonOperator, a.Threshold, a.EvaluationPeriods, a.DatapointsToAlarm, a.TreatMissingData], ['GreaterThanOrEqualToThreshold', 1, 1, 1, 'notBreaching']);
        // The contributors are the reports: the description says where they are named.
        assert.match(a.AlarmDescription, new RegExp(`Connection "${connection}"`));
        assert.match(a.AlarmDescription, /reports -- status --environment test/);
      }
    }
    assert.match(alarmByName('auth-refused-default').AlarmDescription, /Secrets Manager/);
    assert.match(alarmByName('data-quality-default').AlarmDescription, /manifests\/<report>\//);
  });

  it('stays flat in the number of reports: the count depends on connections only', () => {
    const one = build({ connections: ['default'] });
    const ten = build({ connections: Array.from({ length: 10 }, (_, i) => `c${i}`) });
    const count = (t: Template) => Object.keys(resourcesOf(t, 'AWS::CloudWatch::Alarm')).length;
    assert.equal(count(one.template), 6 + 4);
    // docs/deploy.md ("What it costs"): 46 alarms at 10 connections, whatever the number of reports.
    assert.equal(count(ten.template), 6 + 4 * 10);
    assert.ok(count(ten.template) <= 60);
  });
});

describe('Dashboard', () => {
  const { stack, f, template } = build();
  it('shows runs, fetch outcomes, completed loads, rows, bytes, durations, lag and dead letters', () => {
    const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
    assert.equal((dashboard!.Properties as Cfn).DashboardName, 'paynet-reports-test');
    const body = JSON.stringify((dashboard!.Properties as Cfn).DashboardBody);
    for (const metric of ['Invocations', 'Errors', 'Duration', 'ApproximateNumberOfMessagesVisible']) {
      assert.ok(body.includes(`\\"${metric}\\"`), `dashboard shows ${metric}`);
    }
    // The per-report metrics through Metrics Insights queries, with the dimensions the handlers write
    // (test/infra/dashboard.test.ts holds them to the limits), read as CloudWatch reads the body: JSON.
    const parts = (dashboard!.Properties as Cfn).DashboardBody['Fn::Join'][1] as Cfn[];
    const widgets = (JSON.parse(parts.map((p) => (typeof p === 'string' ? p : 'ref')).join('')) as { widgets: { properties: Cfn }[] }).widgets;
    const insights = widgets.flatMap((w) => ((w.properties.metrics ?? []) as Cfn[][]).flatMap((l) => (typeof l[0] === 'object' ? [String(l[0].expression)] : []))).join('\n');
    for (const metric of ['FetchOutcome', 'ReportStale', 'RowsRejected', 'QualityFindings', 'DuplicateKeys']) {
      assert.ok(insights.includes(`(${metric}) FROM SCHEMA(PaynetReports, "connection", environment, `), `dashboard shows ${metric} per report`);
    }
    // The per-environment ones as plain metrics: no report dimension, every report together.
    for (const metric of ['LoadsCompleted', 'RowsWritten', 'FetchBytes', 'LoadLagSeconds']) assert.ok(body.includes(`\\"${metric}\\"`), `dashboard shows ${metric}`);
    // Every fetch outcome by name, per environment by a search, and failures per report and outcome.
    assert.match(body, /SEARCH\('\{PaynetReports,environment,outcome,service\} MetricName=[^ ]*FetchOutcome[^ ]* environment=[^ ]*test[^ ]*', 'Sum', 3600\)/);
    assert.ok(insights.includes('SELECT SUM(FetchOutcome) FROM SCHEMA(PaynetReports, "connection", environment, outcome, report, service)'), 'fetch outcomes');
    assert.ok(insights.includes('GROUP BY report, outcome'), 'one line per report and outcome');
    // A connection's reports are taken by its connection dimension (a reserved keyword: double-quoted), none listed by hand.
    assert.ok(insights.includes(`"connection" = 'default'`), "the connection's query");
  });

  it('lists the flagged windows from the parse log, with the message and fields the parse logger writes', () => {
    const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
    // The body is a Fn::Join of JSON text and references: stand the references in as their logical ids.
    const parts = (dashboard!.Properties as Cfn).DashboardBody['Fn::Join'][1] as Cfn[];
    const body = JSON.parse(parts.map((p) => (typeof p === 'string' ? p : (p.Ref ?? 'ref'))).join('')) as { widgets: Cfn[] };
    const logs = body.widgets.filter((w) => w.type === 'log');
    assert.equal(logs.length, 2, 'newest loads, flagged windows');
    const query = logs[1]!.properties.query as string;
    assert.ok(query.startsWith(`SOURCE '${logicalIdOf(stack, f.parseLogGroup)}'`), query);
    assert.match(query, /fields @timestamp, report, window, finding/);
    assert.ok(query.includes(`filter message = "${FINDING_LOG_MESSAGE}"`), query);
  });

  it("lists every report's newest load by connection from the parse log, on the messages the parse logger writes for a completed load", () => {
    const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
    const parts = (dashboard!.Properties as Cfn).DashboardBody['Fn::Join'][1] as Cfn[];
    const body = JSON.parse(parts.map((p) => (typeof p === 'string' ? p : (p.Ref ?? 'ref'))).join('')) as { widgets: Cfn[] };
    const query = body.widgets.filter((w) => w.type === 'log')[0]!.properties.query as string;
    assert.ok(query.startsWith(`SOURCE '${logicalIdOf(stack, f.parseLogGroup)}'`), query);
    assert.ok(query.includes('filter message in ["Report loaded", "PDF report kept in the raw bucket; it is not parsed"]'), query);
    assert.ok(query.includes('by connection, report'), query);
  });
});
