import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Credentials, PLACEHOLDER_SECRET } from '../../lib/constructs/credentials.js';
import { emptyStack, logicalIdOf, resourcesOf } from './helpers.js';

describe('Credentials', () => {
  describe('a created secret', () => {
    const stack = emptyStack();
    const credentials = new Credentials(stack, 'Credentials', {
      environment: 'test',
      secretName: 'paynet-reports/test/gateway',
      mode: 'create',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    new iam.Role(stack, 'Bystander', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    credentials.grantRead(reader);
    const template = Template.fromStack(stack);
    const keyId = logicalIdOf(stack, credentials.key as never);

    it('holds the documented placeholder, encrypted with its own rotating key, and is retained', () => {
      template.hasResource('AWS::SecretsManager::Secret', {
        Properties: {
          Name: 'paynet-reports/test/gateway',
          SecretString: JSON.stringify(PLACEHOLDER_SECRET),
          KmsKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
        },
        DeletionPolicy: 'Retain',
      });
      assert.deepEqual(PLACEHOLDER_SECRET, { login: 'REPLACE_ME', controlKey: 'REPLACE_ME' });
      template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    });

    it('describes both signing methods to fill in', () => {
      const [secret] = Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret'));
      const description = (secret!.Properties as { Description: string }).Description;
      assert.match(description, /"controlKey"/);
      assert.match(description, /"signatureMethod": "RSA-SHA256"/);
      assert.match(description, /"privateKeyPem"/);
      assert.ok(description.length <= 2048, 'Secrets Manager descriptions are at most 2048 characters');
    });

    it('grants read to the grantee alone: IAM policy and key policy', () => {
      const readers = Object.entries(resourcesOf(template, 'AWS::IAM::Policy')).filter(([, p]) =>
        JSON.stringify(p.Properties).includes('secretsmanager:GetSecretValue'),
      );
      assert.equal(readers.length, 1);
      assert.deepEqual((readers[0]![1].Properties as { Roles: unknown[] }).Roles, [{ Ref: logicalIdOf(stack, reader) }]);
      template.hasResourceProperties('AWS::KMS::Key', {
        KeyPolicy: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Principal: { AWS: { 'Fn::GetAtt': [logicalIdOf(stack, reader), 'Arn'] } },
              Action: 'kms:Decrypt',
              Condition: { StringEquals: { 'kms:ViaService': Match.anyValue() } },
            }),
          ]),
        },
      });
    });
  });

  describe('an existing secret', () => {
    const stack = emptyStack();
    const keyArn = 'arn:aws:kms:eu-central-1:123456789012:key/0f7d1d1e-1111-2222-3333-444455556666';
    const credentials = new Credentials(stack, 'Credentials', {
      environment: 'test',
      secretName: 'team/paynet',
      mode: 'existing',
      existingKeyArn: keyArn,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    credentials.grantRead(reader);
    const template = Template.fromStack(stack);

    it('creates nothing and grants on the name with any suffix, and decrypt on the configured key', () => {
      template.resourceCountIs('AWS::SecretsManager::Secret', 0);
      template.resourceCountIs('AWS::KMS::Key', 0);
      assert.equal(credentials.secretName, 'team/paynet');
      const policy = JSON.stringify(Object.values(resourcesOf(template, 'AWS::IAM::Policy'))[0]!.Properties);
      assert.match(policy, /secret:team\/paynet-\?\?\?\?\?\?/);
      assert.match(policy, new RegExp(`"kms:Decrypt".*${keyArn.replace(/[/]/g, '\\/')}`));
    });
  });
});
