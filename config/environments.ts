import * as z from 'zod';
import { LOG_LEVEL_REFUSAL, LOG_LEVELS, type LogLevel } from '../lib/log-levels.js';
import { ConfigurationError } from '../functions/core/errors.js';
import { DEFAULT_PROJECTION_START, isProjectionDate } from '../functions/core/partition-projection.js';
import integration from './environments/integration.json' with { type: 'json' };
import production from './environments/production.json' with { type: 'json' };

/**
 * Deployment environments (one CDK stack each). The JSON files beside this one hold the values; this
 * schema holds the defaults and says why they are what they are. Validated at load with an error that
 * names the file and every bad field, like the report definitions.
 */

/** The retention periods CloudWatch Logs accepts (PutRetentionPolicy). */
const LOG_RETENTION_DAYS = [
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
    gateway: z
      .object({
        endpointUrl: z
          .url({ protocol: /^https$/, message: 'must be a full https:// URL: credentials and reports never cross the network in clear' })
          .describe('The full rpt-engine URL, e.g. https://<host>/paynet-ui/services/v2/rpt-engine (the path is configuration too)'),
      })
      .strict(),
    secret: z
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
      .strict(),
    /** Off by default: turn it on once the secret holds real credentials and a manual run succeeded. */
    schedulesEnabled: z.boolean().default(false),
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
     * 60 min by default (lib/parse.ts). Below 3,538 MB (two vCPUs' worth) the stack encodes Parquet inline, from
     * there on a worker thread.
     */
    parse: functionSchema({ timeoutSeconds: 120, memoryMb: 2048, reservedConcurrency: null }),
    /**
     * Our own log lines at this level and above. Only DEBUG and INFO: Lambda's application log filter drops every
     * line without a `level` field below the level it is set to, and the metric lines (EMF) the alarms read have
     * none, so at WARN or ERROR every alarm on a pipeline metric would go silent (lib/log-levels.ts).
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
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.raw.storageClass === 'INFREQUENT_ACCESS' && e.raw.transitionAfterDays < 30) {
      ctx.addIssue({ code: 'custom', message: 'S3 moves objects to INFREQUENT_ACCESS only after >= 30 days', path: ['raw', 'transitionAfterDays'] });
    }
    if (e.parse.reservedConcurrency !== null && e.parse.reservedConcurrency < 2) {
      ctx.addIssue({ code: 'custom', message: "must be >= 2 or null: the SQS poller's maximum concurrency is at least 2", path: ['parse', 'reservedConcurrency'] });
    }
    if (e.secret.kmsKeyArn && e.secret.mode === 'create') {
      ctx.addIssue({ code: 'custom', message: 'only for mode "existing": a created secret uses a key the stack creates', path: ['secret', 'kmsKeyArn'] });
    }
  });

export type EnvironmentConfig = z.output<typeof environmentSchema>;

/** Validates one environment; the error names the file and every bad field. */
export function parseEnvironment(raw: unknown, file: string): EnvironmentConfig {
  const parsed = environmentSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.map(String).join('.') || '(root)'}: ${i.message}`);
    throw new ConfigurationError(`${file}: environment is invalid:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** The shipped environments. To add one, put its JSON beside the others and list it here. */
export const environmentSources: Array<{ file: string; raw: unknown }> = [
  { file: 'config/environments/integration.json', raw: integration },
  { file: 'config/environments/production.json', raw: production },
];

export function loadEnvironments(sources = environmentSources): EnvironmentConfig[] {
  const envs = sources.map((s) => parseEnvironment(s.raw, s.file));
  const names = envs.map((e) => e.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new ConfigurationError(`Two environments share the name "${dup}".`);
  return envs;
}
