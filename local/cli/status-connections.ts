import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DescribeSecretCommand, GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { MetricName } from '../../functions/aws/metrics.js';
import { readReportSeries } from '../../functions/aws/report-series.js';
import { DEFAULT_SERVICE_NAME } from '../../functions/aws/service-name.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { parseGatewaySecret, SECRET_SHAPES } from '../../functions/core/gateway/secret.js';
import { PLACEHOLDER_SECRET } from '../../functions/core/naming.js';
import { DOCS, errorName, errorText, formatAge, OPERATIONS, unknown, type StatusItem } from './status-items.js';

/**
 * `reports status`, per connection (functions/core/connections/connection.ts): its secret, named in the environment
 * file (exists, holds credentials rather than the placeholder, when it last changed), and a line that says which
 * reports go over it, when the newest of them last loaded and when the gateway last refused its login. The
 * refusals are the FetchOutcome=AuthenticationRefused metric the fetch function writes per report (the one the
 * auth-refused alarms watch), read back REFUSAL_DAYS days. The secret's value is read only to compare it with the
 * placeholder: never printed.
 */

export interface StatusConnection {
  name: string;
  /** Its Secrets Manager secret, from the environment file (`connections.<name>.secret.name`, or `secret.name`). */
  secretName: string;
  /** The ids of the reports over it. */
  reports: readonly string[];
}

/** The newest load of a report, as the manifests tell it (status.ts reads them). */
export interface ReportLoad {
  report: string;
  dt: string;
  outcome?: string;
  finishedAt?: string;
}

/** How far back `reports status` looks for refusals: two weeks of 5-minute points (CloudWatch keeps them 63 days). */
export const REFUSAL_DAYS = 14;
const PERIOD_SECONDS = 300;

/** The text the stack writes into every field of a created secret. */
const PLACEHOLDER = PLACEHOLDER_SECRET.login;

const sinceWhen = (now: Date, iso: string | Date) => `${formatAge(now.getTime() - new Date(iso).getTime())} ago`;

/** The secret's value checked as the fetch function reads it; undefined when it holds credentials. */
function valueProblem(value: string | undefined, name: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value ?? '');
  } catch {
    return `secret "${name}" is not JSON: put ${SECRET_SHAPES} (${DOCS}, step 5)`;
  }
  const fields = parsed && typeof parsed === 'object' ? Object.values(parsed as Record<string, unknown>) : [];
  if (fields.some((v) => v === PLACEHOLDER)) {
    return `secret "${name}" still holds the placeholder (${PLACEHOLDER}): every fetch fails AuthenticationRefused until you put the credentials (${DOCS}, step 5)`;
  }
  try {
    // As the fetch function reads it: a misspelled or missing field is named here, not at the first run. Never a value.
    parseGatewaySecret(value ?? '', `secret "${name}"`);
  } catch (e) {
    if (!(e instanceof ConfigurationError)) throw e;
    return `${e.message} (${DOCS}, step 5)`;
  }
  return undefined;
}

/** One connection's secret: DescribeSecret for its existence and last change, GetSecretValue for what it holds. */
export async function checkConnectionSecret(secrets: SecretsManagerClient, connection: StatusConnection, now: Date): Promise<StatusItem> {
  const item = `secret ${connection.name}`;
  const name = connection.secretName;
  let changed = '';
  try {
    const described = await secrets.send(new DescribeSecretCommand({ SecretId: name }));
    if (described?.LastChangedDate) changed = `; last changed ${sinceWhen(now, described.LastChangedDate)}`;
  } catch (e) {
    if (errorName(e) === 'ResourceNotFoundException') {
      return { item, verdict: 'TODO', detail: `secret "${name}" does not exist: create it (secret.mode "existing") or deploy with mode "create"` };
    }
    // Without secretsmanager:DescribeSecret the value is still checked; only the date is missing.
    changed = '; when it last changed is unknown (needs secretsmanager:DescribeSecret)';
  }
  let value: string | undefined;
  try {
    value = (await secrets.send(new GetSecretValueCommand({ SecretId: name })))?.SecretString;
  } catch (e) {
    if (errorName(e) === 'ResourceNotFoundException') return { item, verdict: 'TODO', detail: `secret "${name}" has no value yet: put the credentials (${DOCS}, step 5)` };
    return unknown(item, e, `secretsmanager:GetSecretValue and kms:Decrypt on the key of "${name}"`);
  }
  const problem = valueProblem(value, name);
  if (problem) return { item, verdict: 'TODO', detail: problem };
  return { item, verdict: 'OK', detail: `secret "${name}" holds credentials, not the placeholder (the value is not shown)${changed}` };
}

