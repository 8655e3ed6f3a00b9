import type { EnvironmentConfig } from '../environment/environments.js';

export interface ExemptionContext {
  /** The environment the stack was built from (undefined for a stack that is not an environment's). */
  readonly config?: EnvironmentConfig;
}

/**
 * One Control Tower control that a resource of the stack does not pass, on purpose. docs/deploy.md ("Governed
 * accounts") lists each with what a governed customer does; a test holds the two lists equal.
 */
export interface Exemption {
  /** The control's id as Control Tower lists it: CT.S3.PR.2. */
  readonly control: string;
  /** Which resources, by construct path under the environment's stack (Lake/AccessLogs/Resource). */
  readonly resources: RegExp;
  /** The resources in words, as docs/deploy.md names them. */
  readonly what: string;
  readonly reason: string;
  /** AWS's documentation that backs the reason. */
  readonly documentation: string;
  /** What a customer whose account runs the control does. */
  readonly customer: string;
  /** Only for stacks whose environment this holds of (a setting makes the control pass otherwise). */
  readonly when?: (context: ExemptionContext) => boolean;
}

const ASK_ADMIN = 'ask the Control Tower administrator to leave this control off the OU that holds the account, or to exempt this stack from it';

/** The exemptions, one per control and resource: a finding none of them covers fails the synthesis. */
export const CONTROL_TOWER_EXEMPTIONS: readonly Exemption[] = [
  {
    control: 'CT.S3.PR.2',
    resources: /^Lake\/AccessLogs\/Resource$/,
    what: 'the access-log bucket',
    reason:
      'It is where the other buckets log to; logging it into itself would log each log delivery without end, and a ' +
      'second log bucket only moves the finding there.',
    documentation: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/ServerLogs.html',
    customer: ASK_ADMIN,
  },
  {
    control: 'CT.S3.PR.10',
    resources: /^Lake\/AccessLogs\/Resource$/,
    what: 'the access-log bucket',
    reason:
      "S3's guide to server access logging supports default encryption of the destination bucket with SSE-S3 only, " +
      'not SSE-KMS; the bucket is encrypted with SSE-S3 (AES-256) and holds request metadata, never report contents.',
    documentation: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/enable-server-access-logging.html',
    customer: ASK_ADMIN,
  },
  {
    control: 'CT.S3.PR.4',
    resources: /^Lake\/Raw\/Resource$/,
    what: 'the raw bucket',
    reason:
      'Its notifications are configured (new raw files go to the parse queue), through the Custom::S3BucketNotifications ' +
      'resource CDK writes them with, which the rule does not read: the bucket resource itself carries none.',
    documentation: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/ways-to-add-notification-config-to-bucket.html',
    customer: ASK_ADMIN,
  },
  {
    control: 'CT.S3.PR.9',
    resources: /^Lake\/Raw\/Resource$/,
    what: 'the raw bucket, without `raw.objectLock`',
    reason: 'Object Lock keeps every overwritten version for its whole period and cannot be undone in COMPLIANCE mode: an opt-in.',
    documentation: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html',
    customer: 'set `raw.objectLock` in the environment file (it passes then)',
    when: ({ config }) => !config?.raw.objectLock,
  },
  {
    control: 'CT.S3.PR.9',
    resources: /^Lake\/(Curated|AthenaResults)\/Resource$/,
    what: 'the curated and Athena results buckets',
    reason:
      'Curated Parquet is rebuilt from raw by design (a reparse overwrites it) and query results expire within days; ' +
      'a lock would keep every rebuilt or expired object for the whole period at full price.',
    documentation: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html',
    customer: ASK_ADMIN,
  },
  {
    control: 'CT.S3.PR.9',
    resources: /^Lake\/AccessLogs\/Resource$/,
    what: 'the access-log bucket',
    reason: "S3's guide to Object Lock says a bucket with Object Lock cannot be the destination of server access logs.",
    documentation: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock-configure.html',
    customer: ASK_ADMIN,
  },
  {
    control: 'CT.LAMBDA.PR.3',
    resources: /^Fetch\/Fetch\/Function\/Resource$/,
    what: 'the fetch function, without `network`',
    reason: 'A VPC for it means a NAT gateway (about $33 a month and per GB) to reach the gateway: an opt-in, which also gives it a fixed address.',
    documentation: 'https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc-internet.html',
    customer: 'set `network` in the environment file (it passes then)',
    when: ({ config }) => !config?.network,
  },
  {
    control: 'CT.LAMBDA.PR.3',
    resources: /^(Parse\/Parse|Freshness\/Check)\/Function\/Resource$/,
    what: 'the parse and freshness-check functions',
    reason:
      'They call only AWS APIs (S3, SQS, CloudWatch, KMS); in a VPC each API would need an interface endpoint per ' +
      'Availability Zone (about $7 a month each) or a NAT gateway, for no change in what they can reach.',
    documentation: 'https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc.html',
    customer: ASK_ADMIN,
  },
  {
    control: 'CT.LAMBDA.PR.3',
    resources: /^(BucketNotificationsHandler[0-9a-f]+\/Resource|Custom::S3AutoDeleteObjectsCustomResourceProvider\/Handler|Custom::VpcRestrictDefaultSGCustomResourceProvider\/Handler)$/,
    what: "CDK's own deploy-time handlers (bucket notifications; with `removalPolicy: destroy` the bucket emptier; with `network` the default security group cleaner)",
    reason:
      'They run only while CloudFormation deploys or deletes the stack, call AWS APIs only, and CDK creates them ' +
      'without a VPC setting; a stack that retains its buckets has no bucket emptier.',
    documentation: 'https://docs.aws.amazon.com/cdk/v2/guide/cfn-layer.html',
    customer: ASK_ADMIN,
  },
  {
    control: 'CT.CLOUDWATCH.PR.2',
    resources: /\/Logs\/Resource$|\/FlowLogs\/.*Resource$/,
    what: 'the log groups, where `logRetentionDays` is below 365',
    reason: 'The environment file asks for less than a year (a test environment, say); the default, 400 days, passes.',
    documentation: 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Working-with-log-groups-and-streams.html#SettingLogRetention',
    customer: 'set `logRetentionDays` to 365 or more in a governed account (it passes then)',
    when: ({ config }) => (config?.logRetentionDays ?? 0) < 365,
  },
];
