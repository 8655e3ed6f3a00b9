import { FIXTURE_QUERIES_DIR } from '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { parquetSchema } from '../../functions/core/definitions/table-schema.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { Catalog, databaseName, QUERIES_DIR_VARIABLE } from '../../lib/constructs/catalog.js';
import { athenaTypeOfParquet } from '../helpers/parquet-types.js';
import { emptyStack, FIXTURE_ENTRY, logicalIdOf, resourcesOf, synthPipeline, testConfig, type Cfn } from './helpers.js';

// The fixture report, and the same report over three connections: one table each, a partition per connection.
const reports = [...loadCatalog().reports, { ...loadCatalog().get('transactions'), id: 'shared', connections: ['acme', 'beta', 'gamma'] }];
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
const allTables = Object.values(resourcesOf(template, 'AWS::Glue::Table')).map((t) => (t.Properties as Cfn).TableInput);
const tables = allTables.filter((t) => t.Name !== 'loads');
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

  it('partitions by connection first, projected as an enum of the report\'s connections, then dt, with a location template', () => {
    for (const r of reports) {
      const t = tableOf(r.id);
      assert.deepEqual(t.PartitionKeys, [{ Name: 'connection', Type: 'string' }, { Name: 'dt', Type: 'string' }]);
      assert.equal(t.Parameters['projection.enabled'], 'true');
      assert.equal(t.Parameters['projection.connection.type'], 'enum');
      assert.equal(t.Parameters['projection.connection.values'], r.connections.join(','));
      assert.equal(t.Parameters['projection.dt.type'], 'date');
      assert.equal(t.Parameters['projection.dt.format'], 'yyyy-MM-dd');
      assert.equal(t.Parameters['projection.dt.range'], '2020-01-01,NOW+1DAYS');
      assert.deepEqual(t.Parameters['storage.location.template'], {
        'Fn::Join': ['', ['s3://', { Ref: curatedId }, `/tables/${r.id}/connection=\${connection}/dt=\${dt}/`]],
      });
    }
    assert.equal(tableOf('shared').Parameters['projection.connection.values'], 'acme,beta,gamma');
  });

  it('has a loads table over the manifests: JSON SerDe, report, connection and dt projected', () => {
    const t = allTables.find((x) => x.Name === 'loads');
    assert.deepEqual(t.PartitionKeys.map((k: { Name: string }) => k.Name), ['report', 'connection', 'dt']);
    assert.equal(t.StorageDescriptor.SerdeInfo.SerializationLibrary, 'org.openx.data.jsonserde.JsonSerDe');
    assert.deepEqual(t.StorageDescriptor.Columns.map((c: { Name: string }) => c.Name), ['outcome', 'window', 'rows', 'error', 'finishedat']);
    assert.equal(t.Parameters['projection.report.type'], 'enum');
    assert.equal(t.Parameters['projection.report.values'], 'transactions,shared');
    assert.equal(t.Parameters['projection.connection.values'], 'default,acme,beta,gamma');
    assert.equal(t.Parameters['projection.dt.type'], 'date');
    assert.deepEqual(t.Parameters['storage.location.template'], {
      'Fn::Join': ['', ['s3://', { Ref: curatedId }, '/manifests/${report}/connection=${connection}/dt=${dt}/']],
    });
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
    const all = Object.values(resourcesOf(template, 'AWS::Athena::NamedQuery')).map((q) => q.Properties as Cfn);
    const named = all.filter((q) => q.Name.startsWith('transactions/') && q.Name !== 'transactions/coverage');
    assert.deepEqual(named.map((q) => q.Name).sort(), files.map((f) => `transactions/${f.replace(/\.sql$/, '')}`).sort());
    // Every report has the built-in coverage query, its connections listed.
    assert.deepEqual(all.filter((q) => q.Name.endsWith('/coverage')).map((q) => q.Name).sort(), ['shared/coverage', 'transactions/coverage']);
    assert.match(all.find((q) => q.Name === 'shared/coverage')!.QueryString, /VALUES \('acme'\), \('beta'\), \('gamma'\)/);
    for (const q of named) {
      assert.equal(q.QueryString, readFileSync(join(FIXTURE_QUERIES_DIR, `${q.Name}.sql`), 'utf8').trim());
      assert.match(q.QueryString, /\bFROM transactions\b/);
      assert.ok(q.Description.length > 10, `${q.Name} has a description from its leading comment`);
      assert.deepEqual(q.WorkGroup, { Ref: Object.keys(resourcesOf(template, 'AWS::Athena::WorkGroup'))[0] });
    }
  });
});

