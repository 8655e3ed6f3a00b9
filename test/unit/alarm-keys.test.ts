import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { AthenaClient } from '@aws-sdk/client-athena';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { buildProgram } from '../../bin/program.js';
import { ENVIRONMENTS_DIR_VARIABLE, loadEnvironments } from '../../lib/environment/environments.js';
import { EVERY_CHANNEL_KIND, OPSGENIE_URL, PAGERDUTY_URL, TEST_KEYS } from '../helpers/alarm-channels.js';
import { synthPipeline } from '../infra/helpers.js';

/**
 * Issue 46: an integration key given in the environment file appears in no output of any command that reads
 * environments (what the subscription listing of the deployed topic holds included), in no synth warning, and nowhere
 * in the synthesized templates: a valid file with every kind, and files whose integration URL is refused (the refusal
 * does not quote it). AWS is mocked: CloudFormation's outputs, and SNS listing each integration's endpoint in full.
 */

const KEYS = Object.values(TEST_KEYS);
const TOPIC = 'arn:aws:sns:eu-central-1:123456789012:PaynetReports-test-AlarmsTopic';
const OUTPUTS = { AlarmTopicArn: TOPIC, ScheduleGroupName: 'paynet-reports-test', CuratedBucketName: 'curated', AthenaWorkGroupName: 'wg', GlueDatabaseName: 'db' };

function environmentFolder(alarmChannels: unknown[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'alarm-keys-'));
  const file = { name: 'test', gateway: { endpointUrl: 'https://gateway.test/paynet-ui/services/v2/rpt-engine' }, secret: { name: 'paynet-reports/test/gateway' }, alarmChannels };
  writeFileSync(join(dir, 'test.json'), JSON.stringify(file, null, 2));
  return dir;
}

