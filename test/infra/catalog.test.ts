import { FIXTURE_QUERIES_DIR } from '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { loadCatalog } from '../../config/reports/index.js';
import { parquetSchema } from '../../functions/core/table-schema.js';
import { Catalog, databaseName } from '../../lib/catalog.js';
import { athenaTypeOfParquet } from '../helpers/parquet-types.js';
import { emptyStack, logicalIdOf, resourcesOf, type Cfn } from './helpers.js';

const reports = loadCatalog().reports;
const stack = emptyStack();
const key = new kms.Key(stack, 'Key');
const curated = new s3.Bucket(stack, 'Curated', { encryptionKey: key });
const results = new s3.Bucket(stack, 'Results', { encryptionKey: key });
new Catalog(stack, 'Catalog', {
  environment: 'test-env',
  reports,
  curatedBucket: curated,
  resultsBucket: results,
  key,
  bytesScannedCutoffPerQuery: 5_000_000_000,
  removalPolicy: RemovalPolicy.RETAIN,
});
const template = Template.fromStack(stack);
const curatedId = logicalIdOf(stack, curated);
const tables = Object.values(resourcesOf(template, 'AWS::Glue::Table')).map((t) => (t.Properties as Cfn).TableInput);
const tableOf = (id: string) => tables.find((t) => t.Name === id);

describe('Catalog', () => {
  it('has one Glue database for the environment', () => {
    template.resourceCountIs('AWS::Glue::Database', 1);
    template.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: 'paynet_reports_test_env' } });
    assert.equal(databaseName('test-env'), 'paynet_reports_test_env');
  });

  it('has one Parquet table per report at curated/tables/<report>/', () => {
    assert.deepEqual(tables.map((t) => t.Name).sort(), reports.map((r) => r.id).sort());
    for (const r of reports) {
      const t = tableOf(r.id);
      assert.equal(t.TableType, 'EXTERNAL_TABLE');
      assert.deepEqual(t.StorageDescriptor.Location, { 'Fn::Join': ['', ['s3://', { Ref: curatedId }, `/tables/${r.id}/`]] });
      assert.equal(t.StorageDescriptor.SerdeInfo.SerializationLibrary, 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe');
      assert.equal(t.StorageDescriptor.InputFormat, 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat');
      assert.equal(t.Parameters.classification, 'parquet');
    }
  });

  it('partitions by dt (string) with date projection and a location template', () => {
    for (const r of reports) {
      const t = tableOf(r.id);
      assert.deepEqual(t.PartitionKeys, [{ Name: 'dt', Type: 'string' }]);
      assert.equal(t.Parameters['projection.enabled'], 'true');
      assert.equal(t.Parameters['projection.dt.type'], 'date');
      assert.equal(t.Parameters['projection.dt.format'], 'yyyy-MM-dd');
      assert.equal(t.Parameters['projection.dt.range'], '2020-01-01,NOW+1DAYS');
      assert.deepEqual(t.Parameters['storage.location.template'], {
        'Fn::Join': ['', ['s3://', { Ref: curatedId }, `/tables/${r.id}/dt=\${dt}/`]],
      });
    }
  });

  it("gives each table the columns of the Parquet files, in order and type for type", () => {
    for (const r of reports) {
      const [root, ...leaves] = parquetSchema(r.columns);
      assert.equal(root!.num_children, leaves.length);
      const fromParquet = leaves.map((e) => ({ Name: e.name, Type: athenaTypeOfParquet(e) }));
      const glue = tableOf(r.id).StorageDescriptor.Columns.map((c: { Name: string; Type: string }) => ({ Name: c.Name, Type: c.Type }));
      assert.deepEqual(glue, fromParquet, r.id);
      assert.ok(!leaves.some((e) => e.name === 'dt'), 'dt is the partition: it comes from the path, not the file');
    }
  });

  it('has a workgroup that enforces KMS-encrypted results in the results bucket, a scan limit and engine v3', () => {
    template.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'paynet-reports-test-env',
      WorkGroupConfiguration: {
        EnforceWorkGroupConfiguration: true,
        BytesScannedCutoffPerQuery: 5_000_000_000,
        EngineVersion: { SelectedEngineVersion: 'Athena engine version 3' },
        ResultConfiguration: {
          OutputLocation: { 'Fn::Join': ['', ['s3://', { Ref: logicalIdOf(stack, results) }, '/athena/']] },
          EncryptionConfiguration: { EncryptionOption: 'SSE_KMS', KmsKey: { 'Fn::GetAtt': [logicalIdOf(stack, key), 'Arn'] } },
        },
      },
    });
  });

  it("saves every report's queries/<report>/*.sql file, as is, as a named query <report>/<name> of the workgroup", () => {
    const files = readdirSync(join(FIXTURE_QUERIES_DIR, 'transactions')).filter((f) => f.endsWith('.sql'));
    assert.ok(files.length >= 2);
    const named = Object.values(resourcesOf(template, 'AWS::Athena::NamedQuery')).map((q) => q.Properties as Cfn);
    assert.deepEqual(named.map((q) => q.Name).sort(), files.map((f) => `transactions/${f.replace(/\.sql$/, '')}`).sort());
    for (const q of named) {
      assert.equal(q.QueryString, readFileSync(join(FIXTURE_QUERIES_DIR, `${q.Name}.sql`), 'utf8').trim());
      assert.match(q.QueryString, /\bFROM transactions\b/);
      assert.ok(q.Description.length > 10, `${q.Name} has a description from its leading comment`);
      assert.deepEqual(q.WorkGroup, { Ref: Object.keys(resourcesOf(template, 'AWS::Athena::WorkGroup'))[0] });
    }
  });
});
