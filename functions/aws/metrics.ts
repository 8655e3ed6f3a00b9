import type { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ErrorCode } from '../core/errors.js';

/**
 * The pipeline's CloudWatch metrics: names, units and dimensions in one place, so the handlers that emit
 * them and the CDK alarms that watch them cannot drift apart. No runtime imports: the CDK app can load
 * this module without pulling in Powertools.
 *
 * Every metric carries the dimensions {service, report, environment} (Powertools adds `service`, from
 * POWERTOOLS_SERVICE_NAME); FetchOutcome adds `outcome`. An alarm must name the full set to match.
 */

export const METRIC_NAMESPACE = 'PaynetReports';

export const MetricName = {
  /** Bytes of one raw report file, per fetched window. */
  FetchBytes: 'FetchBytes',
  /** From the request to the raw object being stored, per fetched window. */
  FetchDurationMs: 'FetchDurationMs',
  /** 1 per fetched window, dimension `outcome`: "Success" or the PipelineError code (or "Unexpected"). */
  FetchOutcome: 'FetchOutcome',
  /** Rows landed in the Parquet table, per parsed file. */
  RowsWritten: 'RowsWritten',
  /** Rows quarantined to rejected/, per parsed file. */
  RowsRejected: 'RowsRejected',
  /** Seconds from the window's end to its Parquet file landing, per loaded CSV file. */
  LoadLagSeconds: 'LoadLagSeconds',
  /**
   * 1 per window whose load completed: a CSV converted (zero rows included: a header-only report is a
   * genuine day without sales) or a PDF stored unparsed. Never for a failed load. The freshness alarm
   * watches its absence; rows cannot stand in for it, since both of those loads write none.
   */
  LoadsCompleted: 'LoadsCompleted',
  /**
   * Per loaded CSV window: how many of its data checks found something (functions/core/quality/checks.ts:
   * volume far from the same slot of earlier weeks, rows or sum; repeated keys). 0 when all passed or were
   * not judged. The data-quality alarm fires above 0.
   */
  QualityFindings: 'QualityFindings',
  /** Per loaded CSV window of a report that declares `keys`: rows repeating a key already seen in the window. */
  DuplicateKeys: 'DuplicateKeys',
} as const;
export type MetricName = (typeof MetricName)[keyof typeof MetricName];

export const Dimension = {
  service: 'service',
  report: 'report',
  environment: 'environment',
  outcome: 'outcome',
} as const;

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/** The CloudWatch unit of each metric (CDK alarms can use the same). */
export const MetricUnitOf = {
  FetchBytes: 'Bytes',
  FetchDurationMs: 'Milliseconds',
  FetchOutcome: 'Count',
  RowsWritten: 'Count',
  RowsRejected: 'Count',
  LoadLagSeconds: 'Seconds',
  LoadsCompleted: 'Count',
  QualityFindings: 'Count',
  DuplicateKeys: 'Count',
} as const satisfies Record<MetricName, Unit>;

/** "Success", a PipelineError code, or "Unexpected" for anything untyped. */
export type FetchOutcome = 'Success' | 'Unexpected' | ErrorCode;

export interface MetricDimensions {
  report: string;
  environment: string;
}

/**
 * Emits one metric at once with its own dimension set. One invocation can touch several reports (an SQS
 * batch of the parse function), so dimensions are per data point, not per invocation: each call writes
 * one EMF line and needs no publishStoredMetrics().
 */
export function emitMetric(
  metrics: Metrics,
  name: MetricName,
  value: number,
  dimensions: MetricDimensions & { outcome?: string },
): void {
  const single = metrics.singleMetric();
  // addDimension, not addDimensions: in Powertools 2.x the latter starts a second, separate dimension set.
  single.addDimension(Dimension.report, dimensions.report);
  single.addDimension(Dimension.environment, dimensions.environment);
  if (dimensions.outcome !== undefined) single.addDimension(Dimension.outcome, dimensions.outcome);
  single.addMetric(name, MetricUnitOf[name], value);
}

/** One fetched window: its outcome always; bytes and duration when known. */
export function recordFetch(
  metrics: Metrics,
  dims: MetricDimensions,
  result: { outcome: FetchOutcome; bytes?: number; durationMs?: number },
): void {
  emitMetric(metrics, MetricName.FetchOutcome, 1, { ...dims, outcome: result.outcome });
  if (result.bytes !== undefined) emitMetric(metrics, MetricName.FetchBytes, result.bytes, dims);
  if (result.durationMs !== undefined) emitMetric(metrics, MetricName.FetchDurationMs, result.durationMs, dims);
}

/** One window's load completed (see MetricName.LoadsCompleted): call once per successful load, CSV or PDF. */
export function recordLoadCompleted(metrics: Metrics, dims: MetricDimensions): void {
  emitMetric(metrics, MetricName.LoadsCompleted, 1, dims);
}

/** One parsed file: rows written and rejected, and how late the window's data landed. */
export function recordLoad(
  metrics: Metrics,
  dims: MetricDimensions,
  result: { rowsWritten: number; rowsRejected: number; loadLagSeconds?: number },
): void {
  emitMetric(metrics, MetricName.RowsWritten, result.rowsWritten, dims);
  emitMetric(metrics, MetricName.RowsRejected, result.rowsRejected, dims);
  if (result.loadLagSeconds !== undefined) emitMetric(metrics, MetricName.LoadLagSeconds, result.loadLagSeconds, dims);
}

/** One loaded window's data checks: findings always (0 included, so the graph shows checked loads); repeated keys when keys are declared. */
export function recordQuality(metrics: Metrics, dims: MetricDimensions, result: { findings: number; duplicateKeys?: number }): void {
  emitMetric(metrics, MetricName.QualityFindings, result.findings, dims);
  if (result.duplicateKeys !== undefined) emitMetric(metrics, MetricName.DuplicateKeys, result.duplicateKeys, dims);
}