describe('Catalog: saved queries Athena (Trino) cannot parse stop the synthesis', () => {
  const root = mkdtempSync(join(tmpdir(), 'catalog-queries-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  /** queries/transactions/ with these files, in a folder of its own. */
  const queriesDir = (name: string, files: Record<string, string>): string => {
    const dir = join(root, name);
    mkdirSync(join(dir, 'transactions'), { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, 'transactions', file), text);
    return dir;
  };
  const catalogOver = (dir: string) => {
    const scope = emptyStack();
    const k = new kms.Key(scope, 'Key');
    new Catalog(scope, 'Catalog', {
      environment: 'test-env',
      reports,
      curatedBucket: new s3.Bucket(scope, 'Curated', { encryptionKey: k }),
      resultsBucket: new s3.Bucket(scope, 'Results', { encryptionKey: k }),
      key: k,
      bytesScannedCutoffPerQuery: 5_000_000_000,
      removalPolicy: RemovalPolicy.RETAIN,
      queriesDir: dir,
    });
    return Template.fromStack(scope);
  };
  // Valid DuckDB both; the blank line and comment above the cast count in the line the refusal names.
  const castFile = '\n-- Amounts as text.\nSELECT dt,\n       amount::varchar AS amount_text\nFROM transactions\n';
  const excludeFile = '-- Everything but the description.\nSELECT * EXCLUDE (order_description) FROM transactions\n';
  const bothFile =
    '-- The largest amount per day.\nWITH ranked AS (\n  SELECT dt, CAST(amount AS varchar) AS amount_text,\n' +
    '    row_number() OVER (PARTITION BY dt ORDER BY amount DESC) AS n\n  FROM transactions\n)\nSELECT dt, amount_text FROM ranked WHERE n = 1\n';
  const bad = queriesDir('bad', { 'as_text.sql': castFile, 'but_description.sql': excludeFile, 'largest.sql': bothFile });

  it('the Catalog refuses them with one ConfigurationError naming each file, line and column', () => {
    assert.throws(
      () => catalogOver(bad),
      (e: unknown) => {
        assert.ok(e instanceof ConfigurationError);
        const lines = e.message.split('\n');
        assert.equal(lines[0], '2 saved queries Athena (Trino) cannot parse:');
        assert.ok(lines[1]!.startsWith(`${join(bad, 'transactions', 'as_text.sql')}:4:14: Athena (Trino) cannot parse this saved query: ':'`), lines[1]);
        assert.ok(lines[2]!.startsWith(`${join(bad, 'transactions', 'but_description.sql')}:2:10: `), lines[2]);
        assert.doesNotMatch(e.message, /largest\.sql/);
        return true;
      },
    );
  });

  it('publishes a query both engines accept (CAST, a CTE, a window function) as it is', () => {
    const named = Object.values(resourcesOf(catalogOver(queriesDir('good', { 'largest.sql': bothFile })), 'AWS::Athena::NamedQuery'));
    assert.deepEqual(
      named.map((q) => [(q.Properties as Cfn).Name, (q.Properties as Cfn).QueryString]).filter(([name]) => !String(name).endsWith('/coverage')),
      [['transactions/largest', bothFile.trim()]],
    );
  });

  it('the stack refuses them too: its Catalog reads the saved queries root (PAYNET_QUERIES_DIR)', () => {
    const before = process.env[QUERIES_DIR_VARIABLE];
    process.env[QUERIES_DIR_VARIABLE] = bad;
    try {
      assert.throws(() => synthPipeline(testConfig()), (e: unknown) => e instanceof ConfigurationError && /as_text\.sql:4:14: /.test(e.message));
    } finally {
      process.env[QUERIES_DIR_VARIABLE] = before;
    }
  });

  it('`cdk synth` (bin/app.ts) stops with the message alone, exit code 1, no stack trace', async () => {
    const synth = promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/app.ts'], {
      env: {
        ...process.env,
        [QUERIES_DIR_VARIABLE]: bad,
        CDK_OUTDIR: join(root, 'cdk.out'),
        CDK_CONTEXT_JSON: JSON.stringify({ handlerEntry: FIXTURE_ENTRY, environments: 'integration' }),
      },
    });
    const failed = (await synth.then(() => assert.fail('the synthesis succeeded'), (e: unknown) => e)) as { code: number; stderr: string };
    assert.equal(failed.code, 1, failed.stderr);
    const said = failed.stderr.split('\n').filter((l) => !l.startsWith('Bundling') && l.trim() !== '');
    assert.equal(said[0], 'ConfigurationError: 2 saved queries Athena (Trino) cannot parse:');
    assert.match(said[1]!, /as_text\.sql:4:14: Athena \(Trino\) cannot parse this saved query: /);
    assert.match(said[2]!, /but_description\.sql:2:10: /);
    assert.doesNotMatch(failed.stderr, /^\s+at /m);
  });
});
