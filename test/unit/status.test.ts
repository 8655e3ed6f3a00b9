import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { AthenaClient, GetQueryExecutionCommand, GetQueryResultsCommand, StartQueryExecutionCommand } from '@aws-sdk/client-athena';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { ListSchedulesCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { PLACEHOLDER_SECRET } from '../../config/naming.js';
import { collectStatus, formatStatus, type StatusInput, type StatusItem } from '../../local/cli/status.js';

/**
 * `reports status` against mocked AWS APIs, one mock per call it makes. Fixture reports (a daily and a 6-hour
 * one), not the shipped catalog.
 */

const mocks = {
  cloudFormation: mockClient(CloudFormationClient),
  secrets: mockClient(SecretsManagerClient),
  sns: mockClient(SNSClient),
  scheduler: mockClient(SchedulerClient),
  s3: mockClient(S3Client),
  sqs: mockClient(SQSClient),
  athena: mockClient(AthenaClient),
};

const NOW = new Date('2026-11-21T06:00:00Z');
const SECRET_VALUE = JSON.stringify({ login: 'merchant-7', controlKey: 'ck-7d1f0c9e-not-for-logs' });
const outputs = {
  GatewaySecretArn: 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:paynet-reports/test/gateway-AbCdEf',
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
    { id: 'daily_sales', window: 'P1D' },
    { id: 'hourly', window: 'PT6H' },
  ],
  freshnessGraceHours: 6,
  clients: {
    cloudFormation: new CloudFormationClient({ region: 'eu-central-1' }),
    secrets: new SecretsManagerClient({ region: 'eu-central-1' }),
    sns: new SNSClient({ region: 'eu-central-1' }),
    scheduler: new SchedulerClient({ region: 'eu-central-1' }),
    s3: new S3Client({ region: 'eu-central-1' }),
    sqs: new SQSClient({ region: 'eu-central-1' }),
    athena: new AthenaClient({ region: 'eu-central-1' }),
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
function healthy() {
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
  mocks.secrets.on(GetSecretValueCommand, { SecretId: outputs.GatewaySecretArn }).resolves({ SecretString: SECRET_VALUE });
  mocks.sns
    .on(ListSubscriptionsByTopicCommand, { TopicArn: outputs.AlarmTopicArn })
    .resolvesOnce({ Subscriptions: [{ Endpoint: 'ops@merchant.test', SubscriptionArn: `${outputs.AlarmTopicArn}:1` }], NextToken: 't2' })
    .resolvesOnce({ Subscriptions: [{ Endpoint: 'finance@merchant.test', SubscriptionArn: `${outputs.AlarmTopicArn}:2` }] });
  mocks.scheduler.on(ListSchedulesCommand, { GroupName: outputs.ScheduleGroupName }).resolves({
    Schedules: [
      { Name: 'daily_sales', State: 'ENABLED' },
      { Name: 'hourly', State: 'ENABLED' },
    ],
  });
  // Two pages for the daily report: the newest window is on the second.
  mocks.s3
    .on(ListObjectsV2Command, { Bucket: outputs.CuratedBucketName, Prefix: 'manifests/daily_sales/' })
    .callsFake((i: { ContinuationToken?: string }) =>
      i.ContinuationToken === 'p2'
        ? { Contents: [{ Key: 'manifests/daily_sales/dt=2026-11-20/2026-11-20T00-00-00.json' }], IsTruncated: false }
        : { Contents: [{ Key: 'manifests/daily_sales/dt=2026-11-18/2026-11-18T00-00-00.json' }, { Key: 'manifests/daily_sales/dt=2026-11-19/2026-11-19T00-00-00.json' }], IsTruncated: true, NextContinuationToken: 'p2' },
    );
  mocks.s3.on(ListObjectsV2Command, { Prefix: 'manifests/hourly/' }).resolves({ Contents: [{ Key: 'manifests/hourly/dt=2026-11-21/2026-11-21T00-00-00.json' }] });
  mocks.s3
    .on(GetObjectCommand, { Key: 'manifests/daily_sales/dt=2026-11-20/2026-11-20T00-00-00.json' })
    .resolves({ Body: manifestBody({ outcome: 'loaded', finishedAt: '2026-11-21T00:20:00Z', rows: { written: 250 } }) });
  mocks.s3
    .on(GetObjectCommand, { Key: 'manifests/hourly/dt=2026-11-21/2026-11-21T00-00-00.json' })
    .resolves({ Body: manifestBody({ outcome: 'loaded', finishedAt: '2026-11-21T05:30:00Z', rows: { written: 12 } }) });
  // The older windows the data-checks item reads: loaded, every check passed or not judged yet.
  for (const day of ['18', '19']) {
    mocks.s3.on(GetObjectCommand, { Key: `manifests/daily_sales/dt=2026-11-${day}/2026-11-${day}T00-00-00.json` }).resolves({
      Body: manifestBody({
        outcome: 'loaded',
        window: { start: `2026-11-${day}T00:00:00` },
        checks: [{ check: 'volume-rows', outcome: 'skipped', observed: 250, message: 'volume not judged: too little history: 0 of the last 4 Wednesdays loaded, 3 needed' }],
      }),
    });
  }
  mocks.sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' } });
  mocks.athena.on(StartQueryExecutionCommand).callsFake((i: { QueryString: string }) => ({ QueryExecutionId: /daily_sales/.test(i.QueryString) ? 'q-daily' : 'q-hourly' }));
  mocks.athena
    .on(GetQueryExecutionCommand, { QueryExecutionId: 'q-daily' })
    .resolvesOnce({ QueryExecution: { Status: { State: 'RUNNING' } } })
    .resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
  mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-hourly' }).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
  const result = (n: string) => ({ ResultSet: { Rows: [{ Data: [{ VarCharValue: '_col0' }] }, { Data: [{ VarCharValue: n }] }] } });
  mocks.athena.on(GetQueryResultsCommand, { QueryExecutionId: 'q-daily' }).resolves(result('250'));
  mocks.athena.on(GetQueryResultsCommand, { QueryExecutionId: 'q-hourly' }).resolves(result('48'));
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
      'secret',
      'alarm e-mails',
      'schedules',
      'newest load daily_sales',
      'newest load hourly',
      'dead letters schedule',
      'dead letters fetch-failures',
      'dead letters parse',
      'rows daily_sales',
      'rows hourly',
      'data checks daily_sales',
      'data checks hourly',
    ]);
    assert.equal(byItem(items, 'data checks daily_sales').detail, 'no finding in 3 window(s) loaded since 2026-11-13; 2 not judged (too little history or a skipped date)');
    // Manifests from a week back on, by one listing that starts there: not the report's whole history.
    const listings = mocks.s3.commandCalls(ListObjectsV2Command, { Prefix: 'manifests/daily_sales/', StartAfter: 'manifests/daily_sales/dt=2026-11-13' });
    assert.equal(listings.length, 2, 'both pages');
    assert.match(byItem(items, 'alarm e-mails').detail, /2 confirmed \(ops@merchant\.test, finance@merchant\.test\)/);
    assert.match(byItem(items, 'newest load daily_sales').detail, /^dt=2026-11-20: loaded, 6 h ago, 250 rows written$/);
    assert.match(byItem(items, 'rows daily_sales').detail, /^250 row\(s\) in paynet_reports_test\.daily_sales for dt=2026-11-20$/);
    assert.match(byItem(items, 'rows hourly').detail, /^48 row\(s\) .* for dt=2026-11-21$/);
    // One count per report, through the workgroup and database of the outputs, for the newest dt only.
    const queries = mocks.athena.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input);
    assert.deepEqual(
      queries.map((q) => [q.QueryString, q.WorkGroup, q.QueryExecutionContext?.Database]),
      [
        [`SELECT count(*) FROM "daily_sales" WHERE dt = '2026-11-20'`, 'paynet-reports-test', 'paynet_reports_test'],
        [`SELECT count(*) FROM "hourly" WHERE dt = '2026-11-21'`, 'paynet-reports-test', 'paynet_reports_test'],
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
    mocks.secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify(PLACEHOLDER_SECRET) }); // what the stack itself writes (lib/credentials.ts)
    mocks.sns.on(ListSubscriptionsByTopicCommand).resolves({
      Subscriptions: [
        { Endpoint: 'ops@merchant.test', SubscriptionArn: 'PendingConfirmation' },
        { Endpoint: 'finance@merchant.test', SubscriptionArn: `${outputs.AlarmTopicArn}:2` },
      ],
    });
    mocks.scheduler.on(ListSchedulesCommand).resolves({ Schedules: [{ Name: 'daily_sales', State: 'DISABLED' }, { Name: 'hourly', State: 'DISABLED' }] });
    mocks.s3.on(ListObjectsV2Command).resolves({ IsTruncated: false });
    mocks.sqs.on(GetQueueAttributesCommand, { QueueUrl: outputs.DeadLettersFetchFailuresQueueUrl }).resolves({ Attributes: { ApproximateNumberOfMessages: '2', ApproximateNumberOfMessagesNotVisible: '1' } });

    const items = await collectStatus(input());
    assert.equal(byItem(items, 'stack').verdict, 'OK');
    assert.deepEqual(byItem(items, 'secret'), {
      item: 'secret',
      verdict: 'TODO',
      detail: 'still holds the placeholder (REPLACE_ME): every fetch fails AuthenticationRefused until you put the credentials (docs/deploy.md, step 5)',
    });
    assert.match(byItem(items, 'alarm e-mails').detail, /^1 of 2 not confirmed \(ops@merchant\.test\): follow the link/);
    assert.match(byItem(items, 'schedules').detail, /^2 of 2 disabled: .*"schedulesEnabled": true.*step 8/);
    assert.match(byItem(items, 'newest load daily_sales').detail, /nothing loaded yet: .*backfill --deployed.*step 6/);
    assert.equal(byItem(items, 'dead letters fetch-failures').verdict, 'TODO');
    assert.match(byItem(items, 'dead letters fetch-failures').detail, /^3 message\(s\) waiting: see alarm dead-letters-fetch-failures/);
    assert.equal(byItem(items, 'dead letters parse').verdict, 'OK');
    assert.equal(byItem(items, 'rows daily_sales').verdict, 'TODO');
    assert.equal(mocks.athena.commandCalls(StartQueryExecutionCommand).length, 0, 'nothing to count, no query');
    for (const i of items.filter((x) => x.item !== 'stack' && x.item !== 'dead letters parse' && x.item !== 'dead letters schedule')) assert.equal(i.verdict, 'TODO', i.item);
  });

  it('says a window is late, or failed, from the newest manifest, and reports a failed count query', async () => {
    healthy();
    mocks.s3
      .on(GetObjectCommand, { Key: 'manifests/daily_sales/dt=2026-11-20/2026-11-20T00-00-00.json' })
      .resolves({ Body: manifestBody({ outcome: 'loaded', finishedAt: '2026-11-19T20:00:00Z', rows: { written: 250 } }) });
    mocks.s3
      .on(GetObjectCommand, { Key: 'manifests/hourly/dt=2026-11-21/2026-11-21T00-00-00.json' })
      .resolves({ Body: manifestBody({ outcome: 'failed', finishedAt: '2026-11-21T05:00:00Z', error: { code: 'SchemaDrift' } }) });
    mocks.athena.on(GetQueryExecutionCommand, { QueryExecutionId: 'q-daily' }).resolves({ QueryExecution: { Status: { State: 'FAILED', StateChangeReason: 'TABLE_NOT_FOUND' } } });

    const items = await collectStatus(input());
    const daily = byItem(items, 'newest load daily_sales');
    assert.equal(daily.verdict, 'TODO');
    assert.match(daily.detail, /^dt=2026-11-20: loaded, 34 h ago, 250 rows written: older than the window plus 6 h grace/);
    const hourly = byItem(items, 'newest load hourly');
    assert.equal(hourly.verdict, 'TODO');
    assert.match(hourly.detail, /^dt=2026-11-21: failed, 1 h ago: read s3:\/\/.*\/manifests\/hourly\/dt=2026-11-21\/2026-11-21T00-00-00\.json/);
    assert.deepEqual(byItem(items, 'rows daily_sales'), { item: 'rows daily_sales', verdict: 'TODO', detail: 'the count for dt=2026-11-20 failed: TABLE_NOT_FOUND' });
    assert.equal(byItem(items, 'rows hourly').verdict, 'TODO', 'no count of a window that did not load');
    assert.equal(mocks.athena.commandCalls(StartQueryExecutionCommand).length, 1);
  });

  it('names each flagged window of the last week and what was off, and says the data loaded', async () => {
    healthy();
    mocks.s3.on(GetObjectCommand, { Key: 'manifests/daily_sales/dt=2026-11-19/2026-11-19T00-00-00.json' }).resolves({
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
    const flagged = byItem(items, 'data checks daily_sales');
    assert.equal(flagged.verdict, 'TODO');
    assert.equal(
      flagged.detail,
      '1 of 3 window(s) loaded since 2026-11-13 FLAGGED: 2026-11-19T00:00:00: volume low: 41 rows, expected 3,200-4,800 from the last 4 Thursdays. ' +
        'The data loaded as sent; see docs/operations.md ("Data checks") for what to do',
    );
    assert.equal(byItem(items, 'data checks hourly').verdict, 'OK');
    assert.match(formatStatus(items), /^TODO {4}data checks daily_sales +1 of 3 window\(s\) .*2026-11-19T00:00:00: volume low: 41 rows/m);
  });

  it('a PDF report (kept raw, no table) is OK with nothing to count, and no count query is run for it', async () => {
    healthy();
    mocks.s3
      .on(GetObjectCommand, { Key: 'manifests/hourly/dt=2026-11-21/2026-11-21T00-00-00.json' })
      .resolves({ Body: manifestBody({ outcome: 'not-parsed', finishedAt: '2026-11-21T05:30:00Z' }) });
    const items = await collectStatus(input());
    assert.equal(byItem(items, 'newest load hourly').verdict, 'OK');
    assert.deepEqual(byItem(items, 'rows hourly'), { item: 'rows hourly', verdict: 'OK', detail: 'PDF report: kept raw, no table to count' });
    assert.deepEqual(byItem(items, 'data checks hourly'), { item: 'data checks hourly', verdict: 'OK', detail: 'PDF report: kept raw, no data to check' });
    assert.equal(mocks.athena.commandCalls(StartQueryExecutionCommand).length, 1, 'only the CSV report is counted');
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

  it('goes on with the other checks when one is not permitted', async () => {
    healthy();
    const denied = Object.assign(new Error('User is not authorized to perform: secretsmanager:GetSecretValue'), { name: 'AccessDeniedException' });
    mocks.secrets.on(GetSecretValueCommand).rejects(denied);
    const items = await collectStatus(input());
    assert.equal(byItem(items, 'secret').verdict, 'UNKNOWN');
    assert.match(byItem(items, 'secret').detail, /AccessDeniedException: .*your credentials need secretsmanager:GetSecretValue and kms:Decrypt/);
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
});
