import { AthenaClient, GetQueryExecutionCommand, GetQueryResultsCommand, StartQueryExecutionCommand } from '@aws-sdk/client-athena';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { requireAwsAccess } from '../args/aws-access.js';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { ListSchedulesCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { stackName } from '../../functions/core/naming.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { ColumnDefinition } from '../../functions/core/definitions/report-definition.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { areaPrefix, parseCuratedKey, partitionStart } from '../../functions/core/lake/s3-keys.js';
import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import { feedId, type FeedKey } from '../../functions/core/connections/feed.js';
import { athenaType, ident, literal, PARTITION_KEY, valueAggregates, type ValueAggregateKind } from '../../functions/core/definitions/table-schema.js';
import { parseWindowSize } from '../../functions/core/time/window.js';
import { deployedStaleItem } from '../lake/stale-notice.js';
import { checkAlarms } from './status-alarms.js';
import { subscriptionName, whenPending } from '../alarms/subscription-names.js';
import { checkConnectionSecret, connectionItem, lastRefusals, type ReportLoad, type StatusConnection } from './status-connections.js';
import { DOCS, errorName, formatAge, OPERATIONS, unknown, type StatusItem } from './status-items.js';

/**
 * `reports status --environment NAME`: after a deploy, with the operator's AWS credentials, what is in place and
 * what is left to do. Reads the stack's outputs (and prints the egress IPs to allow-list when the stack has them), then
 * one check per item: alarm channels subscribed and confirmed (each named by its kind, an integration by its key's last four characters), the alarms in ALARM with the reports each names (local/cli/status-alarms.ts),
 * schedules enabled; per connection (local/cli/status-connections.ts)
 * its reports with their newest load and its newest refusal, its secret (named by the environment file) no longer
 * holding the placeholder, and the newest load of each of its reports (outcome, age); messages waiting in each
 * dead-letter queue, and one query per report through the workgroup that reads every
 * value of the newest `dt`, and the data checks' findings of the last days' loads. A check that cannot be made (no permission, a throttled call) says so and the others
 * still run. The secret's value is read only to compare it with the placeholder: it is never printed.
 *
 * The query reads values, not footers. Athena answers a `count(*)` from the row counts in the Parquet footers,
 * so a file whose column types disagree with the Glue table (INT64 where the table says decimal(18,3) or
 * string) still counts. The query selects the count and, per column of the report's definition, aggregates
 * that decode it (functions/core/definitions/table-schema.ts, valueAggregates: the same column list the Glue table is
 * generated from), filtered on the newest `dt` so it scans one partition. When it fails, the line is TODO and
 * names the column and the two types Athena's reason gives; what to do is in docs/operations.md, "A table that
 * does not read". When it succeeds, the line gives the count, the first timestamp column's range and each
 * decimal's sum, where a wrong scale or unit shows. A PDF report has no table: nothing to read.
 */

export type { StatusItem, Verdict } from './status-items.js';

export interface StatusClients {
  cloudFormation: CloudFormationClient;
  secrets: SecretsManagerClient;
  sns: SNSClient;
  scheduler: SchedulerClient;
  s3: S3Client;
  sqs: SQSClient;
  athena: AthenaClient;
  cloudWatch: CloudWatchClient;
}

export interface StatusReport {
  id: string;
  window: string;
  columns: readonly ColumnDefinition[];
  /** Its connections, a feed each (default: ["default"]). */
  connections?: readonly string[];
}

/** A report over one of its connections, as the status checks each feed's newest load and findings. */
interface StatusFeed extends FeedKey {
  report: StatusReport;
  /** How its lines name it: the report alone when it has one connection. */
  name: string;
}

/** Each report over each of its connections: its own, else those of the environment that list it, else `default`. */
const statusFeeds = (input: Pick<StatusInput, 'reports' | 'connections'>): StatusFeed[] =>
  input.reports.flatMap((report) => {
    const listing = input.connections.filter((c) => c.reports.includes(report.id)).map((c) => c.name);
    const connections = report.connections ?? (listing.length ? listing : [DEFAULT_CONNECTION]);
    return connections.map((connection) => ({ reportId: report.id, connection, report, name: connections.length > 1 ? `${report.id} over ${connection}` : report.id }));
  });

export interface StatusInput {
  environment: string;
  /** The reports of the catalog: id, window ("P1D") and columns (the definition's, which the Glue table is generated from). */
  reports: ReadonlyArray<StatusReport>;
  /** The environment's connections: each one's secret (by name) and reports. */
  connections: ReadonlyArray<StatusConnection>;
  /** The environment's freshnessGraceHours: a newest load older than window + grace is late. */
  freshnessGraceHours: number;
  clients: StatusClients;
  now?: () => Date;
  /** Between polls of a running Athena query. */
  sleep?: (ms: number) => Promise<void>;
  /** How long to wait for each report's query. */
  queryTimeoutMs?: number;
}

async function stackOutputs(input: StatusInput): Promise<{ items: StatusItem[]; outputs?: Record<string, string> }> {
  const name = stackName(input.environment);
  let stack;
  try {
    stack = (await input.clients.cloudFormation.send(new DescribeStacksCommand({ StackName: name }))).Stacks?.[0];
  } catch (e) {
    if (errorName(e) === 'ValidationError' && /does not exist/.test(String((e as Error).message))) {
      return { items: [{ item: 'stack', verdict: 'TODO', detail: `${name} is not deployed in this account and region: npx cdk deploy ${name} (${DOCS}, step 4)` }] };
    }
    return { items: [unknown('stack', e, 'cloudformation:DescribeStacks')] };
  }
  const status = stack?.StackStatus ?? 'UNKNOWN';
  const outputs = Object.fromEntries((stack?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
  if (status === 'ROLLBACK_COMPLETE' || status === 'ROLLBACK_FAILED') {
    return {
      items: [
        {
          item: 'stack',
          verdict: 'TODO',
          detail:
            `${name} is ${status}: its first deploy failed and it cannot be updated. Read the first failed event ` +
            `(aws cloudformation describe-stack-events --stack-name ${name}), fix the cause, then delete the stack and deploy again ` +
            `(${DOCS}, "A first deploy that failed")`,
        },
      ],
    };
  }
  if (/_IN_PROGRESS$/.test(status)) {
    return { items: [{ item: 'stack', verdict: 'UNKNOWN', detail: `${name} is ${status}: run this again when it is done` }], outputs };
  }
  const ok = /_COMPLETE$/.test(status) && !/ROLLBACK|DELETE/.test(status);
  return {
    items: [{ item: 'stack', verdict: ok ? 'OK' : 'TODO', detail: ok ? `${name} is ${status}` : `${name} is ${status}: see its events in the CloudFormation console` }],
    outputs,
  };
}

async function checkSubscriptions(input: StatusInput, topicArn: string): Promise<StatusItem> {
  const item = 'alarm channels';
  const subscriptions: Array<{ name: string; pending?: string }> = [];
  try {
    let token: string | undefined;
    do {
      const page = await input.clients.sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken: token }));
      for (const s of page.Subscriptions ?? []) {
        // Shown by kind (local/alarms/subscription-names.ts): an integration's endpoint holds its key, never printed.
        const listed = { protocol: s.Protocol, endpoint: s.Endpoint };
        subscriptions.push({ name: subscriptionName(listed), pending: s.SubscriptionArn === 'PendingConfirmation' ? whenPending(listed) : undefined });
      }
      token = page.NextToken;
    } while (token);
  } catch (e) {
    return unknown(item, e, 'sns:ListSubscriptionsByTopic');
  }
  if (!subscriptions.length) {
    return { item, verdict: 'TODO', detail: `nobody receives the alarms: add alarmChannels to the environment and deploy (${DOCS}, "Alarms and who hears them")` };
  }
  const pending = subscriptions.filter((s) => s.pending);
  if (pending.length) {
    return {
      item,
      verdict: 'TODO',
      detail: `${pending.length} of ${subscriptions.length} not confirmed (${pending.map((p) => `${p.name}: ${p.pending}`).join('; ')}); no alarm reaches them until then`,
    };
  }
  return { item, verdict: 'OK', detail: `${subscriptions.length} confirmed (${subscriptions.map((s) => s.name).join(', ')}); send a test page: npm run reports -- alarms test --environment ${input.environment}` };
}

