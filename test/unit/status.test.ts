import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { beforeEach, describe, it } from 'node:test';
import { AthenaClient, GetQueryExecutionCommand, GetQueryResultsCommand, StartQueryExecutionCommand } from '@aws-sdk/client-athena';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { ListSchedulesCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { DescribeSecretCommand, GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CloudWatchClient, DescribeAlarmContributorsCommand, DescribeAlarmsCommand, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { OPSGENIE_URL, PAGERDUTY_URL, TEST_KEYS } from '../helpers/alarm-channels.js';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { refuseWhatTrinoCannotParse } from '../../lib/saved-queries/saved-query-grammar.js';
import { mockClient } from 'aws-sdk-client-mock';
import { PLACEHOLDER_SECRET } from '../../functions/core/naming.js';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { convertCsvToParquet } from '../../functions/core/convert/csv-to-parquet.js';
import { definitionRecord, fingerprintOf } from '../../functions/core/definitions/fingerprint.js';
import { parseReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { duckdbViewSql } from '../../functions/core/definitions/table-schema.js';
import { collectStatus, egressItem, explainReadFailure, formatStatus, partitionValuesQuery, type StatusInput, type StatusItem } from '../../local/cli/status.js';
import { openDuckDb } from '../helpers/duckdb.js';

/**
 * `reports status` against mocked AWS APIs, one mock per call it makes. The fixture catalog's daily
 * `transactions` report (test/fixtures/reports/), and a 6-hour report with the same columns.
 */

const transactions = loadCatalog().get('transactions');

const mocks = {
  cloudFormation: mockClient(CloudFormationClient),
  secrets: mockClient(SecretsManagerClient),
  sns: mockClient(SNSClient),
  scheduler: mockClient(SchedulerClient),
  s3: mockClient(S3Client),
  sqs: mockClient(SQSClient),
  athena: mockClient(AthenaClient),
  cloudWatch: mockClient(CloudWatchClient),
};

const NOW = new Date('2026-11-21T06:00:00Z');
const SECRET_VALUE = JSON.stringify({ login: 'merchant-7', controlKey: 'ck-7d1f0c9e-not-for-logs' });
/** The environment file's name of the default connection's secret. */
const SECRET_NAME = 'paynet-reports/test/gateway';
const outputs = {
  AlarmTopicArn: 'arn:aws:sns:eu-central-1:123456789012:alarms',
  ScheduleGroupName: 'paynet-reports-test',
  CuratedBucketName: 'paynet-reports-test-curated-123456789012-eu-central-1',
  AthenaWorkGroupName: 'paynet-reports-test',
  GlueDatabaseName: 'paynet_reports_test',
  DeadLettersScheduleQueueUrl: 'https://sqs.eu-central-1.amazonaws.com/123456789012/schedule-dlq',
  DeadLettersFetchFailuresQueueUrl: 'https://sqs.eu-central-1.amazonaws.com/123456789012/fetch-dlq',
  DeadLettersParseQueueUrl: 'https://sqs.eu-central-1.amazonaws.com/123456789012/parse-dlq',
};

const input = (): StatusInput => ({
  environment: 'test',
  reports: [
    { id: transactions.id, window: transactions.window, columns: transactions.columns },
    { id: 'hourly', window: 'PT6H', columns: transactions.columns },
  ],
  connections: [{ name: 'default', secretName: SECRET_NAME, reports: [transactions.id, 'hourly'] }],
  freshnessGraceHours: 6,
  clients: {
    cloudFormation: new CloudFormationClient({ region: 'eu-central-1' }),
    secrets: new SecretsManagerClient({ region: 'eu-central-1' }),
    sns: new SNSClient({ region: 'eu-central-1' }),
    scheduler: new SchedulerClient({ region: 'eu-central-1' }),
    s3: new S3Client({ region: 'eu-central-1' }),
    sqs: new SQSClient({ region: 'eu-central-1' }),
    athena: new AthenaClient({ region: 'eu-central-1' }),
    cloudWatch: new CloudWatchClient({ region: 'eu-central-1' }),
  },
  now: () => NOW,
  sleep: async () => undefined,
});

const manifestBody = (m: unknown) => ({ transformToString: async () => JSON.stringify(m) }) as never;
const byItem = (items: StatusItem[], name: string) => {
  const found = items.find((i) => i.item === name);
  assert.ok(found, `${name} in ${items.map((i) => i.item).join(', ')}`);
  return found;
};

/** A deployed, configured, running environment. */
function healthy(over: { transactions: string; hourly: string } = { transactions: 'default', hourly: 'default' }) {
  mocks.cloudFormation.on(DescribeStacksCommand, { StackName: 'PaynetReports-test' }).resolves({
    Stacks: [
      {
        StackName: 'PaynetReports-test',
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: NOW,
        Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      },
    ],
  });
  mocks.secrets.on(GetSecretValueCommand, { SecretId: SECRET_NAME }).resolves({ SecretString: SECRET_VALUE });
  mocks.secrets.on(DescribeSecretCommand, { SecretId: SECRET_NAME }).resolves({ Name: SECRET_NAME, LastChangedDate: new Date('2026-11-18T06:00:00Z') });
  mocks.cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
  mocks.sns
    .on(ListSubscriptionsByTopicCommand, { TopicArn: outputs.AlarmTopicArn })
    .resolvesOnce({ Subscriptions: [{ Endpoint: 'ops@merchant.test', SubscriptionArn: `${outputs.AlarmTopicArn}:1` }], NextToken: 't2' })
    .resolvesOnce({ Subscriptions: [{ Endpoint: 'finance@merchant.test', SubscriptionArn: `${outputs.AlarmTopicArn}:2` }] });
  mocks.scheduler.on(ListSchedulesCommand, { GroupName: outputs.ScheduleGroupName }).resolves({
    Schedules: [
      { Name: 'transactions', State: 'ENABLED' },
      { Name: 'hourly', State: 'ENABLED' },
    ],
  });
  // Two pages for the daily report: the newest window is on the second.
  mocks.s3
    .on(ListObjectsV2Command, { Bucket: outputs.CuratedBucketName, Prefix: `manifests/transactions/connection=${over.transactions}/` })
    .callsFake((i: { ContinuationToken?: string }) =>
      i.ContinuationToken === 'p2'
        ? { Contents: [{ Key: `manifests/transactions/connection=${over.transactions}/dt=2026-11-20/2026-11-20T00-00-00.json` }], IsTruncated: false }
        : { Contents: [{ Key: `manifests/transactions/connection=${over.transactions}/dt=2026-11-18/2026-11-18T00-00-00.json` }, { Key: `manifests/transactions/connection=${over.transactions}/dt=2026-11-19/2026-11-19T00-00-00.json` }], IsTruncated: true, NextContinuationToken: 'p2' },
    );
  mocks.s3.on(ListObjectsV2Command, { Prefix: `manifests/hourly/connection=${over.hourly}/` }).resolves({ Contents: [{ Key: `manifests/hourly/connection=${over.hourly}/dt=2026-11-21/2026-11-21T00-00-00.json` }] });
  mocks.s3
    .on(GetObjectCommand, { Key: `manifests/transactions/connection=${over.transactions}/dt=2026-11-20/2026-11-20T00-00-00.json` })
    .resolves({ Body: manifestBody({ outcome: 'loaded', finishedAt: '2026-11-21T00:20:00Z', rows: { written: 250 } }) });
  mocks.s3
    .on(GetObjectCommand, { Key: `manifests/hourly/connection=${over.hourly}/dt=2026-11-21/2026-11-21T00-00-00.json` })
    .resolves({ Body: manifestBody({ outcome: 'loaded', finishedAt: '2026-11-21T05:30:00Z', rows: { written: 12 } }) });
  // The older windows the data-checks item reads: loaded, every check passed or not judged yet.
  for (const day of ['18', '19']) {
    mocks.s3.on(GetObjectCommand, { Key: `manifests/transactions/connection=${over.transactions}/dt=2026-11-${day}/2026-11-${day}T00-00-00.json` }).resolves({
      Body: manifestBody({
        outcome: 'loaded',
        window: { start: `2026-11-${day}T00:00:00` },
        checks: [{ check: 'volume-rows', outcome: 'skipped', observed: 250, message: 'volume not judged: too little history: 0 of the last 4 Wednesdays loaded, 3 needed' }],
      }),
    });
  }
  mocks.sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' } });
  started.clear();
  mocks.athena.on(StartQueryExecutionCommand).callsFake((i: { QueryString: string }) => {
    const id = /FROM "transactions"/.test(i.QueryString) ? 'q-daily' : 'q-hourly';
    started.set(id, i.QueryString);
    return { QueryExecutionId: id };
  });
  mocks.athena
    .on(GetQueryExecutionCommand, { QueryExecutionId: 'q-daily' })
    .resolvesOnce({ QueryExecution: { Status: { State: 'RUNNING' } } })
    .resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
  mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-hourly' }).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
  mocks.athena.on(GetQueryResultsCommand, { QueryExecutionId: 'q-daily' }).callsFake(answer(DAILY_VALUES));
  mocks.athena.on(GetQueryResultsCommand, { QueryExecutionId: 'q-hourly' }).callsFake(answer({ ...DAILY_VALUES, 'count(*)': '48' }));
}

/** The query for the fixture's transactions report (its columns: test/fixtures/reports/transactions.json). */
const TRANSACTIONS_SQL = `SELECT
  count(*),
  max(length("merchant_name")),
  min("transaction_id"),
  max("transaction_id"),
  max(length("merchant_oid")),
  min("created_date"),
  max("created_date"),
  sum("amount"),
  max(length("currency")),
  max(length("transaction_type")),
  max(length("order_description")),
  min("date_of_report"),
  max("date_of_report")
FROM "transactions"
WHERE "dt" = '2026-11-20'`;

/** The expressions of a query's SELECT list, one a line as partitionValuesQuery writes them. */
const selectList = (sql: string) => {
  const lines = sql.split('\n');
  return lines.slice(1, lines.findIndex((l) => l.startsWith('FROM '))).map((l) => l.trim().replace(/,$/, ''));
};

/** What Athena answers for the values query, by expression; an expression not listed is NULL. */
const DAILY_VALUES: Record<string, string> = {
  'count(*)': '250',
  'max(length("merchant_name"))': '24',
  'min("transaction_id")': '1000001',
  'max("transaction_id")': '1000250',
  'max(length("merchant_oid"))': '12',
  'min("created_date")': '2026-11-20 00:00:07.000',
  'max("created_date")': '2026-11-20 23:59:51.000',
  'sum("amount")': '98765.432',
  'max(length("currency"))': '3',
  'max(length("transaction_type"))': '7',
  'min("date_of_report")': '2026-11-21',
  'max("date_of_report")': '2026-11-21',
};
/** The SQL of each query started, by its id. */
const started = new Map<string, string>();
/** GetQueryResults of a values query: a header row, then one row in the SELECT list's order. */
function answer(values: Record<string, string>) {
  return (i: { QueryExecutionId: string }) => {
    const expressions = selectList(started.get(i.QueryExecutionId)!);
    return {
      ResultSet: {
        Rows: [
          { Data: expressions.map((_, i) => ({ VarCharValue: `_col${i}` })) },
          { Data: expressions.map((e) => (e in values ? { VarCharValue: values[e] } : {})) },
        ],
      },
    };
  };
}

describe('reports status', () => {
  beforeEach(() => {
    for (const m of Object.values(mocks)) m.reset();
  });

  it('says OK for every item of a configured, running environment', async () => {
    healthy();
    const items = await collectStatus(input());
    assert.deepEqual(
      items.filter((i) => i.verdict !== 'OK'),
      [],
    );
    assert.deepEqual(items.map((i) => i.item), [
      'stack',
      'alarm channels',
      'alarms',
      'schedules',
      'connection default',
      'secret default',
      'newest load transactions',
      'newest load hourly',
      'stale transactions',
      'stale hourly',
      'dead letters schedule',
      'dead letters fetch-failures',
      'dead letters parse',
      'rows transactions',
      'rows hourly',
      'data checks transactions',
      'data checks hourly',
    ]);
    assert.equal(byItem(items, 'data checks transactions').detail, 'no finding in 3 window(s) loaded since 2026-11-13; 2 not judged (too little history or a skipped date)');
    // Manifests from a week back on, by one listing that starts there: not the report's whole history.
    const listings = mocks.s3.commandCalls(ListObjectsV2Command, { Prefix: 'manifests/transactions/connection=default/', StartAfter: 'manifests/transactions/connection=default/dt=2026-11-13' });
    assert.equal(listings.length, 2, 'both pages');
    assert.match(byItem(items, 'alarm channels').detail, /2 confirmed \(ops@merchant\.test, finance@merchant\.test\)/);
    assert.match(byItem(items, 'newest load transactions').detail, /^dt=2026-11-20: loaded, 6 h ago, 250 rows written$/);
    assert.equal(
      byItem(items, 'rows transactions').detail,
      '250 row(s) in paynet_reports_test.transactions for dt=2026-11-20, every column read: created_date 2026-11-20 00:00:07.000 to 2026-11-20 23:59:51.000, sum(amount) 98765.432',
    );
    assert.match(byItem(items, 'rows hourly').detail, /^48 row\(s\) in paynet_reports_test\.hourly for dt=2026-11-21, every column read: /);
    // One query per report, through the workgroup and database of the outputs, for the newest dt only.
    const queries = mocks.athena.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input);
    assert.deepEqual(
      queries.map((q) => [q.QueryString, q.WorkGroup, q.QueryExecutionContext?.Database]),
      [
        [TRANSACTIONS_SQL, 'paynet-reports-test', 'paynet_reports_test'],
        [TRANSACTIONS_SQL.replace('FROM "transactions"', 'FROM "hourly"').replace("'2026-11-20'", "'2026-11-21'"), 'paynet-reports-test', 'paynet_reports_test'],
      ],
    );
    assert.equal(mocks.athena.commandCalls(GetQueryExecutionCommand, { QueryExecutionId: 'q-daily' }).length, 2, 'polled until it finished');
    assert.deepEqual(
      mocks.sqs.commandCalls(GetQueueAttributesCommand).map((c) => c.args[0].input.QueueUrl).sort(),
      [outputs.DeadLettersFetchFailuresQueueUrl, outputs.DeadLettersParseQueueUrl, outputs.DeadLettersScheduleQueueUrl].sort(),
    );
    const text = formatStatus(items);
    assert.match(text, /^OK {6}stack {2,}PaynetReports-test is UPDATE_COMPLETE$/m);
    assert.ok(!text.includes('ck-7d1f0c9e') && !text.includes('merchant-7'), 'the secret value is never printed');
  });

  it('says what to do right after a first deploy: placeholder, unconfirmed e-mails, schedules off, nothing loaded', async () => {
    healthy();
    mocks.secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify(PLACEHOLDER_SECRET) }); // what the stack itself writes (lib/constructs/credentials.ts)
    mocks.sns.on(ListSubscriptionsByTopicCommand).resolves({
      Subscriptions: [
        { Endpoint: 'ops@merchant.test', SubscriptionArn: 'PendingConfirmation' },
        { Endpoint: 'finance@merchant.test', SubscriptionArn: `${outputs.AlarmTopicArn}:2` },
      ],
    });
    mocks.scheduler.on(ListSchedulesCommand).resolves({ Schedules: [{ Name: 'transactions', State: 'DISABLED' }, { Name: 'hourly', State: 'DISABLED' }] });
    mocks.s3.on(ListObjectsV2Command).resolves({ IsTruncated: false });
    mocks.sqs.on(GetQueueAttributesCommand, { QueueUrl: outputs.DeadLettersFetchFailuresQueueUrl }).resolves({ Attributes: { ApproximateNumberOfMessages: '2', ApproximateNumberOfMessagesNotVisible: '1' } });

    const items = await collectStatus(input());
    assert.equal(byItem(items, 'stack').verdict, 'OK');
    assert.deepEqual(byItem(items, 'secret default'), {
      item: 'secret default',
      verdict: 'TODO',
      detail: 'secret "paynet-reports/test/gateway" still holds the placeholder (REPLACE_ME): every fetch fails AuthenticationRefused until you put the credentials (docs/deploy.md, step 5)',
    });
    assert.match(byItem(items, 'alarm channels').detail, /^1 of 2 not confirmed \(ops@merchant\.test: follow the link/);
    assert.match(byItem(items, 'schedules').detail, /^2 of 2 disabled: .*"schedulesEnabled": true.*step 8/);
    assert.match(byItem(items, 'newest load transactions').detail, /nothing loaded yet: .*backfill --deployed.*step 6/);
    assert.equal(byItem(items, 'dead letters fetch-failures').verdict, 'TODO');
    assert.match(byItem(items, 'dead letters fetch-failures').detail, /^3 message\(s\) waiting: see alarm dead-letters-fetch-failures/);
    assert.equal(byItem(items, 'dead letters parse').verdict, 'OK');
    assert.equal(byItem(items, 'rows transactions').verdict, 'TODO');
    assert.equal(mocks.athena.commandCalls(StartQueryExecutionCommand).length, 0, 'nothing to count, no query');
    // Nothing loaded, so nothing written under another definition either.
    // Nor refused: the connection's line has nothing against it (its loads' lines say what is missing).
    const fine = new Set(['stack', 'alarms', 'connection default', 'dead letters parse', 'dead letters schedule', 'stale transactions', 'stale hourly']);
    for (const i of items.filter((x) => !fine.has(x.item))) assert.equal(i.verdict, 'TODO', i.item);
    assert.match(byItem(items, 'stale transactions').detail, /^0 windows checked: 0 with a table file/);
  });

  it('says a window is late, or failed, from the newest manifest, and reports a failed query', async () => {
    healthy();
    mocks.s3
      .on(GetObjectCommand, { Key: 'manifests/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json' })
      .resolves({ Body: manifestBody({ outcome: 'loaded', finishedAt: '2026-11-19T20:00:00Z', rows: { written: 250 } }) });
    mocks.s3
      .on(GetObjectCommand, { Key: 'manifests/hourly/connection=default/dt=2026-11-21/2026-11-21T00-00-00.json' })
      .resolves({ Body: manifestBody({ outcome: 'failed', finishedAt: '2026-11-21T05:00:00Z', error: { code: 'SchemaDrift' } }) });
    mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-daily' }).resolves({ QueryExecution: { Status: { State: 'FAILED', StateChangeReason: 'TABLE_NOT_FOUND' } } });

    const items = await collectStatus(input());
    const daily = byItem(items, 'newest load transactions');
    assert.equal(daily.verdict, 'TODO');
    assert.match(daily.detail, /^dt=2026-11-20: loaded, 34 h ago, 250 rows written: older than the window plus 6 h grace/);
    const hourly = byItem(items, 'newest load hourly');
    assert.equal(hourly.verdict, 'TODO');
    assert.match(hourly.detail, /^dt=2026-11-21: failed, 1 h ago: read s3:\/\/.*\/manifests\/hourly\/connection=default\/dt=2026-11-21\/2026-11-21T00-00-00\.json/);
    assert.deepEqual(byItem(items, 'rows transactions'), {
      item: 'rows transactions',
      verdict: 'TODO',
      detail: 'reading the values of dt=2026-11-20 failed: TABLE_NOT_FOUND (docs/operations.md, "A table that does not read")',
    });
    assert.equal(byItem(items, 'rows hourly').verdict, 'TODO', 'no query of a window that did not load');
    assert.equal(mocks.athena.commandCalls(StartQueryExecutionCommand).length, 1);
  });

  it('names each flagged window of the last week and what was off, and says the data loaded', async () => {
    healthy();
    mocks.s3.on(GetObjectCommand, { Key: 'manifests/transactions/connection=default/dt=2026-11-19/2026-11-19T00-00-00.json' }).resolves({
      Body: manifestBody({
        outcome: 'loaded',
        window: { start: '2026-11-19T00:00:00' },
        checks: [
          { check: 'volume-rows', outcome: 'anomaly', observed: 41, expected: { low: 3200, high: 4800 }, message: 'volume low: 41 rows, expected 3,200-4,800 from the last 4 Thursdays' },
          { check: 'duplicate-keys', outcome: 'pass', observed: 0, expected: { low: 0, high: 0 }, message: 'no repeated transaction_id' },
        ],
      }),
    });
    const items = await collectStatus(input());
    const flagged = byItem(items, 'data checks transactions');
    assert.equal(flagged.verdict, 'TODO');
    assert.equal(
      flagged.detail,
      '1 of 3 window(s) loaded since 2026-11-13 FLAGGED: 2026-11-19T00:00:00: volume low: 41 rows, expected 3,200-4,800 from the last 4 Thursdays. ' +
        'The data loaded as sent; see docs/operations.md ("Data checks") for what to do',
    );
    assert.equal(byItem(items, 'data checks hourly').verdict, 'OK');
    assert.match(formatStatus(items), /^TODO {4}data checks transactions +1 of 3 window\(s\) .*2026-11-19T00:00:00: volume low: 41 rows/m);
  });

  it('a PDF report (kept raw, no table) is OK with nothing to count, and no count query is run for it', async () => {
    healthy();
    mocks.s3
      .on(GetObjectCommand, { Key: 'manifests/hourly/connection=default/dt=2026-11-21/2026-11-21T00-00-00.json' })
      .resolves({ Body: manifestBody({ outcome: 'not-parsed', finishedAt: '2026-11-21T05:30:00Z' }) });
    const items = await collectStatus(input());
    assert.equal(byItem(items, 'newest load hourly').verdict, 'OK');
    assert.deepEqual(byItem(items, 'rows hourly'), { item: 'rows hourly', verdict: 'OK', detail: 'PDF report: kept raw, no table to count' });
    assert.deepEqual(byItem(items, 'data checks hourly'), { item: 'data checks hourly', verdict: 'OK', detail: 'PDF report: kept raw, no data to check' });
    assert.equal(mocks.athena.commandCalls(StartQueryExecutionCommand).length, 1, 'only the CSV report is counted');
  });

  it('prints the egress IPs to allow-list when the stack has them (network setting), and nothing of them otherwise', async () => {
    healthy();
    assert.ok(!(await collectStatus(input())).some((i) => i.item === 'egress IPs'), 'no network setting, no line');

    const withEgress = (value: string) =>
      mocks.cloudFormation.on(DescribeStacksCommand, { StackName: 'PaynetReports-test' }).resolves({
        Stacks: [
          {
            StackName: 'PaynetReports-test',
            StackStatus: 'UPDATE_COMPLETE',
            CreationTime: NOW,
            Outputs: Object.entries({ ...outputs, EgressIps: value }).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
          },
        ],
      });
    withEgress('3.120.1.2');
    const items = await collectStatus(input());
    assert.deepEqual(items.slice(0, 2).map((i) => i.item), ['stack', 'egress IPs'], 'right after the stack: the first thing the provider needs');
    assert.deepEqual(byItem(items, 'egress IPs'), {
      item: 'egress IPs',
      verdict: 'OK',
      detail: '3.120.1.2: the fetch function calls the gateway from this address; give them to the provider to allow-list (docs/deploy.md, "A fixed egress address")',
    });
    assert.match(formatStatus(items), /^OK {6}egress IPs {2,}3\.120\.1\.2: /m);

    assert.match(egressItem('3.120.1.2,18.196.3.4').detail, /^3\.120\.1\.2, 18\.196\.3\.4: the fetch function calls the gateway from these addresses/);
    assert.match(
      egressItem('eipalloc-0123456789abcdef0,eipalloc-0fedcba9876543210').detail,
      /^your Elastic IPs eipalloc-0123456789abcdef0, eipalloc-0fedcba9876543210: .*aws ec2 describe-addresses --allocation-ids eipalloc-0123456789abcdef0 eipalloc-0fedcba9876543210 /,
    );
    assert.match(egressItem('vpc-0123456789abcdef0').detail, /NAT your VPC vpc-0123456789abcdef0 .*aws ec2 describe-nat-gateways --filter Name=vpc-id,Values=vpc-0123456789abcdef0/);
  });

  it('names a chat subscription (alarmChat) by the service, not by its HTTPS endpoint', async () => {
    healthy();
    mocks.sns.on(ListSubscriptionsByTopicCommand).resolves({
      Subscriptions: [
        { Endpoint: 'ops@merchant.test', SubscriptionArn: `${outputs.AlarmTopicArn}:1` },
        { Endpoint: 'https://global.sns-api.chatbot.amazonaws.com', Protocol: 'https', SubscriptionArn: `${outputs.AlarmTopicArn}:2` },
      ],
    });
    assert.equal(byItem(await collectStatus(input()), 'alarm channels').detail, '2 confirmed (ops@merchant.test, chat (Amazon Q Developer)); send a test page: npm run reports -- alarms test --environment test');
  });

  it('names a paging integration by its service and the last four characters of its key, never the URL (issue 46)', async () => {
    healthy();
    mocks.sns.on(ListSubscriptionsByTopicCommand).resolves({
      Subscriptions: [
        { Endpoint: PAGERDUTY_URL, Protocol: 'https', SubscriptionArn: `${outputs.AlarmTopicArn}:1` },
        { Endpoint: OPSGENIE_URL, Protocol: 'https', SubscriptionArn: 'PendingConfirmation' },
        { Endpoint: `https://hooks.example.test/alarm/${TEST_KEYS.pagerduty}`, Protocol: 'https', SubscriptionArn: `${outputs.AlarmTopicArn}:3` },
      ],
    });
    const items = await collectStatus(input());
    const detail = byItem(items, 'alarm channels').detail;
    assert.match(detail, /^1 of 3 not confirmed \(Opsgenie \(integration …f00d\): Opsgenie confirms on its first request/);
    const all = formatStatus(items);
    assert.match(all, /PagerDuty \(integration …cdef\)|Opsgenie \(integration …f00d\)/);
    for (const key of Object.values(TEST_KEYS)) assert.ok(!all.includes(key), `the key ${key.slice(-4)} is printed`);
    mocks.sns.on(ListSubscriptionsByTopicCommand).resolves({ Subscriptions: [{ Endpoint: PAGERDUTY_URL, Protocol: 'https', SubscriptionArn: `${outputs.AlarmTopicArn}:1` }] });
    assert.equal(byItem(await collectStatus(input()), 'alarm channels').detail, '1 confirmed (PagerDuty (integration …cdef)); send a test page: npm run reports -- alarms test --environment test');
  });

  it('a stack deployed from an older version, without an output the checks read, is told to deploy this one', async () => {
    healthy();
    const { GlueDatabaseName: _dropped, ...older } = outputs;
    mocks.cloudFormation.on(DescribeStacksCommand, { StackName: 'PaynetReports-test' }).resolves({
      Stacks: [{ StackName: 'PaynetReports-test', StackStatus: 'UPDATE_COMPLETE', CreationTime: NOW, Outputs: Object.entries(older).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })) }],
    });
    const items = await collectStatus(input());
    assert.deepEqual(byItem(items, 'stack outputs'), {
      item: 'stack outputs',
      verdict: 'TODO',
      detail: 'the stack has no output GlueDatabaseName: it was deployed from an older version; deploy this one (npx cdk deploy PaynetReports-test)',
    });
    assert.equal(mocks.athena.commandCalls(StartQueryExecutionCommand).length, 0);
  });

  it('says which windows were written under another definition than this checkout\'s, reading the newest 400 manifests, with the reparse for the environment', async () => {
    healthy();
    const current = definitionRecord(transactions.columns);
    const olderColumns = current.columns.map((c) => (c.name === 'amount' ? { ...c, type: 'decimal(18,2)' } : c));
    const older = { fingerprint: fingerprintOf(olderColumns), columns: olderColumns };
    // 450 daily windows up to 2026-11-20; the three before the newest were written with amount as decimal(18,2).
    const dates = Array.from({ length: 450 }, (_, i) => new Date(Date.parse('2026-11-20T00:00:00Z') - (449 - i) * 86_400_000).toISOString().slice(0, 10));
    const keyOf = (d: string) => `manifests/transactions/connection=default/dt=${d}/${d}T00-00-00.json`;
    mocks.s3.on(ListObjectsV2Command, { Bucket: outputs.CuratedBucketName, Prefix: 'manifests/transactions/connection=default/' }).resolves({ Contents: dates.map((d) => ({ Key: keyOf(d) })), IsTruncated: false });
    mocks.s3.on(GetObjectCommand).callsFake((i: { Key: string }) => {
      const d = /dt=([\d-]+)/.exec(i.Key)![1]!;
      const next = new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      return {
        Body: manifestBody({
          outcome: 'loaded',
          finishedAt: '2026-11-21T00:20:00Z',
          rows: { written: 250 },
          window: { start: `${d}T00:00:00`, end: `${next}T00:00:00`, timeZone: 'Europe/Moscow' },
          table: { bucket: outputs.CuratedBucketName, key: `tables/transactions/connection=default/dt=${d}/${d}T00-00-00.parquet`, bytes: 9000, sha256: 'x' },
          definition: ['2026-11-17', '2026-11-18', '2026-11-19'].includes(d) ? older : current,
        }),
      };
    });
    const items = await collectStatus(input());
    const stale = byItem(items, 'stale transactions');
    assert.equal(stale.verdict, 'TODO');
    assert.match(
      stale.detail,
      /^3 windows \(2026-11-17, 2026-11-18, 2026-11-19\) written under another definition than this checkout's \([0-9a-f]{12}\): column amount was retyped decimal\(18,2\) -> decimal\(18,3\): .*HIVE_BAD_DATA\)\. To fix, rebuild them from their raw files: npm run reports -- reparse --report transactions --from 2026-11-17 --to 2026-11-20 --environment test$/,
    );
    const read = mocks.s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input.Key!).filter((k) => k.startsWith('manifests/transactions/connection=default/'));
    assert.equal(new Set(read).size, 400, 'the newest 400 windows only');
    assert.ok(!read.includes(keyOf(dates[0]!)), 'not the oldest');
    assert.equal(byItem(items, 'stale hourly').verdict, 'OK');
  });

  it('goes on with the other checks when one is not permitted', async () => {
    healthy();
    const denied = Object.assign(new Error('User is not authorized to perform: secretsmanager:GetSecretValue'), { name: 'AccessDeniedException' });
    mocks.secrets.on(GetSecretValueCommand).rejects(denied);
    const items = await collectStatus(input());
    assert.equal(byItem(items, 'secret default').verdict, 'UNKNOWN');
    assert.match(byItem(items, 'secret default').detail, /AccessDeniedException: .*your credentials need secretsmanager:GetSecretValue and kms:Decrypt/);
    assert.equal(items.filter((i) => i.verdict !== 'OK').length, 1);
  });

  it('says to deploy when the stack does not exist, and how to recover a failed first deploy', async () => {
    const missing = Object.assign(new Error('Stack with id PaynetReports-test does not exist'), { name: 'ValidationError' });
    mocks.cloudFormation.on(DescribeStacksCommand).rejects(missing);
    let items = await collectStatus(input());
    assert.deepEqual(items, [{ item: 'stack', verdict: 'TODO', detail: 'PaynetReports-test is not deployed in this account and region: npx cdk deploy PaynetReports-test (docs/deploy.md, step 4)' }]);

    mocks.cloudFormation.on(DescribeStacksCommand).resolves({ Stacks: [{ StackName: 'PaynetReports-test', StackStatus: 'ROLLBACK_COMPLETE', CreationTime: NOW }] });
    items = await collectStatus(input());
    assert.equal(items.length, 1);
    assert.equal(items[0]!.verdict, 'TODO');
    assert.match(items[0]!.detail, /ROLLBACK_COMPLETE: its first deploy failed .*describe-stack-events.*delete the stack and deploy again/);
    assert.equal(mocks.secrets.commandCalls(GetSecretValueCommand).length, 0);
  });

  it('reads every column: each one inside an aggregate that needs its values, not a count the footers answer', () => {
    const { sql } = partitionValuesQuery(transactions, '2026-11-20');
    assert.equal(sql, TRANSACTIONS_SQL);
    const expressions = selectList(sql);
    assert.equal(expressions[0], 'count(*)');
    // A column's values, not its footer: min/max/sum of the value, or the length of each string.
    const decodes = (name: string) => new RegExp(`^(?:(?:min|max|sum)\\("${name}"\\)|max\\(length\\("${name}"\\)\\))$`);
    for (const column of transactions.columns) {
      assert.ok(expressions.some((e) => decodes(column.name).test(e)), `${column.name} is decoded by one of ${expressions.join(', ')}`);
    }
    assert.equal(expressions.length, 1 + transactions.columns.reduce((n, c) => n + (c.kind === 'bigint' || c.kind === 'timestamp' || c.kind === 'date' ? 2 : 1), 0));
    for (const e of expressions.slice(1)) assert.doesNotMatch(e, /^count\(/, `${e}: a count of a column may be answered without decoding it`);
    assert.match(sql, /\nWHERE "dt" = '2026-11-20'$/, 'one partition only');
  });

  it('quotes every identifier and the dt literal', () => {
    const base = loadCatalog().get('transactions');
    // Reserved words in Trino, each of a kind, and a report id that is one too.
    const quirky = parseReportDefinition(
      {
        ...base,
        id: 'order',
        keys: undefined,
        columns: [
          { header: 'A', name: 'select', type: 'string' },
          { header: 'B', name: 'from', type: 'bigint' },
          { header: 'C', name: 'group', type: 'decimal(9,2)' },
          { header: 'D', name: 'timestamp', type: 'timestamp', pattern: 'yyyy-MM-dd HH:mm:ss' },
          { header: 'E', name: 'date', type: 'date', pattern: 'yyyy-MM-dd' },
        ],
      },
      'test',
    );
    const { sql } = partitionValuesQuery(quirky, "2026-11-20' OR '1'='1");
    assert.deepEqual(selectList(sql), [
      'count(*)',
      'max(length("select"))',
      'min("from")',
      'max("from")',
      'sum("group")',
      'min("timestamp")',
      'max("timestamp")',
      'min("date")',
      'max("date")',
    ]);
    assert.match(sql, /\nFROM "order"\nWHERE "dt" = '2026-11-20'' OR ''1''=''1'$/);
    // Athena (Trino) parses both queries: Trino's own grammar, not our reading of it, and it can say no.
    const grammar = [
      { file: 'status query (transactions)', text: partitionValuesQuery(transactions, '2026-11-20').sql },
      { file: 'status query (reserved words)', text: sql },
    ];
    refuseWhatTrinoCannotParse(grammar);
    assert.throws(() => refuseWhatTrinoCannotParse([{ file: 'unquoted', text: sql.replaceAll('"', '') }]), /unquoted:\d+:\d+: Athena \(Trino\) cannot parse/);
  });

  it('a query that fails on a type mismatch fails the check, naming the column and the types, and says what to do', async () => {
    healthy();
    // Athena's Hive reader, in the shape of the messages quoted in 'reads the column and the types from real Athena messages'.
    const reason =
      "HIVE_BAD_DATA: Field amount's type INT64 in parquet file s3://paynet-reports-test-curated-123456789012-eu-central-1/tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet is incompatible with type decimal(18,3) defined in table schema";
    mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-daily' }).resolves({ QueryExecution: { Status: { State: 'FAILED', StateChangeReason: reason } } });
    // Trino's reader names the column in brackets: a string column whose files hold INT64.
    const trino = 'NOT_SUPPORTED: Unsupported Trino column type (varchar) for Parquet column ([merchant_oid] required int64 merchant_oid)';
    mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-hourly' }).resolves({ QueryExecution: { Status: { State: 'FAILED', StateChangeReason: trino } } });

    const items = await collectStatus(input());
    assert.deepEqual(byItem(items, 'rows transactions'), {
      item: 'rows transactions',
      verdict: 'TODO',
      detail:
        'column amount is INT64 in the Parquet file of dt=2026-11-20 but decimal(18,3) in the table: the definition and the files disagree. ' +
        'Reload the window so the deployed definition rewrites it, or deploy the definition the files were written with ' +
        `(docs/operations.md, "A table that does not read"). Athena: ${reason}`,
    });
    const hourly = byItem(items, 'rows hourly');
    assert.equal(hourly.verdict, 'TODO');
    assert.match(hourly.detail, /^column merchant_oid is INT64 in the Parquet file of dt=2026-11-21 but varchar in the table: the definition and the files disagree\. /);
    assert.equal(mocks.athena.commandCalls(GetQueryResultsCommand).length, 0, 'a failed query has no results to read');
    assert.match(formatStatus(items), /^TODO {4}rows transactions {2,}column amount is INT64 /m);
  });

  it('says when the deployed table is not this checkout\'s definition, or lacks a column of it', async () => {
    healthy();
    const older = "HIVE_BAD_DATA: Field amount's type INT64 in parquet file s3://b/tables/transactions/connection=default/dt=2026-11-20/x.parquet is incompatible with type decimal(18,2) defined in table schema";
    mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-daily' }).resolves({ QueryExecution: { Status: { State: 'FAILED', StateChangeReason: older } } });
    const missing = "COLUMN_NOT_FOUND: line 11:3: Column 'order_description' cannot be resolved or requester is not authorized to access requested resources";
    mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-hourly' }).resolves({ QueryExecution: { Status: { State: 'FAILED', StateChangeReason: missing } } });
    const items = await collectStatus(input());
    assert.match(
      byItem(items, 'rows transactions').detail,
      /^column amount is INT64 in the Parquet file of dt=2026-11-20 but decimal\(18,2\) in the table \(this checkout's definition says decimal\(18,3\): it is not what is deployed\): /,
    );
    assert.equal(byItem(items, 'rows hourly').verdict, 'TODO');
    assert.match(
      byItem(items, 'rows hourly').detail,
      /^the deployed table hourly has no column order_description, which this checkout's definition has: deploy this definition \(npx cdk deploy PaynetReports-test\) /,
    );
  });

  it('reads the column and the types from real Athena messages', () => {
    const cases: Array<[source: string, reason: string, expected: ReturnType<typeof explainReadFailure>]> = [
      [
        // aws/aws-sdk-pandas issue #57: a string column whose Parquet files hold INT64.
        'https://github.com/aws/aws-sdk-pandas/issues/57',
        "HIVE_BAD_DATA: Field primary_key's type INT64 in parquet is incompatible with type string defined in table schema",
        { columns: ['primary_key'], fileType: 'INT64', tableType: 'string' },
      ],
      [
        // mbta/data_platform, doc/adr/0007-move-to-string-type-for-all-cubic-provided-data.md (wrapped there for width; the file's key is one token).
        'https://github.com/mbta/data_platform/blob/main/doc/adr/0007-move-to-string-type-for-all-cubic-provided-data.md',
        "HIVE_BAD_DATA: Field sys_created_by's type BINARY in parquet file \ns3://mbta-ctd-dataplatform-dev-springboard/cubic/ods_qlik/EDW.SVN_U_FS_RPIR_CODE_RT_CAUSE_ID/snapshot=20220608T234623Z/identifier=LOAD00000001.csv.gz/part-00001-bfe93dfd-7c3b-42d2-b88d-4577a4f1bda2.c000.snappy.parquet \nis incompatible with type bigint defined in table schema",
        { columns: ['sys_created_by'], fileType: 'BINARY', tableType: 'bigint' },
      ],
      [
        // trinodb/trino issue #17733, from Athena through pyathena: a date column whose files hold timestamps.
        'https://github.com/trinodb/trino/issues/17733',
        'NOT_SUPPORTED: Unsupported Trino column type (date) for Parquet column ([today] optional int64 today (TIMESTAMP(MICROS,false)))',
        { columns: ['today'], fileType: 'INT64 TIMESTAMP(MICROS,false)', tableType: 'date' },
      ],
      [
        // trinodb/trino issue #25024.
        'https://github.com/trinodb/trino/issues/25024',
        'Unsupported Trino column type (double) for Parquet column ([column] optional binary column (STRING))',
        { columns: ['column'], fileType: 'BINARY STRING', tableType: 'double' },
      ],
      [
        // opencost/opencost issue #3076: the query names a column the table does not have.
        'https://github.com/opencost/opencost/issues/3076',
        "COLUMN_NOT_FOUND: line 1:68: Column 'line_item_resource_id' cannot be resolved or requester is not authorized to access requested resources",
        { columns: ['line_item_resource_id'], missing: true },
      ],
      [
        // mbta/data_platform, the same file: a file that cannot be opened names no column.
        'https://github.com/mbta/data_platform/blob/main/doc/adr/0007-move-to-string-type-for-all-cubic-provided-data.md',
        'HIVE_CANNOT_OPEN_SPLIT: Error opening Hive split s3://mbta-ctd-dataplatform-dev-springboard/cubic/ods_qlik/EDW.ABP_TAP/snapshot=20220607T160603Z/identifier=LOAD00000001.csv.gz/part-00015-7cc52de2-9ca3-4ede-b2b7-004cea96a414.c000.snappy.parquet (offset=0, length=2904265): org.apache.parquet.io.GroupColumnIO cannot be cast to org.apache.parquet.io.PrimitiveColumnIO',
        { columns: [] },
      ],
    ];
    for (const [source, reason, expected] of cases) assert.deepEqual(explainReadFailure(reason, transactions.columns), expected, source);
    // Another message that names a column of the report (outside an S3 location) names it too.
    assert.deepEqual(
      explainReadFailure('GENERIC_INTERNAL_ERROR: Value 12.5 of column created_date exceeds the range, in s3://b/tables/transactions/amount/x.parquet', transactions.columns),
      { columns: ['created_date'] },
    );
  });

  it('an empty window reads as zero rows, with nothing to decode', async () => {
    healthy();
    mocks.athena.on(GetQueryResultsCommand, { QueryExecutionId: 'q-daily' }).callsFake(answer({ 'count(*)': '0' }));
    const items = await collectStatus(input());
    assert.deepEqual(byItem(items, 'rows transactions'), { item: 'rows transactions', verdict: 'OK', detail: '0 rows in paynet_reports_test.transactions for dt=2026-11-20: no value to read' });
  });

  it('runs on DuckDB over a Parquet file the pipeline writes, and returns its values', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'status-values-'));
    const db = await openDuckDb();
    try {
      const partition = join(dir, 'transactions', 'connection=default', 'dt=2026-11-20');
      await mkdir(partition, { recursive: true });
      const csv =
        transactions.columns.map((c) => c.header).join(',') +
        '\r\nShop A,1000001,oid-1,2026-11-20 00:00:07,12.500,RUB,SALE,,21.11.2026' +
        '\r\nShop B,1000250,oid-250,2026-11-20 23:59:51,-2.250,RUB,REVERSAL,refund,21.11.2026\r\n';
      const output = createWriteStream(join(partition, '2026-11-20T00-00-00.parquet'));
      await convertCsvToParquet({ input: Readable.from([Buffer.from(csv)]), output, report: transactions, encoder: 'inline' });
      await finished(output);
      await db.query(duckdbViewSql('transactions', join(dir, 'transactions', '*', '*', '*.parquet'), transactions.columns));
      const [row] = await db.query(partitionValuesQuery(transactions, '2026-11-20').sql);
      assert.deepEqual(Object.values(row!).map(String), ['2', '6', '1000001', '1000250', '7', '2026-11-20 00:00:07', '2026-11-20 23:59:51', '10.250', '3', '8', '6', '2026-11-21', '2026-11-21']);
    } finally {
      db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('reports status: alarms in ALARM', () => {
  beforeEach(() => {
    for (const m of Object.values(mocks)) m.reset();
  });

  it('names the reports of a multi-report alarm (its contributors), and a plain alarm by its reason', async () => {
    healthy();
    const query = `SELECT SUM(RowsRejected) FROM SCHEMA(PaynetReports, "connection", environment, report, service) WHERE environment = 'test' AND "connection" = 'default' GROUP BY report ORDER BY SUM() DESC LIMIT 100`;
    mocks.cloudWatch.on(DescribeAlarmsCommand).resolves({
      MetricAlarms: [
        { AlarmName: 'paynet-reports-test-rejected-rows-default', Metrics: [{ Id: 'reports', Expression: query, Period: 300 }], StateUpdatedTimestamp: new Date(NOW.getTime() - 2 * 3_600_000) },
        { AlarmName: 'paynet-reports-test-dead-letters-parse', MetricName: 'ApproximateNumberOfMessagesVisible', StateReason: 'Threshold Crossed: 1 datapoint [2.0] was >= 1.0' },
      ],
    });
    mocks.cloudWatch
      .on(DescribeAlarmContributorsCommand, { AlarmName: 'paynet-reports-test-rejected-rows-default' })
      .resolvesOnce({ AlarmContributors: [{ ContributorId: '1', ContributorAttributes: { report: 'transactions', connection: 'default' }, StateReason: 'x' }], NextToken: 'more' })
      .resolvesOnce({ AlarmContributors: [{ ContributorId: '2', ContributorAttributes: { report: 'hourly' }, StateReason: 'y' }] });
    const items = await collectStatus(input());
    assert.deepEqual(byItem(items, 'alarm rejected-rows-default'), {
      item: 'alarm rejected-rows-default',
      verdict: 'TODO',
      detail: 'in ALARM for 2 h: reports hourly, transactions; see docs/operations.md ("Alarms") for what it means and what to do',
    });
    assert.match(byItem(items, 'alarm dead-letters-parse').detail, /^in ALARM: Threshold Crossed/);
    // Only this environment's alarms, only those in ALARM.
    assert.deepEqual(mocks.cloudWatch.commandCalls(DescribeAlarmsCommand).map((c) => [c.args[0].input.AlarmNamePrefix, c.args[0].input.StateValue]), [['paynet-reports-test-', 'ALARM']]);
    assert.equal(mocks.cloudWatch.commandCalls(DescribeAlarmContributorsCommand).length, 2, 'both pages, for the grouped alarm only');
  });

  it('says UNKNOWN, naming the permission, when the alarms cannot be read', async () => {
    healthy();
    mocks.cloudWatch.on(DescribeAlarmsCommand).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDenied' }));
    const items = await collectStatus(input());
    assert.equal(byItem(items, 'alarms').verdict, 'UNKNOWN');
    assert.match(byItem(items, 'alarms').detail, /cloudwatch:DescribeAlarms/);
  });
});

describe('reports status over two connections', () => {
  const SECRETS = { a: 'paynet-reports/test/provider-a', b: 'paynet-reports/test/provider-b' };
  /** The daily report over provider-a, the 6-hour one over provider-b. */
  const twoConnections = (): StatusInput => ({
    ...input(),
    connections: [
      { name: 'provider-a', secretName: SECRETS.a, reports: [transactions.id] },
      { name: 'provider-b', secretName: SECRETS.b, reports: ['hourly'] },
    ],
  });
  /** What CloudWatch answers for the FetchOutcome=AuthenticationRefused of the reports: newest first, as asked. */
  const refusals = (byReport: Record<string, Array<[string, number]>>) =>
    mocks.cloudWatch.on(GetMetricDataCommand).callsFake((i: { MetricDataQueries: Array<{ Id: string; MetricStat: { Metric: { Dimensions: Array<{ Name: string; Value: string }> } } }> }) => ({
      MetricDataResults: i.MetricDataQueries.map((q) => {
        const report = q.MetricStat.Metric.Dimensions.find((d) => d.Name === 'report')!.Value;
        const points = byReport[report] ?? [];
        return { Id: q.Id, Timestamps: points.map(([t]) => new Date(t)), Values: points.map(([, v]) => v), StatusCode: 'Complete' };
      }),
    }));

  beforeEach(() => {
    for (const m of Object.values(mocks)) m.reset();
    healthy({ transactions: 'provider-a', hourly: 'provider-b' });
    mocks.secrets.on(GetSecretValueCommand, { SecretId: SECRETS.a }).resolves({ SecretString: SECRET_VALUE });
    mocks.secrets.on(GetSecretValueCommand, { SecretId: SECRETS.b }).resolves({ SecretString: JSON.stringify({ login: 'merchant-b', controlKey: 'ck-b-not-for-logs' }) });
    mocks.secrets.on(DescribeSecretCommand, { SecretId: SECRETS.a }).resolves({ Name: SECRETS.a, LastChangedDate: new Date('2026-11-18T06:00:00Z') });
    mocks.secrets.on(DescribeSecretCommand, { SecretId: SECRETS.b }).resolves({ Name: SECRETS.b, LastChangedDate: new Date('2026-11-21T03:00:00Z') });
  });

  it('groups by connection: its reports, newest load and refusal, its secret, then its reports\' newest loads', async () => {
    refusals({});
    const items = await collectStatus(twoConnections());
    assert.deepEqual(items.filter((i) => i.verdict !== 'OK'), []);
    const names = items.map((i) => i.item);
    assert.deepEqual(names.slice(names.indexOf('connection provider-a'), names.indexOf('newest load hourly') + 1), [
      'connection provider-a',
      'secret provider-a',
      'newest load transactions',
      'connection provider-b',
      'secret provider-b',
      'newest load hourly',
    ]);
    assert.equal(byItem(items, 'connection provider-a').detail, 'report transactions; last success 6 h ago (transactions, dt=2026-11-20); no refusal in the last 14 days');
    assert.equal(byItem(items, 'connection provider-b').detail, 'report hourly; last success 30 min ago (hourly, dt=2026-11-21); no refusal in the last 14 days');
    assert.equal(byItem(items, 'secret provider-a').detail, 'secret "paynet-reports/test/provider-a" holds credentials, not the placeholder (the value is not shown); last changed 3 days ago');
    assert.equal(byItem(items, 'secret provider-b').detail, 'secret "paynet-reports/test/provider-b" holds credentials, not the placeholder (the value is not shown); last changed 3 h ago');
    // Each secret by the name the environment file gives it, and no other.
    assert.deepEqual(mocks.secrets.commandCalls(GetSecretValueCommand).map((c) => c.args[0].input.SecretId).sort(), [SECRETS.a, SECRETS.b]);
    // One GetMetricData for every report: the metric and dimensions the fetch function writes and the alarms watch.
    const [call, ...more] = mocks.cloudWatch.commandCalls(GetMetricDataCommand).map((c) => c.args[0].input);
    assert.equal(more.length, 0);
    assert.equal(call!.StartTime!.toISOString(), '2026-11-07T06:00:00.000Z');
    assert.deepEqual(
      call!.MetricDataQueries!.map((q) => [q.MetricStat!.Metric!.Namespace, q.MetricStat!.Metric!.MetricName, Object.fromEntries(q.MetricStat!.Metric!.Dimensions!.map((d) => [d.Name, d.Value])), q.MetricStat!.Stat]),
      [['transactions', 'provider-a'], ['hourly', 'provider-b']].map(([report, connection]) => [
        'PaynetReports',
        'FetchOutcome',
        { service: 'paynet-reports', connection, report, environment: 'test', outcome: 'AuthenticationRefused' },
        'Sum',
      ]),
    );
    const text = formatStatus(items);
    assert.ok(!text.includes('ck-7d1f0c9e') && !text.includes('ck-b-not-for-logs') && !text.includes('merchant-b'), 'no secret value printed');
  });

  it('a refusal after the newest load: that connection is TODO, naming the report and the check to run; the other is OK', async () => {
    refusals({ hourly: [['2026-11-21T05:45:00Z', 1], ['2026-11-20T10:00:00Z', 0]] });
    const items = await collectStatus(twoConnections());
    assert.equal(byItem(items, 'connection provider-a').verdict, 'OK');
    const b = byItem(items, 'connection provider-b');
    assert.equal(b.verdict, 'TODO');
    assert.match(b.detail, /^report hourly; last success 30 min ago \(hourly, dt=2026-11-21\); last refusal 15 min ago \(hourly\): the gateway refuses this login\. .*check --environment test --connection provider-b/);
    assert.match(formatStatus(items), /^TODO {4}connection provider-b +report hourly; /m);
  });

  it('a refusal the connection has loaded since is history: OK, and said', async () => {
    refusals({ transactions: [['2026-11-20T23:00:00Z', 2]] });
    const items = await collectStatus(twoConnections());
    assert.deepEqual(byItem(items, 'connection provider-a'), {
      item: 'connection provider-a',
      verdict: 'OK',
      detail: 'report transactions; last success 6 h ago (transactions, dt=2026-11-20); last refusal 7 h ago (transactions), loaded since',
    });
  });

  it('one connection\'s secret missing, another holding the placeholder: each said on its own line', async () => {
    refusals({});
    const notFound = Object.assign(new Error("Secrets Manager can't find the specified secret."), { name: 'ResourceNotFoundException' });
    mocks.secrets.on(DescribeSecretCommand, { SecretId: SECRETS.a }).rejects(notFound);
    mocks.secrets.on(GetSecretValueCommand, { SecretId: SECRETS.b }).resolves({ SecretString: JSON.stringify(PLACEHOLDER_SECRET) });
    const items = await collectStatus(twoConnections());
    assert.deepEqual(byItem(items, 'secret provider-a'), {
      item: 'secret provider-a',
      verdict: 'TODO',
      detail: 'secret "paynet-reports/test/provider-a" does not exist: create it (secret.mode "existing") or deploy with mode "create"',
    });
    assert.match(byItem(items, 'secret provider-b').detail, /^secret "paynet-reports\/test\/provider-b" still holds the placeholder \(REPLACE_ME\)/);
    assert.equal(mocks.secrets.commandCalls(GetSecretValueCommand, { SecretId: SECRETS.a }).length, 0, 'a secret that does not exist is not read');
  });

  it('refusals that cannot be read leave each connection UNKNOWN, with the permission it needs; the rest is checked', async () => {
    mocks.cloudWatch.on(GetMetricDataCommand).rejects(Object.assign(new Error('not authorized to perform: cloudwatch:GetMetricData'), { name: 'AccessDenied' }));
    const items = await collectStatus(twoConnections());
    assert.deepEqual(items.filter((i) => i.verdict !== 'OK').map((i) => i.item), ['connection provider-a', 'connection provider-b']);
    assert.match(byItem(items, 'connection provider-b').detail, /^report hourly; last success 30 min ago .*; could not read the refusals \(AccessDenied: .*\); your credentials need cloudwatch:GetMetricData$/);
  });
});
