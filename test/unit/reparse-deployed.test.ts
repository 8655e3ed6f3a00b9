import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { beforeEach, describe, it } from 'node:test';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetObjectCommand, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { loadEnvironments } from '../../lib/environment/environments.js';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { definitionRecord } from '../../functions/core/definitions/fingerprint.js';
import { decodeS3EventKey } from '../../functions/core/lake/s3-keys.js';
import { reparseConcurrencyProblem, runReparseCommand, type DeployedClients } from '../../local/cli/reparse.js';
import { REPARSE_CONFIGURATION_ID } from '../../local/pipeline/reparse-window.js';

/**
 * `reports reparse --environment NAME` against mocked AWS APIs (Lambda, S3, CloudFormation have no local stand-in
 * here): the current raw versions listed once, the parse function invoked per window with the event its queue
 * delivers, the result read back from the window's manifest.
 */

const mocks = { cloudFormation: mockClient(CloudFormationClient), lambda: mockClient(LambdaClient), s3: mockClient(S3Client) };
const clients = (): DeployedClients => ({
  cloudFormation: new CloudFormationClient({ region: 'eu-central-1' }),
  lambda: new LambdaClient({ region: 'eu-central-1' }),
  s3: new S3Client({ region: 'eu-central-1' }),
});
const environment = loadEnvironments()[0]!.name;
const outputs = {
  ParseFunctionName: 'paynet-reports-test-parse',
  RawBucketName: 'paynet-reports-test-raw-123456789012-eu-central-1',
  CuratedBucketName: 'paynet-reports-test-curated-123456789012-eu-central-1',
};
const report = loadCatalog().get('transactions');
const raw = (date: string) => `raw/transactions/connection=default/dt=${date}/${date}T00-00-00.csv`;
const manifest = (date: string) => `manifests/transactions/connection=default/dt=${date}/${date}T00-00-00.json`;
const body = (value: unknown) => Readable.from([Buffer.from(JSON.stringify(value))]) as never;

/** What the parse function writes, for a window whose invocation had this request id. */
const manifestOf = (date: string, requestId: string, versionId: string, extra: Record<string, unknown>) => ({
  manifestVersion: 1,
  reportId: 'transactions',
  window: { start: `${date}T00:00:00`, end: `${date.slice(0, 8)}${String(Number(date.slice(8)) + 1).padStart(2, '0')}T00:00:00`, timeZone: 'Europe/Moscow' },
  source: { bucket: outputs.RawBucketName, key: raw(date), versionId },
  definition: definitionRecord(report.columns),
  loadRunId: requestId,
  startedAt: new Date().toISOString(),
  finishedAt: new Date().toISOString(),
  durationMs: 12,
  ...extra,
});

function deployed() {
  mocks.cloudFormation.on(DescribeStacksCommand, { StackName: `PaynetReports-${environment}` }).resolves({
    Stacks: [{ StackName: `PaynetReports-${environment}`, StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })) }],
  });
  // Two pages; 2026-11-22's latest version is a delete marker: it has no raw file.
  mocks.s3.on(ListObjectVersionsCommand, { Bucket: outputs.RawBucketName }).callsFake((i: { KeyMarker?: string }) =>
    i.KeyMarker === 'page-2'
      ? {
          Versions: [{ Key: raw('2026-11-23'), VersionId: 'v9', IsLatest: true, Size: 5210, ETag: '"e23"' }],
          DeleteMarkers: [{ Key: raw('2026-11-22'), VersionId: 'd1', IsLatest: true }],
          IsTruncated: false,
        }
      : {
          Versions: [
            { Key: raw('2026-11-20'), VersionId: 'v2', IsLatest: true, Size: 5210, ETag: '"e20"' },
            { Key: raw('2026-11-20'), VersionId: 'v1', IsLatest: false, Size: 5100, ETag: '"e20-old"' },
            { Key: raw('2026-11-21'), VersionId: 'v5', IsLatest: true, Size: 5000, ETag: '"e21"' },
            { Key: raw('2026-11-22'), VersionId: 'v3', IsLatest: false, Size: 5000 },
          ],
          IsTruncated: true,
          NextKeyMarker: 'page-2',
          NextVersionIdMarker: 'x',
        },
  );
  mocks.lambda.on(InvokeCommand).callsFake((i: { Payload: Uint8Array }) => {
    const event = JSON.parse(Buffer.from(i.Payload).toString('utf8')) as SQSEvent;
    const key = decodeS3EventKey((JSON.parse(event.Records[0]!.body) as { Records: Array<{ s3: { object: { key: string } } }> }).Records[0]!.s3.object.key);
    const date = /dt=([\d-]+)/.exec(key)![1]!;
    if (date === '2026-11-21') {
      return {
        StatusCode: 200,
        FunctionError: 'Unhandled',
        Payload: Buffer.from(JSON.stringify({ errorType: 'FullBatchFailureError', errorMessage: 'All records failed processing. 1 individual errors logged separately below.' })),
        $metadata: { requestId: `req-${date}` },
      };
    }
    return { StatusCode: 200, Payload: Buffer.from(JSON.stringify({ batchItemFailures: [] })), $metadata: { requestId: `req-${date}` } };
  });
  mocks.s3.on(GetObjectCommand, { Bucket: outputs.CuratedBucketName, Key: manifest('2026-11-20') }).callsFake(() => ({
    Body: body(manifestOf('2026-11-20', 'req-2026-11-20', 'v2', { outcome: 'loaded', rows: { read: 250, written: 250, rejected: 0, emptyLines: 0 } })),
  }));
  mocks.s3.on(GetObjectCommand, { Bucket: outputs.CuratedBucketName, Key: manifest('2026-11-21') }).callsFake(() => ({
    Body: body(
      manifestOf('2026-11-21', 'req-2026-11-21', 'v5', {
        outcome: 'failed',
        error: { code: 'SchemaDrift', message: 'The header row of report "transactions" differs from its definition: missing "Merchant_OID"; extra "Order_Reference". …', retryable: false },
      }),
    ),
  }));
  mocks.s3
    .on(GetObjectCommand, { Bucket: outputs.CuratedBucketName, Key: manifest('2026-11-23') })
    .rejects(Object.assign(new Error('Access Denied'), { name: 'AccessDenied' }));
}

