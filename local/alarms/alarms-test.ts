import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand, SetAlarmStateCommand, type MetricAlarm, type StateValue } from '@aws-sdk/client-cloudwatch';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { ConfigurationError } from '../../functions/core/errors.js';
import { NAME_PREFIX, stackName } from '../../functions/core/naming.js';
import { shownChannel, type AlarmChannel } from '../../lib/environment/alarm-channels.js';
import { withoutKeys } from '../../lib/environment/integration-urls.js';
import { requireAwsAccess } from '../args/aws-access.js';
import { subscriptionName } from './subscription-names.js';

/**
 * `reports alarms test --environment NAME`: a test page. One alarm of the deployed environment is set to ALARM for a
 * moment (CloudWatch SetAlarmState), so every channel subscribed to the alarm topic receives a real notification,
 * then it is set back to the state it had with SetAlarmState too: its OK notification follows, so a channel also
 * shows the recovery. Were the second call to fail (or the command be stopped), the alarm's next evaluation sets it
 * back from its data within its period (5 minutes). With --dry-run it reads the same and sets nothing.
 */

export interface AlarmsTestClients {
  cloudFormation: CloudFormationClient;
  cloudWatch: CloudWatchClient;
  sns: SNSClient;
}

export interface AlarmsTestInput {
  environment: string;
  /** The environment's channels (alarmChannels, older forms included): who should receive the page. */
  channels: readonly AlarmChannel[];
  dryRun: boolean;
  clients: AlarmsTestClients;
  print: (line: string) => void;
  /** How long the alarm stays in ALARM before it is put back. */
  holdMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** The alarm a test page uses: the fetch function's errors if it can, else any of the environment's not in ALARM. */
export const PREFERRED_ALARM = 'fetch-errors';

export const TEST_REASON = 'Test page (npm run reports -- alarms test): no failure; the alarm is set back in a moment.';
export const RESTORE_REASON = 'Test page over: set back to the state it had before the test.';

async function topicOf(input: AlarmsTestInput): Promise<string> {
  const name = stackName(input.environment);
  let outputs: Record<string, string>;
  try {
    const stack = (await input.clients.cloudFormation.send(new DescribeStacksCommand({ StackName: name }))).Stacks?.[0];
    outputs = Object.fromEntries((stack?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
  } catch (e) {
    throw new ConfigurationError(`Could not read the stack ${name} (cloudformation:DescribeStacks): ${withoutKeys((e as Error).message)}. Deploy it first (docs/deploy.md).`);
  }
  if (!outputs.AlarmTopicArn) throw new ConfigurationError(`The stack ${name} has no output AlarmTopicArn: deploy this version of the stack first.`);
  return outputs.AlarmTopicArn;
}

async function listSubscriptions(input: AlarmsTestInput, topicArn: string): Promise<Array<{ name: string; pending: boolean }>> {
  const found: Array<{ name: string; pending: boolean }> = [];
  let token: string | undefined;
  do {
    const page = await input.clients.sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken: token }));
    for (const s of page.Subscriptions ?? []) {
      found.push({ name: subscriptionName({ protocol: s.Protocol, endpoint: s.Endpoint }), pending: s.SubscriptionArn === 'PendingConfirmation' });
    }
    token = page.NextToken;
  } while (token);
  return found;
}

/** The environment's metric alarms that notify the topic and are not in ALARM now (a page needs a change of state). */
async function candidateAlarms(input: AlarmsTestInput, topicArn: string): Promise<MetricAlarm[]> {
  const alarms: MetricAlarm[] = [];
  let token: string | undefined;
  do {
    const page = await input.clients.cloudWatch.send(
      new DescribeAlarmsCommand({ AlarmNamePrefix: `${NAME_PREFIX}-${input.environment}-`, AlarmTypes: ['MetricAlarm'], NextToken: token }),
    );
    alarms.push(...(page.MetricAlarms ?? []));
    token = page.NextToken;
  } while (token);
  return alarms.filter((a) => a.StateValue !== 'ALARM' && (a.AlarmActions ?? []).includes(topicArn));
}

function chooseAlarm(input: AlarmsTestInput, alarms: readonly MetricAlarm[]): MetricAlarm {
  const preferred = alarms.find((a) => a.AlarmName === `${NAME_PREFIX}-${input.environment}-${PREFERRED_ALARM}`);
  const chosen = preferred ?? [...alarms].sort((a, b) => (a.AlarmName ?? '').localeCompare(b.AlarmName ?? ''))[0];
  if (!chosen?.AlarmName) {
    throw new ConfigurationError(
      `No alarm of ${NAME_PREFIX}-${input.environment}-* that notifies the alarm topic is out of ALARM: the channels are already hearing a real alarm ` +
        `(npm run reports -- status --environment ${input.environment}); test once it is over.`,
    );
  }
  return chosen;
}

