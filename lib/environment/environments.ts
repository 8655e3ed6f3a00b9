import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { alarmChannelSchema, CHANNELS, legacyChannels, repeatedChannels } from './alarm-channels.js';
import { LOG_LEVEL_REFUSAL, LOG_LEVELS, type LogLevel } from './log-levels.js';
import { parseDefinitionText } from '../../functions/core/definitions/definition-json.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { refusalWording } from '../../functions/core/definitions/refusal-wording.js';
import { refuseConnectionProblems } from '../../functions/core/connections/connection-problems.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { CONNECTION_NAME, CONNECTION_NAME_RULE, DEFAULT_CONNECTION, MAX_CONCURRENT_REQUESTS } from '../../functions/core/connections/connection.js';
import { DEFAULT_PROJECTION_START, isProjectionDate } from '../../functions/core/lake/partition-projection.js';

/**
 * Deployment environments (one CDK stack each): every config/environments/*.json is one, no code lists them.
 * The files hold the values; this schema holds the defaults and says why they are what they are. Validated at
 * load with an error that names the file and every bad field, like the report definitions (config/reports/).
 */

/** The retention periods CloudWatch Logs accepts (PutRetentionPolicy). */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

const days = (min: number, max = 36_500) => z.number().int().min(min).max(max);

const functionSchema = (defaults: { timeoutSeconds: number; memoryMb: number; reservedConcurrency: number | null }) =>
  z
    .object({
      timeoutSeconds: days(1, 900).default(defaults.timeoutSeconds).describe('Lambda time-out, 1-900 s'),
      memoryMb: z.number().int().min(128).max(10_240).default(defaults.memoryMb).describe('Lambda memory; CPU scales with it'),
      reservedConcurrency: z
        .number()
        .int()
        .min(1)
        .max(100)
        .nullable()
        .default(defaults.reservedConcurrency)
        .describe(
          'Reserved concurrency, opt-in (default null: none). A new account has a Lambda concurrency quota of 10, and any ' +
            'reservation there fails the deploy ("below its minimum value of [10]"); raise the quota first. The load is ' +
            "bounded without it: the parse queue's maximum concurrency and the backfill's --concurrency.",
        ),
    })
    .strict()
    .default(defaults);

/** An AWS resource id: its prefix, a hyphen and 8 or 17 hexadecimal digits (the short and the long form). */
const awsId = (prefix: string, what: string) =>
  z.string().regex(new RegExp(`^${prefix}-([0-9a-f]{8}|[0-9a-f]{17})$`), `must be ${what} id such as ${prefix}-0123456789abcdef0`);

const unique = <T>(items: readonly T[]) => new Set(items).size === items.length;

/**
 * Where the fetch function's requests come from (lib/constructs/egress.ts). Absent: outside any VPC, from whatever address
 * Lambda has (no cost). A gateway that accepts allow-listed IPv4 addresses only needs one of three forms:
 * `staticEgressIp` (the stack creates a VPC with a NAT gateway and an Elastic IP), `elasticIpAllocationIds` (the same
 * VPC with your pre-allocated addresses, which outlive the stack: the provider is given them once), or `vpcId` with
 * `subnetIds` (your VPC, whose subnets already route 0.0.0.0/0 through a NAT).
 */
const networkSchema = z
  .object({
    staticEgressIp: z.boolean().optional().describe('true: a VPC with one NAT gateway and an Elastic IP the stack allocates'),
    elasticIpAllocationIds: z
      .array(awsId('eipalloc', 'an Elastic IP allocation'))
      .min(1)
      // The created VPC spans two Availability Zones (lib/constructs/egress.ts), one NAT gateway in each at most.
      .max(2, 'at most 2: the VPC the stack creates spans two Availability Zones, one NAT gateway (one address) in each')
      .refine(unique, 'lists an allocation twice')
      .optional()
      .describe('Your Elastic IPs (aws ec2 allocate-address), one NAT gateway each: they survive a stack replacement'),
    vpcId: awsId('vpc', 'a VPC').optional().describe('Your VPC, with subnetIds: the stack creates no network'),
    subnetIds: z
      .array(awsId('subnet', 'a subnet'))
      .min(1)
      .max(16, 'at most 16: Lambda takes up to 16 subnets')
      .refine(unique, 'lists a subnet twice')
      .optional()
      .describe("Private subnets of vpcId whose route tables send 0.0.0.0/0 to a NAT (not an internet gateway: Lambda's network interfaces have no public IP)"),
  })
  .strict();