/**
 * The EgressIps output (lib/constructs/egress.ts), present only with a `network` setting: what to give a gateway that accepts
 * allow-listed addresses only. Its value is the addresses the stack allocated, the user's allocation ids (their
 * addresses are not known at synth), or the user's VPC (its NAT's addresses).
 */
export function egressItem(value: string): StatusItem {
  const item = 'egress IPs';
  const parts = value.split(',').map((p) => p.trim()).filter(Boolean);
  const where = `${DOCS}, "A fixed egress address"`;
  if (parts.length && parts.every((p) => p.startsWith('eipalloc-'))) {
    return {
      item,
      verdict: 'OK',
      detail:
        `your Elastic IPs ${parts.join(', ')}: give their addresses to the provider to allow-list ` +
        `(aws ec2 describe-addresses --allocation-ids ${parts.join(' ')} --query 'Addresses[].PublicIp' --output text; ${where})`,
    };
  }
  if (parts.length === 1 && parts[0]!.startsWith('vpc-')) {
    return {
      item,
      verdict: 'OK',
      detail:
        `those of the NAT your VPC ${parts[0]} routes the fetch function's subnets through: give them to the provider to allow-list ` +
        `(aws ec2 describe-nat-gateways --filter Name=vpc-id,Values=${parts[0]} --query 'NatGateways[].NatGatewayAddresses[].PublicIp' --output text; ${where})`,
    };
  }
  return { item, verdict: 'OK', detail: `${parts.join(', ')}: the fetch function calls the gateway from ${parts.length === 1 ? 'this address' : 'these addresses'}; give them to the provider to allow-list (${where})` };
}