const folders = {
  valid: environmentFolder(EVERY_CHANNEL_KIND),
  refusedV2: environmentFolder([{ kind: 'pagerduty', integrationUrl: `https://events.pagerduty.com/v2/enqueue?routing_key=${TEST_KEYS.pagerduty}` }]),
  refusedHttp: environmentFolder([{ kind: 'opsgenie', integrationUrl: OPSGENIE_URL.replace('https:', 'http:') }, { kind: 'pagerduty', integrationUrl: PAGERDUTY_URL.replace('https:', 'http:') }]),
};
after(() => Object.values(folders).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Every command line that reads an environment (the others never see one). */
const COMMANDS: string[][] = [
  ['status', '--environment', 'test'],
  ['alarms', 'test', '--environment', 'test', '--dry-run'],
  ['check', '--environment', 'test'],
  ['reparse', '--environment', 'test', '--from', '2026-11-01', '--to', '2026-11-02'],
  ['backfill', '--deployed', '--environment', 'test', '--function-name', 'fetch', '--from', '2026-11-01', '--to', '2026-11-02'],
];

const cloudFormation = mockClient(CloudFormationClient);
const sns = mockClient(SNSClient);
const cloudWatch = mockClient(CloudWatchClient);
// Every other client a command may make: each call refused, as without the permission.
const mocks = [
  cloudFormation,
  sns,
  cloudWatch,
  mockClient(SecretsManagerClient),
  mockClient(S3Client),
  mockClient(SchedulerClient),
  mockClient(SQSClient),
  mockClient(AthenaClient),
  mockClient(LambdaClient),
];

/** One command line through the program as bin/reports.ts runs it, everything it prints (and its error) as text. */
async function output(argv: string[]): Promise<string> {
  const lines: string[] = [];
  const write = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  const saved = { log: console.log, error: console.error, warn: console.warn, info: console.info };
  Object.assign(console, { log: write, error: write, warn: write, info: write });
  const program = buildProgram();
  const quiet = (c: ReturnType<typeof buildProgram>) => {
    c.exitOverride().configureOutput({ writeOut: write, writeErr: write, outputError: write });
    c.commands.forEach(quiet);
  };
  quiet(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    write(e instanceof Error ? `${e.name}: ${e.message}` : e);
  } finally {
    Object.assign(console, saved);
    process.exitCode = 0;
  }
  return lines.join('\n');
}

const free = (text: string, where: string) => {
  for (const key of KEYS) assert.ok(!text.includes(key), `${where} holds the key …${key.slice(-4)}:\n${text.replaceAll(key, '<KEY>')}`);
};

describe('no integration key in the open', () => {
  before(() => {
    process.env.AWS_REGION = 'eu-central-1';
    process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret';
  });
  beforeEach(() => {
    for (const m of mocks) m.reset();
    const refused = () => Object.assign(new Error('not in this test'), { name: 'AccessDeniedException' });
    for (const m of mocks) (m as { onAnyCommand(): { rejects(e: Error): unknown } }).onAnyCommand().rejects(refused());
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [{ StackName: 'PaynetReports-test', StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: Object.entries(OUTPUTS).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })) }],
    });
    sns.on(ListSubscriptionsByTopicCommand).resolves({
      Subscriptions: [
        { Protocol: 'https', Endpoint: PAGERDUTY_URL, SubscriptionArn: `${TOPIC}:1` },
        { Protocol: 'https', Endpoint: OPSGENIE_URL, SubscriptionArn: 'PendingConfirmation' },
      ],
    });
    cloudWatch.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [{ AlarmName: 'paynet-reports-test-fetch-errors', StateValue: 'OK', AlarmActions: [TOPIC] }] });
  });

  it('a valid file with every kind: each command runs and prints no key, the integrations shown by their last four characters', async () => {
    process.env[ENVIRONMENTS_DIR_VARIABLE] = folders.valid;
    const texts: string[] = [];
    for (const argv of COMMANDS) {
      const text = await output(argv);
      free(text, argv.join(' '));
      texts.push(text);
    }
    // The commands did run to the listing (not stopped before it), and named the integrations without their keys.
    assert.match(texts[0]!, /Opsgenie \(integration …f00d\): Opsgenie confirms/, texts[0]);
    assert.match(texts[1]!, /PagerDuty \(integration …cdef\)[\s\S]*Opsgenie \(integration …f00d\)/, texts[1]);
  });

  for (const [name, folder] of [['an Events API v2 URL', folders.refusedV2], ['http:// URLs', folders.refusedHttp]] as const) {
    it(`a file with ${name}: every command refuses it, naming the entry, and quotes no key`, async () => {
      process.env[ENVIRONMENTS_DIR_VARIABLE] = folder;
      for (const argv of COMMANDS) {
        const text = await output(argv);
        assert.match(text, /alarmChannels\.\d\.integrationUrl: /, `${argv.join(' ')}: ${text}`);
        free(text, argv.join(' '));
      }
      // The synthesis (bin/app.ts) loads the same way.
      assert.throws(
        () => loadEnvironments(),
        (e: unknown) => (free((e as Error).message, 'the synthesis'), true),
      );
    });
  }

  it('the synthesis: no key in any template (nested ones too) nor in any warning, which names the integration by its last four', () => {
    process.env[ENVIRONMENTS_DIR_VARIABLE] = folders.valid;
    const [config] = loadEnvironments();
    const { app, stack } = synthPipeline(config!);
    const assembly = app.synth();
    const templates = readdirSync(assembly.directory).filter((f) => f.endsWith('.template.json'));
    assert.ok(templates.length > 1, 'the stack and its nested stacks');
    for (const f of templates) free(readFileSync(join(assembly.directory, f), 'utf8'), f);
    const messages = ['findWarning', 'findInfo', 'findError'].flatMap((find) =>
      (Annotations.fromStack(stack)[find as 'findWarning']('*', Match.anyValue()) as Array<{ entry: { data: unknown } }>).map((m) => String(m.entry.data)),
    );
    free(messages.join('\n'), 'the synth messages');
    assert.ok(messages.some((m) => m.includes('PagerDuty (integration …cdef) of "test" is subscribed with the URL in the Secrets Manager secret')), messages.join('\n'));
  });
});
