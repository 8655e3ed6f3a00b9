import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEAD_LETTER_QUEUE } from '../policies/dead-letters.js';
import { grantListForMissingKeys, grantListRaw, grantObjectRead, grantObjectWrite } from '../policies/grants.js';
import { LAMBDA_BUNDLES } from '../bundling/bundling.js';
import { CURATED_AREAS, PREFIX } from '../../functions/core/lake/s3-keys.js';
import { PipelineFunction, functionSettingsOf, type FunctionSettings } from './pipeline-function.js';
import { NarrowQueueNotification } from './queue-notification.js';
import { sourceCommit } from '../bundling/project.js';

export interface ParseProps extends FunctionSettings {
  /** Its ObjectCreated events under raw/ feed the queue. */
  readonly rawBucket: s3.IBucket;
  readonly curatedBucket: s3.IBucket;
  /** Encrypts the log group. */
  readonly key: kms.IKey;
  /** Handler module; defaults to functions/parse-report/handler.ts. */
  readonly entry?: string;
}

/**
 * Receives before a message moves to the dead-letter queue. Five is the least AWS advises for a queue that feeds
 * Lambda (a throttled poll also counts as a receive). With the default 120 s time-out a failed file comes back
 * every 6 x 120 s = 12 min and a poison file reaches the dead-letter queue (and its alarm) after 5 x 12 = 60 min
 * (docs/operations.md, "Retries and time-outs").
 */
export const MAX_RECEIVE_COUNT = 5;
/** AWS's guidance for SQS-triggered functions: visibility at least six times the function time-out. */
export const VISIBILITY_FACTOR = 6;

/** How long after a failed receive the file is tried again, and how long a poison file takes to reach the dead-letter queue. */
export function parseRetryTimings(timeoutSeconds: number): { retryAfterSeconds: number; deadLetterAfterSeconds: number } {
  const retryAfterSeconds = VISIBILITY_FACTOR * timeoutSeconds;
  return { retryAfterSeconds, deadLetterAfterSeconds: MAX_RECEIVE_COUNT * retryAfterSeconds };
}

/**
 * Parse invocations the SQS poller runs at once without a reservation (2 is the least SQS allows). It bounds the
 * load on its own, so no reserved concurrency is needed, which a new account (concurrency quota 10) refuses.
 */
export const PARSE_MAX_CONCURRENCY = 2;

/**
 * Invocations a reservation keeps beside the queue's poller for `reports reparse --environment`, which invokes the
 * function directly: with the poller allowed the whole reservation, the reparse's calls would take its slots, its
 * throttled receives would count towards the queue's receive count, and queued files would reach the dead-letter queue.
 * The command refuses a --concurrency above this where a reservation is set (local/cli/reparse.ts).
 */
export const REPARSE_SLOTS = 2;

/** The smallest parse reservation: the SQS poller's minimum (2) and the reparse's slots. */
export const MIN_PARSE_RESERVATION = PARSE_MAX_CONCURRENCY + REPARSE_SLOTS;

/** Lambda's CPU share grows with memory: one vCPU's worth of time at 1,769 MB (AWS documentation). */
export const MB_PER_VCPU = 1769;

/**
 * Where the parse function encodes Parquet (PARQUET_ENCODER; encoder-thread.ts). The converter's own 'auto'
 * asks os.availableParallelism(), but a Lambda function below 3,009 MB always sees 2 CPUs while its time is
 * capped at memory / 1,769 MB of one vCPU: at the default 2,048 MB, 'auto' would pick the worker on 1.16 vCPUs.
 * That is the wrong choice: the 1M-row benchmark file in a cgroup capped like that (2 CPUs, 116% quota) took
 * 6.9 s inline and 7.8 s on the worker (the worker adds ~1.5 s of CPU for its second isolate and the
 * messages, and the cap leaves almost nothing to overlap with), and ~10 MB more memory. With two full
 * vCPUs (>= 3,538 MB) the worker overlaps encoding with parsing, ~15% less wall time on 2 unshared cores,
 * so from there the stack asks for it. 2,048 MB inline stays the default: 3,538 MB would cost ~1.5x per file
 * (1.73x the GB-seconds price for 0.85x the time) to make a nightly batch finish a second sooner.
 * The worker script ships in the bundle either way (bundling.ts).
 */
export function parquetEncoderFor(memoryMb: number): 'worker' | 'inline' {
  return memoryMb >= 2 * MB_PER_VCPU ? 'worker' : 'inline';
}

/** Prefixes the function writes under in the curated bucket (functions/core/lake/s3-keys.ts). */
const CURATED_PREFIXES = CURATED_AREAS.map((area) => PREFIX[area]);

/**
 * The parse side: S3 ObjectCreated under raw/ -> SQS queue (dead-letter queue after MAX_RECEIVE_COUNT receives)
 * -> parse function, which reads the raw file and writes Parquet, rejects and a manifest to curated.
 */