async function checkSchedules(input: StatusInput, group: string): Promise<StatusItem[]> {
  const schedules: Array<{ name: string; state: string }> = [];
  try {
    let token: string | undefined;
    do {
      const page = await input.clients.scheduler.send(new ListSchedulesCommand({ GroupName: group, NextToken: token }));
      for (const s of page.Schedules ?? []) schedules.push({ name: s.Name ?? '?', state: s.State ?? '?' });
      token = page.NextToken;
    } while (token);
  } catch (e) {
    return [unknown('schedules', e, 'scheduler:ListSchedules')];
  }
  if (!schedules.length) return [{ item: 'schedules', verdict: 'TODO', detail: `the group ${group} holds no schedule: deploy again` }];
  const disabled = schedules.filter((s) => s.state !== 'ENABLED');
  if (disabled.length) {
    return [
      {
        item: 'schedules',
        verdict: 'TODO',
        detail: `${disabled.length} of ${schedules.length} disabled: once one window has loaded by hand, set "schedulesEnabled": true and deploy (${DOCS}, step 8)`,
      },
    ];
  }
  return [{ item: 'schedules', verdict: 'OK', detail: `${schedules.length} enabled` }];
}

interface NewestLoad {
  key: string;
  dt: string;
  outcome?: LoadManifest['outcome'];
  finishedAt?: string;
  rowsWritten?: number;
}

/** A manifest as stored; Partial: one written by an older version, or by hand, may lack fields. */
async function readManifest(input: StatusInput, bucket: string, key: string): Promise<Partial<LoadManifest>> {
  const body = await (await input.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body?.transformToString();
  return JSON.parse(body ?? '{}') as Partial<LoadManifest>;
}

async function newestManifest(input: StatusInput, bucket: string, feed: FeedKey): Promise<NewestLoad | undefined> {
  // Keys are manifests/<report>/connection=<name>/dt=<date>/<window start>.json: the last manifest key in S3's order is the feed's newest window.
  let last: { key: string; dt: string } | undefined;
  let token: string | undefined;
  do {
    const page = await input.clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: areaPrefix('manifests', feed), ContinuationToken: token }));
    for (const o of page.Contents ?? []) {
      const parts = o.Key ? parseCuratedKey(o.Key) : null;
      if (parts?.area === 'manifests' && (!last || o.Key! > last.key)) last = { key: o.Key!, dt: parts.dt };
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  if (!last) return undefined;
  const manifest = await readManifest(input, bucket, last.key);
  return { ...last, outcome: manifest.outcome, finishedAt: manifest.finishedAt, rowsWritten: manifest.rows?.written };
}

function windowHours(window: string): number {
  const size = parseWindowSize(window);
  return size.unit === 'day' ? size.count * 24 : size.count;
}

