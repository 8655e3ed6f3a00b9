import { createHash } from 'node:crypto';
import { Validations } from 'aws-cdk-lib';
import * as chatbot from 'aws-cdk-lib/aws-chatbot';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { NAME_PREFIX } from '../../functions/core/naming.js';

export interface SlackChannel {
  readonly workspaceId: string;
  readonly channelId: string;
}

export interface TeamsChannel {
  readonly teamId: string;
  readonly channelId: string;
  readonly tenantId: string;
}

export interface AlarmChatProps {
  readonly environment: string;
  /** The alarm topic every channel subscribes to. */
  readonly topic: sns.ITopic;
  readonly slack: readonly SlackChannel[];
  readonly teams: readonly TeamsChannel[];
}

/**
 * What a channel may do, at most: read CloudWatch (alarms, metrics, logs), whatever its role or a member's role
 * allows. Without a guardrail the service applies AdministratorAccess.
 */
export const CHAT_GUARDRAIL_POLICY = 'CloudWatchReadOnlyAccess';

/**
 * Alarm notifications in Slack and Microsoft Teams channels through Amazon Q Developer in chat applications (the former
 * AWS Chatbot): one channel configuration each, subscribed to the alarm topic. The service renders CloudWatch alarm
 * notifications natively; nothing of ours publishes to the topic (test/infra/governed-deploy.test.ts checks no role may),
 * so no message in a custom format can reach a channel and be dropped. The topic's key needs nothing for chat: SNS
 * decrypts before it delivers, and CloudWatch, the publisher, is already allowed (lib/constructs/alarms.ts).
 *
 * Each workspace or team is authorised once in the service's console before the deploy (docs/deploy.md): CloudFormation
 * cannot, and the configuration fails to create without it.
 */
export class AlarmChat extends Construct {
  /** Assumed by the service for every channel: read-only CloudWatch, to show an alarm's graph and answer questions. */
  readonly role: iam.Role;
  readonly slack: chatbot.SlackChannelConfiguration[] = [];
  readonly teams: chatbot.CfnMicrosoftTeamsChannelConfiguration[] = [];

  constructor(scope: Construct, id: string, props: AlarmChatProps) {
    super(scope, id);
    const guardrail = iam.ManagedPolicy.fromAwsManagedPolicyName(CHAT_GUARDRAIL_POLICY);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('chatbot.amazonaws.com'),
      description: `paynet-reports ${props.environment}: alarm notifications in chat (Amazon Q Developer in chat applications)`,
      managedPolicies: [guardrail],
    });
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${CHAT_GUARDRAIL_POLICY}]`,
      reason:
        "AWS's read-only CloudWatch policy, also the channels' guardrail: the chat service renders an alarm's graph and " +
        "answers a member's read question with it. AWS maintains it as CloudWatch's read actions change; it writes nothing.",
    });

    // Configuration names are unique in the account (the service is global): environment and channel make them so.
    // A Teams channel id holds %-escapes, so both kinds are named (and identified in the template) by a digest of it.
    const digest = (channelId: string) => createHash('sha256').update(channelId).digest('hex').slice(0, 10);
    const name = (kind: string, channelId: string) => `${NAME_PREFIX}-${props.environment}-${kind}-${digest(channelId)}`;
    for (const channel of props.slack) {
      this.slack.push(
        new chatbot.SlackChannelConfiguration(this, `Slack-${digest(channel.channelId)}`, {
          slackChannelConfigurationName: name('slack', channel.channelId),
          slackWorkspaceId: channel.workspaceId,
          slackChannelId: channel.channelId,
          role: this.role,
          guardrailPolicies: [guardrail],
          notificationTopics: [props.topic],
          // Why a notification did not reach the channel: /aws/chatbot/<name> in us-east-1, where the service logs.
          loggingLevel: chatbot.LoggingLevel.ERROR,
          userRoleRequired: false,
        }),
      );
    }
    for (const channel of props.teams) {
      this.teams.push(
        new chatbot.CfnMicrosoftTeamsChannelConfiguration(this, `Teams-${digest(channel.channelId)}`, {
          configurationName: name('teams', channel.channelId),
          teamId: channel.teamId,
          teamsChannelId: channel.channelId,
          teamsTenantId: channel.tenantId,
          iamRoleArn: this.role.roleArn,
          guardrailPolicies: [guardrail.managedPolicyArn],
          snsTopicArns: [props.topic.topicArn],
          loggingLevel: 'ERROR',
          userRoleRequired: false,
        }),
      );
    }
  }
}
