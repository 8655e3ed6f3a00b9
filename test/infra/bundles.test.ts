import '../helpers/fixture-reports.js';
import { encodeConnectionsVariable } from '../../functions/core/connections/connection.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import type { Metafile } from 'esbuild';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { bucketNames } from '../../functions/core/naming.js';
import { BUNDLED_CATALOG_FILE, loadCatalog, readReportSources } from '../../functions/core/definitions/catalog-files.js';
import { glueColumns } from '../../functions/core/definitions/table-schema.js';
import { buildLambdaBundle, LAMBDA_BUNDLES, type BuiltBundle, type BundleName } from '../../lib/bundling/bundling.js';
import type { PipelineFunction } from '../../lib/constructs/pipeline-function.js';
import { PROJECT_ROOT, projectPath } from '../../lib/bundling/project.js';
import { ReportsPipelineStack, stackName } from '../../lib/reports-pipeline-stack.js';
import { LOCAL_LAKE_CREDENTIALS, startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { DEFAULT_HMAC_CONTROL_KEY, startSimulator, type Simulator } from '../../local/simulator/index.js';
import { resourcesOf, testConfig, type Cfn } from './helpers.js';

/**
 * The Lambda bundles as they are deployed. Each bundle is built once, outside the repository, with the
 * stack's own esbuild settings (lib/bundling/bundling.ts), and each handler runs in a plain `node` child process
 * (no tsx; no node_modules above it) with the environment the synthesized stack gives the function,
 * against local stand-ins: the local lake (s3rver) as S3, the gateway simulator as the gateway, and a
 * node:http stand-in speaking Secrets Manager's JSON protocol. A missing module, a dev dependency or a
 * worker script that is not beside the bundle fails here, not in Lambda.
 *
 * The stack is synthesized once too (with the real handlers), to prove NodejsFunction builds the very
 * bytes tested here: the settings have one copy, translated for the esbuild CLI and for its API.
 */

const ROOT = mkdtempSync(join(tmpdir(), 'paynet-bundles-'));
const MARK = '@@handler-result ';
const buckets = bucketNames('test');
const report = loadCatalog().get('transactions');
/** The stack gives the parse function 3,584 MB here: enough vCPUs that it asks for the Parquet worker (lib/constructs/parse.ts). */
const config = testConfig({ parse: { memoryMb: 3584 } });
const SECRET_NAME = config.connections[0]!.secret.name;

interface Invocation {
  result?: unknown;
  error?: string;
  /** Powertools' JSON log lines and EMF metric records (stdout's, then stderr's). */
  lines: Array<Record<string, unknown>>;
  stderr: string;
}

/**
 * What Lambda's runtime does, reduced: import index.mjs from the working directory, call `handler` with the
 * event and a context, print the outcome on one marked line. A file of its own, outside the bundle (flags
 * such as --input-type would be inherited by the Parquet worker thread).
 */
const RUNNER = join(ROOT, 'invoke.mjs');
writeFileSync(
  RUNNER,
  `import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const { handler } = await import(pathToFileURL(join(process.cwd(), 'index.mjs')).href);
const context = {
  awsRequestId: process.env.TEST_REQUEST_ID, functionName: 'paynet-reports-test', functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-central-1:123456789012:function:paynet-reports-test', memoryLimitInMB: '2048',
  logGroupName: '/aws/lambda/paynet-reports-test', logStreamName: 'bundle-test', callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 300000,
};
let out;
try { out = { result: await handler(JSON.parse(process.env.TEST_EVENT), context) }; }
catch (e) { out = { error: e instanceof Error ? String(e.stack ?? e.message) : String(e) }; }
console.log(${JSON.stringify(MARK)} + JSON.stringify(out));
process.exit(0);
`,
);

/** The handler of the bundle in `dir`, called once with `event` in a fresh `node` whose working directory is the bundle. */
function invokeBundle(dir: string, env: Record<string, string>, event: unknown, requestId: string): Promise<Invocation> {
  return new Promise((resolvePromise, reject) => {
    // A Lambda-like environment and nothing else of this process's (no NODE_OPTIONS from a loader, no AWS profile).
    const child = spawn(process.execPath, [RUNNER], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...env, TEST_EVENT: JSON.stringify(event), TEST_REQUEST_ID: requestId },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const resultLine = stdout.split('\n').find((l) => l.startsWith(MARK));
      if (code !== 0 || !resultLine) {
        reject(new Error(`the bundle in ${dir} exited with ${code} before the handler returned:\n${stderr.slice(-3000)}\n${stdout.slice(-2000)}`));
        return;
      }
      // Powertools writes ERROR and WARN lines to stderr, the rest and the EMF records to stdout.
      const lines = `${stdout}\n${stderr}`
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolvePromise({ ...(JSON.parse(resultLine.slice(MARK.length)) as { result?: unknown; error?: string }), lines, stderr });
    });
  });
}

