import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Analysts, analystPolicyName } from '../../lib/constructs/analysts.js';
import { emptyStack, logicalIdOf, resourcesOf, testConfig, type Cfn } from './helpers.js';

function build(roleArns: string[] = []) {
  const stack = emptyStack();
  const key = new kms.Key(stack, 'Key');
  const curated = new s3.Bucket(stack, 'Curated', { encryptionKey: key });
  const results = new s3.Bucket(stack, 'Results', { encryptionKey: key });
  const analysts = new Analysts(stack, 'Analysts', {
    environment: 'test',
    databaseName: 'paynet_reports_test',
    workGroupName: 'paynet-reports-test',
    curatedBucket: curated,
    resultsBucket: results,
    key,
    roleArns,
  });
  const template = Template.fromStack(stack);
  const [policy] = Object.values(resourcesOf(template, 'AWS::IAM::ManagedPolicy')).map((p) => p.Properties as Cfn);
  const statements = policy.PolicyDocument.Statement as Cfn[];
  const sid = (s: string) => statements.find((x) => x.Sid === s);
  const id = (c: Parameters<typeof logicalIdOf>[1]) => logicalIdOf(stack, c);
  return { policy, statements, sid, ids: { key: id(key), curated: id(curated), results: id(results) }, analysts };
}

const render = (v: Cfn) => JSON.stringify(v);

describe("Analysts' managed policy", () => {
  const { policy, statements, sid, ids } = build();

  it('is named per environment, so an SSO permission set can refer to it', () => {
    assert.equal(policy.ManagedPolicyName, analystPolicyName('test'));
    assert.equal(policy.ManagedPolicyName, 'paynet-reports-test-analysts');
  });

  it("runs and reads queries and saved queries in the environment's workgroup only", () => {
    const s = sid('QueriesInTheWorkgroup');
    for (const a of ['athena:StartQueryExecution', 'athena:GetQueryResults', 'athena:GetQueryExecution', 'athena:StopQueryExecution', 'athena:GetNamedQuery', 'athena:ListNamedQueries', 'athena:BatchGetNamedQuery', 'athena:GetWorkGroup']) {
      assert.ok(s.Action.includes(a), a);
    }
    assert.ok(!s.Action.some((a: string) => /Create|Delete|Update/.test(a)), 'saved queries are the stack\'s: read, not changed');
    assert.match(render(s.Resource), /:workgroup\/paynet-reports-test"/);
  });

  it('reads the Glue database and its tables, nothing else of Glue', () => {
    const s = sid('ReadTheDatabaseAndItsTables');
    assert.ok(s.Action.every((a: string) => /^glue:(Get|BatchGet)/.test(a)), render(s.Action));
    const resources = s.Resource.map(render).join(' ');
    assert.match(resources, /:catalog"/);
    assert.match(resources, /:database\/paynet_reports_test"/);
    assert.match(resources, /:table\/paynet_reports_test\/\*"/);
  });

  it('reads tables/ and manifests/ (the loads table) of the curated bucket, not rejects, and reads and writes athena/ results', () => {
    assert.deepEqual(sid('ReadTheTables').Action, 's3:GetObject');
    assert.match(render(sid('ReadTheTables').Resource), new RegExp(`${ids.curated}.*/tables/\\*`));
    assert.match(render(sid('ReadTheTables').Resource), new RegExp(`${ids.curated}.*/manifests/\\*`));
    assert.doesNotMatch(render(sid('ReadTheTables').Resource), /rejected/);
    assert.deepEqual(sid('ListTheTables').Condition, { StringLike: { 's3:prefix': ['tables/*', 'manifests/*'] } });
    const results = sid('ReadAndWriteQueryResults');
    assert.deepEqual(results.Action, ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts']);
    assert.match(render(results.Resource), new RegExp(`${ids.results}.*/athena/\\*`));
    const writes = statements.filter((s) => [s.Action].flat().includes('s3:PutObject'));
    assert.ok(!render(writes).includes(ids.curated), 'never writes the curated bucket');
  });

  it('uses the lake key only through S3 and Athena', () => {
    const s = sid('UseTheLakeKeyThroughS3AndAthenaOnly');
    assert.deepEqual(s.Action, ['kms:Decrypt', 'kms:GenerateDataKey']);
    assert.deepEqual(s.Resource, { 'Fn::GetAtt': [ids.key, 'Arn'] });
    assert.equal(s.Condition.StringEquals['kms:ViaService'].length, 2);
    assert.match(render(s.Condition.StringEquals['kms:ViaService']), /"s3\.".*"athena\."/);
    const kmsStatements = statements.filter((x) => [x.Action].flat().some((a: string) => a.startsWith('kms:')));
    assert.equal(kmsStatements.length, 1);
  });

  it('grants no service wildcard and no "*" resource', () => {
    for (const s of statements) {
      for (const a of [s.Action].flat()) assert.ok(!a.endsWith(':*') && a !== '*', a);
      assert.notEqual(s.Resource, '*', s.Sid);
    }
  });

  it('is attached to the configured roles only', () => {
    assert.equal(policy.Roles, undefined);
    const attached = build(['arn:aws:iam::123456789012:role/analysts', 'arn:aws:iam::123456789012:role/team/finance-readers']);
    assert.deepEqual(attached.policy.Roles, ['analysts', 'finance-readers']);
  });
});

describe('analystRoleArns configuration', () => {
  it('defaults to none and takes IAM role ARNs', () => {
    assert.deepEqual(testConfig().analystRoleArns, []);
    assert.deepEqual(testConfig({ analystRoleArns: ['arn:aws:iam::123456789012:role/analysts'] }).analystRoleArns, ['arn:aws:iam::123456789012:role/analysts']);
  });

  it('refuses what is not a role ARN, and IAM Identity Center roles with the permission-set way instead', () => {
    assert.throws(() => testConfig({ analystRoleArns: ['analysts'] }), /analystRoleArns\.0: must be an IAM role ARN/);
    assert.throws(
      () => testConfig({ analystRoleArns: ['arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/eu-central-1/AWSReservedSSO_Analysts_0123456789abcdef'] }),
      /permission set/,
    );
  });
});
