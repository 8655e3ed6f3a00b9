import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { isPipelineError, RUN_STOPPING_CODES } from '../core/errors.js';
import { refuseUnprojectedWindows, type ProjectionSetting } from '../core/lake/partition-projection.js';
import type { ReportCatalog } from '../core/definitions/catalog.js';
import type { GatewaySecret } from '../core/gateway/secret.js';
import { recordFetch, type FetchOutcome } from '../aws/metrics.js';
import type { FetchRequest } from './fetch-event.js';
import { fetchWindow, windowLabel, type FetchedWindow, type FetchWindowDeps } from './fetch-window.js';
import { planWindows } from './plan-windows.js';
import { windowBudget, windowShareMs } from './window-budget.js';

/**
 * One fetch run: the windows of a scheduled firing (with lookback) or of a backfill request, each fetched
 * into its own raw key. The fetch function's handler, the local pipeline and the tests all call this with
 * their own dependencies (S3 client, secret loader, clock, gateway endpoint).
 *
 * Failure policy: a failed window does not stop the others (each overwrites only its own key), but the run
 * fails at the end: the invocation's error sends the event to the failed-runs queue (Lambda's on-failure
 * destination; the function allows no Lambda retries) and the "fetch errors" alarm fires. Nothing retries the
 * run by itself: the next scheduled run fetches the window again (lookback), or a backfill does. Problems that
 * no window can get past (credentials refused, bad configuration) stop the run at once: repeating a refused
 * login for every window only risks the merchant account being locked.
 */

/** One connection as a run uses it (functions/core/connections/connection.ts): where to call, and as whom. */
export interface GatewayConnection {
  readonly name: string;
  /** The gateway's full rpt-engine URL. */
  readonly endpointUrl: string;
  /**
   * The credentials: Secrets Manager in Lambda (cached), a file or the simulator's locally. `fresh` reads past any
   * cache: a refused login is retried once with a value changed since it was read (rotation).
   */
  loadSecret(options?: { fresh?: boolean }): Promise<GatewaySecret>;
}

export interface FetchRunDeps extends FetchWindowDeps {
  catalog: ReportCatalog;
  /** The connection a report names; throws a ConfigurationError for one this deployment does not define. */
  connectionOf: (name: string) => GatewayConnection;
  /** The `environment` metric dimension (PIPELINE_ENVIRONMENT). */
  environment: string;
  logger: Logger;
  /** Omit to emit no metrics (local runs: EMF lines would only clutter the terminal). */
  metrics?: Metrics;
  /**
   * When the run must have ended (epoch ms; the handler's deadline): each window gets an even share of what is left
   * (window-budget.ts). Omitted locally, where no time-out cuts a run off.
   */
  runDeadlineAt?: number;
  /** Where Athena's projection of dt starts: a window outside it is refused before any is fetched (partition-projection.ts). */
  projection?: ProjectionSetting;
}

export interface FetchRunResult {
  runId: string;
  reportId: string;
  kind: FetchRequest['kind'];
  /** Newest first, as fetched. */
  windows: FetchedWindow[];
}

const codeOf = (e: unknown): FetchOutcome => (isPipelineError(e) ? e.code : 'Unexpected');

/** Several windows failed: names each one and its error code; `errors` holds the typed errors themselves. */
export class WindowFetchFailures extends AggregateError {
  readonly retryable: boolean;
  constructor(
    readonly reportId: string,
    readonly failures: ReadonlyArray<{ window: string; code: FetchOutcome; error: unknown }>,
    readonly attempted: number,
  ) {
    super(
      failures.map((f) => f.error),
      `${failures.length} of ${attempted} window(s) of report "${reportId}" failed: ` +
        failures.map((f) => `${f.window} ${f.code}`).join(', ') +
        '. Each window\'s error is logged with its window; the others were stored. Retry the run, or backfill those windows.',
    );
    this.name = 'WindowFetchFailures';
    this.retryable = failures.some((f) => isPipelineError(f.error) && f.error.retryable);
  }
}

export async function fetchWindows(request: FetchRequest, deps: FetchRunDeps, runId: string): Promise<FetchRunResult> {
  const now = deps.now ?? (() => new Date());
  const report = deps.catalog.get(request.reportId);
  const runLogger = deps.logger.createChild({ persistentKeys: { runId, report: request.reportId, connection: report.connection } });
  const plan = planWindows(request, report, now());
  if (deps.projection) refuseUnprojectedWindows(report.id, plan.windows, deps.projection, now());
  const labels = plan.windows.map(windowLabel);
  if (plan.basis?.fromInvocationTime) {
    runLogger.warn('The event has no scheduledTime: the window is computed from the invocation time instead', {
      invocationTime: plan.basis.scheduledTime.toISOString(),
    });
  }
  runLogger.info('Fetch run planned', {
    kind: request.kind,
    ...(plan.basis ? { scheduledTime: plan.basis.scheduledTime.toISOString() } : {}),
    timeZone: report.schedule.timeZone,
    windows: labels,
  });

  const dims = { report: report.id, environment: deps.environment };
  const fetched: FetchedWindow[] = [];
  const failures: Array<{ window: string; code: FetchOutcome; error: unknown }> = [];

  const connection = deps.connectionOf(report.connection);
  let secret: GatewaySecret;
  try {
    secret = await connection.loadSecret();
  } catch (error) {
    runLogger.error('Could not read the gateway credentials: no window was fetched', { code: codeOf(error), error });
    for (const _ of plan.windows) if (deps.metrics) recordFetch(deps.metrics, dims, { outcome: codeOf(error) });
    throw error;
  }

  for (const [i, window] of plan.windows.entries()) {
    const label = labels[i]!;
    const logger = runLogger.createChild({ persistentKeys: { window: label } });
    const left = plan.windows.length - i;
    // The last window's share is the rest of the run: the run's own deadline (deps.signal) already ends it.
    const budget =
      deps.runDeadlineAt === undefined || left === 1
        ? undefined
        : windowBudget(deps.signal, windowShareMs(deps.runDeadlineAt, Date.now(), i, plan.windows.length), label, left);
    try {
      const result = await fetchWindow({ report, window, endpointUrl: connection.endpointUrl, secret, runId, logger }, { ...deps, signal: budget?.signal ?? deps.signal });
      fetched.push(result);
      logger.info('Window stored', { ...result });
      if (deps.metrics) recordFetch(deps.metrics, dims, { outcome: 'Success', bytes: result.bytes, durationMs: result.durationMs });
    } catch (error) {
      const code = codeOf(error);
      failures.push({ window: label, code, error });
      logger.error('Window failed', { code, error });
      if (deps.metrics) recordFetch(deps.metrics, dims, { outcome: code });
      if (isPipelineError(error) && RUN_STOPPING_CODES.has(error.code)) {
        const skipped = labels.slice(i + 1);
        if (skipped.length) runLogger.warn(`${code}: the remaining windows were not tried`, { skipped });
        throw error;
      }
    } finally {
      budget?.clear();
    }
  }

  runLogger.info('Fetch run finished', { stored: fetched.length, failed: failures.length });
  if (failures.length === 1) throw failures[0]!.error;
  if (failures.length > 1) throw new WindowFetchFailures(report.id, failures, plan.windows.length);
  return { runId, reportId: report.id, kind: request.kind, windows: fetched };
}
