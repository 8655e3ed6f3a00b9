import type { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ErrorCode } from '../core/errors.js';

/**
 * The pipeline's CloudWatch metrics: names, units and dimensions in one place, so the handlers that emit
 * them and the CDK alarms that watch them cannot drift apart. No runtime imports: the CDK app can load
 * this module without pulling in Powertools.
 *
 * A custom metric is billed per distinct dimension set and hour it receives data, so only the series an alarm
 * or a dashboard widget reads per report carry the `report` dimension (docs/deploy.md, "What it costs"):
 *
 * - per report, {service, connection, environment, report}, only when something is wrong: RowsRejected (> 0),
 *   QualityFindings (> 0), DuplicateKeys (> 0), ReportStale (1) and FetchOutcome of a failure (+ `outcome`). A healthy
 *   report therefore keeps no series alive, whatever its window.
 * - per environment, {service, environment}: LoadsCompleted, RowsWritten, FetchBytes, FetchDurationMs, LoadLagSeconds,
 *   and FetchOutcome of every outcome, Success included (+ `outcome`). The freshness check reads each report's loads
 *   from its manifests, not from a metric (functions/check-freshness/).
 *
 * `connection` costs no series (a report has one connection) and lets an alarm or a widget take one
 * connection's reports with `WHERE connection = '…'`. Powertools adds `service`, from POWERTOOLS_SERVICE_NAME.
 */

export const METRIC_NAMESPACE = 'PaynetReports';

export const MetricName = {
  /** Bytes of one raw report file, per fetched window; per environment. */
  FetchBytes: 'FetchBytes',
  /** From the request to the raw object being stored, per fetched window; per environment. */
  FetchDurationMs: 'FetchDurationMs',
  /**
   * 1 per fetched window, dimension `outcome`: "Success" or the PipelineError code (or "Unexpected"). Every
   * outcome per environment; a failure also per report (the auth-refused alarm groups those by report).
   */
  FetchOutcome: 'FetchOutcome',
  /** Rows landed in the Parquet table, per parsed file; per environment. */
  RowsWritten: 'RowsWritten',
  /** Rows quarantined to rejected/, per parsed file that had any; per report. */
  RowsRejected: 'RowsRejected',
  /** Seconds from the window's end to its Parquet file landing, per loaded CSV file; per environment. */
  LoadLagSeconds: 'LoadLagSeconds',
  /**
   * 1 per window whose load completed: a CSV converted (zero rows included: a header-only report is a
   * genuine day without sales) or a PDF stored unparsed. Never for a failed load. Per environment: rows cannot stand
   * in for it, since both of those loads write none.
   */
  LoadsCompleted: 'LoadsCompleted',
  /**
   * Per loaded CSV window whose data checks found something (functions/core/quality/checks.ts: volume far
   * from the same slot of earlier weeks, rows or sum; repeated keys): how many. Nothing when all passed.
   */
  QualityFindings: 'QualityFindings',
  /** Per loaded CSV window of a report that declares `keys`, when any: rows repeating a key already seen in the window. */
  DuplicateKeys: 'DuplicateKeys',
  /** 1 per freshness check for each report with no completed load within its window plus the grace; nothing for the others. */
  ReportStale: 'ReportStale',
} as const;
export type MetricName = (typeof MetricName)[keyof typeof MetricName];

export const Dimension = {
  service: 'service',
  connection: 'connection',
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
  ReportStale: 'Count',
} as const satisfies Record<MetricName, Unit>;

/** The metrics that carry the `report` (and `connection`) dimension; the others are per environment. */
export const PER_REPORT_METRICS: ReadonlySet<MetricName> = new Set<MetricName>([
  MetricName.RowsRejected,
  MetricName.QualityFindings,
  MetricName.DuplicateKeys,
  MetricName.ReportStale,
  MetricName.FetchOutcome,
]);

