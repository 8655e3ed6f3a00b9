import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * An S3 event notification into a KMS-encrypted queue, with both policies as narrow as the path they serve:
 * the bucket that notifies, in this stack's account.
 *
 * Why not aws-s3-notifications' SqsDestination: it conditions the queue policy on aws:SourceArn alone (a bucket
 * ARN names no account, so a bucket of the same name in another account after a delete matches) and adds an
 * unconditioned `s3.amazonaws.com` statement to the queue's key policy, which lets any bucket's notifications,
 * in any account, use the key. AWS documents the conditioned form for both: "Granting permissions to publish event
 * notification messages to a destination" (S3 user guide: aws:SourceArn and aws:SourceAccount on the queue policy)
 * and "Enable compatibility between event sources from AWS services and encrypted queues" (SQS developer guide:
 * aws:SourceArn on the key policy statement for the service principal).
 */
export class NarrowQueueNotification implements s3.IBucketNotificationDestination {
  constructor(
    private readonly queue: sqs.IQueue,
    private readonly key: kms.IKey,
  ) {}

  bind(scope: Construct, bucket: s3.IBucketRef): s3.BucketNotificationDestinationConfig {
    const from = notificationSourceConditions(bucket.bucketRef.bucketArn, Stack.of(scope).account);
    const s3Service = new iam.ServicePrincipal('s3.amazonaws.com');
    this.queue.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [s3Service],
        actions: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
        resources: [this.queue.queueArn],
        conditions: from,
      }),
    );
    // S3 also uses the key when it checks the destination while the notification is configured (a test message).
    const added = this.key.addToResourcePolicy(
      new iam.PolicyStatement({ principals: [s3Service], actions: ['kms:GenerateDataKey', 'kms:Decrypt'], resources: ['*'], conditions: from }),
    );
    if (!added.statementAdded) throw new Error(`NarrowQueueNotification: the key of ${this.queue.node.path} must be a key of this stack (its policy is written here).`);
    return { arn: this.queue.queueArn, type: s3.BucketNotificationDestinationType.QUEUE, dependencies: [this.queue] };
  }
}

/** The conditions of every statement that lets S3 deliver a bucket's notifications: that bucket, this account. */
export function notificationSourceConditions(bucketArn: string, account: string): Record<string, Record<string, string>> {
  return { ArnLike: { 'aws:SourceArn': bucketArn }, StringEquals: { 'aws:SourceAccount': account } };
}
