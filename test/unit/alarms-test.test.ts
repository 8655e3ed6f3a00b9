import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { mockClient } from 'aws-sdk-client-mock';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand, SetAlarmStateCommand, type MetricAlarm } from '@aws-sdk/client-cloudwatch';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { alarmsTest, RESTORE_REASON, TEST_REASON, type AlarmsTestInput } from '../../local/alarms/alarms-test.js';
import { parseEnvironment } from '../../lib/environment/environments.js';
import { EVERY_CHANNEL_KIND, OPSGENIE_URL, PAGERDUTY_URL, TEST_KEYS } from '../helpers/alarm-channels.js';

/**
 * Issue 46: `reports alarms test --environment NAME`, with the SDK mocked (CloudWatch, SNS and CloudFormation have no
 * local stand-in): which alarm it sets, that it sets it to ALARM and back to the state it had, that --dry-run sets
 * nothing, and that it names every channel, a paging integration by its key's last four characters only.
 */

const TOPIC = 'arn:aws:sns:eu-central-1:123456789012:PaynetReports-test-AlarmsTopic';
const cloudFormation = mockClient(CloudFormationClient);
const cloudWatch = mockClient(CloudWatchClient);
const sns = mockClient(SNSClient);

const alarm = (name: string, state: MetricAlarm['StateValue'], actions = [TOPIC]): MetricAlarm => ({ AlarmName: `paynet-reports-test-${name}`, StateValue: state, AlarmActions: actions });

const channels = parseEnvironment(
  { name: 'test', gateway: { endpointUrl: 'https://gateway.test/p' }, secret: { name: 's' }, alarmChannels: EVERY_CHANNEL_KIND },
  'test',
).alarmChannels;

function input(overrides: Partial<AlarmsTestInput> = {}): AlarmsTestInput & { lines: string[]; slept: number[] } {
  const lines: string[] = [];
  const slept: number[] = [];
  return {
    environment: 'test',
    channels,
    dryRun: false,
    clients: { cloudFormation: new CloudFormationClient({ region: 'eu-central-1' }), cloudWatch: new CloudWatchClient({ region: 'eu-central-1' }), sns: new SNSClient({ region: 'eu-central-1' }) },
    print: (line) => lines.push(line),
    sleep: async (ms) => void slept.push(ms),
    lines,
    slept,
    ...overrides,
  };
}