export class Parse extends Construct {
  readonly function: PipelineFunction;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** Encrypts the two queues. */
  readonly queueKey: kms.Key;

  constructor(scope: Construct, id: string, props: ParseProps) {
    super(scope, id);
    if (props.reservedConcurrency !== undefined && props.reservedConcurrency < MIN_PARSE_RESERVATION) {
      // The SQS poller's maximum concurrency is at least 2, and a reparse takes up to REPARSE_SLOTS beside it: a smaller
      // reservation throttles receives into the DLQ.
      throw new Error(`Parse: reservedConcurrency must be at least ${MIN_PARSE_RESERVATION} (or none), not ${props.reservedConcurrency}.`);
    }
    // The queues get a key of their own: S3 must be allowed to use the queue's key for this bucket only
    // (aws:SourceArn = raw bucket), and that statement on the bucket's own key would make key and bucket
    // reference each other, a circular dependency CloudFormation refuses.
    this.queueKey = new kms.Key(this, 'QueueKey', {
      description: `paynet-reports ${props.environment}: raw-file notifications queue`,
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
      pendingWindow: props.removalPolicy === RemovalPolicy.DESTROY ? Duration.days(7) : undefined,
    });
    const queueProps = {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.queueKey,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    } satisfies sqs.QueueProps;

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', { ...queueProps, ...DEAD_LETTER_QUEUE });
    this.queue = new sqs.Queue(this, 'RawFiles', {
      ...queueProps,
      // While one invocation works on a file nobody else may receive it; a retry only after a full time-out.
      visibilityTimeout: Duration.seconds(parseRetryTimings(props.timeout.toSeconds()).retryAfterSeconds),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });

    // A substituted entry (a test's stand-in handler) gets no Parquet worker beside it.
    const bundle = props.entry ? { entry: props.entry } : LAMBDA_BUNDLES.parse;
    this.function = new PipelineFunction(this, 'Parse', {
      ...functionSettingsOf(props),
      ...bundle,
      description: 'paynet-reports: convert a raw report to Parquet in the curated bucket',
      logKey: props.key,
      environmentVariables: {
        CURATED_BUCKET: props.curatedBucket.bucketName,
        PARQUET_ENCODER: parquetEncoderFor(props.memorySize),
        // created_by's "(build <hash>)" in every Parquet footer (functions/core/build-info.ts).
        PIPELINE_BUILD_COMMIT: sourceCommit(),
      },
    });
    const fn = this.function.function;
    grantObjectRead(fn, props.rawBucket, [PREFIX.raw], { versions: true });
    grantListRaw(fn, props.rawBucket);
    grantObjectWrite(fn, props.curatedBucket, CURATED_PREFIXES);
    // The volume check reads earlier weeks' manifests (functions/parse-report/load-history.ts), and a failed load
    // reads the manifest it replaces, to record which earlier table file stays (table-in-place.ts).
    grantObjectRead(fn, props.curatedBucket, [PREFIX.manifests]);
    grantListForMissingKeys(fn, props.curatedBucket);

    fn.addEventSource(
      new sources.SqsEventSource(this.queue, {
        // One raw file per invocation: a file can be hundreds of MB and gets the whole time-out to itself.
        batchSize: 1,
        reportBatchItemFailures: true,
        // Never poll more than a reservation allows, less the reparse's slots (throttled receives would count towards
        // the DLQ); without one, this alone bounds the parse load.
        maxConcurrency: props.reservedConcurrency === undefined ? PARSE_MAX_CONCURRENCY : props.reservedConcurrency - REPARSE_SLOTS,
      }),
    );

    props.rawBucket.addEventNotification(s3.EventType.OBJECT_CREATED, new NarrowQueueNotification(this.queue, this.queueKey), { prefix: PREFIX.raw });
    this.acknowledgeNotificationsHandler(props.rawBucket);
  }

  /**
   * CDK configures bucket notifications through a deploy-time custom resource of its own
   * (Custom::S3BucketNotifications, with an inline policy beside the raw bucket).
   */
  private acknowledgeNotificationsHandler(bucket: s3.IBucket): void {
    const why = "CDK's own deploy-time custom resource that writes the raw bucket's notification configuration";
    const notifications = bucket.node.tryFindChild('Notifications');
    if (notifications) {
      Validations.of(notifications).acknowledge({
        id: 'PCI.DSS.321-IAMNoInlinePolicy',
        reason: `${why}: its inline policy (s3:PutBucketNotification on this bucket) is generated by CDK and used only during deployments.`,
      });
    }
    // The handler function is a stack-wide singleton CDK adds beside the first bucket with notifications.
    const handler = Stack.of(this).node.children.find((c) => c.node.id.startsWith('BucketNotificationsHandler'));
    if (handler) {
      Validations.of(handler).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: `${why}: CDK gives its handler the AWS basic execution role for its own logs; it runs only during deployments.`,
      });
    }
  }
}
