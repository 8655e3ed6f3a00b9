import { Annotations, SecretValue } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { integrationSecretName, shownChannel, type ChannelKind, type ChannelOf } from '../../environment/alarm-channels.js';
import type { AlarmChat } from './alarm-chat.js';

/** What a channel's resources are made in: the alarm topic, and the chat configurations' construct (made on first use). */
export interface ChannelScope {
  readonly environment: string;
  readonly topic: sns.ITopic;
  /** Where the HTTPS subscriptions of the paging services are made. */
  readonly construct: Construct;
  chat(): AlarmChat;
}

/**
 * What each channel kind (lib/environment/alarm-channels.ts, CHANNEL_KINDS) creates in the stack, keyed by kind: a
 * kind without its entry here does not compile. E-mail keeps the subscription id it always had (under the topic),
 * so an address confirmed before is not asked again.
 */
export const CHANNEL_RESOURCES = {
  email: (scope, channel) => scope.topic.addSubscription(new subscriptions.EmailSubscription(channel.address)),
  slack: (scope, channel) => scope.chat().addSlack(channel),
  teams: (scope, channel) => scope.chat().addTeams(channel),
  pagerduty: (scope, channel) => integrationSubscription(scope, channel),
  opsgenie: (scope, channel) => integrationSubscription(scope, channel),
} satisfies { [K in ChannelKind]: (scope: ChannelScope, channel: ChannelOf<K>) => unknown };

/**
 * A paging service's CloudWatch integration, subscribed over HTTPS. The endpoint is a Secrets Manager dynamic reference
 * ({{resolve:secretsmanager:<secret>:SecretString:::}}): CloudFormation resolves it at deploy time and neither logs nor
 * keeps the value, so the template holds the secret's name, never the URL or its key (docs/deploy.md, "Alarms and who
 * hears them"). SNS itself returns the endpoint to whoever may list the topic's subscriptions (sns:ListSubscriptionsByTopic).
 * The service confirms the subscription itself on its first request.
 */
function integrationSubscription(scope: ChannelScope, channel: ChannelOf<'pagerduty'> | ChannelOf<'opsgenie'>): sns.Subscription {
  const secretName = integrationSecretName(scope.environment, channel);
  // CloudFormation reads the secret at deploy time and fails the deploy if it is not there: say so at synth, keyless.
  Annotations.of(scope.construct).addWarningV2(
    `paynet-reports:alarmChannelSecret:${secretName}`,
    `${shownChannel(channel)} of "${scope.environment}" is subscribed with the URL in the Secrets Manager secret "${secretName}", read at deploy: ` +
      'create it first, holding the integration URL (docs/deploy.md, "Alarms and who hears them"); acknowledge this warning once it exists.',
  );
  // The id from the secret's name: stable while the entry names the same secret, whatever its place in the list.
  return new sns.Subscription(scope.construct, `${channel.kind}-${secretName.replace(/[^A-Za-z0-9]/g, '-')}`, {
    topic: scope.topic,
    protocol: sns.SubscriptionProtocol.HTTPS,
    // The reference, not the value: unsafeUnwrap() only turns the token into the {{resolve:…}} text CloudFormation reads.
    endpoint: SecretValue.secretsManager(secretName).unsafeUnwrap(),
  });
}