/** The newest refusal of each report within REFUSAL_DAYS (absent: none), from the FetchOutcome metric. */
export async function lastRefusals(
  cloudWatch: CloudWatchClient,
  environment: string,
  reports: ReadonlyArray<{ id: string; connection: string }>,
  now: Date,
): Promise<Map<string, Date>> {
  const refused = new Map<string, Date>();
  const start = new Date(now.getTime() - REFUSAL_DAYS * 86_400_000);
  // The dimensions the fetch function writes and the auth-refused alarms watch (lib/metrics.ts).
  const request = { metric: MetricName.FetchOutcome, service: DEFAULT_SERVICE_NAME, environment, outcome: 'AuthenticationRefused', reports, start, end: now, period: PERIOD_SECONDS };
  await readReportSeries(cloudWatch, request, (report, value, t) => {
    const newest = refused.get(report);
    if (value > 0 && (!newest || t > newest)) refused.set(report, t);
  });
  return refused;
}

/**
 * The connection's line: its reports, its newest load, its newest refusal. TODO when the newest refusal came after
 * the newest load (the login is refused now); UNKNOWN when the refusals could not be read.
 */
export function connectionItem(
  environment: string,
  connection: StatusConnection,
  loads: readonly ReportLoad[],
  refusals: Map<string, Date> | { error: unknown },
  now: Date,
): StatusItem {
  const item = `connection ${connection.name}`;
  const own = new Set(connection.reports);
  const reports = `${connection.reports.length === 1 ? 'report' : 'reports'} ${connection.reports.join(', ') || '(none)'}`;
  const succeeded = loads
    .filter((l) => own.has(l.report) && (l.outcome === 'loaded' || l.outcome === 'not-parsed') && l.finishedAt && !Number.isNaN(Date.parse(l.finishedAt)))
    .sort((a, b) => Date.parse(b.finishedAt!) - Date.parse(a.finishedAt!))[0];
  const success = succeeded ? `last success ${sinceWhen(now, succeeded.finishedAt!)} (${succeeded.report}, dt=${succeeded.dt})` : 'no successful load yet';
  if ('error' in refusals) {
    const why = `could not read the refusals (${errorText(refusals.error)}); your credentials need cloudwatch:GetMetricData`;
    return { item, verdict: 'UNKNOWN', detail: `${reports}; ${success}; ${why}` };
  }
  const refused = [...refusals].filter(([r]) => own.has(r)).sort((a, b) => b[1].getTime() - a[1].getTime())[0];
  if (!refused) return { item, verdict: 'OK', detail: `${reports}; ${success}; no refusal in the last ${REFUSAL_DAYS} days` };
  const refusal = `last refusal ${sinceWhen(now, refused[1])} (${refused[0]})`;
  if (succeeded && Date.parse(succeeded.finishedAt!) > refused[1].getTime()) return { item, verdict: 'OK', detail: `${reports}; ${success}; ${refusal}, loaded since` };
  return {
    item,
    verdict: 'TODO',
    detail:
      `${reports}; ${success}; ${refusal}: the gateway refuses this login. Check its secret and the provider ` +
      `(npm run reports -- check --environment ${environment} --connection ${connection.name}; ${OPERATIONS}), then backfill the windows missed`,
  };
}
