import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Dimension, METRIC_NAMESPACE } from '../../functions/aws/metrics.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { PipelineDashboard } from '../../lib/constructs/dashboard.js';
import { connectionScopes } from '../../lib/constructs/dashboard/connection-scopes.js';
import { identifier } from '../../lib/metrics-insights/identifiers.js';
import { DASHBOARD_LIMITS } from '../../lib/constructs/dashboard/limits.js';
import { CHOSEN_CONNECTION } from '../../lib/constructs/dashboard/report-widgets.js';
import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import { emptyStack, resourcesOf, type Cfn } from './helpers.js';

const CONNECTIONS = Array.from({ length: 10 }, (_, i) => `conn-${i}`);

/** `n` copies of the fixture report, spread round-robin over ten connections, as a catalog of that size would be. */
function generatedReports(n: number): ReportDefinition[] {
  const raw = JSON.parse(readFileSync(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8')) as Record<string, unknown>;
  return Array.from({ length: n }, (_, i) => {
    const id = `transactions_${String(i).padStart(3, '0')}`;
    return parseReportDefinition({ ...raw, id, connection: CONNECTIONS[i % CONNECTIONS.length] }, `test: report ${id}`);
  });
}

interface Body {
  widgets: { type: string; properties: Cfn }[];
  variables: { pattern: string; values: { label: string; value: string }[] }[];
}

/** The dashboard of `n` reports, in a stack of its own, and its body with references stood in as "ref". */
function dashboardOf(n: number) {
  const stack = emptyStack();
  const fn = (id: string) =>
    new lambda.Function(stack, id, { runtime: lambda.Runtime.NODEJS_24_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler=async()=>{}') });
  const reports = generatedReports(n);
  const dashboard = new PipelineDashboard(stack, 'Dashboard', {
    environment: 'production',
    fetchFunction: fn('FetchFn'),
    parseFunction: fn('ParseFn'),
    parseQueue: new sqs.Queue(stack, 'Work'),
    deadLetterQueues: { schedule: new sqs.Queue(stack, 'Dlq1'), parse: new sqs.Queue(stack, 'Dlq2') },
    connectionQueues: new Map(CONNECTIONS.map((c) => [c, new sqs.Queue(stack, `Runs-${c}`)])),
    reports: reports.map((r) => ({ id: r.id, connection: r.connections[0]! })),
    parseLogGroup: new logs.LogGroup(stack, 'ParseLogs'),
  });
  const [resource] = Object.values(resourcesOf(Template.fromStack(stack), 'AWS::CloudWatch::Dashboard'));
  const parts = (resource!.Properties as Cfn).DashboardBody['Fn::Join'][1] as Cfn[];
  const text = parts.map((p) => (typeof p === 'string' ? p : 'ref')).join('');
  return { reports, dashboard, text, body: JSON.parse(text) as Body };
}

type Line = [string, ...unknown[]] | [{ expression: string; label?: string }];
const linesOf = (widget: Body['widgets'][number]): Line[] => (widget.type === 'metric' ? (widget.properties.metrics as Line[]) : []);
const expressionOf = (line: Line): string | undefined => (typeof line[0] === 'object' ? line[0].expression : undefined);
const queriesOf = (body: Body) => body.widgets.flatMap(linesOf).flatMap((l) => expressionOf(l) ?? []);

/** The most time series one line can return: a grouped query its LIMIT, anything else one. */
function seriesOf(line: Line): number {
  const limit = /GROUP BY .* LIMIT (\d+)$/.exec(expressionOf(line) ?? '');
  return limit ? Number(limit[1]) : 1;
}

describe('Dashboard at scale', () => {
  const small = dashboardOf(10);
  const large = dashboardOf(500);

  it('has the same widgets at 10 reports and at 500 over ten connections, within the 500 a dashboard holds', () => {
    const shape = (b: Body) => b.widgets.map((w) => `${w.type} ${w.properties.title ?? w.properties.markdown ?? ''}`);
    assert.deepEqual(shape(large.body), shape(small.body));
    assert.ok(large.body.widgets.length <= DASHBOARD_LIMITS.widgets, `${large.body.widgets.length} widgets`);
  });

  it('retrieves at most 500 series per widget and 2,500 per dashboard, counting every query at its limit', () => {
    const perWidget = large.body.widgets.map((w) => linesOf(w).reduce((n, l) => n + seriesOf(l), 0));
    assert.ok(Math.max(...perWidget) <= DASHBOARD_LIMITS.metricsPerWidget, `widest widget: ${Math.max(...perWidget)}`);
    const total = perWidget.reduce((a, b) => a + b, 0);
    assert.ok(total <= DASHBOARD_LIMITS.metricsPerDashboard, `${total} series`);
  });

  it('keeps every query, a drop-down entry in place, within 1,024 characters', () => {
    const [variable] = large.body.variables;
    const resolved = queriesOf(large.body).flatMap((q) => (q.includes(CHOSEN_CONNECTION) ? variable!.values.map((v) => q.replace(CHOSEN_CONNECTION, v.value)) : [q]));
    const longest = Math.max(...resolved.map((q) => q.length));
    assert.ok(longest <= DASHBOARD_LIMITS.queryLength, `longest query: ${longest}`);
    assert.ok(!resolved.some((q) => q.includes(CHOSEN_CONNECTION)));
  });

  it('keeps the body small beside the template it lives in: 128 KB at 500 reports', () => {
    // CloudFormation takes 1 MB per template; the body is the one part that grows with the catalog (the connections' report lists).
    // PutDashboard documents no size of its own for DashboardBody: neither the SDK's model (@aws-sdk/client-cloudwatch)
    // nor CloudFormation's schema of AWS::CloudWatch::Dashboard gives it a maximum length.
    assert.ok(large.text.length <= 128 * 1024, `${large.text.length} bytes`);
    assert.ok(large.text.length > small.text.length);
  });

  it('reaches every report: its connection\'s line on each per-connection graph, and a drop-down entry labelled with its connection', () => {
    const perConnection = large.body.widgets.filter((w) => String(w.properties.title ?? '').endsWith(' per connection'));
    assert.ok(perConnection.length >= 2, 'failures and stale reports per connection');
    const [variable] = large.body.variables;
    assert.equal(variable!.pattern, CHOSEN_CONNECTION);
    for (const report of large.reports) {
      // Its scope: the condition naming it (its id listed, or its connection once the metrics carry one).
      const scopes = large.dashboard.scopes.filter((s) => s.reports.includes(report.id));
      assert.equal(scopes.length, 1, report.id);
      const scope = scopes[0]!;
      assert.equal(scope.connection, report.connections[0]!);
      assert.ok(scope.condition.includes(`'${report.id}'`) || scope.condition.includes(`'${report.connections[0]!}'`), scope.condition);
      for (const widget of perConnection) {
        const lines = linesOf(widget).filter((l) => expressionOf(l)?.includes(scope.condition));
        assert.equal(lines.length, 1, `${report.id} in "${widget.properties.title}"`);
        assert.match((lines[0]![0] as { label: string }).label, new RegExp(`^${report.connections[0]!}( \\d+/\\d+)?$`));
      }
      // The drop-down puts the scope's choice where the drill-down graphs' condition holds the pattern.
      const entries = variable!.values.filter((v) => v.value === scope.choice);
      assert.equal(entries.length, 1, report.id);
      assert.ok(entries[0]!.label.startsWith(`${report.connections[0]!} `), entries[0]!.label);
    }
  });

  it('queries exactly the dimension set the handlers write, in this environment only', () => {
    // functions/aws/metrics.ts: a per-report series carries {connection, environment, report, service}, FetchOutcome adds outcome.
    const all = Object.values(Dimension) as string[];
    for (const d of [Dimension.connection, Dimension.environment, Dimension.report, Dimension.service]) assert.ok(all.includes(d), d);
    const schema = `SCHEMA(${METRIC_NAMESPACE}, ${all.filter((d) => d !== Dimension.outcome).sort().map(identifier).join(', ')})`;
    const outcomes = `SCHEMA(${METRIC_NAMESPACE}, ${[...all].sort().map(identifier).join(', ')})`;
    const [insights, searches] = [queriesOf(large.body).filter((q) => q.startsWith('SELECT ')), queriesOf(large.body).filter((q) => !q.startsWith('SELECT '))];
    // The one search is the environment's fetch outcomes, which carry no report dimension.
    for (const q of searches) assert.match(q, /^SEARCH\('\{PaynetReports,environment,outcome,service\} MetricName="FetchOutcome" environment="production"'/);
    for (const q of insights) {
      assert.ok(q.includes(q.includes('(FetchOutcome)') ? outcomes : schema), q);
      assert.match(q, / WHERE environment = 'production'( AND | GROUP BY |$)/);
    }
  });
});

describe('connection scopes', () => {
  const reports = new Map([['acme', ['a_report', 'b_report', 'c_report']], ['north', ['d_report']]]);

  it('splits a connection whose reports outgrow one query into numbered parts, in catalog order', () => {
    const one = `(report = 'a_report' OR report = 'b_report')`.length;
    const scopes = connectionScopes(reports, { maxConditionLength: one });
    assert.deepEqual(
      scopes.map((s) => [s.label, s.reports]),
      [['acme 1/2', ['a_report', 'b_report']], ['acme 2/2', ['c_report']], ['north', ['d_report']]],
    );
  });

  it('filters on a connection dimension, one scope per connection whatever its size, when the metrics carry one', () => {
    const scopes = connectionScopes(reports, { maxConditionLength: 10, byDimension: true });
    // `connection` is a Metrics Insights reserved keyword: double-quoted; the drop-down chooses the name alone.
    assert.deepEqual(scopes.map((s) => s.condition), [`"connection" = 'acme'`, `"connection" = 'north'`]);
    assert.deepEqual(scopes.map((s) => s.choice), ['acme', 'north']);
  });

  it('refuses a report id no query can hold, saying what to do', () => {
    assert.throws(() => connectionScopes(new Map([['acme', ['a_very_long_report_id']]]), { maxConditionLength: 20 }), /too long for a dashboard query.*shorten the id/);
  });
});
