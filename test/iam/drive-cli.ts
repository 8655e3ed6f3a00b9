import { Readable } from 'node:stream';
import { AthenaClient, GetQueryExecutionCommand, GetQueryResultsCommand, StartQueryExecutionCommand } from '@aws-sdk/client-athena';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand, GetMetricDataCommand, SetAlarmStateCommand } from '@aws-sdk/client-cloudwatch';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetObjectCommand, ListObjectsV2Command, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { ListSchedulesCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { DescribeSecretCommand, GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { runAlarmsTestCommand } from '../../local/alarms/alarms-test.js';
import { runBackfillCommand } from '../../local/cli/backfill.js';
import { runReparseCommand } from '../../local/cli/reparse.js';
import { runStatusCommand } from '../../local/cli/status.js';
import { as, watchMocked } from './recorder.js';
import { SAMPLE } from './resolve.js';
import type { StackWorld } from './stack-world.js';

/**
 * The deployed commands a person runs, `reports status`, `reports backfill --deployed`, `reports alarms test` and
 * `reports reparse --environment`, each as the CLI runs it (its own clients, the environment file), against mocked AWS APIs (no local
 * stand-in exists for CloudFormation, Lambda, Athena and the rest) that answer with the synthesized stack's own
 * outputs: the requests then name the environment's real resources. Recorded under "operator".
 */

const CLIENTS = [CloudFormationClient, SecretsManagerClient, SNSClient, SchedulerClient, S3Client, SQSClient, AthenaClient, CloudWatchClient, LambdaClient] as const;
const DAY = '2026-11-20';
const raw = `raw/transactions/connection=default/dt=${DAY}/${DAY}T00-00-00.csv`;
const manifestKey = `manifests/transactions/connection=default/dt=${DAY}/${DAY}T00-00-00.json`;
const text = (value: unknown) => Object.assign(Readable.from([Buffer.from(JSON.stringify(value))]), { transformToString: async () => JSON.stringify(value) }) as never;

function answerAsTheStack(world: StackWorld) {
  const [cloudFormation, secrets, sns, scheduler, s3, sqs, athena, cloudWatch, lambda] = [
    mockClient(CloudFormationClient),
    mockClient(SecretsManagerClient),
    mockClient(SNSClient),
    mockClient(SchedulerClient),
    mockClient(S3Client),
    mockClient(SQSClient),
    mockClient(AthenaClient),
    mockClient(CloudWatchClient),
    mockClient(LambdaClient),
  ] as const;
  const mocks = [cloudFormation, secrets, sns, scheduler, s3, sqs, athena, cloudWatch, lambda];
  for (const c of CLIENTS) watchMocked(c);
  const outputs = Object.entries((world.synthesized.parent.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs).map(([OutputKey, o]) => ({
    OutputKey,
    OutputValue: String(world.template.resolve(o.Value)),
  }));
  const stackName = world.synthesized.stack.stackName;
  cloudFormation.on(DescribeStacksCommand).resolves({ Stacks: [{ StackName: stackName, StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: outputs }] });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ login: 'merchant', controlKey: 'not-a-placeholder' }) });
  secrets.on(DescribeSecretCommand).callsFake((i: { SecretId: string }) => ({ Name: i.SecretId, LastChangedDate: new Date() }));
  const topicArn = outputs.find((o) => o.OutputKey === 'AlarmTopicArn')?.OutputValue;
  sns.on(ListSubscriptionsByTopicCommand).resolves({ Subscriptions: [{ Protocol: 'email', Endpoint: 'ops@example.com', SubscriptionArn: `${topicArn}:sub` }] });
  scheduler.on(ListSchedulesCommand).resolves({ Schedules: [{ Name: 'transactions', State: 'ENABLED' }] });
  s3.on(ListObjectsV2Command).callsFake((i: { Prefix?: string }) => ({ Contents: i.Prefix?.startsWith('manifests/') ? [{ Key: manifestKey }] : [] }));
  s3.on(ListObjectVersionsCommand).resolves({ Versions: [{ Key: raw, VersionId: 'v1', IsLatest: true, Size: 100, ETag: '"e"' }] });
  s3.on(GetObjectCommand).callsFake(() => ({ Body: text({ outcome: 'loaded', loadRunId: 'req-1', finishedAt: new Date().toISOString(), rows: { written: 1 } }) }));
  sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' } });
  athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'query-id' });
  athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
  athena.on(GetQueryResultsCommand).resolves({ ResultSet: { Rows: [{ Data: [{ VarCharValue: '_col0' }] }, { Data: [{ VarCharValue: '1' }] }] } });
  // The stack's own alarms, as DescribeAlarms would list them: `alarms test` pages through one of them.
  const alarms = Object.values((world.synthesized.parent.toJSON() as { Resources: Record<string, { Type: string; Properties: { AlarmName?: unknown } }> }).Resources)
    .filter((r) => r.Type === 'AWS::CloudWatch::Alarm' && r.Properties.AlarmName !== undefined)
    .map((r) => ({ AlarmName: String(world.template.resolve(r.Properties.AlarmName)), StateValue: 'OK' as const, AlarmActions: [topicArn!] }));
  cloudWatch.on(DescribeAlarmsCommand).resolves({ MetricAlarms: alarms });
  cloudWatch.on(SetAlarmStateCommand).resolves({});
  cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
  lambda.on(InvokeCommand).callsFake((i: { FunctionName: string }) => ({
    StatusCode: 200,
    $metadata: { requestId: 'req-1' },
    Payload: Buffer.from(
      JSON.stringify(/fetch/i.test(i.FunctionName) ? { runId: 'req-1', reportId: 'transactions', kind: 'backfill', windows: [{ key: raw, bytes: 100 }] } : { batchItemFailures: [] }),
    ),
  }));
  return () => mocks.forEach((m) => m.restore());
}

/** Runs the four commands for a shipped environment as its operator. */
export async function driveOperator(world: StackWorld): Promise<void> {
  const restore = answerAsTheStack(world);
  const saved = { ...process.env };
  const log = console.log;
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDOPERATOR', AWS_SECRET_ACCESS_KEY: 'operator-secret', AWS_REGION: SAMPLE.region });
  console.log = () => undefined;
  const quiet = () => undefined;
  const fetchFunction = String(world.template.resolve({ Ref: world.functionIds.fetch }));
  try {
    await as('operator', () => runStatusCommand({ environment: world.name, region: SAMPLE.region }));
    await as('operator', () =>
      runBackfillCommand({ deployed: true, functionName: fetchFunction, region: SAMPLE.region, environment: world.name, report: 'transactions', from: DAY, to: '2026-11-21', concurrency: 1, lake: '.lake', tty: false }, quiet),
    );
    await as('operator', () => runAlarmsTestCommand({ environment: world.name, region: SAMPLE.region, holdMs: 0 }));
    await as('operator', () => runReparseCommand({ environment: world.name, region: SAMPLE.region, report: 'transactions', from: DAY, to: '2026-11-21', concurrency: 1, tty: false }, quiet));
  } finally {
    console.log = log;
    process.env = saved;
    restore();
  }
}