async function checkLoad(input: StatusInput, bucket: string, feed: StatusFeed): Promise<{ item: StatusItem; newest?: NewestLoad }> {
  const item = `newest load ${feed.name}`;
  const report = feed.report;
  let newest: NewestLoad | undefined;
  try {
    newest = await newestManifest(input, bucket, feed);
  } catch (e) {
    return { item: unknown(item, e, `s3:ListBucket and s3:GetObject on manifests/ of ${bucket}, and kms:Decrypt`) };
  }
  if (!newest) {
    return { item: { item, verdict: 'TODO', detail: `nothing loaded yet: load one window by hand (npm run reports -- backfill --deployed ..., ${DOCS}, step 6)` } };
  }
  const now = (input.now ?? (() => new Date()))();
  const finished = newest.finishedAt ? Date.parse(newest.finishedAt) : NaN;
  const age = Number.isNaN(finished) ? 'at an unknown time' : `${formatAge(now.getTime() - finished)} ago`;
  const what = `dt=${newest.dt}: ${newest.outcome ?? 'no outcome'}, ${age}${newest.rowsWritten !== undefined ? `, ${newest.rowsWritten} rows written` : ''}`;
  if (newest.outcome !== 'loaded' && newest.outcome !== 'not-parsed') {
    return { item: { item, verdict: 'TODO', detail: `${what}: read s3://${bucket}/${newest.key} for the error and see the alarm table (${DOCS})` }, newest };
  }
  const limitMs = (windowHours(report.window) + input.freshnessGraceHours) * 3_600_000;
  if (!Number.isNaN(finished) && now.getTime() - finished > limitMs) {
    return {
      item: { item, verdict: 'TODO', detail: `${what}: older than the window plus ${input.freshnessGraceHours} h grace; are the schedules on? Backfill the missing windows` },
      newest,
    };
  }
  return { item: { item, verdict: 'OK', detail: what }, newest };
}

async function checkDeadLetters(input: StatusInput, outputs: Record<string, string>): Promise<StatusItem[]> {
  const queues = Object.entries(outputs)
    .map(([k, url]) => [/^DeadLetters(.+)QueueUrl$/.exec(k)?.[1], url] as const)
    .filter((q): q is readonly [string, string] => q[0] !== undefined)
    .map(([name, url]) => [name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase(), url] as const);
  if (!queues.length) return [{ item: 'dead letters', verdict: 'UNKNOWN', detail: 'the stack has no DeadLetters*QueueUrl outputs: deploy this version of the stack' }];
  return Promise.all(
    queues.map(async ([name, url]): Promise<StatusItem> => {
      const item = `dead letters ${name}`;
      try {
        const attributes = (
          await input.clients.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
          )
        ).Attributes ?? {};
        const waiting = Number(attributes.ApproximateNumberOfMessages ?? 0) + Number(attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
        if (waiting === 0) return { item, verdict: 'OK', detail: 'empty' };
        return { item, verdict: 'TODO', detail: `${waiting} message(s) waiting: see alarm dead-letters-${name} in ${DOCS} ("Alarms") for what to do, then re-drive or purge` };
      } catch (e) {
        return unknown(item, e, 'sqs:GetQueueAttributes');
      }
    }),
  );
}

/** The query that reads one partition's values: its count, then per column the aggregates that decode it. */
export function partitionValuesQuery(report: Pick<StatusReport, 'id' | 'columns'>, dt: string): { sql: string; aggregates: ReadAggregate[] } {
  const aggregates = report.columns.flatMap((column) => valueAggregates(column).map(({ kind, sql }) => ({ column, kind, sql })));
  return {
    sql: `SELECT\n  ${['count(*)', ...aggregates.map((a) => a.sql)].join(',\n  ')}\nFROM ${ident(report.id)}\nWHERE ${ident(PARTITION_KEY)} = ${literal(dt)}`,
    aggregates,
  };
}

/** One aggregate of the query, for reading its result back. */
export interface ReadAggregate {
  column: ColumnDefinition;
  kind: ValueAggregateKind;
  sql: string;
}

/** What a failed read says about the columns, from Athena's StateChangeReason. */
export interface ReadFailure {
  /** The columns named, as the report spells them when it has them. */
  columns: string[];
  /** The column's type in the Parquet file, and in the deployed table, when the message gives them. */
  fileType?: string;
  tableType?: string;
  /** The deployed table lacks the column (this checkout's definition has it), or the caller may not read it. */
  missing?: boolean;
}

