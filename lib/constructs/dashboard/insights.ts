import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Dimension, MetricName } from '../../../functions/aws/metrics.js';
import { perReportSchema } from '../../metrics.js';
import { condition, identifier } from '../../metrics-insights/identifiers.js';
import { DASHBOARD_LIMITS } from './limits.js';

/** A Metrics Insights aggregate: what each time bucket shows. */
export type InsightsFunction = 'SUM' | 'MAX';

export interface InsightsQuery {
  readonly metric: MetricName;
  readonly fn: InsightsFunction;
  readonly environment: string;
  /** Extra conditions, each parenthesised or atomic, ANDed after the environment's. */
  readonly where?: readonly string[];
  /** Dimensions to draw one line each for; absent: one line, the total. */
  readonly groupBy?: readonly string[];
  /** Keep the top n lines by the query's function over the graph's range, largest first. */
  readonly top?: number;
}

/**
 * The handlers' dimension set for a per-report metric (lib/metrics.ts, from functions/aws/metrics.ts): SCHEMA matches
 * exactly that set, so a query counts each data point once, and never the per-environment copy of FetchOutcome.
 */
const schemaOf = (metric: MetricName): string => perReportSchema(metric);

/** The metrics carry a `connection` dimension: a connection's queries filter on it instead of listing its reports. */
export const HAS_CONNECTION_DIMENSION = (Object.values(Dimension) as string[]).includes('connection');

/**
 * The query text, every name quoted as Metrics Insights requires (lib/metrics-insights/identifiers.ts):
 * `SELECT SUM(RowsRejected) FROM SCHEMA(...) WHERE environment = 'prod' AND "connection" = 'eu' GROUP BY report ...`.
 */
export function insightsQuery(q: InsightsQuery): string {
  const where = [condition(Dimension.environment, '=', q.environment), ...(q.where ?? [])].join(' AND ');
  const group = q.groupBy?.length ? ` GROUP BY ${q.groupBy.map(identifier).join(', ')}` : '';
  // ORDER BY keeps the lines that matter when a query would return more than its 500.
  const order = q.groupBy?.length ? ` ORDER BY ${q.fn}() DESC LIMIT ${q.top ?? DASHBOARD_LIMITS.seriesPerQuery}` : '';
  return `SELECT ${q.fn}(${identifier(q.metric)}) FROM ${schemaOf(q.metric)} WHERE ${where}${group}${order}`;
}

/** A graph line (or lines, grouped) from a query; `label` names a single line, a grouped query labels its own. */
export function insightsLines(q: InsightsQuery, period: Duration, label?: string): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({ expression: insightsQuery(q), period, ...(label === undefined ? {} : { label }) });
}

/** Windows whose fetch failed: every outcome but Success (error codes, "Unexpected"). */
export const FAILED_FETCH = condition(Dimension.outcome, '!=', 'Success');

/**
 * Room left for a connection's condition in the longest query the dashboard builds over a connection (fetch failures
 * per report and outcome), so every query stays within the documented length.
 */
export function conditionBudget(environment: string): number {
  const longest = insightsQuery({
    metric: MetricName.FetchOutcome,
    fn: 'SUM',
    environment,
    where: [FAILED_FETCH, ''],
    groupBy: [Dimension.report, Dimension.outcome],
  });
  return DASHBOARD_LIMITS.queryLength - longest.length;
}
