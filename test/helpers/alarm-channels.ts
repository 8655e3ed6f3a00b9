import { CHANNEL_KINDS, type ChannelKind } from '../../lib/environment/alarm-channels.js';

/**
 * Keys of the paging services' integrations as a user would paste them: the no-key tests look for each of them, whole,
 * in every output, and each is long and random-looking enough never to occur by chance.
 */
export const TEST_KEYS = {
  pagerduty: '7f3a9c1e5b2d4f6a8c0e1b3d5f7a9cdef',
  opsgenie: '4b6d8f0a-2c4e-6a8c-0e2f-4a6c8e0bf00d',
} as const;

export const PAGERDUTY_URL = `https://events.pagerduty.com/integration/${TEST_KEYS.pagerduty}/enqueue`;
export const OPSGENIE_URL = `https://api.eu.opsgenie.com/v1/json/cloudwatch?apiKey=${TEST_KEYS.opsgenie}`;

/** One entry of each kind, as an environment file's alarmChannels writes it. */
export const CHANNEL_EXAMPLES = {
  email: { kind: 'email', address: 'oncall@merchant.test' },
  slack: { kind: 'slack', workspaceId: 'T012ABCDE', channelId: 'C0999WXYZ' },
  teams: {
    kind: 'teams',
    teamId: '74361522-da01-538d-aa2e-ac7918c6bb92',
    channelId: '19%3aa1b2c3d4e5f60718293a4b5c6d7e8f90%40thread.tacv2',
    tenantId: '11111111-2222-3333-4444-555555555555',
  },
  pagerduty: { kind: 'pagerduty', integrationUrl: PAGERDUTY_URL, secret: 'paynet-reports/test/pagerduty' },
  opsgenie: { kind: 'opsgenie', integrationUrl: OPSGENIE_URL },
} satisfies Record<ChannelKind, { kind: ChannelKind } & Record<string, string>>;

export const EVERY_CHANNEL_KIND = CHANNEL_KINDS.map((k) => CHANNEL_EXAMPLES[k]);