/** The plan, said before anything is set: which alarm, for how long, who should hear it. */
function describePlan(input: AlarmsTestInput, alarm: MetricAlarm, subscribed: ReadonlyArray<{ name: string; pending: boolean }>, holdMs: number): void {
  const { print } = input;
  const state = (alarm.StateValue ?? 'OK') as StateValue;
  print(`Alarm: ${alarm.AlarmName} (now ${state}).`);
  print(`${input.dryRun ? 'Would set' : 'Sets'} it to ALARM (cloudwatch:SetAlarmState), waits ${Math.round(holdMs / 1000)} s, then sets it back to ${state} with SetAlarmState too:`);
  const after = state === 'OK' ? 'then the OK one' : `and no notification for ${state} (the alarms notify on ALARM and OK only)`;
  print(`  each channel receives the ALARM notification, ${after}. Were the command stopped between the two, the alarm's next`);
  print('  evaluation (within 5 minutes) would set it back from its data.');
  print(`Should receive it, by the environment file (${input.channels.length}):`);
  for (const c of input.channels) print(`  ${shownChannel(c)}`);
  if (!input.channels.length) print('  nobody: add alarmChannels to the environment file and deploy (docs/deploy.md, "Alarms and who hears them")');
  print(`Subscribed to the alarm topic now (${subscribed.length}):`);
  for (const s of subscribed) print(`  ${s.name}${s.pending ? ': NOT CONFIRMED, will not receive it' : ''}`);
}

export async function alarmsTest(input: AlarmsTestInput): Promise<number> {
  const holdMs = input.holdMs ?? 10_000;
  const sleep = input.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const topicArn = await topicOf(input);
  const [subscribed, alarms] = await Promise.all([listSubscriptions(input, topicArn), candidateAlarms(input, topicArn)]);
  const alarm = chooseAlarm(input, alarms);
  describePlan(input, alarm, subscribed, holdMs);
  const confirmed = subscribed.filter((s) => !s.pending).length;
  if (input.dryRun) {
    input.print('Dry run: nothing was set.');
    return confirmed ? 0 : 1;
  }
  if (!confirmed) {
    input.print('Nothing set: no confirmed subscription would receive the page.');
    return 1;
  }
  const name = alarm.AlarmName!;
  const before = (alarm.StateValue ?? 'OK') as StateValue;
  await input.clients.cloudWatch.send(new SetAlarmStateCommand({ AlarmName: name, StateValue: 'ALARM', StateReason: TEST_REASON }));
  input.print(`Set ${name} to ALARM at ${new Date().toISOString()}.`);
  await sleep(holdMs);
  try {
    await input.clients.cloudWatch.send(new SetAlarmStateCommand({ AlarmName: name, StateValue: before, StateReason: RESTORE_REASON }));
  } catch (e) {
    input.print(`Could not set it back (${withoutKeys((e as Error).message)}): its next evaluation will, within 5 minutes.`);
    return 1;
  }
  input.print(`Set it back to ${before}. Check that each channel above got the ALARM notification${before === 'OK' ? ' and then the OK one' : ''}.`);
  return 0;
}

/** The CLI entry: the environment's channels from its file, clients with the caller's credentials. */
export async function runAlarmsTestCommand(opts: { environment: string; region?: string; dryRun?: boolean; holdMs?: number }): Promise<number> {
  const { loadEnvironments } = await import('../../lib/environment/environments.js');
  const environments = loadEnvironments();
  const config = environments.find((e) => e.name === opts.environment);
  if (!config) throw new ConfigurationError(`No environment "${opts.environment}" in config/environments/: ${environments.map((e) => e.name).join(', ')}.`);
  const region = opts.region ?? config.region;
  const clientConfig = region ? { region } : {};
  const cloudFormation = new CloudFormationClient(clientConfig);
  await requireAwsAccess(cloudFormation, `pass --region, or set "region" in config/environments/${config.name}.json`);
  return alarmsTest({
    environment: config.name,
    channels: config.alarmChannels,
    dryRun: Boolean(opts.dryRun),
    holdMs: opts.holdMs,
    clients: { cloudFormation, cloudWatch: new CloudWatchClient(clientConfig), sns: new SNSClient(clientConfig) },
    print: (line) => console.log(line),
  });
}
