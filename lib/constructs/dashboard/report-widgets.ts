import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Dimension, MetricName } from '../../../functions/aws/metrics.js';
import { chosenCondition, type ConnectionScope } from './connection-scopes.js';
import { FAILED_FETCH, HAS_CONNECTION_DIMENSION, insightsLines, type InsightsFunction } from './insights.js';

/**
 * The graphs of the reports' own metrics, every one a Metrics Insights query, so their number is the same at 1 report
 * and at 500: per connection (one line per connection, its total), the environment's worst reports (top n), and the
 * reports of the connection chosen in the dashboard's `connection` drop-down (one line per report).
 */

export interface ReportGraphsContext {
  readonly environment: string;
  readonly period: Duration;
  readonly scopes: readonly ConnectionScope[];
}

/** What one graph shows of the reports: a metric, how it aggregates, and the windows it counts. */
interface Measure {
  readonly title: string;
  readonly metric: MetricName;
  readonly fn: InsightsFunction;
  readonly where?: readonly string[];
  /**
   * Also drawn per connection. Each such graph repeats every connection's condition, the one part of the body that
   * grows with the catalog, so only what a connection-wide fault moves (its login, its gateway) is; the rest is per
   * report below.
   */
  readonly perConnection?: boolean;
}

/**
 * Only the metrics written per report (functions/aws/metrics.ts): loads, rows written, bytes fetched and load lag are
 * per environment (dashboard.ts draws them there, and each report's newest load from the parse log), so that a
 * healthy report keeps no series alive.
 */
const MEASURES: readonly Measure[] = [
  { title: 'Failed fetches (windows, every error code)', metric: MetricName.FetchOutcome, fn: 'SUM', where: [FAILED_FETCH], perConnection: true },
  { title: 'Stale reports (no load within window + grace; freshness check)', metric: MetricName.ReportStale, fn: 'MAX', perConnection: true },
  { title: 'Rows rejected', metric: MetricName.RowsRejected, fn: 'SUM' },
  { title: 'Data check findings (windows flagged: volume, sum, repeated keys)', metric: MetricName.QualityFindings, fn: 'SUM' },
  { title: 'Repeated keys (rows)', metric: MetricName.DuplicateKeys, fn: 'SUM' },
];

const measureOf = (metric: MetricName): Measure | undefined => MEASURES.find((m) => m.metric === metric);

const WIDTH = 12; // two graphs per row (the grid is 24 wide)
const graph = (title: string, left: cloudwatch.IMetric[], period: Duration) =>
  new cloudwatch.GraphWidget({ title, left, width: WIDTH, height: 6, period });

/** Rows of two. */
const pairs = <T>(items: readonly T[]): T[][] => items.flatMap((item, i) => (i % 2 ? [] : [items.slice(i, i + 2)]));

/** The connection-wide measures per connection: one line per connection (or part of one), its reports' total. */
export function perConnectionRows(c: ReportGraphsContext): cloudwatch.IWidget[][] {
  const widgets = MEASURES.filter((m) => m.perConnection).map((m) =>
    graph(
      `${m.title} per connection`,
      c.scopes.map((s) => insightsLines({ metric: m.metric, fn: m.fn, environment: c.environment, where: [...(m.where ?? []), s.condition] }, c.period, s.label)),
      c.period,
    ),
  );
  return pairs(widgets);
}

/** How many of the environment's worst reports a "top" graph names. */
export const TOP_REPORTS = 10;

/** The reports to look at first, whatever their connection: the most failures, rejects, staleness and findings. */
export function worstReportsRows(c: ReportGraphsContext): cloudwatch.IWidget[][] {
  const top = (title: string, m: Measure, groupBy: string[], n = TOP_REPORTS) =>
    graph(title, [insightsLines({ metric: m.metric, fn: m.fn, environment: c.environment, where: m.where, groupBy, top: n }, c.period)], c.period);
  const [failed, rejected, stale, findings] = [MetricName.FetchOutcome, MetricName.RowsRejected, MetricName.ReportStale, MetricName.QualityFindings].map(measureOf) as [
    Measure,
    Measure,
    Measure,
    Measure,
  ];
  return pairs([
    top(`Failed fetches by report and error code (top ${2 * TOP_REPORTS})`, failed, [Dimension.report, Dimension.outcome], 2 * TOP_REPORTS),
    top(`Rows rejected by report (top ${TOP_REPORTS})`, rejected, [Dimension.report]),
    top(`Stale reports (top ${TOP_REPORTS})`, stale, [Dimension.report]),
    top(`Data check findings by report (top ${TOP_REPORTS})`, findings, [Dimension.report]),
  ]);
}

/**
 * Stands in the queries of the drill-down graphs for the chosen connection's condition: the dashboard's pattern
 * variable replaces it, everywhere in the body, with the condition of the entry picked in the drop-down.
 */
export const CHOSEN_CONNECTION = 'CHOSEN_CONNECTION_REPORTS';

/** Lines per drill-down graph at most: a connection filtered by a `connection` dimension can hold any number of reports. */
export const DRILL_DOWN_LINES = 100;

/** Each measure, one line per report of the chosen connection (fetches: per report and outcome, Success included). */
export function chosenConnectionRows(c: ReportGraphsContext): cloudwatch.IWidget[][] {
  const widgets = MEASURES.map((m) => {
    const outcomes = m.metric === MetricName.FetchOutcome;
    const query = {
      metric: m.metric,
      fn: m.fn,
      environment: c.environment,
      where: [chosenCondition(CHOSEN_CONNECTION, HAS_CONNECTION_DIMENSION)],
      groupBy: outcomes ? [Dimension.report, Dimension.outcome] : [Dimension.report],
      top: DRILL_DOWN_LINES,
    };
    return graph(outcomes ? 'Fetch outcomes per report (windows, Success and each error code)' : `${m.title} per report`, [insightsLines(query, c.period)], c.period);
  });
  return pairs(widgets);
}

/** The drop-down choosing the connection (or part of one) the drill-down graphs show; the first one at load. */
export function connectionVariable(scopes: readonly ConnectionScope[]): cloudwatch.DashboardVariable {
  return new cloudwatch.DashboardVariable({
    id: 'connection',
    label: 'connection',
    type: cloudwatch.VariableType.PATTERN,
    inputType: cloudwatch.VariableInputType.SELECT,
    value: CHOSEN_CONNECTION,
    values: cloudwatch.Values.fromValues(...scopes.map((s) => ({ label: `${s.label} (${s.reports.length} reports)`, value: s.choice }))),
    defaultValue: cloudwatch.DefaultValue.value(scopes[0]?.choice),
    visible: true,
  });
}
