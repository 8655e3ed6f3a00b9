import * as z from 'zod';
import { integrationOf, integrationUrlProblem, OPSGENIE, PAGERDUTY, shownIntegration, type IntegrationRule } from './integration-urls.js';

/**
 * Who hears the alarms: the channel kinds of an environment's `alarmChannels`, each declared once. CHANNEL_KINDS names
 * them; CHANNELS holds, per kind, what an entry needs in the environment file (its fields) and how it is named in
 * what the commands print. Two more tables are keyed the same way: what each kind creates in the stack
 * (lib/constructs/alarm-channels/channel-resources.ts) and how `reports status` recognises and shows its subscription
 * (local/alarms/subscription-names.ts). A kind named here without its entries does not compile
 * (test/unit/variant-exhaustiveness.test.ts proves it; docs/maintaining.md, "A sixth alarm channel kind").
 */
export const CHANNEL_KINDS = ['email', 'slack', 'teams', 'pagerduty', 'opsgenie'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export interface ChannelKindEntry<Fields extends z.ZodRawShape = z.ZodRawShape> {
  /** The entry's fields beside "kind": checked when the environment loads, each message saying what to write. */
  readonly fields: Fields;
  /** An entry as written, for messages: {"kind": "email", "address": "ops@example.com"}. */
  readonly example: string;
  /** How commands name the channel: never a key (an integration shows its last four characters). */
  shown(channel: z.output<z.ZodObject<Fields>>): string;
  /** What makes two entries the same channel (listed twice is refused). */
  identity(channel: z.output<z.ZodObject<Fields>>): string;
}

/** Infers an entry's types from its own fields, so each function sees exactly its kind's entry. */
const entry = <Fields extends z.ZodRawShape>(e: ChannelKindEntry<Fields>) => e;

const uuid = (what: string) =>
  z.string().regex(/^[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}$/, `must be the ${what} (a UUID, shown in the console once the team is authorised)`);

/** A Secrets Manager secret name, as the connections' secrets are named. */
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;

/**
 * A paging service's CloudWatch integration, subscribed to the alarm topic over HTTPS. Its URL holds the service's key:
 * the stack reads it from a Secrets Manager secret (the template holds a dynamic reference, never the URL), and the
 * file's copy is what is checked and shown, as "PagerDuty (integration …cdef)".
 */
const integrationFields = (rule: IntegrationRule) => ({
  integrationUrl: z
    .string()
    .superRefine((url, ctx) => {
      const problem = integrationUrlProblem(rule, url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe(`${rule.label}'s CloudWatch integration URL: ${rule.example}`),
  secret: z
    .string()
    .regex(SECRET_NAME, 'must be a Secrets Manager secret name (letters, digits and / _ + = . @ -)')
    .optional()
    .describe('The Secrets Manager secret holding the same URL; default paynet-reports/<environment>/alarms/<kind>-<last 4 of the key>'),
});

const integrationKey = (url: string) => integrationOf(url)?.key ?? '';

export const CHANNELS = {
  email: entry({
    fields: { address: z.email({ message: 'must be an e-mail address' }) },
    example: '{"kind": "email", "address": "ops@example.com"}',
    shown: (c) => `e-mail ${c.address}`,
    identity: (c) => c.address.toLowerCase(),
  }),
  slack: entry({
    fields: {
      workspaceId: z.string().regex(/^[0-9A-Z]{1,255}$/, 'must be the Slack workspace id, e.g. T012ABCDE (the console shows it once the workspace is authorised)'),
      channelId: z.string().regex(/^[A-Za-z0-9]{1,255}$/, 'must be the Slack channel id, e.g. C012ABCDE (channel details, at the bottom)'),
    },
    example: '{"kind": "slack", "workspaceId": "T012ABCDE", "channelId": "C012ABCDE"}',
    shown: (c) => `Slack channel ${c.channelId} (Amazon Q Developer)`,
    identity: (c) => c.channelId,
  }),
  teams: entry({
    fields: {
      teamId: uuid('Microsoft Teams team id'),
      channelId: z
        .string()
        .max(255)
        .regex(
          /^[a-zA-Z0-9\-_=+/.,]*%3[aA][a-zA-Z0-9\-_=+/.,]*%40[a-zA-Z0-9\-_=+/.,]*$/,
          'must be the channel id as Teams copies it ("Get link to channel"), URL-encoded: 19%3a…%40thread.tacv2',
        ),
      tenantId: uuid('Microsoft Teams tenant id'),
    },
    example: '{"kind": "teams", "teamId": "<uuid>", "channelId": "19%3a…%40thread.tacv2", "tenantId": "<uuid>"}',
    shown: (c) => `Teams channel ${decodeURIComponent(c.channelId).slice(0, 12)}… (Amazon Q Developer)`,
    identity: (c) => c.channelId,
  }),
  pagerduty: entry({
    fields: integrationFields(PAGERDUTY),
    example: `{"kind": "pagerduty", "integrationUrl": "${PAGERDUTY.example}"}`,
    shown: (c) => shownIntegration(PAGERDUTY, integrationKey(c.integrationUrl)),
    identity: (c) => c.integrationUrl,
  }),
  opsgenie: entry({
    fields: integrationFields(OPSGENIE),
    example: '{"kind": "opsgenie", "integrationUrl": "https://api.opsgenie.com/v1/json/cloudwatch?apiKey=<key>"}',
    shown: (c) => shownIntegration(OPSGENIE, integrationKey(c.integrationUrl)),
    identity: (c) => c.integrationUrl,
  }),
} satisfies Record<ChannelKind, ChannelKindEntry>;

type Fields<K extends ChannelKind> = (typeof CHANNELS)[K]['fields'];
/** One entry of `alarmChannels`, as loaded. */
export type ChannelOf<K extends ChannelKind> = { readonly kind: K } & z.output<z.ZodObject<Fields<K>>>;
export type AlarmChannel = { [K in ChannelKind]: ChannelOf<K> }[ChannelKind];

const isKind = (kind: unknown): kind is ChannelKind => (CHANNEL_KINDS as readonly unknown[]).includes(kind);

/** The schema of one kind's entry, "kind" included: for the JSON schema editors read. */
export const channelEntrySchema = (kind: ChannelKind) => z.object({ kind: z.literal(kind), ...CHANNELS[kind].fields }).strict();

const KINDS_LISTED = CHANNEL_KINDS.map((k) => `"${k}"`).join(', ');

/** One issue of a kind's fields in our words: what is missing or extra, and what the entry looks like. */
function fieldIssue(kind: ChannelKind, issue: z.core.$ZodIssue): string {
  const fields = Object.keys(CHANNELS[kind].fields);
  if (issue.code === 'unrecognized_keys') return `${issue.keys.map((k) => `"${k}"`).join(', ')} is not a field of a "${kind}" entry, which takes ${fields.join(', ')}: ${CHANNELS[kind].example}`;
  if (issue.code === 'invalid_type') return `a "${kind}" entry needs ${String(issue.path.at(-1))} as a ${issue.expected}: ${CHANNELS[kind].example}`;
  return issue.message;
}

/**
 * One entry of `alarmChannels`: its kind first (an unknown one is named with the kinds there are), then its kind's
 * fields. Each problem is an issue at the entry's path (alarmChannels.2.integrationUrl), in words that say the fix.
 */
export const alarmChannelSchema = z.unknown().transform((raw, ctx): AlarmChannel => {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    ctx.addIssue({ code: 'custom', message: `must be an object naming its "kind" (${KINDS_LISTED}), e.g. ${CHANNELS.email.example}` });
    return z.NEVER;
  }
  const kind = (raw as { kind?: unknown }).kind;
  if (!isKind(kind)) {
    const given = kind === undefined ? 'no "kind"' : `"kind" ${JSON.stringify(kind).slice(0, 40)} is not a channel kind`;
    ctx.addIssue({ code: 'custom', path: ['kind'], message: `${given}: write one of ${KINDS_LISTED} (docs/deploy.md, "Alarms and who hears them")` });
    return z.NEVER;
  }
  const parsed = channelEntrySchema(kind).safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path as PropertyKey[], message: fieldIssue(kind, issue) });
    return z.NEVER;
  }
  return parsed.data as AlarmChannel;
});

