import { createHash } from 'node:crypto';
import { Validations } from 'aws-cdk-lib';
import * as chatbot from 'aws-cdk-lib/aws-chatbot';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { NAME_PREFIX } from '../../../functions/core/naming.js';
import type { ChannelOf } from '../../environment/alarm-channels.js';

export interface AlarmChatProps {
  readonly environment: string;
  /** The alarm topic every channel subscribes to. */
  readonly topic: sns.ITopic;
}

/**
 * What a channel may do, at most: read CloudWatch (alarms, metrics, logs), whatever its role or a member's role
 * allows. Without a guardrail the service applies AdministratorAccess.
 */
export const CHAT_GUARDRAIL_POLICY = 'CloudWatchReadOnlyAccess';

/**
 * Alarm notifications in Slack and Microsoft Teams channels (the slack and teams kinds of alarmChannels) through
 * Amazon Q Developer in chat applications (the former AWS Chatbot): one channel configuration each, subscribed to the alarm topic. The service renders CloudWatch alarm
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
  private readonly topic: sns.ITopic;
  private readonly environment: string;
  private readonly guardrail: iam.IManagedPolicy;

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

    this.topic = props.topic;
    this.environment = props.environment;
    this.guardrail = guardrail;
  }

  /** One Slack channel's configuration, subscribed to the alarm topic. */
  addSlack(channel: ChannelOf<'slack'>): void {
    this.slack.push(
      new chatbot.SlackChannelConfiguration(this, `Slack-${digest(channel.channelId)}`, {
        slackChannelConfigurationName: this.nameOf('slack', channel.channelId),
        slackWorkspaceId: channel.workspaceId,
        slackChannelId: channel.channelId,
        role: this.role,
        guardrailPolicies: [this.guardrail],
        notificationTopics: [this.topic],
        // Why a notification did not reach the channel: /aws/chatbot/<name> in us-east-1, where the service logs.
        loggingLevel: chatbot.LoggingLevel.ERROR,
        userRoleRequired: false,
      }),
    );
  }

  /** One Microsoft Teams channel's configuration, subscribed to the alarm topic. */
  addTeams(channel: ChannelOf<'teams'>): void {
    this.teams.push(
      new chatbot.CfnMicrosoftTeamsChannelConfiguration(this, `Teams-${digest(channel.channelId)}`, {
        configurationName: this.nameOf('teams', channel.channelId),
        teamId: channel.teamId,
        teamsChannelId: channel.channelId,
        teamsTenantId: channel.tenantId,
        iamRoleArn: this.role.roleArn,
        guardrailPolicies: [this.guardrail.managedPolicyArn],
        snsTopicArns: [this.topic.topicArn],
        loggingLevel: 'ERROR',
        userRoleRequired: false,
      }),
    );
  }

  /** Configuration names are unique in the account (the service is global): environment and channel make them so. */
  private nameOf(kind: string, channelId: string): string {
    return `${NAME_PREFIX}-${this.environment}-${kind}-${digest(channelId)}`;
  }
}

/** A Teams channel id holds %-escapes, so both kinds are named (and identified in the template) by a digest of it. */
const digest = (channelId: string) => createHash('sha256').update(channelId).digest('hex').slice(0, 10);
