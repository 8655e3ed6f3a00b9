import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AlarmChannels } from '../../lib/constructs/alarm-channels/alarm-channels.js';
import { projectPath } from '../../lib/constructs/pipeline-function.js';
import { parseEnvironment, type EnvironmentConfig } from '../../lib/environment/environments.js';
import { CHANNEL_EXAMPLES, EVERY_CHANNEL_KIND, TEST_KEYS } from '../helpers/alarm-channels.js';
import { emptyStack, resourcesOf, testConfig, type Cfn } from './helpers.js';

/**
 * Issue 46: every kind of alarmChannels makes its subscription (or chat configuration) on the alarm topic, for each
 * shipped environment (its file, with one channel of every kind added) and the test one; the older alarmEmails and
 * alarmChat make the same resources as their alarmChannels entries; the template holds no integration key.
 */

/** A shipped environment's file with one channel of every kind, an older-style e-mail and Slack channel beside them. */
function shippedWithEveryKind(name: 'integration' | 'production'): EnvironmentConfig {
  const raw = JSON.parse(readFileSync(projectPath(`config/environments/${name}.json`), 'utf8')) as Record<string, unknown>;
  return parseEnvironment(
    { ...raw, alarmChannels: EVERY_CHANNEL_KIND, alarmEmails: ['finance@merchant.test'], alarmChat: { slack: [{ workspaceId: 'T012ABCDE', channelId: 'C0123ABCD' }] } },
    name,
  );
}

const ENVIRONMENTS: Array<[string, EnvironmentConfig]> = [
  ['integration', shippedWithEveryKind('integration')],
  ['production', shippedWithEveryKind('production')],
  ['test', testConfig({ alarmChannels: EVERY_CHANNEL_KIND })],
];

function synth(config: EnvironmentConfig) {
  const stack = emptyStack();
  const topic = new sns.Topic(stack, 'Topic');
  const channels = new AlarmChannels(stack, 'AlarmChannels', { environment: config.name, topic, channels: config.alarmChannels });
  const topicRef = { Ref: stack.resolve(topic.topicArn).Ref as string };
  return { stack, topic, topicRef, channels, template: Template.fromStack(stack) };
}

const subscriptions = (template: Template) => Object.values(resourcesOf(template, 'AWS::SNS::Subscription')).map((r) => r.Properties as Cfn);

for (const [name, config] of ENVIRONMENTS) {
  describe(`alarm channels of ${name}`, () => {
    const { stack, topicRef, template } = synth(config);

    it('email: an e-mail subscription per address, under the topic as before the channel list (no new confirmation)', () => {
      const emails = subscriptions(template).filter((s) => s.Protocol === 'email');
      const expected = [CHANNEL_EXAMPLES.email.address, ...(name === 'test' ? ['ops@merchant.test'] : ['finance@merchant.test'])];
      assert.deepEqual(emails.map((s) => s.Endpoint).sort(), expected.sort());
      for (const s of emails) assert.deepEqual(s.TopicArn, topicRef);
      const paths = stack.node.findAll().filter((c) => c instanceof sns.Subscription && c.node.path.includes('@')).map((c) => c.node.path);
      assert.ok(paths.length && paths.every((p) => p.startsWith('Test/Topic/')), paths.join(', '));
    });

    it('slack: a channel configuration on the topic, through Amazon Q Developer', () => {
      const slack = Object.values(resourcesOf(template, 'AWS::Chatbot::SlackChannelConfiguration')).map((r) => r.Properties as Cfn);
      const ids = slack.map((s) => s.SlackChannelId).sort();
      assert.deepEqual(ids, name === 'test' ? [CHANNEL_EXAMPLES.slack.channelId] : ['C0123ABCD', CHANNEL_EXAMPLES.slack.channelId].sort());
      for (const s of slack) assert.deepEqual(s.SnsTopicArns, [topicRef]);
    });

    it('teams: a channel configuration on the topic', () => {
      const teams = Object.values(resourcesOf(template, 'AWS::Chatbot::MicrosoftTeamsChannelConfiguration')).map((r) => r.Properties as Cfn);
      assert.deepEqual(
        teams.map((t) => [t.TeamId, t.TeamsChannelId, t.TeamsTenantId, t.SnsTopicArns]),
        [[CHANNEL_EXAMPLES.teams.teamId, CHANNEL_EXAMPLES.teams.channelId, CHANNEL_EXAMPLES.teams.tenantId, [topicRef]]],
      );
    });

    it('pagerduty and opsgenie: an HTTPS subscription whose endpoint is a Secrets Manager dynamic reference', () => {
      const https = subscriptions(template).filter((s) => s.Protocol === 'https');
      assert.deepEqual(https.map((s) => s.Endpoint).sort(), [
        // The entry's own secret, and the default name: the environment, the kind and the key's last four.
        `{{resolve:secretsmanager:paynet-reports/${name}/alarms/opsgenie-f00d:SecretString:::}}`,
        '{{resolve:secretsmanager:paynet-reports/test/pagerduty:SecretString:::}}',
      ]);
      for (const s of https) assert.deepEqual(s.TopicArn, topicRef);
    });

    it('holds no integration key in the template, not even in part beyond the last four characters', () => {
      const text = JSON.stringify(template.toJSON());
      for (const key of Object.values(TEST_KEYS)) {
        assert.ok(!text.includes(key), 'the key is in the template');
        assert.ok(!text.includes(key.slice(0, 12)), 'the start of the key is in the template');
      }
    });
  });
}

describe('the older alarmEmails and alarmChat', () => {
  it('make the same resources as the same channels written in alarmChannels', () => {
    const older = testConfig({ alarmEmails: ['ops@merchant.test'], alarmChat: { slack: [{ workspaceId: 'T012ABCDE', channelId: 'C0123ABCD' }] } });
    const newer = testConfig({
      alarmEmails: [],
      alarmChannels: [
        { kind: 'email', address: 'ops@merchant.test' },
        { kind: 'slack', workspaceId: 'T012ABCDE', channelId: 'C0123ABCD' },
      ],
    });
    assert.deepEqual(synth(older).template.toJSON(), synth(newer).template.toJSON());
  });
});
