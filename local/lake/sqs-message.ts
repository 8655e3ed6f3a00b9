import { createHash, randomUUID } from 'node:crypto';
import type { S3EventRecord, SQSEvent } from 'aws-lambda';
import { encodeS3EventKey } from '../../functions/core/lake/s3-keys.js';

/**
 * The local stand-ins for what AWS puts between the raw bucket and the parse function: S3 sends each
 * ObjectCreated notification to an SQS queue, and Lambda polls it in batches of one (lib/constructs/parse.ts), so the
 * parse handler sees an SQS event whose one message body is the S3 notification JSON.
 */

const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:paynet-reports-local-raw-files';

/** One SQS message per notification, shaped as Lambda delivers it from a standard queue. */
export function sqsEventOf(records: S3EventRecord[], region = 'us-east-1'): SQSEvent {
  const body = JSON.stringify({ Records: records });
  const now = String(Date.now());
  return {
    Records: [
      {
        messageId: randomUUID(),
        receiptHandle: `local-${randomUUID()}`,
        body,
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: now,
          SenderId: 'AIDAIT2UOQQY3AUEKVGXU',
          ApproximateFirstReceiveTimestamp: now,
        },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(body).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: QUEUE_ARN,
        awsRegion: region,
      },
    ],
  };
}

/**
 * The ObjectCreated record S3 would have sent for an object the local pipeline wrote itself: used with an
 * external S3-compatible store (--s3-endpoint), which delivers no notifications to this process.
 */
export function objectCreatedRecord(input: {
  bucket: string;
  key: string;
  size: number;
  eTag?: string;
  versionId?: string;
  region?: string;
  /** Who sent it, as the notification's id: the parse log shows it (default "local-pipeline"). */
  configurationId?: string;
}): S3EventRecord {
  const time = new Date();
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: input.region ?? 'us-east-1',
    eventTime: time.toISOString(),
    eventName: 'ObjectCreated:Put',
    userIdentity: { principalId: 'local' },
    requestParameters: { sourceIPAddress: '127.0.0.1' },
    responseElements: { 'x-amz-request-id': randomUUID(), 'x-amz-id-2': randomUUID() },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: input.configurationId ?? 'local-pipeline',
      bucket: { name: input.bucket, ownerIdentity: { principalId: 'local' }, arn: `arn:aws:s3:::${input.bucket}` },
      object: {
        key: encodeS3EventKey(input.key),
        size: input.size,
        eTag: input.eTag ?? '',
        ...(input.versionId ? { versionId: input.versionId } : {}),
        sequencer: time.getTime().toString(16).toUpperCase(),
      },
    },
  };
}