describe('reports alarms test', () => {
  beforeEach(() => {
    for (const m of [cloudFormation, cloudWatch, sns]) m.reset();
    cloudFormation.on(DescribeStacksCommand, { StackName: 'PaynetReports-test' }).resolves({
      Stacks: [{ StackName: 'PaynetReports-test', StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: [{ OutputKey: 'AlarmTopicArn', OutputValue: TOPIC }] }],
    });
    sns.on(ListSubscriptionsByTopicCommand, { TopicArn: TOPIC }).resolves({
      Subscriptions: [
        { Protocol: 'email', Endpoint: 'oncall@merchant.test', SubscriptionArn: `${TOPIC}:1` },
        { Protocol: 'https', Endpoint: PAGERDUTY_URL, SubscriptionArn: `${TOPIC}:2` },
        { Protocol: 'https', Endpoint: OPSGENIE_URL, SubscriptionArn: 'PendingConfirmation' },
        { Protocol: 'https', Endpoint: 'https://global.sns-api.chatbot.amazonaws.com', SubscriptionArn: `${TOPIC}:4` },
      ],
    });
    cloudWatch.on(DescribeAlarmsCommand).resolves({
      MetricAlarms: [alarm('auth-refused-default', 'OK'), alarm('fetch-errors', 'OK'), alarm('parse-errors', 'ALARM'), alarm('elsewhere', 'OK', ['arn:other'])],
    });
    cloudWatch.on(SetAlarmStateCommand).resolves({});
  });

  it('sets the fetch-errors alarm to ALARM, holds it, and sets it back to OK with SetAlarmState', async () => {
    const i = input({ holdMs: 7000 });
    assert.equal(await alarmsTest(i), 0);
    const sets = cloudWatch.commandCalls(SetAlarmStateCommand).map((c) => c.args[0].input);
    assert.deepEqual(sets, [
      { AlarmName: 'paynet-reports-test-fetch-errors', StateValue: 'ALARM', StateReason: TEST_REASON },
      { AlarmName: 'paynet-reports-test-fetch-errors', StateValue: 'OK', StateReason: RESTORE_REASON },
    ]);
    assert.deepEqual(i.slept, [7000]);
    assert.deepEqual(cloudWatch.commandCalls(DescribeAlarmsCommand)[0]!.args[0].input, { AlarmNamePrefix: 'paynet-reports-test-', AlarmTypes: ['MetricAlarm'], NextToken: undefined });
  });

  it('says which channels should receive it: every entry of the file, and what SNS has subscribed, a pending one named', async () => {
    const i = input();
    await alarmsTest(i);
    const text = i.lines.join('\n');
    for (const expected of [
      'e-mail oncall@merchant.test',
      'Slack channel C0999WXYZ (Amazon Q Developer)',
      'PagerDuty (integration …cdef)',
      'Opsgenie (integration …f00d)',
      'Opsgenie (integration …f00d): NOT CONFIRMED, will not receive it',
      'chat (Amazon Q Developer)',
    ]) {
      assert.ok(text.includes(expected), `${expected} in:\n${text}`);
    }
    assert.match(text, /sets it back to OK with SetAlarmState too/i);
    assert.match(text, /next\s+evaluation \(within 5 minutes\) would set it back/);
    for (const key of Object.values(TEST_KEYS)) assert.ok(!text.includes(key), 'a key is printed');
  });

  it('--dry-run says the same and sets nothing', async () => {
    const i = input({ dryRun: true });
    assert.equal(await alarmsTest(i), 0);
    assert.equal(cloudWatch.commandCalls(SetAlarmStateCommand).length, 0);
    assert.match(i.lines.join('\n'), /Would set it to ALARM[\s\S]*Dry run: nothing was set\./);
  });

  it('puts an alarm back to the state it had, INSUFFICIENT_DATA too, when fetch-errors is not there', async () => {
    cloudWatch.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [alarm('parse-errors', 'INSUFFICIENT_DATA'), alarm('dead-letters-parse', 'ALARM')] });
    await alarmsTest(input());
    assert.deepEqual(
      cloudWatch.commandCalls(SetAlarmStateCommand).map((c) => [c.args[0].input.AlarmName, c.args[0].input.StateValue]),
      [
        ['paynet-reports-test-parse-errors', 'ALARM'],
        ['paynet-reports-test-parse-errors', 'INSUFFICIENT_DATA'],
      ],
    );
  });

  it('refuses when every alarm is already in ALARM, and sets nothing without a confirmed subscription', async () => {
    cloudWatch.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [alarm('fetch-errors', 'ALARM')] });
    await assert.rejects(alarmsTest(input()), /already hearing a real alarm/);
    cloudWatch.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [alarm('fetch-errors', 'OK')] });
    sns.on(ListSubscriptionsByTopicCommand).resolves({ Subscriptions: [{ Protocol: 'email', Endpoint: 'a@b.test', SubscriptionArn: 'PendingConfirmation' }] });
    const i = input();
    assert.equal(await alarmsTest(i), 1);
    assert.equal(cloudWatch.commandCalls(SetAlarmStateCommand).length, 0);
  });

  it('says the next evaluation restores the alarm when setting it back fails', async () => {
    cloudWatch.on(SetAlarmStateCommand, { StateValue: 'OK' }).rejects(new Error('throttled'));
    const i = input();
    assert.equal(await alarmsTest(i), 1);
    assert.match(i.lines.at(-1)!, /Could not set it back \(throttled\): its next evaluation will, within 5 minutes/);
  });
});
