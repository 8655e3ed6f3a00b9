import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Dimension, METRIC_NAMESPACE, MetricName } from '../functions/aws/metrics.js';

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