/** Tag keys and values as AWS accepts them: letters, digits, spaces and _ . : / = + - @ (Tagging API, aws:TagKeys). */
const TAG_CHARACTERS = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
/** Set by the stack on every resource (lib/reports-pipeline-stack.ts): a user's value would silently lose or win. */
export const STACK_TAG_KEYS = ['project', 'environment'] as const;
/** A resource holds at most 50 tags; the stack adds its two, and CDK a Name on VPC resources. */
const MAX_USER_TAGS = 45;

const tagsSchema = z
  .record(z.string(), z.string())
  // Keys checked here, not by a key schema: zod reports a refused record key only as "Invalid key in record".
  .superRefine((tags, ctx) => {
    const entries = Object.entries(tags);
    if (entries.length > MAX_USER_TAGS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_USER_TAGS} tags: a resource holds 50, and the stack adds its own` });
    for (const [key, value] of entries) {
      const problem = (message: string) => ctx.addIssue({ code: 'custom', message, path: [key] });
      if (key.length < 1 || key.length > 128) problem('a tag key has 1 to 128 characters');
      else if (!TAG_CHARACTERS.test(key)) problem('a tag key holds letters, digits, spaces and _ . : / = + - @ only');
      else if (/^aws:/i.test(key)) problem('the aws: prefix is reserved for AWS');
      else if ((STACK_TAG_KEYS as readonly string[]).includes(key)) problem(`the stack sets ${STACK_TAG_KEYS.join(' and ')} itself`);
      if (value.length > 256) problem('a tag value has at most 256 characters');
      else if (!TAG_CHARACTERS.test(value)) problem('a tag value holds letters, digits, spaces and _ . : / = + - @ only');
    }
  })
  .describe('Added to every taggable resource and to the stack (CloudFormation passes stack tags on at creation)');

/**
 * The older way to write chat channels (alarmChat: {slack: [...], teams: [...]}), still read: each is the same entry
 * of `alarmChannels` (lib/environment/alarm-channels.ts), the fields the same.
 */
const alarmChatSchema = z
  .object({
    slack: z
      .array(z.object(CHANNELS.slack.fields).strict())
      .refine((l) => unique(l.map((c) => c.channelId)), 'lists a channel twice')
      .default([]),
    teams: z
      .array(z.object(CHANNELS.teams.fields).strict())
      .refine((l) => unique(l.map((c) => c.channelId)), 'lists a channel twice')
      .default([]),
  })
  .strict()
  .default({ slack: [], teams: [] })
  .describe('Older form of Slack and Teams entries of alarmChannels: the same channels');

const gatewaySchema = z
  .object({
    endpointUrl: z
      .url({ protocol: /^https$/, message: 'must be a full https:// URL: credentials and reports never cross the network in clear' })
      .describe('The full rpt-engine URL, e.g. https://<host>/paynet-ui/services/v2/rpt-engine (the path is configuration too)'),
  })
  .strict();

const secretSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9/_+=.@-]{1,512}$/, 'must be a valid Secrets Manager secret name'),
    /**
     * create: the stack creates the secret with a placeholder value you then overwrite.
     * existing: the stack looks it up by name (for example one your security team manages).
     */
    mode: z.enum(['create', 'existing']).default('create'),
    /** For mode "existing" with a customer-managed key: the key ARN, so the fetch role may decrypt. */
    kmsKeyArn: z.string().regex(/^arn:aws[a-z-]*:kms:/, 'must be a KMS key ARN').optional(),
  })
  .strict();

/**
 * One gateway reached with one login (functions/core/connections/connection.ts): its endpoint, its secret, and how
 * many requests may be in flight to it at once.
 */
const connectionSchema = z
  .object({
    gateway: gatewaySchema,
    secret: secretSchema,
    maxConcurrentRequests: z
      .number()
      .int()
      .min(MAX_CONCURRENT_REQUESTS.min)
      .max(MAX_CONCURRENT_REQUESTS.max)
      .default(MAX_CONCURRENT_REQUESTS.default)
      .describe('Requests in flight to this connection at most, however many of its reports fall due at once (1-10)'),
  })
  .strict();

export type ConnectionConfig = z.output<typeof connectionSchema> & { readonly name: string };

export const environmentSchema = z
  .object({
    $schema: z.string().optional(),
    /**
     * Names the stack and the buckets "paynet-reports-<name>-curated-<account>-<region>": S3 allows 63 characters
     * and regions take up to 14, so at most 12 here.
     */
    name: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,11}$/, 'must be 1-12 lower-case letters, digits or hyphens, starting with a letter (it names buckets)'),
    /** Both optional: without them the stack is environment-agnostic and `cdk synth` needs no credentials. */
    account: z.string().regex(/^\d{12}$/, 'must be a 12-digit AWS account id').optional(),
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as eu-central-1').optional(),
    gateway: gatewaySchema.optional().describe('The gateway of the connection named "default" (with secret); more under "connections"'),
    secret: secretSchema.optional().describe('The secret of the connection named "default" (with gateway)'),
    connections: z
      .record(z.string(), connectionSchema)
      .optional()
      .describe('Gateways and logins by connection name (lower-case letters, digits, -); a report names its own with "connection"'),
    /** Off by default: turn it on once the secret holds real credentials and a manual run succeeded. */
    schedulesEnabled: z.boolean().default(false),
    /**
     * Who hears the alarms: one entry per channel, each naming its kind (lib/environment/alarm-channels.ts). Amazon Q
     * Developer in chat applications carries Slack and Teams; PagerDuty and Opsgenie are subscribed over HTTPS with
     * their URL read from a Secrets Manager secret (docs/deploy.md, "Alarms and who hears them").
     */
    alarmChannels: z.array(alarmChannelSchema).default([]),
    /** Older form of e-mail entries of alarmChannels: the same channels. */
    alarmEmails: z.array(z.email()).default([]),
    /** retain: buckets, keys, secret and logs outlive the stack (payments data is never lost by a `cdk destroy`). */
    removalPolicy: z.enum(['retain', 'destroy']).default('retain'),
    terminationProtection: z.boolean().default(false),
    raw: z
      .object({
        /** Raw files are read again only to re-parse or audit, so after a month they move to cheaper storage. */
        transitionAfterDays: days(1).default(30),
        /**
         * GLACIER_INSTANT_RETRIEVAL (default): about a third of the price of INFREQUENT_ACCESS per GB-month, with the
         * same millisecond reads, for a higher per-GB retrieval fee and a 90-day minimum: right for files read a few
         * times a year. INFREQUENT_ACCESS: for raw files re-read often (frequent backfills); needs >= 30 days.
         */
        storageClass: z.enum(['GLACIER_INSTANT_RETRIEVAL', 'INFREQUENT_ACCESS']).default('GLACIER_INSTANT_RETRIEVAL'),
        /** Older versions (re-fetches overwrite the raw key) are evidence of what the gateway said then: keep a year. */
        noncurrentVersionExpirationDays: days(1).default(365),
        /**
         * Opt in: S3 Object Lock on the raw bucket, every version (each re-fetch's too) kept unaltered for `days`
         * (docs/deploy.md, "Object Lock"). COMPLIANCE cannot be shortened or lifted by anyone, root included.
         */
        objectLock: z
          .object({
            mode: z.enum(['GOVERNANCE', 'COMPLIANCE']),
            days: days(1),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({ transitionAfterDays: 30, storageClass: 'GLACIER_INSTANT_RETRIEVAL', noncurrentVersionExpirationDays: 365 }),
    curated: z
      .object({
        /** Curated data can be rebuilt from raw, so overwritten Parquet versions are kept only a month. */
        noncurrentVersionExpirationDays: days(1).default(30),
      })
      .strict()
      .default({ noncurrentVersionExpirationDays: 30 }),
    athena: z
      .object({
        /** Query results may hold transaction data: keep them only as long as an analyst needs to download them. */
        resultsExpirationDays: days(1).default(7),
        /** Per-query scan limit: 10 GiB is years of a busy merchant's Parquet, and caps a runaway query at cents. */
        bytesScannedCutoffPerQuery: z.number().int().min(10_000_000).default(10 * 1024 ** 3),
        /**
         * The first window date (dt) Athena's partition projection enumerates. A window before it would load and
         * never show in a query, so `run` and `backfill` (and the fetch function) refuse it, naming this setting.
         * Earlier means a longer list of dates for Athena to consider when a query has no dt filter.
         */
        projectionStart: z
          .string()
          .refine((d) => isProjectionDate(d), 'must be a date YYYY-MM-DD (the first window date Athena shows)')
          .default(DEFAULT_PROJECTION_START),
      })
      .strict()
      .default({ resultsExpirationDays: 7, bytesScannedCutoffPerQuery: 10 * 1024 ** 3, projectionStart: DEFAULT_PROJECTION_START }),
    /**
     * A scheduled run fetches its window and `lookback` more, one gateway call each with its retries: 900 s (the
     * most Lambda allows; it bills only what runs) gives each of three windows ~295 s, and each attempt is cut to
     * what is left of its window's share (functions/fetch-report/window-budget.ts). Little memory: the file streams.
     * No reservation by default: it would fail the first deploy in a new account (quota 10); one schedule per report
     * and the backfill's --concurrency already bound the calls to the gateway.
     */
    fetch: functionSchema({ timeoutSeconds: 900, memoryMb: 512, reservedConcurrency: null }),
    /**
     * A 1M-row CSV takes ~7 s and ~200 MB on 1.16 vCPUs (2048 MB): 120 s covers ~15M rows. The time-out also sets how
     * soon a failed file is tried again (6 x time-out) and reaches the dead-letter queue (5 receives): 12 min and
     * 60 min by default (lib/constructs/parse.ts). Below 3,538 MB (two vCPUs' worth) the stack encodes Parquet inline, from
     * there on a worker thread.
     */
    parse: functionSchema({ timeoutSeconds: 120, memoryMb: 2048, reservedConcurrency: null }),
    /**
     * Our own log lines at this level and above. Only DEBUG and INFO: Lambda's application log filter drops every
     * line without a `level` field below the level it is set to, and the metric lines (EMF) the alarms read have
     * none, so at WARN or ERROR every alarm on a pipeline metric would go silent (lib/environment/log-levels.ts).
     */
    logLevel: z
      .string()
      .refine((l): l is LogLevel => (LOG_LEVELS as readonly string[]).includes(l), { message: LOG_LEVEL_REFUSAL })
      .default('INFO'),
    /** PCI DSS 10.7 keeps audit trails at least a year: 400 days leaves margin (also the access-log expiry). */
    logRetentionDays: z
      .number()
      .refine((d) => (LOG_RETENTION_DAYS as readonly number[]).includes(d), `must be one of ${LOG_RETENTION_DAYS.join(', ')}`)
      .default(400),
    /**
     * IAM roles the analysts' managed policy (output AnalystPolicyArn) is attached to. Not SSO roles
     * (AWSReservedSSO_*): IAM Identity Center owns those; add the policy to the permission set by name instead.
     */
    analystRoleArns: z
      .array(
        z
          .string()
          .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/.+/, 'must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)')
          .refine((a) => !/:role\/aws-reserved\/sso\.amazonaws\.com\//.test(a), {
            message: "an IAM Identity Center role cannot be changed: add the policy (output AnalystPolicyName) to the permission set's customer managed policies",
          }),
      )
      .default([]),
    /** The freshness alarm fires when no load of a report completed within its window plus this grace. */
    freshnessGraceHours: z.number().int().min(1).max(48).default(6),
    /** Absent: the fetch function runs outside any VPC (no cost, no fixed address). */
    network: networkSchema.optional(),
    /**
     * A managed policy every IAM role of the stack gets as its permissions boundary, CDK's own helper functions'
     * roles included (lib/policies/governance.ts): for accounts whose SCP refuses iam:CreateRole without one.
     */
    permissionsBoundaryArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:iam::(\d{12}|aws):policy\/.+$/, 'must be an IAM managed policy ARN (arn:aws:iam::<account>:policy/<name>)')
      .optional(),
    tags: tagsSchema.default({}),
    alarmChat: alarmChatSchema,
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.raw.storageClass === 'INFREQUENT_ACCESS' && e.raw.transitionAfterDays < 30) {
      ctx.addIssue({ code: 'custom', message: 'S3 moves objects to INFREQUENT_ACCESS only after >= 30 days', path: ['raw', 'transitionAfterDays'] });
    }
    if (e.raw.objectLock && e.removalPolicy === 'destroy') {
      ctx.addIssue({
        code: 'custom',
        message: 'Object Lock keeps the raw versions past a `cdk destroy`, which would fail emptying the bucket: use removalPolicy "retain" with it',
        path: ['raw', 'objectLock'],
      });
    }
    if (e.parse.reservedConcurrency !== null && e.parse.reservedConcurrency < 4) {
      ctx.addIssue({
        code: 'custom',
        message: "must be >= 4 or null: the SQS poller's maximum concurrency is at least 2, and `reports reparse --environment` keeps 2 beside it",
        path: ['parse', 'reservedConcurrency'],
      });
    }
    for (const issue of connectionProblems(e)) ctx.addIssue({ code: 'custom', ...issue });
    for (const issue of networkProblems(e.network)) ctx.addIssue({ code: 'custom', ...issue, path: ['network', ...issue.path] });
    for (const [first, again] of repeatedChannels([...e.alarmChannels, ...legacyChannels(e.alarmEmails, e.alarmChat)])) {
      const where = (i: number) => (i < e.alarmChannels.length ? `entry ${i}` : 'alarmEmails or alarmChat');
      ctx.addIssue({ code: 'custom', path: ['alarmChannels'], message: `${where(again)} names the channel of ${where(first)} again: list each channel once` });
    }
  })
  // The top-level gateway and secret are the connection "default": past here every connection is in one list.
  // alarmEmails and alarmChat are alarmChannels entries written the older way: past here there is one list.
  .transform(({ gateway, secret, connections, alarmChannels, alarmEmails, alarmChat, ...rest }) => ({
    ...rest,
    connections: connectionsOf(gateway, secret, connections),
    alarmChannels: [...alarmChannels, ...legacyChannels(alarmEmails, alarmChat)],
  }));

type RawEnvironment = { gateway?: unknown; secret?: z.output<typeof secretSchema>; connections?: Record<string, z.output<typeof connectionSchema>> };

/** The connections of an environment file: the top-level pair defines "default"; each problem with its path. */
function connectionProblems(e: RawEnvironment): Array<{ message: string; path: Array<string | number> }> {
  const problems: Array<{ message: string; path: Array<string | number> }> = [];
  if ((e.gateway === undefined) !== (e.secret === undefined)) {
    const missing = e.gateway === undefined ? 'gateway' : 'secret';
    problems.push({ path: [missing], message: `the top-level gateway and secret go together (they define the connection "${DEFAULT_CONNECTION}")` });
  }
  const named = Object.entries(e.connections ?? {});
  if (e.gateway !== undefined && e.connections?.[DEFAULT_CONNECTION]) {
    problems.push({ path: ['connections', DEFAULT_CONNECTION], message: `defined twice: the top-level gateway and secret already are the connection "${DEFAULT_CONNECTION}"` });
  }
  if (e.gateway === undefined && e.secret === undefined && named.length === 0) {
    problems.push({ path: ['connections'], message: 'define at least one connection: "connections": {"<name>": {"gateway", "secret"}}, or a top-level gateway and secret' });
  }
  for (const [name, c] of named) {
    if (!CONNECTION_NAME.test(name)) problems.push({ path: ['connections', name], message: `"${name}" ${CONNECTION_NAME_RULE}` });
    if (c.secret.kmsKeyArn && c.secret.mode === 'create') problems.push({ path: ['connections', name, 'secret', 'kmsKeyArn'], message: KMS_FOR_EXISTING });
  }
  if (e.secret?.kmsKeyArn && e.secret.mode === 'create') problems.push({ path: ['secret', 'kmsKeyArn'], message: KMS_FOR_EXISTING });
  const secretNames = [...(e.secret ? [[DEFAULT_CONNECTION, e.secret.name]] : []), ...named.map(([n, c]) => [n, c.secret.name])];
  const seen = new Map<string, string>();
  for (const [connection, secretName] of secretNames) {
    const other = seen.get(secretName!);
    if (other) problems.push({ path: ['connections', connection!, 'secret', 'name'], message: `"${secretName}" is the secret of connection "${other}" too: each login has its own secret` });
    seen.set(secretName!, connection!);
  }
  return problems;
}

const KMS_FOR_EXISTING = 'only for mode "existing": a created secret uses a key the stack creates';

function connectionsOf(
  gateway: z.output<typeof gatewaySchema> | undefined,
  secret: z.output<typeof secretSchema> | undefined,
  connections: Record<string, z.output<typeof connectionSchema>> | undefined,
): ConnectionConfig[] {
  const top = gateway && secret ? [{ name: DEFAULT_CONNECTION, gateway, secret, maxConcurrentRequests: MAX_CONCURRENT_REQUESTS.default }] : [];
  return [...top, ...Object.entries(connections ?? {}).map(([name, c]) => ({ name, ...c }))];
}

/** The three forms of `network` exclude each other; each says what it lacks. */
function networkProblems(n: z.output<typeof networkSchema> | undefined): Array<{ message: string; path: string[] }> {
  if (!n) return [];
  const problems: Array<{ message: string; path: string[] }> = [];
  const existing = n.vpcId !== undefined || n.subnetIds !== undefined;
  if (existing) {
    if (n.vpcId === undefined) problems.push({ path: ['vpcId'], message: 'subnetIds need their vpcId' });
    if (n.subnetIds === undefined) problems.push({ path: ['subnetIds'], message: 'the private subnets of vpcId (routed through its NAT) the fetch function runs in' });
    if (n.staticEgressIp !== undefined) problems.push({ path: ['staticEgressIp'], message: 'not with vpcId: your VPC brings its own NAT and addresses' });
    if (n.elasticIpAllocationIds !== undefined) problems.push({ path: ['elasticIpAllocationIds'], message: "not with vpcId: the addresses are those of your VPC's NAT" });
  } else if (n.staticEgressIp === false && n.elasticIpAllocationIds !== undefined) {
    problems.push({ path: ['staticEgressIp'], message: 'false, yet elasticIpAllocationIds are given: drop staticEgressIp (allocation ids imply it)' });
  } else if (n.staticEgressIp === undefined && n.elasticIpAllocationIds === undefined) {
    problems.push({ path: [], message: 'say which: "staticEgressIp": true, "elasticIpAllocationIds": [...], or "vpcId" with "subnetIds"; or leave network out' });
  }
  return problems;
}

export type EnvironmentConfig = z.output<typeof environmentSchema>;

/** Validates one environment; the error names the file and every bad field. */
export function parseEnvironment(raw: unknown, file: string): EnvironmentConfig {
  // Our words where the schema has none of its own (refusal-wording.ts), never zod's.
  const parsed = environmentSchema.safeParse(raw, { error: refusalWording });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.map(String).join('.') || '(root)'}: ${i.message}`);
    throw new ConfigurationError(`${file}: environment is invalid:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/**
 * One environment file: its path as the user knows it (config/environments/<name>.json) and its parsed JSON, or
 * why it is not JSON (file, line and column), reported with the other files' problems.
 */
export type EnvironmentSource = { readonly file: string; readonly raw: unknown } | { readonly file: string; readonly problem: string };

/** config/environments/, where the environment files live. */
export const ENVIRONMENTS_DIR = fileURLToPath(new URL('../../config/environments/', import.meta.url));

/**
 * Another folder of environment files instead of config/environments/, for every command and the synth (as
 * PAYNET_REPORTS_DIR is for definitions): tests point it at environments with several connections.
 */
export const ENVIRONMENTS_DIR_VARIABLE = 'PAYNET_ENVIRONMENTS_DIR';

/** The folder environments are read from: PAYNET_ENVIRONMENTS_DIR when set, else config/environments/. */
export const environmentsDir = (): string => process.env[ENVIRONMENTS_DIR_VARIABLE] || ENVIRONMENTS_DIR;

/** One file read and parsed; a file that is not JSON carries its problem instead of throwing. */
export function readEnvironmentSource(path: string, file: string): EnvironmentSource {
  try {
    return { file, raw: parseDefinitionText(readFileSync(path, 'utf8'), file) };
  } catch (e) {
    if (e instanceof ConfigurationError) return { file, problem: e.message };
    throw e;
  }
}

/** Every *.json of `dir`, in file-name order, named as the user knows them (config/environments/<name>.json). */
export function readEnvironmentSources(dir: string = environmentsDir()): EnvironmentSource[] {
  const label = resolve(dir) === resolve(ENVIRONMENTS_DIR) ? 'config/environments' : relative(process.cwd(), dir) || '.';
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => readEnvironmentSource(join(dir, f), `${label}/${f}`));
}

/**
 * One environment of a source, or its problem. The name must be the file's: the stack, `reports status` and
 * `reports check --environment NAME` all find an environment by its file, config/environments/<name>.json.
 */
export function environmentOf(source: EnvironmentSource): EnvironmentConfig {
  if ('problem' in source) throw new ConfigurationError(source.problem);
  const env = parseEnvironment(source.raw, source.file);
  const stem = basename(source.file, '.json');
  if (env.name !== stem) {
    throw new ConfigurationError(
      `${source.file}: environment is invalid:\n  name: "${env.name}" is not the file's name: an environment is found by its file, so rename the file ${env.name}.json or set "name": "${stem}"`,
    );
  }
  return env;
}