/** Trino's and Hive's names of a type, as a Glue column type (athenaType) spells it: varchar -> string, timestamp(3) -> timestamp. */
const glueTypeName = (type: string) =>
  type.toLowerCase().replace(/\s+/g, '').replace(/^varchar(\(\d+\))?$/, 'string').replace(/^timestamp\(\d+\)$/, 'timestamp');

/**
 * Reads a failed query's reason for the column it names and the two types. The shapes are those Athena
 * gives when a Parquet file's column disagrees with the table: test/unit/status.test.ts quotes real ones.
 */
export function explainReadFailure(reason: string, columns: readonly ColumnDefinition[]): ReadFailure {
  const text = reason.replace(/\s+/g, ' ');
  const ours = (name: string) => columns.find((c) => c.name.toLowerCase() === name.toLowerCase())?.name ?? name;
  // Hive's reader (Athena engine 2, and engine 3 for some files): "HIVE_BAD_DATA: Field amount's type INT64 in parquet file s3://… is incompatible with type decimal(18,3) defined in table schema"
  let m = /Field (\S+?)'s type (.+?) in parquet(?: file \S+)? is incompatible with type (\S+) defined in table schema/i.exec(text);
  if (m) return { columns: [ours(m[1]!)], fileType: m[2]!, tableType: m[3]! };
  // Trino's reader: "Unsupported Trino column type (varchar) for Parquet column ([day] optional int32 day (DATE))"
  m = /Unsupported Trino column type \((.+?)\) for Parquet column \(\[([^\]]+)\] (?:optional|required|repeated) (\w+) [^\s()]+(?: \(((?:[^()]|\([^()]*\))*)\))?\)/i.exec(text);
  if (m) return { columns: [ours(m[2]!.split(',')[0]!.trim())], fileType: `${m[3]!.toUpperCase()}${m[4] ? ` ${m[4]}` : ''}`, tableType: m[1]! };
  // The query names a column the deployed table does not have (or one the caller may not read):
  // "COLUMN_NOT_FOUND: line 3:3: Column 'fee' cannot be resolved or requester is not authorized to access requested resources"
  m = /Column '([^']+)' cannot be resolved/i.exec(text);
  if (m) return { columns: [ours(m[1]!)], missing: true };
  // Any other message: the report's columns it names, outside the S3 locations (which hold the report's id).
  const outsideLocations = text.replace(/s3:\/\/\S+/g, ' ');
  return { columns: columns.map((c) => c.name).filter((name) => new RegExp(`(?<![A-Za-z0-9_])${name}(?![A-Za-z0-9_])`, 'i').test(outsideLocations)) };
}

/** Where docs/operations.md says what to do when this check fails. */
const UNREADABLE = `${OPERATIONS}, "A table that does not read"`;

function failedReadDetail(report: StatusReport, dt: string, stack: string, state: string, reason: string): string {
  const failure = explainReadFailure(reason, report.columns);
  const athena = `Athena: ${reason}`;
  const [first] = failure.columns;
  if (failure.missing && first) {
    return (
      `the deployed table ${report.id} has no column ${first}, which this checkout's definition has: deploy this definition (npx cdk deploy ${stack}) ` +
      `or run status from the version deployed; if it has the column, your credentials may not read it (${UNREADABLE}). ${athena}`
    );
  }
  if (first) {
    const definition = report.columns.find((c) => c.name === first);
    const types = failure.fileType && failure.tableType ? ` is ${failure.fileType} in the Parquet file of dt=${dt} but ${failure.tableType} in the table` : ` of dt=${dt} does not read`;
    const checkout =
      definition && failure.tableType && glueTypeName(failure.tableType) !== athenaType(definition)
        ? ` (this checkout's definition says ${athenaType(definition)}: it is not what is deployed)`
        : '';
    return (
      `column ${failure.columns.join(', ')}${types}${checkout}: the definition and the files disagree. Reload the window so the deployed ` +
      `definition rewrites it, or deploy the definition the files were written with (${UNREADABLE}). ${athena}`
    );
  }
  return `reading the values of dt=${dt} ${state.toLowerCase()}: ${reason} (${UNREADABLE})`;
}

