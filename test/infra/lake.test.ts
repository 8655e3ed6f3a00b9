import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Lake, type LakeProps } from '../../lib/constructs/lake.js';
import { emptyStack, logicalIdOf, resourcesOf, type Cfn } from './helpers.js';

const props: LakeProps = {
  environment: 'test',
  removalPolicy: RemovalPolicy.RETAIN,
  rawTransitionAfter: Duration.days(30),
  rawStorageClass: s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
  rawNoncurrentVersionExpiration: Duration.days(365),
  curatedNoncurrentVersionExpiration: Duration.days(30),
  resultsExpiration: Duration.days(7),
  accessLogsExpiration: Duration.days(400),
};

function build(overrides: Partial<LakeProps> = {}) {
  const stack = emptyStack();
  const lake = new Lake(stack, 'Lake', { ...props, ...overrides });
  const id = (b: s3.Bucket) => logicalIdOf(stack, b);
  return {
    lake,
    template: Template.fromStack(stack),
    ids: { raw: id(lake.rawBucket), curated: id(lake.curatedBucket), results: id(lake.resultsBucket), logs: id(lake.accessLogsBucket) },
    keyId: logicalIdOf(stack, lake.key),
  };
}

describe('Lake', () => {
  const { template, ids, keyId } = build();
  const buckets = resourcesOf(template, 'AWS::S3::Bucket');
  const bucket = (logicalId: string) => buckets[logicalId]!.Properties as Cfn;

  it('has one rotating, retained KMS key', () => {
    template.resourceCountIs('AWS::KMS::Key', 1);
    template.hasResource('AWS::KMS::Key', { Properties: { EnableKeyRotation: true }, DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  it('has four buckets, all private, versioned and retained', () => {
    assert.deepEqual(Object.keys(buckets).sort(), Object.values(ids).sort());
    for (const [logicalId, b] of Object.entries(buckets)) {
      assert.deepEqual(
        b.Properties!.PublicAccessBlockConfiguration,
        { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        logicalId,
      );
      assert.deepEqual(b.Properties!.VersioningConfiguration, { Status: 'Enabled' }, logicalId);
      assert.equal(b.DeletionPolicy, 'Retain', logicalId);
      // The raw bucket's notifications (the parse queue) are written by CDK's custom resource, not on the bucket; the
      // others send their events to EventBridge from the bucket itself (Control Tower's CT.S3.PR.4).
      const expected = logicalId === ids.raw ? undefined : { EventBridgeConfiguration: { EventBridgeEnabled: true } };
      assert.deepEqual(b.Properties!.NotificationConfiguration, expected, logicalId);
    }
  });

  it('names raw and curated like the local lake (functions/core/naming.ts), made unique by account and region', () => {
    for (const [logicalId, role] of [[ids.raw, 'raw'], [ids.curated, 'curated']] as const) {
      assert.deepEqual(bucket(logicalId).BucketName, {
        'Fn::Join': ['', [`paynet-reports-test-${role}-`, { Ref: 'AWS::AccountId' }, '-', { Ref: 'AWS::Region' }]],
      });
    }
  });

  it('encrypts raw, curated and results with the key, access logs with S3-managed keys', () => {
    for (const logicalId of [ids.raw, ids.curated, ids.results]) {
      assert.deepEqual(bucket(logicalId).BucketEncryption.ServerSideEncryptionConfiguration, [
        { BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { 'Fn::GetAtt': [keyId, 'Arn'] } } },
      ]);
    }
    assert.deepEqual(bucket(ids.logs).BucketEncryption.ServerSideEncryptionConfiguration, [
      { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
    ]);
  });

  it('denies plain HTTP and TLS below 1.2 on every bucket', () => {
    const policies = Object.values(resourcesOf(template, 'AWS::S3::BucketPolicy'));
    for (const logicalId of Object.values(ids)) {
      const policy = policies.find((p) => JSON.stringify((p.Properties as Cfn).Bucket) === JSON.stringify({ Ref: logicalId }));
      assert.ok(policy, `${logicalId} has a bucket policy`);
      const statements = (policy!.Properties as Cfn).PolicyDocument.Statement as Cfn[];
      assert.ok(statements.some((s) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false'), `${logicalId}: TLS only`);
      assert.ok(statements.some((s) => s.Effect === 'Deny' && s.Condition?.NumericLessThan?.['s3:TlsVersion'] === 1.2), `${logicalId}: TLS 1.2+`);
    }
  });

  it('logs access to raw, curated and results into the access-log bucket', () => {
    for (const [logicalId, prefix] of [[ids.raw, 'raw/'], [ids.curated, 'curated/'], [ids.results, 'athena-results/']] as const) {
      assert.deepEqual(bucket(logicalId).LoggingConfiguration, { DestinationBucketName: { Ref: ids.logs }, LogFilePrefix: prefix });
    }
    // Log delivery by bucket policy, not by the legacy ACL.
    assert.equal(bucket(ids.logs).AccessControl, undefined);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: ids.logs },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject' })]) },
    });
  });

  it('moves raw files and their old versions to cheaper storage and keeps old versions a year', () => {
    const [rule] = bucket(ids.raw).LifecycleConfiguration.Rules;
    assert.deepEqual(rule.Transitions, [{ StorageClass: 'GLACIER_IR', TransitionInDays: 30 }]);
    assert.deepEqual(rule.NoncurrentVersionTransitions, [{ StorageClass: 'GLACIER_IR', TransitionInDays: 30 }]);
    assert.deepEqual(rule.NoncurrentVersionExpiration, { NoncurrentDays: 365 });
    assert.equal(rule.ExpirationInDays, undefined, 'raw files never expire');
    assert.deepEqual(rule.AbortIncompleteMultipartUpload, { DaysAfterInitiation: 7 });
  });

  it('expires Athena results, old curated versions and access logs', () => {
    assert.equal(bucket(ids.results).LifecycleConfiguration.Rules[0].ExpirationInDays, 7);
    assert.deepEqual(bucket(ids.curated).LifecycleConfiguration.Rules[0].NoncurrentVersionExpiration, { NoncurrentDays: 30 });
    assert.equal(bucket(ids.curated).LifecycleConfiguration.Rules[0].ExpirationInDays, undefined, 'curated data never expires');
    assert.equal(bucket(ids.logs).LifecycleConfiguration.Rules[0].ExpirationInDays, 400);
  });

  it('gives every lifecycle rule an action CloudFormation accepts on its own', () => {
    // AWS::S3::Bucket Rule: "At least one of [...] needs to be specified"; ExpiredObjectDeleteMarker is not in the list.
    const actions = [
      'AbortIncompleteMultipartUpload', 'ExpirationDate', 'ExpirationInDays', 'NoncurrentVersionExpiration',
      'NoncurrentVersionExpirationInDays', 'NoncurrentVersionTransition', 'NoncurrentVersionTransitions', 'Transition', 'Transitions',
    ];
    let rules = 0;
    for (const [logicalId, b] of Object.entries(buckets)) {
      for (const rule of (b.Properties as Cfn).LifecycleConfiguration?.Rules ?? []) {
        rules++;
        assert.ok(actions.some((a) => rule[a] !== undefined), `${logicalId} rule ${rule.Id} has no action of its own`);
        // S3 refuses ExpiredObjectDeleteMarker beside an expiration in days or by date.
        if (rule.ExpiredObjectDeleteMarker) assert.ok(rule.ExpirationInDays === undefined && rule.ExpirationDate === undefined, rule.Id);
      }
    }
    assert.ok(rules >= 6, `${rules} rules seen`);
    const cleanup = (logicalId: string) => (buckets[logicalId]!.Properties as Cfn).LifecycleConfiguration.Rules.find((r: Cfn) => r.ExpiredObjectDeleteMarker);
    for (const logicalId of [ids.logs, ids.results]) assert.deepEqual(cleanup(logicalId).NoncurrentVersionExpiration, { NoncurrentDays: 1 }, logicalId);
  });

  it('lets CloudWatch Logs of this account only use the key', () => {
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
            Condition: { ArnLike: { 'kms:EncryptionContext:aws:logs:arn': Match.anyValue() } },
          }),
        ]),
      },
    });
  });

  it('empties and deletes everything only when the environment says destroy', () => {
    const destroyed = build({ removalPolicy: RemovalPolicy.DESTROY, rawStorageClass: s3.StorageClass.INFREQUENT_ACCESS });
    for (const b of Object.values(resourcesOf(destroyed.template, 'AWS::S3::Bucket'))) assert.equal(b.DeletionPolicy, 'Delete');
    destroyed.template.resourceCountIs('Custom::S3AutoDeleteObjects', 4);
    destroyed.template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Delete', Properties: { PendingWindowInDays: 7 } });
    const rawRule = (resourcesOf(destroyed.template, 'AWS::S3::Bucket')[destroyed.ids.raw]!.Properties as Cfn).LifecycleConfiguration.Rules[0];
    assert.deepEqual(rawRule.Transitions, [{ StorageClass: 'STANDARD_IA', TransitionInDays: 30 }]);
    template.resourceCountIs('Custom::S3AutoDeleteObjects', 0);
  });
});