/** How a channel is named in what commands print (never a key). */
export const shownChannel = (channel: AlarmChannel): string => (CHANNELS[channel.kind] as ChannelKindEntry).shown(channel);

/** Entries naming the same channel twice, by index: [first, again]. */
export function repeatedChannels(channels: readonly AlarmChannel[]): Array<[number, number]> {
  const seen = new Map<string, number>();
  const repeats: Array<[number, number]> = [];
  channels.forEach((c, i) => {
    const id = `${c.kind}:${(CHANNELS[c.kind] as ChannelKindEntry).identity(c)}`;
    const first = seen.get(id);
    if (first !== undefined) repeats.push([first, i]);
    else seen.set(id, i);
  });
  return repeats;
}

/** The secret the stack reads an integration's URL from: the entry's, else one named after the environment and the key's end. */
export function integrationSecretName(environment: string, channel: ChannelOf<'pagerduty'> | ChannelOf<'opsgenie'>): string {
  return channel.secret ?? `paynet-reports/${environment}/alarms/${channel.kind}-${integrationKey(channel.integrationUrl).slice(-4)}`;
}

/**
 * Today's `alarmEmails` and `alarmChat` are the same channels written the older way: each becomes its entry, after
 * the `alarmChannels` the file lists.
 */
export function legacyChannels(emails: readonly string[], chat: { slack: ReadonlyArray<ChannelFields<'slack'>>; teams: ReadonlyArray<ChannelFields<'teams'>> }): AlarmChannel[] {
  return [
    ...emails.map((address) => ({ kind: 'email' as const, address })),
    ...chat.slack.map((c) => ({ kind: 'slack' as const, ...c })),
    ...chat.teams.map((c) => ({ kind: 'teams' as const, ...c })),
  ];
}

type ChannelFields<K extends ChannelKind> = z.output<z.ZodObject<Fields<K>>>;