function readDetail(results: Array<string | undefined>, aggregates: readonly ReadAggregate[], where: string): string {
  const count = results[0] ?? '?';
  if (count === '0') return `0 rows in ${where}: no value to read`;
  const value = (column: ColumnDefinition, kind: ValueAggregateKind) => {
    const i = aggregates.findIndex((a) => a.column === column && a.kind === kind);
    return results[i + 1] ?? 'null';
  };
  const shown: string[] = [];
  // The first timestamp column's range (else the first date's): the window's rows should fall in it.
  const ranged = aggregates.find((a) => a.column.kind === 'timestamp')?.column ?? aggregates.find((a) => a.column.kind === 'date')?.column;
  if (ranged) shown.push(`${ranged.name} ${value(ranged, 'min')} to ${value(ranged, 'max')}`);
  for (const a of aggregates.filter((x) => x.kind === 'sum')) shown.push(`sum(${a.column.name}) ${value(a.column, 'sum')}`);
  return `${count} row(s) in ${where}, every column read${shown.length ? `: ${shown.join(', ')}` : ''}`;
}

/**
 * One query through the workgroup that decodes every column of the newest partition (partitionValuesQuery).
 * A query that fails is TODO, naming the column and the types when Athena's reason gives them; one that
 * cannot be started or waited for is UNKNOWN.
 */
async function readValues(input: StatusInput, outputs: Record<string, string>, report: StatusReport, dt: string): Promise<StatusItem> {
  const item = `rows ${report.id}`;
  const { athena } = input.clients;
  const sleep = input.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const deadline = Date.now() + (input.queryTimeoutMs ?? 60_000);
  const { sql, aggregates } = partitionValuesQuery(report, dt);
  try {
    const { QueryExecutionId: id } = await athena.send(
      new StartQueryExecutionCommand({
        QueryString: sql,
        WorkGroup: outputs.AthenaWorkGroupName,
        QueryExecutionContext: { Database: outputs.GlueDatabaseName },
      }),
    );
    for (;;) {
      const status = (await athena.send(new GetQueryExecutionCommand({ QueryExecutionId: id }))).QueryExecution?.Status;
      if (status?.State === 'SUCCEEDED') break;
      if (status?.State === 'FAILED' || status?.State === 'CANCELLED') {
        return { item, verdict: 'TODO', detail: failedReadDetail(report, dt, stackName(input.environment), status.State, status.StateChangeReason ?? 'no reason given') };
      }
      if (Date.now() > deadline) return { item, verdict: 'UNKNOWN', detail: `query ${id} still running; see it in the Athena console` };
      await sleep(1000);
    }
    const rows = (await athena.send(new GetQueryResultsCommand({ QueryExecutionId: id }))).ResultSet?.Rows ?? [];
    const results = (rows[1]?.Data ?? []).map((d) => d.VarCharValue); // rows[0] is the header
    return { item, verdict: 'OK', detail: readDetail(results, aggregates, `${outputs.GlueDatabaseName}.${report.id} for dt=${dt}`) };
  } catch (e) {
    return unknown(item, e, "the analysts' policy (output AnalystPolicyArn) or the same Athena, Glue, S3 and KMS permissions");
  }
}

/** How far back `reports status` looks for data-check findings. */
export const FINDINGS_DAYS = 7;

/**
 * The data checks' findings (functions/core/quality/checks.ts) of every window loaded in the last FINDINGS_DAYS
 * days, read from the manifests: one listing from that date on, then one GET per manifest (the newest attempt
 * of each window). A flagged window loaded, but someone should look: TODO, naming each window and what was off.
 */
