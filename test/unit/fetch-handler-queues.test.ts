import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { encodeConnectionsVariable } from '../../functions/core/connections/connection.js';
import { REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';
import { AuthenticationRefused, ConfigurationError } from '../../functions/core/errors.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';
import { bucketNames } from '../../functions/core/naming.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { readObject } from '../helpers/lake-inspect.js';
import { testKey } from '../helpers/test-keys.js';
import { clearGatewaySecretCache } from '../../functions/aws/secrets.js';
import { handler } from '../../functions/fetch-report/handler.js';
import { LOCAL_LAKE_CREDENTIALS, startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { REPORT_HEADER, generateTransactions, startSimulator, writeReportCsv, type Simulator } from '../../local/simulator/index.js';
import { captureJsonLines, eventFixture, lambdaContext, metricPoints } from '../helpers/handler-harness.js';

/**
 * The fetch function as its connection queues call it: SQS batches whose bodies are the Scheduler's runs. Two
 * connections, two simulators (two providers) with logins of their own, one HMAC-SHA1 and one RSA-SHA256; the local lake
 * as S3; Secrets Manager mocked. The catalog is the fixture's "transactions" (connection "default") and "payouts", the
 * same report over connection "provider-b".
 */

const ROWS = 20;
const SECRET_OF = { default: 'paynet-reports/test/default', 'provider-b': 'paynet-reports/test/provider-b' } as const;
type ConnectionName = keyof typeof SECRET_OF;
const buckets = bucketNames('test');
const day = (date: string) => windowAt(parseLocalDateTime(date), parseWindowSize('P1D'));
const keysOf = (report: string, dates: string[], connection = report === 'payouts' ? 'provider-b' : 'default') =>
  dates.map((d) => `raw/${report}/connection=${connection}/dt=${d}/${d}T00-00-00.csv`);
/** The windows of the 2026-11-21T00:15Z firing (03:15 in Moscow): the 20th and, with lookback 2, the 19th and 18th. */
const FIRING_DAYS = ['2026-11-18', '2026-11-19', '2026-11-20'];

/** The fixture message with another body, as the queue of `connection` would deliver it. */
function queued(body: object, connection: ConnectionName = 'default'): SQSEvent {
  const record = eventFixture<SQSEvent>('sqs-fetch-run.json').Records[0]!;
  return { Records: [{ ...record, body: JSON.stringify(body), eventSourceARN: record.eventSourceARN.replace('fetch-default', `fetch-${connection}`) }] };
}

/** The two reports' definitions in a folder of their own: the fixture's, and a copy of it over "provider-b". */
async function twoConnectionCatalog(dir: string): Promise<string> {
  const reports = join(dir, 'reports');
  await mkdir(reports);
  const text = await readFile(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8');
  const { $schema: _, ...definition } = JSON.parse(text) as Record<string, unknown>;
  await writeFile(join(reports, 'transactions.json'), text);
  await writeFile(join(reports, 'payouts.json'), JSON.stringify({ ...definition, id: 'payouts', connection: 'provider-b' }));
  return reports;
}

describe('fetch-report handler: runs from the connection queues', () => {
  const sm = mockClient(SecretsManagerClient);
  const saved = { ...process.env };
  let dir: string;
  let lake: LocalLake;
  /** Provider A (connection "default", HMAC-SHA1) and provider B (connection "provider-b", RSA-SHA256). */
  let simA: Simulator;
  let simB: Simulator;
  let secretA: GatewaySecret;
  let secretB: GatewaySecret;

  /** Each connection's secret as Secrets Manager answers it: one value, or values in turn (the last for ever). */
  const useSecrets = (secrets: Partial<Record<ConnectionName, GatewaySecret | GatewaySecret[]>>) => {
    clearGatewaySecretCache();
    sm.reset();
    for (const [connection, value] of Object.entries(secrets)) {
      const values = Array.isArray(value) ? value : [value!];
      let stub = sm.on(GetSecretValueCommand, { SecretId: SECRET_OF[connection as ConnectionName] });
      for (const v of values.slice(0, -1)) stub = stub.resolvesOnce({ SecretString: JSON.stringify(v) });
      stub.resolves({ SecretString: JSON.stringify(values.at(-1)) });
    }
  };
  const secretReads = (connection: ConnectionName) =>
    sm.commandCalls(GetSecretValueCommand).filter((c) => c.args[0].input.SecretId === SECRET_OF[connection]).length;
  const rawKeys = async () =>
    ((await lake.client.send(new ListObjectsV2Command({ Bucket: buckets.raw, Prefix: 'raw/' }))).Contents ?? []).map((o) => o.Key!).sort();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fetch-queues-'));
    process.env[REPORTS_DIR_VARIABLE] = await twoConnectionCatalog(dir);
    lake = await startLocalLake({ dir: join(dir, 'lake'), buckets });
    simA = await startSimulator({ rowsPerDay: ROWS, hmac: { login: 'provider-a-merchant', controlKey: `ck-${randomBytes(18).toString('base64url')}` } });
    simB = await startSimulator({ rowsPerDay: ROWS, rsa: { login: 'provider-b-merchant' } });
    secretA = simA.credentials.hmac;
    secretB = simB.credentials.rsa;
    Object.assign(process.env, {
      CONNECTIONS: encodeConnectionsVariable([
        { name: 'default', endpointUrl: simA.url, secretName: SECRET_OF.default },
        { name: 'provider-b', endpointUrl: simB.url, secretName: SECRET_OF['provider-b'] },
      ]),
      RAW_BUCKET: buckets.raw,
      PIPELINE_ENVIRONMENT: 'test',
      PROJECTION_START: '2020-01-01',
      AWS_REGION: 'eu-central-1',
      AWS_ENDPOINT_URL_S3: lake.endpoint,
      AWS_ACCESS_KEY_ID: LOCAL_LAKE_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_LAKE_CREDENTIALS.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    });
  });
  after(async () => {
    process.env = saved;
    sm.restore();
    await simA.close();
    await simB.close();
    await lake.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    useSecrets({ default: secretA, 'provider-b': secretB });
    await rm(join(dir, 'lake', buckets.raw, 'raw'), { recursive: true, force: true });
  });

  it("each report's run goes to its connection's gateway, signed with that connection's login", async () => {
    const [a0, b0] = [simA.requests.length, simB.requests.length];
    const a = await captureJsonLines(() => handler(eventFixture<SQSEvent>('sqs-fetch-run.json'), lambdaContext('req-queue-a')));
    const b = await captureJsonLines(() => handler(queued({ reportId: 'payouts', scheduledTime: '2026-11-21T00:15:00Z' }, 'provider-b'), lambdaContext('req-queue-b')));
    assert.equal(a.error, undefined, String(a.error));
    assert.equal(b.error, undefined, String(b.error));
    assert.deepEqual(a.result, { batchItemFailures: [] });
    assert.deepEqual(b.result, { batchItemFailures: [] });
    assert.deepEqual(await rawKeys(), [...keysOf('payouts', FIRING_DAYS), ...keysOf('transactions', FIRING_DAYS)]);

    // Each gateway saw only its own report's three requests, under its own login and method.
    const seen = (sim: Simulator, from: number) => sim.requests.slice(from).map((r) => [r.login, r.signatureMethod, r.outcome]);
    assert.deepEqual(seen(simA, a0), Array(3).fill(['provider-a-merchant', 'HMAC-SHA1', 'report']));
    assert.deepEqual(seen(simB, b0), Array(3).fill(['provider-b-merchant', 'RSA-SHA256', 'report']));
    assert.deepEqual([secretReads('default'), secretReads('provider-b')], [1, 1]);
    // What provider B made for its login is what landed under payouts.
    const stored = await readObject(lake.client, buckets.raw, keysOf('payouts', ['2026-11-20'])[0]!);
    assert.ok(stored.equals(writeReportCsv(REPORT_HEADER, generateTransactions('provider-b-merchant', day('2026-11-20'), ROWS), { delimiter: ',', encoding: 'UTF-8' })));

    // Every run line names its connection and the message it came in.
    const runLines = (run: typeof a) => run.lines.filter((l) => l.message === 'Window stored');
    assert.deepEqual(new Set(runLines(a).map((l) => `${l.connection} ${l.messageId}`)), new Set(['default 3c1d6a52-9e0b-4f7a-8d21-6b5e4c3a2f01']));
    assert.deepEqual(new Set(runLines(b).map((l) => l.connection)), new Set(['provider-b']));
    assert.equal(runLines(b)[0]!.function_request_id, 'req-queue-b', 'the Lambda context is on the lines');
    assert.ok(!`${a.text}${b.text}`.includes((secretA as { controlKey: string }).controlKey));
    assert.ok(!b.text.includes('PRIVATE KEY'));
  });

  it('the secret changes between the refused attempt and the retry: the window loads, no alarm metric is published', async () => {
    // The provider already holds the new key; this container read the old one and caches it.
    const old: GatewaySecret = { login: 'provider-a-merchant', controlKey: `old-${randomBytes(18).toString('base64url')}` };
    useSecrets({ default: [old, secretA] });
    const from = simA.requests.length;
    const run = await captureJsonLines(() => handler(eventFixture<SQSEvent>('sqs-fetch-run.json'), lambdaContext('req-rotated')));
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(run.result, { batchItemFailures: [] });
    assert.deepEqual(await rawKeys(), keysOf('transactions', FIRING_DAYS));
    // The old key was refused once; the same window was then fetched with the new one, and the others too.
    assert.deepEqual(simA.requests.slice(from).map((r) => [r.outcome, r.detail ?? '']), [['refused', 'bad-signature'], ...Array(3).fill(['report', ''])]);
    assert.equal(secretReads('default'), 2, 'read once through the cache, once past it');

    const outcomes = metricPoints(run.lines, 'FetchOutcome').map((p) => p.dims.outcome);
    assert.deepEqual(outcomes, ['Success', 'Success', 'Success'], 'no refusal written, per report or per environment');
    const warning = run.lines.find((l) => l.level === 'WARN' && /secret has changed since \(rotated\): retrying this window with the new value/.test(String(l.message)));
    assert.ok(warning, 'a warning says the secret had changed');
    assert.equal(warning.window, '2026-11-20T00:00:00/2026-11-21T00:00:00');
    assert.equal(warning.connection, 'default');
    assert.ok(!run.lines.some((l) => l.level === 'ERROR'), 'no error line for a refusal that was recovered');
    for (const key of [old.controlKey, (secretA as { controlKey: string }).controlKey]) assert.ok(!run.text.includes(key), 'neither key is logged');

    // The fresh read refreshed the cache: the next run signs with the new value without asking again.
    const next = await captureJsonLines(() => handler(eventFixture<SQSEvent>('sqs-fetch-run.json'), lambdaContext('req-rotated-next')));
    assert.equal(next.error, undefined, String(next.error));
    assert.equal(secretReads('default'), 2);
  });

  it('a changed secret that is refused too: two requests, one refusal counted, the run stops', async () => {
    const wrong = (tag: string) => ({ login: 'provider-a-merchant', controlKey: `${tag}-${randomBytes(18).toString('base64url')}` });
    const [first, second] = [wrong('first'), wrong('second')];
    useSecrets({ default: [first, second] });
    const from = simA.requests.length;
    const run = await captureJsonLines(() => handler(eventFixture<SQSEvent>('sqs-fetch-run.json'), lambdaContext('req-refused-twice')));
    assert.ok(run.error instanceof AuthenticationRefused, String(run.error));
    assert.match(run.error.message, /^The gateway of connection "default" refused to authorise login "provider-a-merchant" signing with HMAC-SHA1: .*: "transactions"\. /);
    assert.deepEqual(simA.requests.slice(from).map((r) => r.outcome), ['refused', 'refused'], 'the new value was tried once, and no other window');
    assert.equal(secretReads('default'), 2, 'the secret is re-read once per run, not after the second refusal');
    assert.deepEqual(metricPoints(run.lines, 'FetchOutcome', 'report').map((p) => p.dims.outcome), ['AuthenticationRefused']);
    assert.deepEqual(await rawKeys(), []);
    for (const key of [first.controlKey, second.controlKey]) assert.ok(!run.text.includes(key) && !run.error.message.includes(key));
  });

  it('an unchanged secret: refused once, not retried; the error names connection, login, method and its reports, never the key', async () => {
    // A key the simulator has never seen: its test accounts' keys are made afresh each start.
    const stranger = testKey('rsa-2048.pkcs8');
    const wrong: GatewaySecret = { login: 'provider-b-merchant', signatureMethod: 'RSA-SHA256', privateKeyPem: stranger };
    useSecrets({ default: secretA, 'provider-b': wrong });
    const from = simB.requests.length;
    const run = await captureJsonLines(() => handler(queued({ reportId: 'payouts', scheduledTime: '2026-11-21T00:15:00Z' }, 'provider-b'), lambdaContext('req-refused')));

    // The invocation fails with the run's own typed error (the message goes to the dead-letter queue).
    assert.ok(run.error instanceof AuthenticationRefused, String(run.error));
    assert.match(run.error.message, /^The gateway of connection "provider-b" refused to authorise login "provider-b-merchant" signing with RSA-SHA256: /);
    assert.match(run.error.message, /Every report over this connection stops until it is fixed: "payouts"\. /);
    assert.match(run.error.message, /Check that the provider holds your public key \(with that provider\)/);
    assert.match(run.error.message, /put the new value into the connection's secret, Secrets Manager secret "paynet-reports\/test\/provider-b"\. Its secret was re-read after the refusal: unchanged, so not retried\.$/);
    assert.ok(!run.error.message.includes('"transactions"'), 'a report over another connection is not stopped');

    assert.deepEqual(simB.requests.slice(from).map((r) => [r.outcome, r.detail]), [['refused', 'bad-signature']]);
    assert.equal(secretReads('provider-b'), 2, 're-read past the cache once, found unchanged');
    assert.deepEqual(metricPoints(run.lines, 'FetchOutcome', 'report').map((p) => [p.dims.report, p.dims.outcome]), [['payouts', 'AuthenticationRefused']]);
    assert.deepEqual(await rawKeys(), []);
    const failed = run.lines.find((l) => l.message === 'Fetch run failed' && l.messageId);
    assert.equal(failed?.messageId, '3c1d6a52-9e0b-4f7a-8d21-6b5e4c3a2f01');
    const body = stranger.split('\n')[1]!;
    assert.ok(!run.text.includes('PRIVATE KEY') && !run.text.includes(body), 'the key is never logged');
  });

  it('a batch with a bad record: the runs before it are stored, it fails, and the rest fail untried to keep the order', async () => {
    const event = eventFixture<SQSEvent>('sqs-fetch-batch-one-bad.json');
    const [good, bad, later] = event.Records.map((r) => r.messageId);
    const run = await captureJsonLines(() => handler(event, lambdaContext('req-batch')));
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(run.result, { batchItemFailures: [{ itemIdentifier: bad }, { itemIdentifier: later }] });
    // Only the first message's windows: the third (the 21st to the 23rd) was never run.
    assert.deepEqual(await rawKeys(), keysOf('transactions', FIRING_DAYS));
    assert.ok(good);

    const failed = run.lines.find((l) => l.message === 'Fetch run failed');
    assert.equal(failed?.messageId, bad);
    assert.match(String((failed?.error as { message?: string })?.message), /^SQS message .*2f12: The fetch function's event is invalid \(scheduledTime: must be an ISO 8601 instant/);
    const untried = run.lines.find((l) => l.level === 'WARN' && Array.isArray(l.untried));
    assert.deepEqual(untried?.untried, [later]);
  });

  it('refuses the keep-alive as a message body: it is a direct invocation of the schedule, never a queued run', async () => {
    const run = await captureJsonLines(() => handler(queued({ keepAlive: true }), lambdaContext('req-queued-keep-alive')));
    assert.ok(run.error instanceof ConfigurationError, String(run.error));
    assert.match(run.error.message, /The fetch function's event is invalid \(reportId: .*Unrecognized key.*keepAlive/);
  });

  it('refuses Records that are not SQS messages, before any call', async () => {
    const run = await captureJsonLines(() => handler({ Records: [{ eventSource: 'aws:s3' }] }, lambdaContext('req-not-sqs')));
    assert.ok(run.error instanceof ConfigurationError, String(run.error));
    assert.match(run.error.message, /has "Records" but is not an SQS batch/);
  });
});
