import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Dimension, METRIC_NAMESPACE, MetricName, type FetchOutcome } from '../functions/aws/metrics.js';

/**
 * The stack's view of the handlers' custom metrics. Names, namespace, units and dimension names come
 * from functions/aws/metrics.ts (what the handlers emit), so an alarm cannot watch a metric nobody writes.
 */
export { METRIC_NAMESPACE, MetricName };

/**
 * POWERTOOLS_SERVICE_NAME of both functions (Powertools' default too, so local runs emit the same):
 * it becomes the `service` dimension every alarm must name. Environments differ by the `environment` dimension.
 */
export const SERVICE_NAME = 'paynet-reports';

/** A per-report pipeline metric with exactly the dimension set the handlers write: {service, report, environment}. */
export function reportMetric(
  name: Exclude<MetricName, 'FetchOutcome'>,
  environment: string,
  report: string,
  options: { statistic?: string; period?: Duration; label?: string } = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName: name,
    dimensionsMap: { [Dimension.service]: SERVICE_NAME, [Dimension.report]: report, [Dimension.environment]: environment },
    // No unit filter: an alarm with a unit ignores data points written with any other unit.
    statistic: options.statistic ?? cloudwatch.Stats.SUM,
    period: options.period ?? Duration.minutes(5),
    label: options.label ?? `${report} ${name}`,
  });
}

/** FetchOutcome for one outcome of one report: {service, report, environment, outcome}, as fetch-windows.ts writes it. */
export function fetchOutcomeMetric(
  environment: string,
  report: string,
  outcome: FetchOutcome,
  options: { period?: Duration; label?: string } = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName: MetricName.FetchOutcome,
    dimensionsMap: {
      [Dimension.service]: SERVICE_NAME,
      [Dimension.report]: report,
      [Dimension.environment]: environment,
      [Dimension.outcome]: outcome,
    },
    statistic: cloudwatch.Stats.SUM,
    period: options.period ?? Duration.minutes(5),
    label: options.label ?? `${report} ${outcome}`,
  });
}

/**
 * Every outcome of every report's fetches, one line each, found by a search expression: outcomes are
 * error codes, and a graph that lists them by hand would miss the one nobody thought of. Graphs only
 * (alarms cannot watch a search).
 */
export function fetchOutcomesSearch(environment: string, period: Duration): cloudwatch.MathExpression {
  const dims = [Dimension.environment, Dimension.outcome, Dimension.report, Dimension.service].join(',');
  return new cloudwatch.MathExpression({
    expression: `SEARCH('{${METRIC_NAMESPACE},${dims}} MetricName="${MetricName.FetchOutcome}" ${Dimension.environment}="${environment}"', 'Sum', ${period.toSeconds()})`,
    // A dynamic label: one legend entry per line, "transactions AuthenticationRefused".
    label: `\${PROP('Dim.${Dimension.report}')} \${PROP('Dim.${Dimension.outcome}')}`,
    period,
  });
}