async function checkFindings(input: StatusInput, bucket: string, feed: StatusFeed): Promise<StatusItem> {
  const item = `data checks ${feed.name}`;
  const now = (input.now ?? (() => new Date()))();
  // A day more than asked: manifests are keyed by the report's zone, and this runs in any.
  const since = new Date(now.getTime() - (FINDINGS_DAYS + 1) * 86_400_000).toISOString().slice(0, 10);
  const from = partitionStart('manifests', feed, since);
  const flagged: string[] = [];
  let loaded = 0;
  let pdf = 0;
  let unjudged = 0;
  try {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await input.clients.s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: areaPrefix('manifests', feed), StartAfter: from, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key && o.Key >= from && parseCuratedKey(o.Key)?.area === 'manifests') keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    for (let i = 0; i < keys.length; i += 8) {
      const manifests = await Promise.all(keys.slice(i, i + 8).map((key) => readManifest(input, bucket, key)));
      for (const m of manifests) {
        if (m.outcome === 'not-parsed') pdf++;
        if (m.outcome !== 'loaded') continue;
        loaded++;
        const findings = (m.checks ?? []).filter((c) => c.outcome === 'anomaly').map((c) => c.message);
        if (findings.length) flagged.push(`${m.window?.start ?? '?'}: ${findings.join('; ')}`);
        if ((m.checks ?? []).some((c) => c.check === 'volume-rows' && c.outcome === 'skipped')) unjudged++;
      }
    }
  } catch (e) {
    return unknown(item, e, `s3:ListBucket and s3:GetObject on manifests/ of ${bucket}, and kms:Decrypt`);
  }
  if (!loaded && pdf) return { item, verdict: 'OK', detail: 'PDF report: kept raw, no data to check' };
  if (!loaded) return { item, verdict: 'TODO', detail: `no window loaded since ${since}: nothing to check (see the newest load above)` };
  const notJudged = unjudged ? `; ${unjudged} not judged (too little history or a skipped date)` : '';
  if (!flagged.length) return { item, verdict: 'OK', detail: `no finding in ${loaded} window(s) loaded since ${since}${notJudged}` };
  return {
    item,
    verdict: 'TODO',
    detail:
      `${flagged.length} of ${loaded} window(s) loaded since ${since} FLAGGED: ${flagged.join(' | ')}. ` +
      `The data loaded as sent; see ${OPERATIONS} ("Data checks") for what to do`,
  };
}

/** The stack outputs the checks below read (lib/reports-pipeline-stack.ts writes them). */
export const REQUIRED_OUTPUTS = ['AlarmTopicArn', 'ScheduleGroupName', 'CuratedBucketName', 'AthenaWorkGroupName', 'GlueDatabaseName'] as const;

export async function collectStatus(input: StatusInput): Promise<StatusItem[]> {
  const { items, outputs } = await stackOutputs(input);
  if (!outputs) return items;
  // A stack deployed from an older version lacks outputs this command reads: say so, rather than let each AWS
  // call fail on an empty name and be reported as a missing permission.
  const missing = REQUIRED_OUTPUTS.filter((key) => !outputs[key]);
  if (missing.length) {
    return [
      ...items,
      { item: 'stack outputs', verdict: 'TODO', detail: `the stack has no output ${missing.join(', ')}: it was deployed from an older version; deploy this one (npx cdk deploy ${stackName(input.environment)})` },
    ];
  }
  const need = (key: (typeof REQUIRED_OUTPUTS)[number]) => outputs[key]!;
  const now = (input.now ?? (() => new Date()))();
  const feeds = statusFeeds(input);
  const [secrets, refusals, subscriptions, alarms, schedules, deadLetters, loads, stale] = await Promise.all([
    Promise.all(input.connections.map((c) => checkConnectionSecret(input.clients.secrets, c, now))),
    lastRefusals(input.clients.cloudWatch, input.environment, input.connections.flatMap((c) => c.reports.map((id) => ({ id, connection: c.name }))), now).catch((error: unknown) => ({ error })),
    checkSubscriptions(input, need('AlarmTopicArn')),
    checkAlarms(input.clients.cloudWatch, input.environment, now),
    checkSchedules(input, need('ScheduleGroupName')),
    checkDeadLetters(input, outputs),
    Promise.all(feeds.map((f) => checkLoad(input, need('CuratedBucketName'), f))),
    // Windows written under another definition than this checkout's, and the reparse that rebuilds them.
    Promise.all(input.reports.map((r) => deployedStaleItem(input.clients.s3, need('CuratedBucketName'), { ...r, connections: feeds.filter((f) => f.report === r).map((f) => f.connection) }, input.environment))),
  ]);
  const counts = await Promise.all(
    input.reports.map((r) => {
      // The report's table holds every feed: counted at the newest date any feed loaded.
      const newest = feeds
        .flatMap((f, i) => (f.report === r && loads[i]!.newest ? [loads[i]!.newest!] : []))
        .sort((a, b) => (a.outcome === 'loaded' ? 0 : 1) - (b.outcome === 'loaded' ? 0 : 1) || b.dt.localeCompare(a.dt))[0];
      if (newest?.outcome === 'loaded') return readValues(input, outputs, r, newest.dt);
      // A PDF report is kept raw and has no table: nothing to count is its normal state.
      if (newest?.outcome === 'not-parsed') return Promise.resolve<StatusItem>({ item: `rows ${r.id}`, verdict: 'OK', detail: 'PDF report: kept raw, no table to count' });
      return Promise.resolve<StatusItem>({ item: `rows ${r.id}`, verdict: 'TODO', detail: 'no loaded window to count yet' });
    }),
  );
  const egress = outputs.EgressIps ? [egressItem(outputs.EgressIps)] : [];
  const findings = await Promise.all(feeds.map((f) => checkFindings(input, need('CuratedBucketName'), f)));
  const byConnection = connectionGroups(input, feeds, now, secrets, refusals, loads);
  return [...items, ...egress, subscriptions, ...alarms, ...schedules, ...byConnection, ...stale, ...deadLetters, ...counts, ...findings];
}

