import type { ChannelKind } from '../../lib/environment/alarm-channels.js';
import { integrationOf, OPSGENIE, PAGERDUTY, shownIntegration, withoutKeys, type IntegrationRule } from '../../lib/environment/integration-urls.js';

/** A subscription of the alarm topic as SNS lists it (ListSubscriptionsByTopic). */
export interface ListedSubscription {
  readonly protocol?: string;
  readonly endpoint?: string;
}

export interface SubscriptionName {
  /** Whether SNS's subscription is one a channel of this kind made. */
  recognises(s: ListedSubscription): boolean;
  /** How `reports status` and `reports alarms test` name it: never a key. */
  shown(s: ListedSubscription): string;
  /** What to do while SNS says "PendingConfirmation". */
  readonly whenPending: string;
}

/** Slack and Teams: both kinds subscribe the chat service's one endpoint, so SNS cannot tell them apart. */
const CHAT: SubscriptionName = {
  recognises: (s) => /\.chatbot\.amazonaws\.com/.test(s.endpoint ?? ''),
  shown: () => 'chat (Amazon Q Developer)',
  whenPending: 'the chat service confirms its own subscription: deploy again if it stays pending',
};

const integration = (rule: IntegrationRule): SubscriptionName => ({
  recognises: (s) => integrationOf(s.endpoint)?.rule === rule,
  shown: (s) => shownIntegration(rule, integrationOf(s.endpoint)!.key),
  whenPending: `${rule.label} confirms on its first request: a subscription still pending means the URL in its secret is not a live integration (docs/deploy.md, "Alarms and who hears them")`,
});

/**
 * How `reports status` recognises and shows each channel kind's subscription (lib/environment/alarm-channels.ts,
 * CHANNEL_KINDS), keyed by kind: a kind without its entry here does not compile.
 */
export const SUBSCRIPTION_NAMES = {
  email: {
    recognises: (s) => s.protocol === 'email' || (s.protocol === undefined && /^[^\s/:@]+@[^\s/:@]+$/.test(s.endpoint ?? '')),
    shown: (s) => s.endpoint ?? '?',
    whenPending: 'follow the link in the "AWS Notification - Subscription Confirmation" mail',
  },
  slack: CHAT,
  teams: CHAT,
  pagerduty: integration(PAGERDUTY),
  opsgenie: integration(OPSGENIE),
} satisfies Record<ChannelKind, SubscriptionName>;

const entries = Object.values(SUBSCRIPTION_NAMES) as SubscriptionName[];

/** A subscription as people know it; one of no kind of ours shows its protocol and host only (its path may hold a key). */
export function subscriptionName(s: ListedSubscription): string {
  const kind = entries.find((e) => e.recognises(s));
  if (kind) return kind.shown(s);
  return `${s.protocol ?? 'endpoint'} ${withoutKeys(s.endpoint ?? '?')}`;
}

/** What to do about a pending subscription, by its kind. */
export const whenPending = (s: ListedSubscription): string =>
  entries.find((e) => e.recognises(s))?.whenPending ?? 'the endpoint has not confirmed the subscription';