/**
 * Every environment, each file checked and every problem of every file reported at once (a broken file names
 * itself whatever environment a command was asked for), as the report catalog does. Default: config/environments/.
 */
export function loadEnvironments(sources: readonly EnvironmentSource[] = readEnvironmentSources()): EnvironmentConfig[] {
  const problems: string[] = [];
  const envs: EnvironmentConfig[] = [];
  const fileOf = new Map<string, string>();
  for (const source of sources) {
    try {
      const env = environmentOf(source);
      const other = fileOf.get(env.name);
      if (other) {
        problems.push(`${source.file}: environment "${env.name}" has the name of ${other}: the name makes the stack and the bucket names, so each needs its own`);
        continue;
      }
      fileOf.set(env.name, source.file);
      envs.push(env);
    } catch (e) {
      if (!(e instanceof ConfigurationError)) throw e;
      problems.push(e.message);
    }
  }
  if (problems.length) {
    const n = problems.length;
    throw new ConfigurationError(`${n} environment problem${n === 1 ? '' : 's'} (every config/environments/*.json must load):\n${problems.join('\n')}`);
  }
  return envs;
}

/**
 * The catalog as every command and the synth see it: each report's connection defined by every environment
 * (functions/core/connections/connection-problems.ts), every problem at once, each naming the report's file.
 */
export function refuseUndefinedConnections(catalog: ReportCatalog, environments: readonly EnvironmentConfig[]): void {
  refuseConnectionProblems(
    catalog.feeds().map((f) => ({ id: f.reportId, file: catalog.fileOf(f.reportId), connection: f.connection })),
    environments.map((e) => ({ file: `config/environments/${e.name}.json`, names: e.connections.map((c) => c.name) })),
  );
}
