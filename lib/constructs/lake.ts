import { Aws, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { bucketNames, type BucketNames } from '../../functions/core/naming.js';

export interface LakeProps {
  /** Environment name: part of the raw and curated bucket names (functions/core/naming.ts). */
  readonly environment: string;
  /** RETAIN unless the environment says destroy; DESTROY also empties the buckets on stack deletion. */
  readonly removalPolicy: RemovalPolicy;
  /** Raw files move to `rawStorageClass` after this many days. */
  readonly rawTransitionAfter: Duration;
  readonly rawStorageClass: s3.StorageClass;
  /** Overwritten raw versions (re-fetches of a window) are kept this long. */
  readonly rawNoncurrentVersionExpiration: Duration;
  readonly curatedNoncurrentVersionExpiration: Duration;
  /** Athena query results expire after this long. */
  readonly resultsExpiration: Duration;
  /** Server access logs expire after this long (PCI DSS 10.7: at least a year in production). */
  readonly accessLogsExpiration: Duration;
  /** Opt in: S3 Object Lock on the raw bucket, each version kept unaltered this long in this mode. */
  readonly rawObjectLock?: { readonly mode: 'GOVERNANCE' | 'COMPLIANCE'; readonly days: number };
}

/**
 * Expiring objects in a versioned bucket leaves delete markers behind: remove them once they stand alone, and the
 * expired (noncurrent) versions after a day. Two actions in one rule because CloudFormation refuses a rule whose
 * only action is ExpiredObjectDeleteMarker ("At least one of [ExpirationDate, ExpirationInDays, ...] needs to be
 * specified"), and S3 refuses it beside an expiration in days in the same rule.
 */
const dropExpiredVersions = (noncurrentFor: Duration): s3.LifecycleRule => ({
  id: 'drop-expired-versions-and-delete-markers',
  expiredObjectDeleteMarker: true,
  noncurrentVersionExpiration: noncurrentFor,
});

/**
 * The bucket's events go to the account's default EventBridge bus, set on the bucket resource itself: Control Tower's
 * CT.S3.PR.4 asks every bucket for a notification configuration there, and S3 events on the default bus cost nothing
 * until a rule matches them (a consumer of new Parquet files, say). Not the raw bucket: CDK's notifications custom
 * resource owns its configuration (the parse queue), and two writers of one configuration undo each other.
 */
function sendsToEventBridge(bucket: s3.Bucket): void {
  (bucket.node.defaultChild as s3.CfnBucket).addPropertyOverride('NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled', true);
}

/** Streamed uploads are multipart: drop the parts of a crashed one. */
const ABORT_UPLOADS_AFTER = Duration.days(7);

/**
 * The data lake: one customer-managed KMS key for the environment's data, and four buckets.
 * raw (the gateway's files, versioned), curated (Parquet, rejects, manifests), Athena results
 * (expiring) and access logs (server access logs of the other three).
 */
export class Lake extends Construct {
  /** Encrypts the buckets, queues, topic and log groups of the environment. */
  readonly key: kms.Key;
  readonly rawBucket: s3.Bucket;
  readonly curatedBucket: s3.Bucket;
  readonly resultsBucket: s3.Bucket;
  readonly accessLogsBucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: LakeProps) {
    super(scope, id);
    // S3 log delivery is granted by a bucket policy on the access-log bucket, not the legacy LogDeliveryWrite ACL
    // (which would need ACLs switched back on). Set here so the lake behaves the same in any app or stack.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);
    const destroy = props.removalPolicy === RemovalPolicy.DESTROY;

    this.key = new kms.Key(this, 'Key', {
      description: `paynet-reports ${props.environment}: data at rest (S3, SQS, SNS, CloudWatch Logs)`,
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
      // A destroyed environment's key waits the shortest window: its data is gone with the buckets anyway.
      pendingWindow: destroy ? Duration.days(7) : undefined,
    });
    this.allowCloudWatchLogs();

    // Shared by all four buckets: no public access, TLS 1.2+ only, owner-enforced objects. EventBridge is not set
    // here: CDK would write it through its notifications custom resource (sendsToEventBridge below).
    const common: s3.BucketProps = {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      eventBridgeEnabled: false,
      versioned: true,
      removalPolicy: props.removalPolicy,
      autoDeleteObjects: destroy,
    };
    this.accessLogsBucket = this.addAccessLogsBucket(common, props);
    this.acknowledgeAccessLogsBucket();

    const encrypted: s3.BucketProps = {
      ...common,
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: this.key,
      // One data key per bucket instead of a KMS call per object: far fewer KMS requests and lower cost.
      bucketKeyEnabled: true,
      serverAccessLogsBucket: this.accessLogsBucket,
    };
    // S3 bucket names are global: the account and region make them unique (tokens until deploy time).
    const names = bucketNames(props.environment, `${Aws.ACCOUNT_ID}-${Aws.REGION}`);
    this.rawBucket = this.addRawBucket(encrypted, names, props);
    this.curatedBucket = this.addCuratedBucket(encrypted, names, props);
    this.resultsBucket = this.addResultsBucket(encrypted, props);
    for (const bucket of [this.curatedBucket, this.resultsBucket, this.accessLogsBucket]) sendsToEventBridge(bucket);
    this.acknowledgeNoReplication();
  }

  /** S3 cannot deliver server access logs to an SSE-KMS bucket: this one uses S3-managed keys (SSE-S3). */
  private addAccessLogsBucket(common: s3.BucketProps, props: LakeProps): s3.Bucket {
    return new s3.Bucket(this, 'AccessLogs', {
      ...common,
      encryption: s3.BucketEncryption.S3_MANAGED,
      lifecycleRules: [
        { id: 'expire-logs', expiration: props.accessLogsExpiration },
        dropExpiredVersions(Duration.days(1)),
      ],
    });
  }

  private addRawBucket(encrypted: s3.BucketProps, names: BucketNames, props: LakeProps): s3.Bucket {
    const lock = props.rawObjectLock;
    return new s3.Bucket(this, 'Raw', {
      ...encrypted,
      bucketName: names.raw,
      // The raw reports are what an audit asks for: a default retention locks every version as it is written, the
      // re-fetch that overwrites a key included, so what the gateway sent then stays readable for the whole period.
      ...(lock && {
        objectLockEnabled: true,
        objectLockDefaultRetention:
          lock.mode === 'COMPLIANCE' ? s3.ObjectLockRetention.compliance(Duration.days(lock.days)) : s3.ObjectLockRetention.governance(Duration.days(lock.days)),
      }),
      serverAccessLogsPrefix: 'raw/',
      lifecycleRules: [
        {
          id: 'raw-to-cheaper-storage',
          abortIncompleteMultipartUploadAfter: ABORT_UPLOADS_AFTER,
          transitions: [{ storageClass: props.rawStorageClass, transitionAfter: props.rawTransitionAfter }],
          noncurrentVersionTransitions: [{ storageClass: props.rawStorageClass, transitionAfter: props.rawTransitionAfter }],
          noncurrentVersionExpiration: props.rawNoncurrentVersionExpiration,
        },
      ],
    });
  }

  private addCuratedBucket(encrypted: s3.BucketProps, names: BucketNames, props: LakeProps): s3.Bucket {
    return new s3.Bucket(this, 'Curated', {
      ...encrypted,
      bucketName: names.curated,
      serverAccessLogsPrefix: 'curated/',
      lifecycleRules: [
        {
          id: 'curated-old-versions',
          abortIncompleteMultipartUploadAfter: ABORT_UPLOADS_AFTER,
          noncurrentVersionExpiration: props.curatedNoncurrentVersionExpiration,
        },
      ],
    });
  }

  private addResultsBucket(encrypted: s3.BucketProps, props: LakeProps): s3.Bucket {
    return new s3.Bucket(this, 'AthenaResults', {
      ...encrypted,
      serverAccessLogsPrefix: 'athena-results/',
      lifecycleRules: [
        {
          id: 'expire-results',
          expiration: props.resultsExpiration,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        dropExpiredVersions(Duration.days(1)),
      ],
    });
  }

  /** CloudWatch Logs encrypts the function log groups with this key: the key policy must let the regional service in. */
  private allowCloudWatchLogs(): void {
    const { region, account, partition } = Stack.of(this);
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchLogsOfThisAccount',
        principals: [new iam.ServicePrincipal(`logs.${region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'], // in a key policy "*" means this key
        conditions: {
          ArnLike: { 'kms:EncryptionContext:aws:logs:arn': `arn:${partition}:logs:${region}:${account}:log-group:*` },
        },
      }),
    );
  }

  private acknowledgeAccessLogsBucket(): void {
    const v = Validations.of(this.accessLogsBucket);
    v.acknowledge({
      id: 'PCI.DSS.321-S3DefaultEncryptionKMS',
      reason:
        'S3 server access logging cannot deliver to a bucket whose default encryption is SSE-KMS, so the access-log ' +
        'bucket uses SSE-S3 (AES-256, S3-managed keys). The logs hold request metadata, never report contents.',
    });
  }

  private acknowledgeNoReplication(): void {
    for (const bucket of [this.accessLogsBucket, this.rawBucket, this.curatedBucket, this.resultsBucket]) {
      Validations.of(bucket).acknowledge({
        id: 'PCI.DSS.321-S3BucketReplicationEnabled',
        reason:
          'Single-region by design: durability comes from S3 (11 nines) plus versioning; the raw reports can also be ' +
          're-fetched from the gateway. Cross-region replication is an account-level DR decision left to the merchant.',
      });
    }
  }
}
