import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Dimension, METRIC_NAMESPACE, MetricName, PER_REPORT_METRICS } from '../functions/aws/metrics.js';
import { condition, identifier } from './metrics-insights/identifiers.js';

/**
 * The stack's view of the handlers' custom metrics. Names, namespace, units and dimension names come
 * from functions/aws/metrics.ts (what the handlers emit), so an alarm cannot watch a metric nobody writes.
 */
export { METRIC_NAMESPACE, MetricName, PER_REPORT_METRICS };

/**
 * POWERTOOLS_SERVICE_NAME of both functions (Powertools' default too, so local runs emit the same):
 * it becomes the `service` dimension every alarm must name. Environments differ by the `environment` dimension.
 */
export const SERVICE_NAME = 'paynet-reports';

/** A per-environment metric with exactly the dimension set the handlers write: {service, environment}. */
export function environmentMetric(
  name: Exclude<MetricName, 'FetchOutcome'>,
  environment: string,
  options: { statistic?: string; period?: Duration; label?: string } = {},
): cloudwatch.Metric {
  if (PER_REPORT_METRICS.has(name)) throw new Error(`${name} is written per report, not per environment (functions/aws/metrics.ts).`);
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName: name,
    dimensionsMap: { [Dimension.service]: SERVICE_NAME, [Dimension.environment]: environment },
    // No unit filter: an alarm with a unit ignores data points written with any other unit.
    statistic: options.statistic ?? cloudwatch.Stats.SUM,
    period: options.period ?? Duration.minutes(5),
    label: options.label ?? name,
  });
}

/**
 * The schema of the per-report series, {connection, environment, report, service} (+ outcome for FetchOutcome), each
 * name as Metrics Insights must read it: `SCHEMA(PaynetReports, "connection", environment, report, service)`.
 */
export function perReportSchema(name: MetricName): string {
  const dims = [Dimension.connection, Dimension.environment, ...(name === MetricName.FetchOutcome ? [Dimension.outcome] : []), Dimension.report, Dimension.service];
  return `SCHEMA(${[METRIC_NAMESPACE, ...dims].map(identifier).join(', ')})`;
}

/** At most this many series per query: the alarm keeps at most 100 contributors in ALARM anyway (docs/operations.md). */
export const CONTRIBUTOR_LIMIT = 100;

/**
 * A Metrics Insights query of one per-report metric of one connection, one series per report, largest first:
 * `SELECT SUM(RowsRejected) FROM SCHEMA(...) WHERE environment = 'prod' AND "connection" = 'eu' GROUP BY report ORDER BY SUM() DESC LIMIT 100`
 * (`connection` is one of Metrics Insights' reserved keywords, so it is double-quoted: lib/metrics-insights/).
 * ORDER BY DESC with LIMIT keeps the breaching series (the largest) within the query's 500-series limit at any
 * number of reports; the per-report metrics are written only when something is wrong, so a healthy report matches nothing.
 */
export function perReportQuery(
  name: MetricName,
  where: { environment: string; connection?: string; outcome?: string },
  aggregate: 'SUM' | 'MAX' = 'SUM',
  limit = CONTRIBUTOR_LIMIT,
): string {
  const filters = [
    condition(Dimension.environment, '=', where.environment),
    ...(where.connection !== undefined ? [condition(Dimension.connection, '=', where.connection)] : []),
    ...(where.outcome !== undefined ? [condition(Dimension.outcome, '=', where.outcome)] : []),
  ];
  const grouped = `GROUP BY ${identifier(Dimension.report)} ORDER BY ${aggregate}() DESC LIMIT ${limit}`;
  return `SELECT ${aggregate}(${identifier(name)}) FROM ${perReportSchema(name)} WHERE ${filters.join(' AND ')} ${grouped}`;
}

/** Every outcome of the environment's fetches, Success and each error code by name, one line each (graphs only). */
export function fetchOutcomesSearch(environment: string, period: Duration): cloudwatch.MathExpression {
  const dims = [Dimension.environment, Dimension.outcome, Dimension.service].join(',');
  return new cloudwatch.MathExpression({
    expression: `SEARCH('{${METRIC_NAMESPACE},${dims}} MetricName="${MetricName.FetchOutcome}" ${Dimension.environment}="${environment}"', 'Sum', ${period.toSeconds()})`,
    label: `\${PROP('Dim.${Dimension.outcome}')}`,
    period,
  });
}
