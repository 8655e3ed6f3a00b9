import '../helpers/fixture-reports.js';
import { encodeConnectionsVariable } from '../../functions/core/connections/connection.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { GetObjectTaggingCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { bucketNames } from '../../functions/core/naming.js';
import { AuthenticationRefused, ConfigurationError, GatewayUnavailable } from '../../functions/core/errors.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { clearGatewaySecretCache } from '../../functions/aws/secrets.js';
import { openObjectStream } from '../../functions/aws/s3-streams.js';
import { handler } from '../../functions/fetch-report/handler.js';
import { logger } from '../../functions/aws/powertools.js';
import { WindowFetchFailures } from '../../functions/fetch-report/fetch-windows.js';
import { LOCAL_LAKE_CREDENTIALS, startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { DEFAULT_HMAC_CONTROL_KEY, REPORT_HEADER, generateTransactions, startSimulator, writeReportCsv, type Simulator } from '../../local/simulator/index.js';
import { captureJsonLines, eventFixture, lambdaContext, metricPoints } from '../helpers/handler-harness.js';

/**
 * The fetch function's handler as Lambda calls it: the exported `handler`, its environment, real event
 * shapes (test/fixtures/events), the simulator as the gateway, the local lake as S3 (through
 * AWS_ENDPOINT_URL_S3), and Secrets Manager mocked with aws-sdk-client-mock.
 */

const ROWS_PER_DAY = 40;
const SECRET_NAME = 'paynet-reports/test/gateway';
/** The stack's CONNECTIONS variable with the one connection, "default", at `url`. */
const gatewayAt = (url: string) => encodeConnectionsVariable([{ name: 'default', endpointUrl: url, secretName: SECRET_NAME }]);
const buckets = bucketNames('test');
const day = (date: string) => windowAt(parseLocalDateTime(date), parseWindowSize('P1D'));

describe('fetch-report handler', () => {
  const sm = mockClient(SecretsManagerClient);
  let dir: string;
  let lake: LocalLake;
  let sim: Simulator;
  const saved = { ...process.env };

  const useSecret = (secret: unknown) => {
    clearGatewaySecretCache();
    sm.reset();
    sm.on(GetSecretValueCommand, { SecretId: SECRET_NAME }).resolves({ SecretString: JSON.stringify(secret) });
  };
  const rawKeys = async () =>
    ((await lake.client.send(new ListObjectsV2Command({ Bucket: buckets.raw, Prefix: 'raw/' }))).Contents ?? []).map((o) => o.Key!).sort();
  const readRaw = async (key: string) => {
    const opened = await openObjectStream({ client: lake.client, bucket: buckets.raw, key });
    const chunks: Buffer[] = [];
    for await (const c of opened.body) chunks.push(c as Buffer);
    return { opened, bytes: Buffer.concat(chunks) };
  };
  const clearRaw = async () => {
    await rm(join(dir, buckets.raw, 'raw'), { recursive: true, force: true });
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fetch-handler-'));
    lake = await startLocalLake({ dir, buckets });
    sim = await startSimulator({ rowsPerDay: ROWS_PER_DAY });
    Object.assign(process.env, {
      CONNECTIONS: gatewayAt(sim.url),
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
    await sim.close();
    await lake.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    useSecret(sim.credentials.hmac);
    await clearRaw();
  });

  it('a Scheduler invocation fetches the last complete window in the report zone and its lookback, newest first', async () => {
    const run = await captureJsonLines(() => handler(eventFixture('scheduler-invocation.json'), lambdaContext('req-sched-1')));
    assert.equal(run.error, undefined, String(run.error));
    const result = run.result!;
    assert.equal(result.runId, 'req-sched-1');
    assert.equal(result.kind, 'scheduled');
    // 2026-11-21T00:15Z is 03:15 in Moscow: the last complete day is the 20th; lookback 2 adds the 19th and 18th.
    assert.deepEqual(
      result.windows.map((w) => w.key),
      ['2026-11-20', '2026-11-19', '2026-11-18'].map((d) => `raw/transactions/connection=default/dt=${d}/${d}T00-00-00.csv`),
    );
    assert.deepEqual(await rawKeys(), result.windows.map((w) => w.key).sort());

    // Each object is exactly the simulator's report for its window, with the metadata the parse side reads.
    for (const w of result.windows) {
      const { opened, bytes } = await readRaw(w.key);
      const expected = writeReportCsv(REPORT_HEADER, generateTransactions(sim.credentials.hmac.login, day(w.windowStart.slice(0, 10)), ROWS_PER_DAY), {
        delimiter: ',',
        encoding: 'UTF-8',
      });
      assert.ok(bytes.equals(expected), `${w.key} holds the report byte for byte`);
      assert.equal(w.sha256, createHash('sha256').update(bytes).digest('hex'));
      assert.equal(w.bytes, bytes.length);
      assert.equal(opened.contentType, 'text/csv; charset=UTF-8');
      assert.equal(opened.metadata['report-id'], 'transactions');
      assert.equal(opened.metadata['window-start'], w.windowStart);
      assert.equal(opened.metadata['window-end'], w.windowEnd);
      assert.equal(opened.metadata['time-zone'], 'Europe/Moscow');
      assert.equal(opened.metadata['run-id'], 'req-sched-1');
      assert.equal(opened.metadata['gateway-content-type'], 'text/csv; charset=UTF-8');
      // Known only after the last byte, the checksum is a tag (metadata would need a copy: a second version and event).
      const tags = await lake.client.send(new GetObjectTaggingCommand({ Bucket: buckets.raw, Key: w.key }));
      assert.deepEqual(tags.TagSet, [
        { Key: 'sha256', Value: w.sha256 },
        { Key: 'wire-bytes', Value: String(w.wireBytes) },
      ]);
      // The simulator sends the report uncompressed by default: what came on the wire is what is stored.
      assert.equal(opened.metadata['wire-coding'], 'identity');
      assert.equal(w.wireBytes, w.bytes);
      assert.equal(w.headerMatches, true);
    }

    // Logs: JSON lines with the run id and report on every line, the window on every window line, never the key.
    const logs = run.lines.filter((l) => typeof l.level === 'string');
    assert.ok(logs.length >= 5);
    for (const line of logs) {
      assert.equal(line.runId, 'req-sched-1', JSON.stringify(line));
      assert.equal(line.report, 'transactions');
    }
    const stored = logs.filter((l) => l.message === 'Window stored');
    assert.deepEqual(
      stored.map((l) => l.window),
      ['2026-11-20T00:00:00/2026-11-21T00:00:00', '2026-11-19T00:00:00/2026-11-20T00:00:00', '2026-11-18T00:00:00/2026-11-19T00:00:00'],
    );
    assert.equal(stored[0]!.function_request_id, 'req-sched-1', 'the Lambda context is on the lines');
    assert.ok(!run.text.includes(DEFAULT_HMAC_CONTROL_KEY), 'the control key never appears');
    assert.ok(!/oauth_signature="[^"[]/.test(run.text), 'no signature appears');

    // Metrics: one outcome, bytes and duration per window, per environment: a success keeps no series per report.
    const outcomes = metricPoints(run.lines, 'FetchOutcome');
    assert.equal(outcomes.length, 3);
    for (const p of outcomes) {
      assert.equal(p.value, 1);
      assert.equal(p.dims.outcome, 'Success');
      assert.equal(p.dims.report, undefined);
      assert.equal(p.dims.environment, 'test');
      assert.equal(p.dims.service, 'paynet-reports');
    }
    assert.deepEqual(metricPoints(run.lines, 'FetchBytes').map((p) => p.value), result.windows.map((w) => w.bytes));
    assert.equal(metricPoints(run.lines, 'FetchDurationMs').length, 3);
  });

  it('a retry of the same firing fetches the same windows and overwrites them; the secret is read once per container', async () => {
    const first = await captureJsonLines(() => handler(eventFixture('scheduler-invocation.json'), lambdaContext('req-a')));
    const second = await captureJsonLines(() => handler(eventFixture('scheduler-invocation.json'), lambdaContext('req-b')));
    assert.deepEqual(second.result!.windows.map((w) => w.key), first.result!.windows.map((w) => w.key));
    assert.equal((await rawKeys()).length, 3, 'overwritten, not duplicated');
    assert.equal((await readRaw(first.result!.windows[0]!.key)).opened.metadata['run-id'], 'req-b');
    assert.equal(sm.commandCalls(GetSecretValueCommand).length, 1, 'Powertools cached the secret across invocations');
  });

  it('without scheduledTime it uses the invocation time, and says so', async () => {
    const run = await captureJsonLines(() => handler({ reportId: 'transactions' }, lambdaContext('req-now')));
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.result!.windows.length, 3);
    const warning = run.lines.find((l) => l.level === 'WARN' && String(l.message).includes('no scheduledTime'));
    assert.ok(warning, 'a warning names the fallback');
  });

  it('a backfill request fetches [from, to) without lookback', async () => {
    const run = await captureJsonLines(() => handler(eventFixture('backfill-request.json'), lambdaContext('req-backfill')));
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.result!.kind, 'backfill');
    assert.deepEqual(run.result!.windows.map((w) => w.windowStart), ['2026-11-17T00:00:00', '2026-11-16T00:00:00']);
    assert.deepEqual(await rawKeys(), ['raw/transactions/connection=default/dt=2026-11-16/2026-11-16T00-00-00.csv', 'raw/transactions/connection=default/dt=2026-11-17/2026-11-17T00-00-00.csv']);
  });

  it('refuses bad events with a ConfigurationError naming the problem, before any call', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ reportId: 'transactions', connection: 'default', from: '2026-11-01' }, /to: /],
      [{ reportId: 'transactions', form: '2026-11-01', to: '2026-11-02' }, /Unrecognized key.*form|form/],
      [{ reportId: 'transactions', scheduledTime: 'yesterday' }, /scheduledTime: must be an ISO 8601 instant/],
      [{ reportId: 'transactions', connection: 'default', from: '2026-02-30', to: '2026-03-02' }, /not a real calendar date/],
      [{ reportId: 'transactions', connection: 'default', from: '2026-01-01', to: '2026-03-01' }, /holds 59 P1D windows, more than the 31/],
      [{ reportId: 'transactions', connection: 'default', from: '2026-03-01', to: '2026-03-01' }, /holds no P1D window/],
      [{ reportId: 'nope' }, /There is no report "nope"/],
      ['transactions', /neither|Expected a Scheduler invocation/],
    ];
    for (const [event, message] of cases) {
      const run = await captureJsonLines(() => handler(event, lambdaContext('req-bad')));
      assert.ok(run.error instanceof ConfigurationError, `${JSON.stringify(event)} -> ${String(run.error)}`);
      assert.match(run.error.message, message);
    }
    assert.deepEqual(await rawKeys(), []);
  });

  it("answers the keep-alive schedule's event at once: no gateway call, no object, no secret read, no metric, one debug line", async () => {
    const requestsBefore = sim.requests.length;
    sm.resetHistory();
    const level = logger.getLevelName();
    logger.setLogLevel('DEBUG');
    let run;
    try {
      run = await captureJsonLines(() => handler(eventFixture('scheduler-keep-alive.json'), lambdaContext('req-keep-alive')));
    } finally {
      logger.setLogLevel(level);
    }
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(run.result, { kind: 'keepAlive', runId: 'req-keep-alive' });
    assert.equal(sim.requests.length, requestsBefore, 'the gateway was not called');
    assert.deepEqual(await rawKeys(), []);
    assert.equal(sm.commandCalls(GetSecretValueCommand).length, 0, 'no secret was read');
    assert.deepEqual(run.lines.filter((l) => '_aws' in l), [], 'no metric record (EMF) was written');
    const logs = run.lines.filter((l) => typeof l.level === 'string');
    assert.deepEqual(logs.map((l) => [l.level, l.runId]), [['DEBUG', 'req-keep-alive']]);
    assert.match(String(logs[0]!.message), /^Keep-alive/);
  });

  it('refuses an event that says keepAlive and anything else, naming the one shape the schedule sends', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ keepAlive: false }, /keepAlive: must be true/],
      [{ keepAlive: 'yes' }, /keepAlive: must be true/],
      [{ keepAlive: true, reportId: 'transactions' }, /Unrecognized key.*reportId/],
    ];
    for (const [event, message] of cases) {
      const run = await captureJsonLines(() => handler(event, lambdaContext('req-bad-keep-alive')));
      assert.ok(run.error instanceof ConfigurationError, `${JSON.stringify(event)} -> ${String(run.error)}`);
      assert.match(run.error.message, message);
      assert.match(run.error.message, /sends exactly \{"keepAlive":true\}/);
    }
    assert.deepEqual(await rawKeys(), []);
  });

  it('signs with RSA-SHA256 when the secret says so', async () => {
    useSecret(sim.credentials.rsa);
    const run = await captureJsonLines(() => handler(eventFixture('backfill-request.json'), lambdaContext('req-rsa')));
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.result!.windows.length, 2);
    assert.ok(!run.text.includes('PRIVATE KEY'), 'no key material in the logs');
  });

  it('a refused login stops the run with AuthenticationRefused, stores nothing, and never logs the key', async () => {
    const wrongKey = 'wrong-control-key-that-must-not-leak';
    useSecret({ login: sim.credentials.hmac.login, controlKey: wrongKey });
    const run = await captureJsonLines(() => handler(eventFixture('scheduler-invocation.json'), lambdaContext('req-refused')));
    assert.ok(run.error instanceof AuthenticationRefused, String(run.error));
    assert.deepEqual(await rawKeys(), []);
    assert.ok(!run.text.includes(wrongKey));
    assert.deepEqual(metricPoints(run.lines, 'FetchOutcome', 'report').map((p) => p.dims.outcome), ['AuthenticationRefused'], 'the other windows were not tried');
    assert.ok(run.lines.some((l) => String(l.message).includes('remaining windows were not tried')));
  });

  describe('when windows break off mid-report', () => {
    let flaky: Simulator;
    const withFlakyGateway = async (times: number) => {
      flaky = await startSimulator({ rowsPerDay: ROWS_PER_DAY, fault: { mode: 'dropMidBody', times } });
      process.env.CONNECTIONS = gatewayAt(flaky.url);
      useSecret(flaky.credentials.hmac);
    };
    after(() => {
      process.env.CONNECTIONS = gatewayAt(sim.url);
    });

    it('one failed window: the others are stored, then the run fails with that window\'s typed error', async () => {
      await withFlakyGateway(1);
      try {
        const run = await captureJsonLines(() => handler(eventFixture('scheduler-invocation.json'), lambdaContext('req-drop-1')));
        assert.ok(run.error instanceof GatewayUnavailable, String(run.error));
        // Newest first: the 20th broke off; the 19th and 18th were stored.
        assert.deepEqual(await rawKeys(), ['raw/transactions/connection=default/dt=2026-11-18/2026-11-18T00-00-00.csv', 'raw/transactions/connection=default/dt=2026-11-19/2026-11-19T00-00-00.csv']);
        assert.deepEqual(metricPoints(run.lines, 'FetchOutcome', 'environment').map((p) => p.dims.outcome), ['GatewayUnavailable', 'Success', 'Success']);
        const failed = run.lines.find((l) => l.message === 'Window failed');
        assert.equal(failed?.window, '2026-11-20T00:00:00/2026-11-21T00:00:00');
        assert.equal(failed?.code, 'GatewayUnavailable');
      } finally {
        await flaky.close();
      }
    });

    it('several failed windows: an AggregateError naming each window and its code', async () => {
      await withFlakyGateway(2);
      try {
        const run = await captureJsonLines(() => handler(eventFixture('scheduler-invocation.json'), lambdaContext('req-drop-2')));
        assert.ok(run.error instanceof WindowFetchFailures, String(run.error));
        assert.ok(run.error instanceof AggregateError);
        assert.match(run.error.message, /2 of 3 window\(s\) of report "transactions" over connection "default" failed: 2026-11-20T00:00:00\/2026-11-21T00:00:00 GatewayUnavailable, 2026-11-19T00:00:00\/2026-11-20T00:00:00 GatewayUnavailable/);
        assert.equal(run.error.retryable, true);
        assert.ok(run.error.errors.every((e) => e instanceof GatewayUnavailable));
        assert.deepEqual(await rawKeys(), ['raw/transactions/connection=default/dt=2026-11-18/2026-11-18T00-00-00.csv']);
      } finally {
        await flaky.close();
      }
    });
  });

  it('stops a gateway call that would outlive the function: GatewayUnavailable, every window named, nothing stored', async () => {
    const slow = await startSimulator({ rowsPerDay: ROWS_PER_DAY, fault: { mode: 'slow', delayMs: 5_000 } });
    const endpoint = process.env.CONNECTIONS;
    process.env.CONNECTIONS = gatewayAt(slow.url);
    try {
      useSecret(slow.credentials.hmac);
      // 15.3 s left: the deadline (15 s before the end) fires 300 ms in, long before the slow answer.
      const context = { ...lambdaContext('req-deadline'), getRemainingTimeInMillis: () => 15_300 };
      const run = await captureJsonLines(() => handler(eventFixture('backfill-request.json'), context));
      assert.ok(run.error instanceof WindowFetchFailures, String(run.error));
      assert.equal(run.error.errors.length, 2);
      const [first, last] = run.error.errors as GatewayUnavailable[];
      assert.ok(first instanceof GatewayUnavailable && last instanceof GatewayUnavailable);
      // The first window may use half of the 300 ms, the last one what is left until the deadline.
      assert.match(first.message, /window 2026-11-17T00:00:00\/2026-11-18T00:00:00 used its share of the run's time \(0 s: .* divided by the 2 window\(s\)/);
      assert.match(last.message, /time-out was 15 s away/);
      assert.deepEqual(await rawKeys(), []);
    } finally {
      process.env.CONNECTIONS = endpoint;
      await slow.close();
    }
  });

  it('shares the run between its windows: a first window that hangs is stopped at its share and the next one is still stored', async () => {
    // Only the first request hangs (30 s); 15 s of margin + 4 s leaves the run 4 s: 2 s for the first of two windows.
    const hanging = await startSimulator({ rowsPerDay: ROWS_PER_DAY, fault: { mode: 'slow', delayMs: 30_000, times: 1 } });
    const endpoint = process.env.CONNECTIONS;
    process.env.CONNECTIONS = gatewayAt(hanging.url);
    try {
      useSecret(hanging.credentials.hmac);
      const context = { ...lambdaContext('req-share'), getRemainingTimeInMillis: () => 19_000 };
      const run = await captureJsonLines(() => handler(eventFixture('backfill-request.json'), context));
      assert.ok(run.error instanceof GatewayUnavailable, String(run.error));
      assert.match(run.error.message, /window 2026-11-17T00:00:00\/2026-11-18T00:00:00 used its share of the run's time \(2 s:/);
      // Without the share, the hanging window would have used the whole run and the other one would be missing too.
      assert.deepEqual(await rawKeys(), ['raw/transactions/connection=default/dt=2026-11-16/2026-11-16T00-00-00.csv']);
    } finally {
      process.env.CONNECTIONS = endpoint;
      await hanging.close();
    }
  });

  it('refuses a window before the projection start, naming the setting, before any gateway call', async () => {
    const start = process.env.PROJECTION_START;
    process.env.PROJECTION_START = '2026-11-17';
    try {
      const run = await captureJsonLines(() => handler(eventFixture('backfill-request.json'), lambdaContext('req-projection')));
      assert.ok(run.error instanceof ConfigurationError, String(run.error));
      assert.match(run.error.message, /^The window 2026-11-16 of report "transactions" is before 2026-11-17, .*athena\.projectionStart of environment "test"/);
      assert.deepEqual(await rawKeys(), []);
    } finally {
      process.env.PROJECTION_START = start;
    }
  });

  it('says which environment variable is missing', async () => {
    const bucket = process.env.RAW_BUCKET;
    delete process.env.RAW_BUCKET;
    try {
      const run = await captureJsonLines(() => handler(eventFixture('scheduler-invocation.json'), lambdaContext('req-env')));
      assert.ok(run.error instanceof ConfigurationError);
      assert.match(run.error.message, /RAW_BUCKET is not set/);
    } finally {
      process.env.RAW_BUCKET = bucket;
    }
  });
});
