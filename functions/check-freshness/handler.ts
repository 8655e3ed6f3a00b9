import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { Context } from 'aws-lambda';
import { loadCatalog } from '../core/definitions/catalog-files.js';
import { groupByLookback, staleReports, type WatchedReport } from '../core/freshness/stale-reports.js';
import { ConfigurationError } from '../core/errors.js';
import { completedLoads } from '../aws/report-series.js';
import { requiredEnv } from '../aws/env.js';
import { recordStale } from '../aws/metrics.js';
import { logger, metrics, tracer } from '../aws/powertools.js';
import { serviceName } from '../aws/service-name.js';

/**
 * The freshness check: one EventBridge Scheduler schedule invokes it every few minutes (lib/constructs/freshness.ts;
 * while the environment's schedules are off, it is off too). It reads each report's completed loads within its window
 * plus the grace and writes ReportStale = 1 for each report with none, nothing for the others: the no-fresh-data alarm
 * of the report's connection groups those by report. A report that stopped loading altogether has no series of its
 * own left for an alarm to see; the catalog still names it, and this check finds it.
 *
 * Environment: PIPELINE_ENVIRONMENT, FRESHNESS_GRACE_HOURS (+ POWERTOOLS_*). The event is the Scheduler's and is not read.
 */

export const GRACE_VARIABLE = 'FRESHNESS_GRACE_HOURS';

/** What a check found: the reports it looked at and the late ones. */
export interface FreshnessResult {
  checked: number;
  stale: Array<{ report: string; connection: string; lookbackHours: number }>;
}

let cloudWatch: CloudWatchClient | undefined;
// Loaded once per container: the definitions are bundled, not read per invocation.
let watched: WatchedReport[] | undefined;

function graceHours(): number {
  const text = requiredEnv(GRACE_VARIABLE);
  const hours = Number(text);
  if (!Number.isInteger(hours) || hours < 0) {
    throw new ConfigurationError(`${GRACE_VARIABLE} is "${text}", not a whole number of hours: the stack sets it from freshnessGraceHours; deploy again.`);
  }
  return hours;
}

export async function handler(_event: unknown, context?: Context): Promise<FreshnessResult> {
  if (context) logger.addContext(context);
  const environment = requiredEnv('PIPELINE_ENVIRONMENT');
  const grace = graceHours();
  const reports = (watched ??= loadCatalog().reports.map((r) => ({ id: r.id, connection: r.connection, window: r.window })));
  const groups = groupByLookback(reports, grace);
  cloudWatch ??= tracer.captureAWSv3Client(new CloudWatchClient({}));
  const loads = await completedLoads(cloudWatch, { environment, service: serviceName, groups, now: new Date() });
  const hoursOf = new Map(groups.flatMap((g) => g.reports.map((r) => [r.id, g.hours] as const)));
  const stale = staleReports(reports, loads).map((r) => ({ report: r.id, connection: r.connection, lookbackHours: hoursOf.get(r.id)! }));
  for (const s of stale) recordStale(metrics, { report: s.report, connection: s.connection, environment });
  if (stale.length) logger.warn('Reports with no completed load within their window plus the grace', { stale });
  else logger.info('Every report loaded within its window plus the grace', { checked: reports.length });
  return { checked: reports.length, stale };
}