/** "Success", a PipelineError code, or "Unexpected" for anything untyped. */
export type FetchOutcome = 'Success' | 'Unexpected' | ErrorCode;

export interface MetricDimensions {
  report: string;
  /** The report's connection (ReportDefinition.connection). */
  connection: string;
  environment: string;
}

/**
 * Emits one metric at once with its own dimension set. One invocation can touch several reports (an SQS
 * batch of the parse function), so dimensions are per data point, not per invocation: each call writes
 * one EMF line and needs no publishStoredMetrics(). `scope` "environment" leaves report and connection out.
 */
export function emitMetric(
  metrics: Metrics,
  name: MetricName,
  value: number,
  dimensions: MetricDimensions & { outcome?: string },
  scope: 'report' | 'environment' = PER_REPORT_METRICS.has(name) ? 'report' : 'environment',
): void {
  const single = metrics.singleMetric();
  // addDimension, not addDimensions: in Powertools 2.x the latter starts a second, separate dimension set.
  if (scope === 'report') {
    single.addDimension(Dimension.connection, dimensions.connection);
    single.addDimension(Dimension.report, dimensions.report);
  }
  single.addDimension(Dimension.environment, dimensions.environment);
  if (dimensions.outcome !== undefined) single.addDimension(Dimension.outcome, dimensions.outcome);
  single.addMetric(name, MetricUnitOf[name], value);
}

/** Emits a per-report metric only when it has something to say: a healthy report keeps no series of it alive. */
function emitWhenPositive(metrics: Metrics, name: MetricName, value: number | undefined, dims: MetricDimensions): void {
  if (value !== undefined && value > 0) emitMetric(metrics, name, value, dims);
}

/** One fetched window: its outcome always (a failure per report too); bytes and duration when known. */
export function recordFetch(
  metrics: Metrics,
  dims: MetricDimensions,
  result: { outcome: FetchOutcome; bytes?: number; durationMs?: number },
): void {
  emitMetric(metrics, MetricName.FetchOutcome, 1, { ...dims, outcome: result.outcome }, 'environment');
  if (result.outcome !== 'Success') emitMetric(metrics, MetricName.FetchOutcome, 1, { ...dims, outcome: result.outcome }, 'report');
  if (result.bytes !== undefined) emitMetric(metrics, MetricName.FetchBytes, result.bytes, dims);
  if (result.durationMs !== undefined) emitMetric(metrics, MetricName.FetchDurationMs, result.durationMs, dims);
}

/** One window's load completed (see MetricName.LoadsCompleted): call once per successful load, CSV or PDF. */
export function recordLoadCompleted(metrics: Metrics, dims: MetricDimensions): void {
  emitMetric(metrics, MetricName.LoadsCompleted, 1, dims);
}

/** One parsed file: rows written, rejected rows when any, and how late the window's data landed. */
export function recordLoad(
  metrics: Metrics,
  dims: MetricDimensions,
  result: { rowsWritten: number; rowsRejected: number; loadLagSeconds?: number },
): void {
  emitMetric(metrics, MetricName.RowsWritten, result.rowsWritten, dims);
  emitWhenPositive(metrics, MetricName.RowsRejected, result.rowsRejected, dims);
  if (result.loadLagSeconds !== undefined) emitMetric(metrics, MetricName.LoadLagSeconds, result.loadLagSeconds, dims);
}

/** One loaded window's data checks: findings and repeated keys, each only when there are some. */
export function recordQuality(metrics: Metrics, dims: MetricDimensions, result: { findings: number; duplicateKeys?: number }): void {
  emitWhenPositive(metrics, MetricName.QualityFindings, result.findings, dims);
  emitWhenPositive(metrics, MetricName.DuplicateKeys, result.duplicateKeys, dims);
}

/** One report found late by the freshness check. */
export function recordStale(metrics: Metrics, dims: MetricDimensions): void {
  emitMetric(metrics, MetricName.ReportStale, 1, dims);
}