const run = async (from: string, to: string, extra: Record<string, unknown> = {}) => {
  const lines: string[] = [];
  const summary = await runReparseCommand({ report: 'transactions', from, to, environment, tty: false, concurrency: 1, ...extra }, (l) => lines.push(l), clients());
  return { summary, lines, text: lines.join('\n') };
};

describe('reports reparse --environment', () => {
  beforeEach(() => {
    for (const m of Object.values(mocks)) m.reset();
  });

  it('invokes the parse function once per window with a raw file, with the event its queue delivers, and reports each window', async () => {
    deployed();
    const { summary, text } = await run('2026-11-20', '2026-11-24');
    assert.deepEqual([summary.done, summary.failed.length, summary.skipped], [2, 1, 1], text);
    assert.match(text, new RegExp(`^Reparse of "transactions": 4 P1D window\\(s\\) 2026-11-20 \\.\\. 2026-11-23 \\(3 with a raw file\\), 1 at a time, by invoking ${outputs.ParseFunctionName}( in \\S+)? \\(environment ${environment}\\)`, 'm'));
    assert.match(text, /^ {2}2026-11-20 +done +\d+ ms {2}250 rows under definition [0-9a-f]{12}$/m);
    assert.match(text, /^ {2}2026-11-22 +skipped +\d+ ms {2}no raw file at raw\/transactions\/connection=default\/dt=2026-11-22\/2026-11-22T00-00-00\.csv: nothing to rebuild$/m);
    assert.match(text, /^ {2}2026-11-23 +done +\d+ ms {2}rebuilt; rows not shown: its manifest could not be read \(AccessDenied: Access Denied; needs s3:GetObject on manifests\/ and kms:Decrypt\)$/m);
    assert.match(text, /Failed windows .*\n {2}2026-11-21 {2}SchemaDrift: The header row of report "transactions" differs/, 'the typed error from the manifest, not Powertools\' batch error');
    assert.match(text, /: 2 rebuilt, 1 failed, 1 without a raw file; 250 rows written, 0 rejected\. No gateway request was made\.$/m);

    // One listing of the raw versions, from the first window's date on, paged.
    const listed = mocks.s3.commandCalls(ListObjectVersionsCommand).map((c) => c.args[0].input);
    assert.deepEqual(listed.map((l) => [l.Bucket, l.Prefix, l.KeyMarker]), [
      [outputs.RawBucketName, 'raw/transactions/connection=default/', 'raw/transactions/connection=default/dt=2026-11-20'],
      [outputs.RawBucketName, 'raw/transactions/connection=default/', 'page-2'],
    ]);

    const invocations = mocks.lambda.commandCalls(InvokeCommand).map((c) => c.args[0].input);
    assert.equal(invocations.length, 3, 'no invocation for the window without a raw file');
    for (const i of invocations) assert.deepEqual([i.FunctionName, i.InvocationType], [outputs.ParseFunctionName, 'RequestResponse']);

    // The event: the shape of test/fixtures/events/sqs-s3-object-created.json (what functions/parse-report/sqs-batch.ts reads),
    // naming the raw key as S3 encodes it and its current version.
    const event = JSON.parse(Buffer.from(invocations[0]!.Payload as Uint8Array).toString('utf8')) as SQSEvent;
    const fixture = JSON.parse(readFileSync(new URL('../fixtures/events/sqs-s3-object-created.json', import.meta.url), 'utf8')) as SQSEvent;
    assert.deepEqual(Object.keys(event.Records[0]!).sort(), Object.keys(fixture.Records[0]!).sort());
    assert.equal(event.Records.length, 1);
    type Notification = { Records: Array<{ eventSource: string; eventName: string; s3: unknown }> };
    const record = (JSON.parse(event.Records[0]!.body) as Notification).Records;
    const sample = (JSON.parse(fixture.Records[0]!.body) as Notification).Records;
    assert.deepEqual(Object.keys(record[0]!).sort(), Object.keys(sample[0]!).sort());
    assert.deepEqual(record.length, 1);
    const s3 = record[0]!.s3 as { configurationId: string; bucket: { name: string }; object: { key: string; versionId: string; size: number } };
    assert.equal(record[0]!.eventSource, 'aws:s3');
    assert.match(record[0]!.eventName, /^ObjectCreated:/);
    assert.deepEqual([s3.configurationId, s3.bucket.name, s3.object.key, s3.object.versionId, s3.object.size], [
      REPARSE_CONFIGURATION_ID,
      outputs.RawBucketName,
      'raw/transactions/connection%3Ddefault/dt%3D2026-11-20/2026-11-20T00-00-00.csv',
      'v2',
      5210,
    ]);
  });

  it('a manifest that is not this invocation\'s (the version was superseded meanwhile) is not taken for its result', async () => {
    deployed();
    mocks.s3.on(GetObjectCommand, { Bucket: outputs.CuratedBucketName, Key: manifest('2026-11-20') }).callsFake(() => ({
      Body: body({ ...manifestOf('2026-11-20', 'req-other', 'v3', { outcome: 'loaded', rows: { read: 9, written: 9, rejected: 0, emptyLines: 0 } }) }),
    }));
    const { summary, text } = await run('2026-11-20', '2026-11-21');
    assert.equal(summary.done, 1);
    assert.match(text, /2026-11-20 +done +\d+ ms {2}not rebuilt: the raw file changed or went since it was listed/);
    assert.match(text, /0 rows written/);
  });

  it("keeps within the slots a parse reservation leaves beside the function's queue", () => {
    assert.equal(reparseConcurrencyProblem(null, 8), undefined, 'no reservation: the unreserved pool, as the queue');
    assert.equal(reparseConcurrencyProblem(10, 2), undefined);
    assert.equal(
      reparseConcurrencyProblem(10, 3),
      "--concurrency 3 is more than the 2 invocations the parse function's reservation (10) keeps beside its queue: give --concurrency 2 or less, so that the queue's files are not throttled into its dead-letter queue.",
    );
  });

  it('refuses what cannot mean anything, and says to deploy a stack without the outputs it needs', async () => {
    await assert.rejects(run('2026-11-20', '2026-11-21', { lake: './x' }), /--lake is the local lake and --environment a deployment: give one/);
    await assert.rejects(run('2026-11-20', '2026-11-21', { environment: 'nowhere' }), /No environment "nowhere" in config\/environments\//);
    mocks.cloudFormation.on(DescribeStacksCommand).resolves({ Stacks: [{ StackName: 'x', StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: [] }] });
    await assert.rejects(run('2026-11-20', '2026-11-21'), /has no output ParseFunctionName, RawBucketName, CuratedBucketName: deploy this version/);
    assert.equal(mocks.lambda.commandCalls(InvokeCommand).length, 0);
  });

  it('stops when the function cannot be invoked at all: every window would fail the same way', async () => {
    deployed();
    mocks.lambda.on(InvokeCommand).rejects(Object.assign(new Error('User is not authorized to perform: lambda:InvokeFunction'), { name: 'AccessDeniedException' }));
    const { summary, text } = await run('2026-11-20', '2026-11-22');
    assert.deepEqual([summary.failed.length, summary.notTried], [1, 1]);
    assert.match(text, /Stopped after 2026-11-20 failed with AccessDeniedException/);
  });
});
