import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Dimension, METRIC_NAMESPACE } from '../../functions/aws/metrics.js';
import { FINDING_LOG_MESSAGE } from '../../functions/core/quality/checks.js';
import { Alarms, type AlarmsProps } from '../../lib/constructs/alarms.js';
import { PipelineDashboard } from '../../lib/constructs/dashboard.js';
import { SERVICE_NAME } from '../../lib/metrics.js';
import { emptyStack, logicalIdOf, resourcesOf, type Cfn } from './helpers.js';

/** Stand-ins: the alarms only need the functions' and queues' names. */
function fixtures(stack: Stack) {
  const fn = (id: string) =>
    new lambda.Function(stack, id, { runtime: lambda.Runtime.NODEJS_24_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler=async()=>{}') });
  return {
    key: new kms.Key(stack, 'Key'),
    fetchFunction: fn('FetchFn'),
    parseFunction: fn('ParseFn'),
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
    deadLetterQueues: f.deadLetterQueues,
    reports: [{ id: 'transactions', window: 'P1D' }, { id: 'hourly', window: 'PT6H' }],
    key: f.key,
    emails: ['ops@merchant.test', 'finance@merchant.test'],
    freshnessGrace: Duration.hours(6),
    schedulesEnabled: true,
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

const customMetricDimensions = (report: string) => [
  { Name: Dimension.environment, Value: 'test' },
  { Name: Dimension.report, Value: report },
  { Name: Dimension.service, Value: SERVICE_NAME },
];

describe('Alarms', () => {
  const { stack, f, alarms, template } = build();
  const alarmByName = (name: string) =>
    Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).find((a) => (a.Properties as Cfn).AlarmName === `paynet-reports-test-${name}`)
      ?.Properties as Cfn;

  it('sends to a KMS-encrypted, TLS-only topic with the configured e-mails', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [logicalIdOf(stack, f.key), 'Arn'] } });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    const endpoints = Object.values(resourcesOf(template, 'AWS::SNS::Subscription')).map((s) => (s.Properties as Cfn).Endpoint);
    assert.deepEqual(endpoints.sort(), ['finance@merchant.test', 'ops@merchant.test']);
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' } })]) },
    });
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

  it('notifies on alarm and on recovery, every alarm', () => {
    const topic = { Ref: logicalIdOf(stack, alarms.topic) };
    const all = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm'));
    assert.equal(all.length, 2 + 3 + 2 * 4);
    for (const a of all) {
      assert.deepEqual((a.Properties as Cfn).AlarmActions, [topic]);
      assert.deepEqual((a.Properties as Cfn).OKActions, [topic]);
    }
  });

  it('alarms on any fetch or parse function error', () => {
    for (const [name, fn] of [['fetch', f.fetchFunction], ['parse', f.parseFunction]] as const) {
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

  it('alarms on rejected rows per report, on the metric the handlers emit', () => {
    const a = alarmByName('rejected-rows-transactions');
    const stat = a.Metrics[0].MetricStat;
    assert.equal(stat.Metric.Namespace, METRIC_NAMESPACE);
    assert.equal(stat.Metric.MetricName, 'RowsRejected');
    assert.deepEqual(stat.Metric.Dimensions, customMetricDimensions('transactions'));
    assert.deepEqual([stat.Stat, a.ComparisonOperator, a.Threshold, a.TreatMissingData], ['Sum', 'GreaterThanThreshold', 0, 'notBreaching']);
  });

  it('alarms when the gateway refuses the credentials, per report, on the fetch outcome the handler emits', () => {
    for (const report of ['transactions', 'hourly']) {
      const a = alarmByName(`auth-refused-${report}`);
      const stat = a.Metrics[0].MetricStat;
      assert.equal(stat.Metric.Namespace, METRIC_NAMESPACE);
      assert.equal(stat.Metric.MetricName, 'FetchOutcome');
      assert.deepEqual(
        stat.Metric.Dimensions,
        [...customMetricDimensions(report), { Name: Dimension.outcome, Value: 'AuthenticationRefused' }].sort((x, y) => x.Name.localeCompare(y.Name)),
      );
      assert.deepEqual([stat.Stat, a.ComparisonOperator, a.Threshold, a.TreatMissingData], ['Sum', 'GreaterThanOrEqualToThreshold', 1, 'notBreaching']);
      assert.match(a.AlarmDescription, /Secrets Manager/);
    }
  });

  it('alarms per report when a loaded window\'s data checks found something, on the metric the parse emits', () => {
    for (const report of ['transactions', 'hourly']) {
      const a = alarmByName(`data-quality-${report}`);
      const stat = a.Metrics[0].MetricStat;
      assert.equal(stat.Metric.Namespace, METRIC_NAMESPACE);
      assert.equal(stat.Metric.MetricName, 'QualityFindings');
      assert.deepEqual(stat.Metric.Dimensions, customMetricDimensions(report));
      assert.deepEqual([stat.Stat, stat.Period, a.ComparisonOperator, a.Threshold, a.EvaluationPeriods, a.TreatMissingData], ['Sum', 300, 'GreaterThanThreshold', 0, 1, 'notBreaching']);
      // The metric cannot carry the window: the description says where it is named.
      assert.match(a.AlarmDescription, /reports -- status --environment test/);
      assert.match(a.AlarmDescription, new RegExp(`manifests/${report}/`));
    }
  });

  it('alarms when no load completes within the window plus grace, missing data breaching', () => {
    for (const [report, hours] of [['transactions', 30], ['hourly', 12]] as const) {
      const a = alarmByName(`no-fresh-data-${report}`);
      const stat = a.Metrics[0].MetricStat;
      // Completed loads, not rows: a header-only report (no sales that day) or a PDF writes no rows and is not late.
      assert.equal(stat.Metric.MetricName, 'LoadsCompleted');
      assert.deepEqual(stat.Metric.Dimensions, customMetricDimensions(report));
      assert.equal(stat.Period, hours * 3600);
      assert.deepEqual([stat.Stat, a.ComparisonOperator, a.Threshold, a.EvaluationPeriods, a.TreatMissingData], ['Sum', 'LessThanThreshold', 1, 1, 'breaching']);
      assert.notEqual(a.ActionsEnabled, false);
    }
  });

  it('rests freshness alarms in OK while schedules are off, actions on, so switching schedules on notifies', () => {
    const quiet = build({ schedulesEnabled: false, emails: [] });
    const all = Object.values(resourcesOf(quiet.template, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties as Cfn);
    const fresh = all.filter((a) => /no-fresh-data/.test(a.AlarmName));
    assert.equal(fresh.length, 2);
    // CloudWatch notifies on transitions only: an alarm sitting in ALARM with actions off would stay silent once
    // they are switched on. Not breaching while off (state OK), breaching once on (OK -> ALARM, a notification).
    for (const a of fresh) {
      assert.equal(a.TreatMissingData, 'notBreaching', a.AlarmName);
      assert.notEqual(a.ActionsEnabled, false, a.AlarmName);
      assert.ok(a.AlarmActions?.length, a.AlarmName);
    }
    for (const a of all) assert.notEqual(a.ActionsEnabled, false, a.AlarmName);
    quiet.template.resourceCountIs('AWS::SNS::Subscription', 0);
    assert.throws(() => build({ reports: [{ id: 'weekly', window: 'P7D' }] }), /longer than the 7 days/);
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
    // The reports' own metrics through Metrics Insights queries (test/infra/dashboard.test.ts holds them to the limits).
    for (const metric of ['FetchOutcome', 'LoadsCompleted', 'RowsWritten', 'RowsRejected', 'FetchBytes', 'LoadLagSeconds', 'QualityFindings', 'DuplicateKeys']) {
      assert.ok(body.includes(`(${metric}) FROM SCHEMA(PaynetReports, environment, `), `dashboard shows ${metric}`);
    }
    // Every fetch outcome by name (AuthenticationRefused among them), grouped rather than listed by hand.
    assert.ok(body.includes('SELECT SUM(FetchOutcome) FROM SCHEMA(PaynetReports, environment, outcome, report, service)'), 'fetch outcomes');
    assert.ok(body.includes('GROUP BY report, outcome'), 'one line per report and outcome');
    assert.ok(body.includes("report = 'transactions'") && body.includes("report = 'hourly'"), 'every report in its connection\'s query');
  });

  it('lists the flagged windows from the parse log, with the message and fields the parse logger writes', () => {
    const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
    // The body is a Fn::Join of JSON text and references: stand the references in as their logical ids.
    const parts = (dashboard!.Properties as Cfn).DashboardBody['Fn::Join'][1] as Cfn[];
    const body = JSON.parse(parts.map((p) => (typeof p === 'string' ? p : (p.Ref ?? 'ref'))).join('')) as { widgets: Cfn[] };
    const logs = body.widgets.filter((w) => w.type === 'log');
    assert.equal(logs.length, 1);
    const query = logs[0]!.properties.query as string;
    assert.ok(query.startsWith(`SOURCE '${logicalIdOf(stack, f.parseLogGroup)}'`), query);
    assert.match(query, /fields @timestamp, report, window, finding/);
    assert.ok(query.includes(`filter message = "${FINDING_LOG_MESSAGE}"`), query);
  });
});
