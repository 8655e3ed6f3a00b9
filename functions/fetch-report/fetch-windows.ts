import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { AuthenticationRefused, isPipelineError, RUN_STOPPING_CODES } from '../core/errors.js';
import { RunCredentials } from '../core/connections/run-credentials.js';
import { refuseUnprojectedWindows, type ProjectionSetting } from '../core/lake/partition-projection.js';
import type { ReportCatalog } from '../core/definitions/catalog.js';
import type { GatewaySecret } from '../core/gateway/secret.js';
import type { ReportWindow } from '../core/time/window.js';
import type { Feed } from '../core/connections/feed.js';
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
 * fails at the end: its message moves from its connection's queue to the dead-letter queue (received once;
 * sqs-runs.ts), or a direct invocation fails, and the "fetch errors" alarm fires. Nothing retries the run by itself: the next scheduled run fetches the window again (lookback), or a backfill does. Problems that
 * no window can get past (credentials refused, bad configuration) stop the run at once: repeating a refused
 * login for every window only risks the merchant account being locked. A refusal is first checked against a rotated
 * secret (functions/core/connections/run-credentials.ts): if the connection's secret changed since it was read, the
 * window is retried with the new value, and the refused attempt counts for nothing (no metric, a warning).
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
  /**
   * Where its credentials are kept, as a person finds them ('Secrets Manager secret "…"', a secret file): a refusal
   * names it as the place for the new value. Never the value itself.
   */
  readonly credentials?: string;
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
  connection: string;
  kind: FetchRequest['kind'];
  /** Newest first, as fetched. */
  windows: FetchedWindow[];
}

const codeOf = (e: unknown): FetchOutcome => (isPipelineError(e) ? e.code : 'Unexpected');

/** Several windows failed: names each one and its error code; `errors` holds the typed errors themselves. */
export class WindowFetchFailures extends AggregateError {
  readonly retryable: boolean;
  constructor(
    readonly feed: string,
    readonly failures: ReadonlyArray<{ window: string; code: FetchOutcome; error: unknown }>,
    readonly attempted: number,
  ) {
    super(
      failures.map((f) => f.error),
      `${failures.length} of ${attempted} window(s) of ${feed} failed: ` +
        failures.map((f) => `${f.window} ${f.code}`).join(', ') +
        '. Each window\'s error is logged with its window; the others were stored. Retry the run, or backfill those windows.',
    );
    this.name = 'WindowFetchFailures';
    this.retryable = failures.some((f) => isPipelineError(f.error) && f.error.retryable);
  }
}

export async function fetchWindows(request: FetchRequest, deps: FetchRunDeps, runId: string): Promise<FetchRunResult> {
  const now = deps.now ?? (() => new Date());
  const feed = deps.catalog.feed(request.reportId, request.connection);
  const report = feed.report;
  const runLogger = deps.logger.createChild({ persistentKeys: { runId, report: feed.reportId, connection: feed.connection } });
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

  const dims = { report: report.id, connection: feed.connection, environment: deps.environment };
  const fetched: FetchedWindow[] = [];
  const failures: Array<{ window: string; code: FetchOutcome; error: unknown }> = [];

  const connection = deps.connectionOf(feed.connection);
  const credentials = new RunCredentials(connection);
  try {
    await credentials.load();
  } catch (error) {
    runLogger.error('Could not read the gateway credentials: no window was fetched', { code: codeOf(error), error });
    for (const _ of plan.windows) if (deps.metrics) recordFetch(deps.metrics, dims, { outcome: codeOf(error) });
    throw error;
  }
  const refusalScope = () => ({
    connection: connection.name,
    reports: deps.catalog.reportsOver(connection.name).map((r) => r.id),
    ...(connection.credentials ? { credentials: connection.credentials } : {}),
    ...(credentials.reread ? { reread: credentials.reread } : {}),
  });

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
      const target = { feed, window, endpointUrl: connection.endpointUrl, runId, logger };
      const result = await fetchSigned(target, credentials, { ...deps, signal: budget?.signal ?? deps.signal });
      fetched.push(result);
      logger.info('Window stored', { ...result });
      if (deps.metrics) recordFetch(deps.metrics, dims, { outcome: 'Success', bytes: result.bytes, durationMs: result.durationMs });
    } catch (thrown) {
      // A refusal stops every report over the connection: it says which, and where the new value goes.
      const error = thrown instanceof AuthenticationRefused ? thrown.within(refusalScope()) : thrown;
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
  if (failures.length > 1) throw new WindowFetchFailures(`report "${report.id}" over connection "${feed.connection}"`, failures, plan.windows.length);
  return { runId, reportId: report.id, connection: feed.connection, kind: request.kind, windows: fetched };
}

/** What fetchWindow is asked for, bar the secret, which the run's credentials supply. */
type WindowTarget = { feed: Feed; window: ReportWindow; endpointUrl: string; runId: string; logger: Logger };

/**
 * One window signed with the run's credentials. When the gateway refuses them and the connection's secret has changed
 * since it was read (a rotation inside the cache), the window is tried once more with the new value: the refused
 * attempt is then no failure (no metric), only a warning. Any other refusal is thrown as it came.
 */
async function fetchSigned(target: WindowTarget, credentials: RunCredentials, deps: FetchWindowDeps): Promise<FetchedWindow> {
  try {
    return await fetchWindow({ ...target, secret: credentials.secret }, deps);
  } catch (error) {
    if (!(error instanceof AuthenticationRefused)) throw error;
    const renewal = await credentials.renewAfterRefusal();
    const refused = { login: error.login, signatureMethod: error.signatureMethod };
    switch (renewal.outcome) {
      case 'changed':
        target.logger.warn(
          "The gateway refused the credentials read earlier, and the connection's secret has changed since (rotated): retrying this window with the new value",
          { refused, now: { login: credentials.secret.login } },
        );
        // Said in the result too: a local run prints it under the window's row.
        return { ...(await fetchWindow({ ...target, secret: credentials.secret }, deps)), secretReread: 'changed' };
      case 'unchanged':
        target.logger.info("Re-read the connection's secret after the refusal: unchanged, so the refusal stands", refused);
        throw error;
      case 'unreadable':
        target.logger.warn("Could not re-read the connection's secret after the refusal: the refusal stands", { ...refused, error: renewal.error });
        throw error;
      case 'already':
        throw error;
    }
  }
}