/** The handler's error, with the ERROR lines it logged (which say why). */
const failure = (run: Invocation): string | undefined =>
  run.error === undefined ? undefined : [run.error, ...run.lines.filter((l) => l.level === 'ERROR').map((l) => JSON.stringify(l))].join('\n');

/** The EMF data points of one metric: [value, dimensions]. */
const metricPoints = (lines: Invocation['lines'], name: string) => lines.filter((l) => typeof l._aws === 'object' && name in l).map((l) => ({ value: l[name], dims: l }));

/**
 * Secrets Manager's GetSecretValue over its JSON 1.1 protocol, on loopback (AWS_ENDPOINT_URL_SECRETS_MANAGER):
 * enough of the service for Powertools' SecretsProvider and the SDK underneath it.
 */
async function startSecretsManager(secrets: Record<string, string>) {
  const calls: Array<{ target: string; secretId: string; authorization: string }> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const { SecretId: secretId = '' } = JSON.parse(body || '{}') as { SecretId?: string };
      calls.push({ target, secretId, authorization: String(req.headers.authorization ?? '') });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(payload));
      };
      if (target !== 'secretsmanager.GetSecretValue') return send(400, { __type: 'UnknownOperationException', message: `not in the stand-in: ${target}` });
      const value = secrets[secretId];
      if (value === undefined) return send(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
      send(200, {
        ARN: `arn:aws:secretsmanager:eu-central-1:123456789012:secret:${secretId}-AbCdEf`,
        Name: secretId,
        SecretString: value,
        VersionId: '00000000-0000-4000-8000-000000000001',
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 1_790_000_000,
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, calls, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The installed package a metafile input belongs to: its name and its lockfile key ("node_modules/a/node_modules/b"). */
function packageOf(input: string): { name: string; lockKey: string } | undefined {
  const path = relative(PROJECT_ROOT, resolve(input)).split('\\').join('/');
  const at = path.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const [scope = '', base = ''] = path.slice(at + 'node_modules/'.length).split('/');
  const name = scope.startsWith('@') ? `${scope}/${base}` : scope;
  return { name, lockKey: `${path.slice(0, at)}node_modules/${name}` };
}

/** The environment variables the stack gives a function, as the template has them. */
function lambdaEnvironment(stack: ReportsPipelineStack, template: Template, fn: PipelineFunction): Record<string, unknown> {
  const logicalId = stack.resolve((fn.function.node.defaultChild as CfnElement).logicalId) as string;
  return (resourcesOf(template, 'AWS::Lambda::Function')[logicalId]!.Properties as Cfn).Environment.Variables;
}

describe('Lambda bundles', () => {
  const built = {} as Record<BundleName, BuiltBundle>;
  let synthesized: { app: App; stack: ReportsPipelineStack; template: Template } | undefined;
  let lake: LocalLake;
  let sim: Simulator;
  let secrets: Awaited<ReturnType<typeof startSecretsManager>>;
  const env = {} as Record<BundleName, Record<string, string>>;

  before(async () => {
    for (const name of Object.keys(LAMBDA_BUNDLES) as BundleName[]) built[name] = await buildLambdaBundle(LAMBDA_BUNDLES[name], join(ROOT, name));

    // The stack with the real handlers, synthesized once: its assets and its functions' environments.
    const app = new App({ outdir: join(ROOT, 'cdk.out') });
    const stack = new ReportsPipelineStack(app, stackName(config.name), { config, reports: loadCatalog().reports });
    synthesized = { app, stack, template: Template.fromStack(stack) };

    lake = await startLocalLake({ dir: join(ROOT, 'lake'), buckets });
    sim = await startSimulator({ rowsPerDay: 40 });
    secrets = await startSecretsManager({ [SECRET_NAME]: JSON.stringify(sim.credentials.hmac) });

    // The variables the stack sets, with the deployed bucket names (tokens) and the gateway URL swapped for the
    // local stand-ins; then what Lambda itself would provide (region, credentials), pointed at loopback.
    const local: Record<string, string> = { RAW_BUCKET: buckets.raw, CURATED_BUCKET: buckets.curated, CONNECTIONS: encodeConnectionsVariable([{ name: 'default', endpointUrl: sim.url, secretName: SECRET_NAME }]) };
    for (const [name, fn] of [['fetch', stack.fetch.function], ['parse', stack.parse.function]] as const) {
      const vars = lambdaEnvironment(stack, synthesized.template, fn);
      env[name] = Object.fromEntries(
        Object.entries(vars).map(([k, v]) => {
          const value = local[k] ?? v;
          assert.equal(typeof value, 'string', `${name}: ${k} is a deploy-time value the test does not replace`);
          return [k, value as string];
        }),
      );
      Object.assign(env[name], {
        AWS_REGION: 'eu-central-1',
        // s3rver accepts only its own key pair; the Secrets Manager stand-in takes any signed request.
        AWS_ACCESS_KEY_ID: LOCAL_LAKE_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: LOCAL_LAKE_CREDENTIALS.secretAccessKey,
        AWS_ENDPOINT_URL_S3: lake.endpoint,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
      });
    }
  });

  after(async () => {
    await secrets?.close();
    await sim?.close();
    await lake?.close();
    rmSync(ROOT, { recursive: true, force: true });
  });

  it('are built outside the repository, where no node_modules can be found', () => {
    for (let dir = resolve(ROOT); ; dir = dirname(dir)) {
      assert.ok(!existsSync(join(dir, 'node_modules')), `${dir}/node_modules would let a bundle resolve what it should contain`);
      if (dirname(dir) === dir) break;
    }
  });

  it('contain no dev dependency (package.json devDependencies, or dev-only in the lockfile)', () => {
    const pkg = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const lock = JSON.parse(readFileSync(projectPath('package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    for (const [name, bundle] of Object.entries(built)) {
      for (const [file, { metafile }] of Object.entries(bundle.outputs)) {
        const packages = new Map<string, string>();
        for (const input of Object.keys(metafile.inputs)) {
          const p = packageOf(input);
          if (p) packages.set(p.lockKey, p.name);
        }
        assert.ok(packages.size > 0, `${name}/${file}: the metafile lists packages`);
        for (const [lockKey, pkgName] of packages) {
          assert.ok(!(pkgName in pkg.devDependencies), `${name}/${file} bundles the devDependency ${pkgName}`);
          const entry = lock.packages[lockKey];
          assert.ok(entry, `${name}/${file}: ${lockKey} is not in package-lock.json`);
          assert.notEqual(entry.dev, true, `${name}/${file} bundles ${lockKey}, which only devDependencies need`);
        }
      }
    }
  });

  it('contain nothing of the IAM evaluator the tests use (@cloud-copilot/*: iam-simulate is AGPL-3.0, for the tests only)', () => {
    // Named on its own, beside the devDependency test: a license, not only a size, is at stake if it ever ships.
    for (const [name, bundle] of Object.entries(built)) {
      for (const [file, { metafile }] of Object.entries(bundle.outputs)) {
        // By module, not by text: a bundle carrying package.json (build info) names every devDependency.
        const bundled = Object.keys(metafile.inputs).filter((input) => input.includes('@cloud-copilot/') || input.includes('test/iam/'));
        assert.deepEqual(bundled, [], `${name}/${file} bundles the tests' IAM evaluator`);
      }
    }
  });

  it("contain none of the synthesis' own dependencies: the CDK, nor the saved-query parser (lib/saved-queries/saved-query-grammar.ts)", () => {
    // Dependencies, not devDependencies, since `cdk synth` needs them: the test above would let them in.
    const synthOnly = ['aws-cdk-lib', 'constructs', 'dt-sql-parser', 'antlr4ng', 'antlr4-c3'];
    for (const [name, bundle] of Object.entries(built)) {
      for (const [file, { metafile }] of Object.entries(bundle.outputs)) {
        const bundled = new Set(Object.keys(metafile.inputs).map((input) => packageOf(input)?.name));
        assert.ok(bundled.size > 1, `${name}/${file}: the metafile lists packages`);
        for (const pkg of synthOnly) assert.ok(!bundled.has(pkg), `${name}/${file} bundles ${pkg}, which only the synthesis needs`);
      }
    }
  });

  it("parse: does not carry the fetch function's streaming upload (@aws-sdk/lib-storage), which the fetch bundle does", () => {
    // The parse bundle sits near its size target (docs/benchmarks.md): a shared module that imports the upload
    // library pulls it into both bundles, whether the parse function calls it or not.
    const packagesOf = (bundle: BuiltBundle) => new Set(Object.keys(bundle.outputs['index.mjs']!.metafile.inputs).map((input) => packageOf(input)?.name));
    assert.ok(packagesOf(built.fetch).has('@aws-sdk/lib-storage'), 'the fetch bundle streams raw reports up with lib-storage');
    assert.ok(!packagesOf(built.parse).has('@aws-sdk/lib-storage'), 'the parse bundle carries lib-storage: see functions/aws/upload-stream.ts');
  });

  it('import nothing but Node built-ins and the files shipped beside them', () => {
    for (const [name, bundle] of Object.entries(built)) {
      for (const [file, { metafile }] of Object.entries(bundle.outputs)) {
        const imports = Object.values(metafile.outputs).flatMap((o: Metafile['outputs'][string]) => o.imports.filter((i) => i.external));
        for (const { path } of imports) {
          assert.ok(isBuiltin(path) || existsSync(join(bundle.dir, path)), `${name}/${file} imports "${path}", which Lambda would not find`);
        }
      }
    }
    assert.ok(existsSync(join(built.parse.dir, 'tables', 'cp936.json')), "iconv-lite's lazily loaded tables sit beside the bundle");
  });

  it('are the bytes the stack deploys: NodejsFunction builds the same files', () => {
    const { app, stack } = synthesized!;
    for (const [name, fn] of [['fetch', stack.fetch.function], ['parse', stack.parse.function], ['freshness', stack.freshness.function]] as const) {
      const asset = fn.function.node.findChild('Code') as s3assets.Asset;
      const deployed = join(app.outdir, asset.assetPath);
      const files = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => !f.endsWith('.map')).sort();
      assert.deepEqual(files(deployed), files(built[name].dir), `${name}: the same files`);
      for (const f of files(deployed).filter((f) => f.endsWith('.mjs'))) {
        assert.ok(readFileSync(join(deployed, f)).equals(readFileSync(join(built[name].dir, f))), `${name}: ${f} is byte-identical`);
      }
    }
    assert.ok(existsSync(join(built.parse.dir, 'parquet-worker.mjs')), 'the Parquet worker is beside the parse handler');
  });

  it('carry the catalog as a file beside index.mjs, not compiled into it (a define travels on the command line: E2BIG)', () => {
    const description = readReportSources().map((s) => ('raw' in s ? (s.raw as { description?: string }).description : undefined)).find(Boolean);
    assert.ok(description, 'a fixture report has a description to look for');
    for (const name of Object.keys(built) as BundleName[]) {
      assert.deepEqual(JSON.parse(readFileSync(join(built[name].dir, BUNDLED_CATALOG_FILE), 'utf8')), JSON.parse(JSON.stringify(readReportSources())), name);
      assert.ok(!readFileSync(join(built[name].dir, 'index.mjs'), 'utf8').includes(description), `${name}: index.mjs holds no definition`);
    }
  });

  it('fetch: the handler stores the scheduled windows in the raw bucket', async () => {
    const event = JSON.parse(readFileSync(projectPath('test/fixtures/events/scheduler-invocation.json'), 'utf8')) as unknown;
    const run = await invokeBundle(built.fetch.dir, env.fetch, event, 'req-bundle-fetch');
    assert.equal(failure(run), undefined);
    const result = run.result as { windows: Array<{ key: string; bytes: number }> };
    const days = ['2026-11-20', '2026-11-19', '2026-11-18'];
    assert.deepEqual(result.windows.map((w) => w.key), days.map((d) => `raw/transactions/connection=default/dt=${d}/${d}T00-00-00.csv`));

    const listed = await lake.client.send(new ListObjectsV2Command({ Bucket: buckets.raw, Prefix: 'raw/' }));
    const stored = new Map((listed.Contents ?? []).map((o) => [o.Key!, o.Size]));
    for (const w of result.windows) assert.equal(stored.get(w.key), w.bytes, `${w.key} landed whole`);
    assert.deepEqual(sim.requests.map((r) => [r.outcome, r.login]), days.map(() => ['report', sim.credentials.hmac.login]));

    // The credentials came from "Secrets Manager", asked once (then cached), with a SigV4-signed request.
    assert.deepEqual(secrets.calls.map((c) => [c.target, c.secretId]), [['secretsmanager.GetSecretValue', SECRET_NAME]]);
    assert.match(secrets.calls[0]!.authorization, /^AWS4-HMAC-SHA256 Credential=S3RVER\//);
    const outcomes = metricPoints(run.lines, 'FetchOutcome');
    // Successes per environment: a healthy report keeps no outcome series of its own (functions/aws/metrics.ts).
    assert.deepEqual(outcomes.map((p) => [p.value, p.dims.outcome, p.dims.report, p.dims.environment]), days.map(() => [1, 'Success', undefined, 'test']));
    assert.ok(!`${JSON.stringify(run.lines)}${run.stderr}`.includes(DEFAULT_HMAC_CONTROL_KEY), 'the control key never reaches the logs');
  });

  it('parse: the fetched CSV becomes Parquet at the table key, encoded on the worker thread', async () => {
    const event = JSON.parse(readFileSync(projectPath('test/fixtures/events/sqs-s3-object-created.json'), 'utf8')) as unknown;
    assert.equal(env.parse.PARQUET_ENCODER, 'worker', 'the stack asks for the worker at this memory size');
    const run = await invokeBundle(built.parse.dir, env.parse, event, 'req-bundle-parse');
    assert.equal(failure(run), undefined);
    assert.deepEqual(run.result, { batchItemFailures: [] });

    const get = async (key: string) => {
      const o = await lake.client.send(new GetObjectCommand({ Bucket: buckets.curated, Key: key }));
      return Buffer.from(await o.Body!.transformToByteArray());
    };
    const manifest = JSON.parse((await get('manifests/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json')).toString()) as Cfn;
    assert.equal(manifest.outcome, 'loaded');
    assert.equal(manifest.conversion.encoder, 'worker', 'encoder-thread.ts found parquet-worker.mjs beside the bundle');
    assert.ok(manifest.rows.written > 0);
    assert.equal(manifest.rows.read, manifest.rows.written + manifest.rows.rejected);

    const parquet = await get('tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet');
    const file = parquet.buffer.slice(parquet.byteOffset, parquet.byteOffset + parquet.byteLength) as ArrayBuffer;
    const meta = parquetMetadata(file);
    assert.equal(Number(meta.num_rows), manifest.rows.written);
    assert.deepEqual(meta.schema.slice(1).map((e) => e.name), glueColumns(report.columns).map((c) => c.name), 'the Glue columns, in order');
    const rows = await parquetReadObjects({ file });
    assert.equal(rows.length, manifest.rows.written);

    assert.deepEqual(metricPoints(run.lines, 'RowsWritten').map((p) => p.value), [manifest.rows.written]);
    assert.deepEqual(metricPoints(run.lines, 'LoadsCompleted').map((p) => [p.value, p.dims.report, p.dims.environment, p.dims.service]), [
      [1, undefined, 'test', 'paynet-reports'],
    ]);
  });

  it('parse: a PDF counts as a completed load without rows; a malformed message fails alone', async () => {
    await lake.client.send(
      new PutObjectCommand({ Bucket: buckets.raw, Key: 'raw/transactions/connection=default/dt=2026-11-19/2026-11-19T00-00-00.pdf', Body: '%PDF-1.4\n%%EOF\n', ContentType: 'application/pdf' }),
    );
    const event = JSON.parse(readFileSync(projectPath('test/fixtures/events/sqs-batch-one-bad.json'), 'utf8')) as unknown;
    const run = await invokeBundle(built.parse.dir, env.parse, event, 'req-bundle-batch');
    assert.equal(failure(run), undefined);
    assert.deepEqual(run.result, { batchItemFailures: [{ itemIdentifier: '0a6e3f0c-1d2b-4b8e-8f2a-6c1e9d7b5a02' }] });
    assert.deepEqual(metricPoints(run.lines, 'LoadsCompleted').map((p) => p.value), [1], 'the PDF, once');
    assert.deepEqual(metricPoints(run.lines, 'RowsWritten'), [], 'a PDF writes no rows');
  });
});
