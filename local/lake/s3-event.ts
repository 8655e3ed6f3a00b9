import type { S3EventRecord } from 'aws-lambda';
import type { S3rverEventRecord } from 's3rver';
import { encodeS3EventKey } from '../../functions/core/lake/s3-keys.js';

/**
 * s3rver's in-process events, reshaped to what S3 sends AWS Lambda (via SQS), so the parse handler runs the
 * same code on both. Differences fixed here:
 * - the key arrives URL-encoded in AWS ("dt%3D2026-11-20", spaces as "+"); s3rver gives it raw;
 * - a completed multipart upload is "ObjectCreated:CompleteMultipartUpload" in AWS; s3rver says
 *   "ObjectCreated:Post" (it cannot tell it from a browser POST upload, which this pipeline never makes);
 * - the bucket ARN is "arn:aws:s3:::<bucket>"; s3rver writes "arn:aws:s3: : :<bucket>".
 * There is no versionId: s3rver has no versioning (see local-lake.ts).
 */
export function toS3EventRecord(record: S3rverEventRecord, region: string): S3EventRecord | undefined {
  if (!record.eventName.startsWith('ObjectCreated:')) return undefined;
  const eventName = record.eventName === 'ObjectCreated:Post' ? 'ObjectCreated:CompleteMultipartUpload' : record.eventName;
  const bucket = record.s3.bucket.name;
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: region,
    eventTime: record.eventTime,
    eventName,
    userIdentity: record.userIdentity,
    requestParameters: record.requestParameters,
    responseElements: record.responseElements,
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: 'local-lake',
      bucket: { name: bucket, ownerIdentity: record.s3.bucket.ownerIdentity, arn: `arn:aws:s3:::${bucket}` },
      object: {
        key: encodeS3EventKey(record.s3.object.key),
        size: record.s3.object.size ?? 0,
        eTag: record.s3.object.eTag ?? '',
        sequencer: record.s3.object.sequencer,
      },
    },
  };
}
