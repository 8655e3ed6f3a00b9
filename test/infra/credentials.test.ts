import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Credentials, PLACEHOLDER_SECRET } from '../../lib/constructs/credentials.js';
import { CREDENTIALS_IDS, emptyStack, logicalIdOf, resourcesOf } from './helpers.js';

describe('Credentials', () => {
  describe('a created secret', () => {
    const stack = emptyStack();
    const credentials = new Credentials(stack, 'Credentials', {
      environment: 'test',
      connections: [{ connection: 'default', secretName: 'paynet-reports/test/gateway', mode: 'create' }],
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

    it('keeps the logical ids the one secret and its key had before connections: a new id would replace the named secret', () => {
      // The ids a stack synthesized before connections holds (paths Credentials/Secret and Credentials/Key).
      assert.deepEqual(Object.keys(resourcesOf(template, 'AWS::SecretsManager::Secret')), [CREDENTIALS_IDS.secret]);
      assert.deepEqual(Object.keys(resourcesOf(template, 'AWS::KMS::Key')), [CREDENTIALS_IDS.key]);
    });

    it('describes both signing methods to fill in, and names the connection', () => {
      const [secret] = Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret'));
      const description = (secret!.Properties as { Description: string }).Description;
      assert.match(description, /"controlKey"/);
      assert.match(description, /"signatureMethod": "RSA-SHA256"/);
      assert.match(description, /"privateKeyPem"/);
      assert.match(description, /connection "default"/);
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
      connections: [{ connection: 'default', secretName: 'team/paynet', mode: 'existing', existingKeyArn: keyArn }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    credentials.grantRead(reader);
    const template = Template.fromStack(stack);

    it('creates nothing and grants on the name with any suffix, and decrypt on the configured key', () => {
      template.resourceCountIs('AWS::SecretsManager::Secret', 0);
      template.resourceCountIs('AWS::KMS::Key', 0);
      assert.equal(credentials.secretOf('default').secretName, 'team/paynet');
      const policy = JSON.stringify(Object.values(resourcesOf(template, 'AWS::IAM::Policy'))[0]!.Properties);
      assert.match(policy, /secret:team\/paynet-\?\?\?\?\?\?/);
      assert.match(policy, new RegExp(`"kms:Decrypt".*${keyArn.replace(/[/]/g, '\\/')}`));
    });
  });

  describe('several connections', () => {
    const stack = emptyStack();
    const keyArn = 'arn:aws:kms:eu-central-1:123456789012:key/0f7d1d1e-1111-2222-3333-444455556666';
    const credentials = new Credentials(stack, 'Credentials', {
      environment: 'test',
      connections: [
        { connection: 'default', secretName: 'paynet-reports/test/gateway', mode: 'create' },
        { connection: 'acme-eu', secretName: 'paynet-reports/test/acme-eu', mode: 'create' },
        { connection: 'team', secretName: 'team/paynet', mode: 'existing', existingKeyArn: keyArn },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    credentials.grantRead(reader);
    const template = Template.fromStack(stack);

    it('creates a secret per created connection, all under the one credentials key, default keeping its id', () => {
      const secrets = resourcesOf(template, 'AWS::SecretsManager::Secret');
      assert.equal(Object.keys(secrets).length, 2);
      assert.ok(secrets[CREDENTIALS_IDS.secret], 'the default connection keeps Credentials/Secret');
      template.resourceCountIs('AWS::KMS::Key', 1);
      for (const s of Object.values(secrets)) assert.deepEqual((s.Properties as { KmsKeyId: unknown }).KmsKeyId, { 'Fn::GetAtt': [CREDENTIALS_IDS.key, 'Arn'] });
      assert.match(JSON.stringify(secrets), /connection \\"acme-eu\\"/);
      assert.equal(credentials.secretOf('team').secretName, 'team/paynet');
      assert.throws(() => credentials.secretOf('other'), /no connection "other" \(there are default, acme-eu, team\)/);
    });

    it('lets the grantee read each secret, and decrypt the existing one with its own key through Secrets Manager only', () => {
      const policy = JSON.stringify(Object.values(resourcesOf(template, 'AWS::IAM::Policy'))[0]!.Properties);
      for (const id of Object.keys(resourcesOf(template, 'AWS::SecretsManager::Secret'))) assert.ok(policy.includes(`"Ref":"${id}"`), id);
      assert.match(policy, /secret:team\/paynet-\?\?\?\?\?\?/);
      assert.match(policy, /"kms:Decrypt".*kms:ViaService/);
    });

    it('creates no key when every connection brings its secret', () => {
      const only = emptyStack();
      const existing = new Credentials(only, 'Credentials', {
        environment: 'test',
        connections: [{ connection: 'default', secretName: 'a', mode: 'existing' }, { connection: 'b', secretName: 'b', mode: 'existing', existingKeyArn: keyArn }],
        removalPolicy: RemovalPolicy.RETAIN,
      });
      existing.grantRead(new iam.Role(only, 'Reader', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') }));
      const t = Template.fromStack(only);
      t.resourceCountIs('AWS::KMS::Key', 0);
      t.resourceCountIs('AWS::SecretsManager::Secret', 0);
    });
  });
});
