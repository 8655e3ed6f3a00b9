import { Stack } from 'aws-cdk-lib';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { AlarmChannel } from '../../environment/alarm-channels.js';
import { AlarmChat } from './alarm-chat.js';
import { CHANNEL_RESOURCES, type ChannelScope } from './channel-resources.js';

export interface AlarmChannelsProps {
  readonly environment: string;
  /** The alarm topic (lib/constructs/alarms.ts): every channel hears it. */
  readonly topic: sns.ITopic;
  /** The environment's `alarmChannels`, older `alarmEmails` and `alarmChat` included. */
  readonly channels: readonly AlarmChannel[];
}

/**
 * Every channel of the environment subscribed to the alarm topic, each as its kind's entry of CHANNEL_RESOURCES
 * makes it. The chat configurations keep the stack-level id "AlarmChat" they had before the channel list, so an
 * update does not replace them.
 */
export class AlarmChannels extends Construct {
  /** With a Slack or Teams channel: their configurations and the role the chat service assumes. */
  chat?: AlarmChat;

  constructor(scope: Construct, id: string, props: AlarmChannelsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const channelScope: ChannelScope = {
      environment: props.environment,
      topic: props.topic,
      construct: this,
      chat: () => (this.chat ??= new AlarmChat(stack, 'AlarmChat', { environment: props.environment, topic: props.topic })),
    };
    for (const channel of props.channels) subscribe(channelScope, channel);
  }
}

/** Dispatches a channel to its kind's entry, which is handed only channels of its own kind. */
function subscribe(scope: ChannelScope, channel: AlarmChannel): void {
  const make = CHANNEL_RESOURCES[channel.kind] as unknown as (scope: ChannelScope, channel: AlarmChannel) => unknown;
  make(scope, channel);
}