/**
 * Per connection, together: its line (reports, newest load, newest refusal), its secret, and its reports' newest
 * loads. A report no connection lists (none, once the catalog is checked) keeps its line after them.
 */
function connectionGroups(
  input: StatusInput,
  feeds: readonly StatusFeed[],
  now: Date,
  secrets: readonly StatusItem[],
  refusals: Map<string, Date> | { error: unknown },
  loads: ReadonlyArray<{ item: StatusItem; newest?: NewestLoad }>,
): StatusItem[] {
  const loadsOf = (connection: string): ReportLoad[] =>
    feeds.flatMap((f, i) => {
      const newest = loads[i]!.newest;
      return f.connection === connection && newest ? [{ report: f.reportId, dt: newest.dt, outcome: newest.outcome, finishedAt: newest.finishedAt }] : [];
    });
  const loadItem = new Map(feeds.map((f, i) => [feedId(f), loads[i]!.item]));
  const grouped = input.connections.flatMap((c, i) => [
    connectionItem(input.environment, c, loadsOf(c.name), refusals, now),
    secrets[i]!,
    ...c.reports.flatMap((id) => {
      const key = feedId({ reportId: id, connection: c.name });
      const item = loadItem.get(key);
      loadItem.delete(key);
      return item ? [item] : [];
    }),
  ]);
  return [...grouped, ...loadItem.values()];
}

export function formatStatus(items: readonly StatusItem[]): string {
  const width = Math.max(...items.map((i) => i.item.length));
  return items.map((i) => `${i.verdict.padEnd(7)} ${i.item.padEnd(width)}  ${i.detail}`).join('\n');
}

/** The CLI entry: clients with the caller's credentials, the environment's reports and grace; exit code 1 unless all OK. */
export async function runStatusCommand(opts: { environment: string; region?: string }): Promise<number> {
  const [{ loadEnvironments }, { loadCheckedCatalog: loadCatalog }] = await Promise.all([import('../../lib/environment/environments.js'), import('../args/catalog.js')]);
  const config = loadEnvironments().find((e) => e.name === opts.environment);
  if (!config) throw new ConfigurationError(`No environment "${opts.environment}" in config/environments/: ${loadEnvironments().map((e) => e.name).join(', ')}.`);
  const clientConfig = { ...(opts.region ?? config.region ? { region: opts.region ?? config.region } : {}) };
  const catalog = loadCatalog();
  const cloudFormation = new CloudFormationClient(clientConfig);
  await requireAwsAccess(cloudFormation, `pass --region, or set "region" in config/environments/${config.name}.json`);
  const items = await collectStatus({
    environment: config.name,
    reports: catalog.reports.map((r) => ({ id: r.id, window: r.window, columns: r.columns, connections: r.connections })),
    // Secret names from the environment file: the stack names each connection's secret as the file says.
    connections: config.connections.map((c) => ({ name: c.name, secretName: c.secret.name, reports: catalog.reportsOver(c.name).map((r) => r.id) })),
    freshnessGraceHours: config.freshnessGraceHours,
    clients: {
      cloudFormation,
      secrets: new SecretsManagerClient(clientConfig),
      sns: new SNSClient(clientConfig),
      scheduler: new SchedulerClient(clientConfig),
      s3: new S3Client(clientConfig),
      sqs: new SQSClient(clientConfig),
      athena: new AthenaClient(clientConfig),
      cloudWatch: new CloudWatchClient(clientConfig),
    },
  });
  console.log(formatStatus(items));
  return items.every((i) => i.verdict === 'OK') ? 0 : 1;
}
