import { CfnElement, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * Grants narrower than CDK's grantRead/grantPut: those add s3:GetObject*, s3:List*, s3:Abort*,
 * kms:ReEncrypt* and kms:GenerateDataKey*, more than a function that streams one object in or out needs.
 * Here: exact actions, object ARNs under the given prefixes, and the bucket's key by ARN.
 */

const keyOf = (bucket: s3.IBucket): kms.IKey => {
  if (!bucket.encryptionKey) throw new Error(`bucket ${bucket.node.path} has no KMS key: these grants are for SSE-KMS buckets`);
  return bucket.encryptionKey;
};

/**
 * cdk-nag reports each object-ARN wildcard (AwsSolutions-IAM5 "Resource::<Bucket.Arn>/raw/*"): acknowledge
 * exactly those findings, on the role holding the policy, since a prefix is the narrowest an S3 object grant gets.
 */
function acknowledgePrefixes(grantee: iam.IGrantable, bucket: s3.IBucket, prefixes: readonly string[], what: string): void {
  const cfn = bucket.node.defaultChild;
  if (!(grantee.grantPrincipal instanceof iam.Role) || !(cfn instanceof CfnElement)) return;
  const logicalId = Stack.of(bucket).resolve(cfn.logicalId) as string;
  for (const p of prefixes) {
    Validations.of(grantee.grantPrincipal).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/${p}*]`,
      reason: `${what} any object under ${p} (report files are keyed by report and date); S3 object permissions are per key, so a prefix is the narrowest grant.`,
    });
  }
}

/**
 * GetObject (HeadObject too) under the prefixes, and kms:Decrypt. `versions`: also of a given version
 * (s3:GetObjectVersion), for a reader that names the version it was told of (the parse function reads the version
 * of the raw file its S3 notification names); the manifests' readers read the current object only.
 */
export function grantObjectRead(grantee: iam.IGrantable, bucket: s3.IBucket, prefixes: readonly string[], options: { versions?: boolean } = {}): void {
  iam.Grant.addToPrincipal({
    grantee,
    actions: ['s3:GetObject', ...(options.versions ? ['s3:GetObjectVersion'] : [])],
    resourceArns: prefixes.map((p) => bucket.arnForObjects(`${p}*`)),
  });
  keyOf(bucket).grant(grantee, 'kms:Decrypt');
  acknowledgePrefixes(grantee, bucket, prefixes, 'Reads');
}

/**
 * s3:ListBucket on the raw bucket, so that S3 answers 404 for a deleted raw key instead of 403 (S3 hides whether a
 * key exists from callers that may not list): the parse function then skips the file instead of failing it into the
 * dead-letter queue. Not narrowed by an s3:prefix condition: the existence check behind a GET or HEAD carries no
 * s3:prefix, so such a condition would never match and the 403 would stay; the raw bucket holds only raw/ anyway.
 */
export function grantListRaw(grantee: iam.IGrantable, bucket: s3.IBucket): void {
  iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [bucket.bucketArn] });
}

/**
 * s3:ListBucket on a bucket whose objects the grantee reads by computed keys that may not exist (the parse
 * function's volume check reads earlier weeks' manifests from the curated bucket): with it a missing key is
 * a 404, a week without history; without it S3 answers 403, indistinguishable from a real denial. Not
 * narrowed by s3:prefix, for the reason given at grantListRaw.
 */
export function grantListForMissingKeys(grantee: iam.IGrantable, bucket: s3.IBucket): void {
  iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [bucket.bucketArn] });
}

/**
 * PutObject (single or multipart: lib-storage streams) and AbortMultipartUpload under the prefixes.
 * SSE-KMS multipart uploads need kms:GenerateDataKey for each part and kms:Decrypt to complete.
 * `tagging`: also tag the objects written (the fetch function tags each raw file with its SHA-256, known
 * only after the last byte; the Version form because the raw bucket is versioned).
 */
export function grantObjectWrite(
  grantee: iam.IGrantable,
  bucket: s3.IBucket,
  prefixes: readonly string[],
  options: { tagging?: boolean } = {},
): void {
  iam.Grant.addToPrincipal({ grantee, ...objectWrite(bucket, prefixes, options) });
  keyOf(bucket).grant(grantee, 'kms:GenerateDataKey', 'kms:Decrypt');
  acknowledgePrefixes(grantee, bucket, prefixes, 'Writes');
}

/**
 * The S3 actions and object ARNs of grantObjectWrite, for a policy that must allow the same writes and no other: the
 * S3 gateway endpoint of the fetch function's VPC (lib/constructs/fetch.ts), so the one list serves both.
 */
export function objectWrite(bucket: s3.IBucket, prefixes: readonly string[], options: { tagging?: boolean } = {}): { actions: string[]; resourceArns: string[] } {
  return {
    actions: ['s3:PutObject', 's3:AbortMultipartUpload', ...(options.tagging ? ['s3:PutObjectTagging', 's3:PutObjectVersionTagging'] : [])],
    resourceArns: prefixes.map((p) => bucket.arnForObjects(`${p}*`)),
  };
}

/** Sending to a KMS-encrypted queue: sqs:SendMessage plus the two key actions SQS needs. */
export function grantQueueSend(grantee: iam.IGrantable, queue: sqs.IQueue, key: kms.IKey): void {
  iam.Grant.addToPrincipal({ grantee, actions: ['sqs:SendMessage'], resourceArns: [queue.queueArn] });
  key.grant(grantee, 'kms:GenerateDataKey', 'kms:Decrypt');
}

/**
 * A Lambda on-failure destination on a KMS-encrypted queue. Like aws-lambda-destinations' SqsDestination
 * (the record keeps the event and the error), but granting only what sending needs (see grantQueueSend).
 */
export class EncryptedQueueDestination implements lambda.IDestination {
  constructor(
    private readonly queue: sqs.IQueue,
    private readonly key: kms.IKey,
  ) {}

  bind(_scope: Construct, fn: lambda.IFunction): lambda.DestinationConfig {
    grantQueueSend(fn, this.queue, this.key);
    return { destination: this.queue.queueArn };
  }
}
