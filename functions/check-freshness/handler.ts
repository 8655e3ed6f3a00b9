import type { Context } from 'aws-lambda';
import { loadCatalog } from '../core/definitions/catalog-files.js';
import { freshSince, lookbackHours, type WatchedReport } from '../core/freshness/stale-reports.js';
import { ConfigurationError } from '../core/errors.js';
import { functionS3Client, requiredEnv } from '../aws/env.js';
import { recordStale } from '../aws/metrics.js';
import { logger, metrics } from '../aws/powertools.js';
import { reportsWithoutLoads } from './completed-loads.js';

/**
 * The freshness check: one EventBridge Scheduler schedule invokes it every few minutes (lib/constructs/freshness.ts;
 * while the environment's schedules are off, it is off too). It looks for each report's completed loads within its
 * window plus the grace, in the manifests of the curated bucket (completed-loads.ts), and writes ReportStale = 1 for
 * each report with none, nothing for the others: the no-fresh-data alarm of the report's connection groups those by
 * report. A report that stopped loading altogether has no series of its own left for an alarm to see; the catalog
 * still names it, and this check finds it.
 *
 * Environment: CURATED_BUCKET, PIPELINE_ENVIRONMENT, FRESHNESS_GRACE_HOURS (+ POWERTOOLS_*).
 */

export const GRACE_VARIABLE = 'FRESHNESS_GRACE_HOURS';

/** The Scheduler's input (lib/constructs/freshness.ts): the run's scheduled time, so a delayed run judges its own moment. */
export interface FreshnessEvent {
  scheduledTime?: string;
}

/** What a check found: the reports it looked at and the late ones. */
export interface FreshnessResult {
  checked: number;
  stale: Array<{ report: string; connection: string; lookbackHours: number }>;
}

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

function checkTime(event: FreshnessEvent | undefined): Date {
  const text = event?.scheduledTime;
  if (text === undefined) return new Date();
  const time = new Date(text);
  if (Number.isNaN(time.getTime())) throw new ConfigurationError(`scheduledTime is "${text}", not an ISO-8601 time: the schedule passes <aws.scheduler.scheduled-time>.`);
  return time;
}

export async function handler(event: FreshnessEvent | undefined, context?: Context): Promise<FreshnessResult> {
  if (context) logger.addContext(context);
  const environment = requiredEnv('PIPELINE_ENVIRONMENT');
  const bucket = requiredEnv('CURATED_BUCKET');
  const grace = graceHours();
  const now = checkTime(event);
  // One watched entry per feed: a provider that stopped loading is late even while the report's other connections load.
  const reports = (watched ??= loadCatalog()
    .feeds()
    .map(({ reportId, connection, report: r }) => ({ reportId, connection, window: r.window, lookback: r.lookback, timeZone: r.schedule.timeZone })));
  const late = await reportsWithoutLoads(functionS3Client(), bucket, reports, (r) => freshSince(r, grace, now));
  const stale = late.map((r) => ({ report: r.reportId, connection: r.connection, lookbackHours: lookbackHours(r.window, grace) }));
  for (const s of stale) recordStale(metrics, { report: s.report, connection: s.connection, environment });
  if (stale.length) logger.warn('Reports with no completed load within their window plus the grace', { stale });
  else logger.info('Every report loaded within its window plus the grace', { checked: reports.length });
  return { checked: reports.length, stale };
}
