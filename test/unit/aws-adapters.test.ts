import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { ConfigurationError } from '../../functions/core/errors.js';
import { emitMetric, recordFetch, MetricName, METRIC_NAMESPACE } from '../../functions/aws/metrics.js';
import { asByteSink, MultipartSink } from '../../functions/aws/multipart-sink.js';
import { REDACTED, redact, redactingReplacer, redactText } from '../../functions/aws/redact.js';
import { logger, metrics as sharedMetrics, tracer } from '../../functions/aws/powertools.js';
import { serviceName } from '../../functions/aws/service-name.js';
import { createS3Client } from '../../functions/aws/s3-client.js';
import { clearGatewaySecretCache, getGatewaySecret } from '../../functions/aws/secrets.js';

const SECRET_TEXT = 'k3y-Th4t-Must-N0t-Leak';
const hmacSecret = JSON.stringify({ login: 'merchant-1', controlKey: SECRET_TEXT });

/** Collects what Powertools writes (JSON lines: logs, EMF metrics) to stdout and stderr while `fn` runs. */
function captureOutput(fn: () => void): string[] {
  const lines: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((s) => s.write.bind(s));
  for (const s of streams) {
    s.write = ((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    }) as typeof s.write;
  }
  try {
    fn();
  } finally {
    streams.forEach((s, i) => (s.write = originals[i]!));
  }
  return lines;
}

describe('getGatewaySecret (Secrets Manager through Powertools parameters)', () => {
  const sm = mockClient(SecretsManagerClient);
  beforeEach(() => {
    sm.reset();
    clearGatewaySecretCache();
  });

  it('parses the secret and serves the second call from the cache', async () => {
    sm.on(GetSecretValueCommand, { SecretId: 'paynet/dev' }).resolves({ SecretString: hmacSecret });
    const first = await getGatewaySecret('paynet/dev');
    const second = await getGatewaySecret('paynet/dev');
    assert.deepEqual(first, { login: 'merchant-1', controlKey: SECRET_TEXT });
    assert.deepEqual(second, first);
    assert.equal(sm.commandCalls(GetSecretValueCommand).length, 1);
  });

  it('fetches again once maxAge has passed', async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: hmacSecret });
    await getGatewaySecret('paynet/dev', { maxAgeSeconds: 0 });
    await getGatewaySecret('paynet/dev', { maxAgeSeconds: 0 });
    assert.equal(sm.commandCalls(GetSecretValueCommand).length, 2);
  });

  it('fresh reads past the cache and keeps what it read for the next calls (a rotated value, seen after a refusal)', async () => {
    const rotated = JSON.stringify({ login: 'merchant-1', controlKey: 'the-rotated-control-key' });
    sm.on(GetSecretValueCommand, { SecretId: 'paynet/dev' }).resolvesOnce({ SecretString: hmacSecret }).resolves({ SecretString: rotated });
    assert.equal((await getGatewaySecret('paynet/dev')).login, 'merchant-1');
    assert.deepEqual(await getGatewaySecret('paynet/dev', { fresh: true }), { login: 'merchant-1', controlKey: 'the-rotated-control-key' });
    assert.deepEqual(await getGatewaySecret('paynet/dev'), { login: 'merchant-1', controlKey: 'the-rotated-control-key' });
    assert.equal(sm.commandCalls(GetSecretValueCommand).length, 2, 'the call after the fresh read came from the cache');
  });

  it('reads a binary secret as UTF-8 JSON', async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretBinary: new TextEncoder().encode(hmacSecret) });
    assert.equal((await getGatewaySecret('paynet/bin')).login, 'merchant-1');
  });

  it('refuses a malformed secret with a ConfigurationError that never quotes it, and does not cache it', async () => {
    const malformed = [
      JSON.stringify({ login: 'merchant-1', controlkey: SECRET_TEXT }), // wrong field name
      JSON.stringify({ login: 'merchant-1', signatureMethod: 'RSA-SHA256', privateKeyPem: SECRET_TEXT }), // not a PEM
      `{"login": "merchant-1", "controlKey": "${SECRET_TEXT}"`, // not JSON
    ];
    for (const text of malformed) {
      sm.reset();
      sm.on(GetSecretValueCommand).resolves({ SecretString: text });
      await assert.rejects(getGatewaySecret('paynet/dev'), (e: unknown) => {
        assert.ok(e instanceof ConfigurationError, String(e));
        assert.ok(e.message.includes('paynet/dev'), e.message);
        assert.ok(!e.message.includes(SECRET_TEXT), e.message);
        assert.ok(!JSON.stringify(e).includes(SECRET_TEXT));
        return true;
      });
    }
    // Fixed in Secrets Manager: the next call fetches again instead of serving the bad value for five minutes.
    sm.reset();
    sm.on(GetSecretValueCommand).resolves({ SecretString: hmacSecret });
    assert.equal((await getGatewaySecret('paynet/dev')).login, 'merchant-1');
    assert.equal(sm.commandCalls(GetSecretValueCommand).length, 1);
  });

  it('says a missing secret is configuration, naming it', async () => {
    sm.on(GetSecretValueCommand).rejects(new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: {} }));
    await assert.rejects(getGatewaySecret('paynet/missing'), (e: unknown) => e instanceof ConfigurationError && e.message.includes('"paynet/missing" does not exist'));
  });

  it('passes transient errors through (they are retried), not as configuration', async () => {
    const throttled = new SecretsManagerServiceException({ name: 'ThrottlingException', $fault: 'client', message: 'Rate exceeded', $metadata: {} });
    sm.on(GetSecretValueCommand).rejects(throttled);
    await assert.rejects(getGatewaySecret('paynet/dev'), (e: unknown) => !(e instanceof ConfigurationError));
  });
});

describe('redaction', () => {
  it('masks secret keys at any depth, in arrays, whatever their case or separator', () => {
    const logged = {
      secret: { login: 'merchant-1', controlKey: SECRET_TEXT },
      rsa: [{ privateKeyPem: SECRET_TEXT, signatureMethod: 'RSA-SHA256' }],
      headers: { Authorization: `OAuth oauth_signature="${SECRET_TEXT}"`, 'Content-Type': 'application/json' },
      oauth: { oauth_signature: SECRET_TEXT, oauth_signature_method: 'HMAC-SHA1', control_key: SECRET_TEXT, 'X-Amz-Signature': SECRET_TEXT },
    };
    const text = JSON.stringify(logged, redactingReplacer);
    assert.ok(!text.includes(SECRET_TEXT), text);
    const back = JSON.parse(text);
    assert.equal(back.secret.login, 'merchant-1');
    assert.equal(back.secret.controlKey, REDACTED);
    assert.equal(back.rsa[0].signatureMethod, 'RSA-SHA256');
    assert.equal(back.headers['Content-Type'], 'application/json');
    assert.equal(back.oauth.oauth_signature_method, 'HMAC-SHA1');
  });

  it('masks credentials inside free text', () => {
    const pem = `-----BEGIN PRIVATE KEY-----\nMIIEv${SECRET_TEXT}\n-----END PRIVATE KEY-----`;
    for (const text of [
      `OAuth realm="",oauth_consumer_key="merchant-1",oauth_signature="${SECRET_TEXT}",oauth_version="1.0"`,
      `https://gw/x?oauth_signature=${SECRET_TEXT}&a=1`,
      `secret was {"login":"m","controlKey":"${SECRET_TEXT}"}`,
      JSON.stringify({ s: `{"controlKey":"${SECRET_TEXT}"}` }),
      `key: ${pem} end`,
    ]) {
      const out = redactText(text);
      assert.ok(!out.includes(SECRET_TEXT), out);
    }
    assert.ok(redactText('oauth_consumer_key="merchant-1"').includes('merchant-1'), 'the login is not secret');
  });

  it('redact() returns a masked copy', () => {
    assert.deepEqual(redact({ a: { controlKey: 'x' }, b: 1 }), { a: { controlKey: REDACTED }, b: 1 });
  });

  it("the shared Powertools logger never prints a secret, even inside an error", () => {
    const lines = captureOutput(() => {
      logger.info('fetched', { secret: { login: 'merchant-1', controlKey: SECRET_TEXT } });
      logger.error('failed', new Error(`signing with oauth_signature="${SECRET_TEXT}" refused`));
    });
    assert.equal(lines.length, 2);
    for (const line of lines) assert.ok(!line.includes(SECRET_TEXT), line);
    assert.equal(JSON.parse(lines[0]!).secret.login, 'merchant-1');
  });
});

describe('powertools', () => {
  it('shares one Logger, Metrics and Tracer named after POWERTOOLS_SERVICE_NAME (or paynet-reports)', () => {
    assert.equal(serviceName, process.env.POWERTOOLS_SERVICE_NAME || 'paynet-reports');
    assert.ok(sharedMetrics && tracer);
    assert.equal(tracer.isTracingEnabled(), false, 'off outside Lambda');
  });
});

describe('metrics', () => {
  it('emits one EMF record per data point: a failure per report and per environment, bytes per environment only', () => {
    const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: 'paynet-reports' });
    const dims = { report: 'transactions', connection: 'default', environment: 'dev' };
    const lines = captureOutput(() => {
      recordFetch(metrics, dims, { outcome: 'GatewayUnavailable', bytes: 10, durationMs: 250 });
      recordFetch(metrics, dims, { outcome: 'Success' });
      emitMetric(metrics, MetricName.RowsWritten, 42, dims);
    });
    const records = lines.map((l) => JSON.parse(l));
    assert.equal(records.length, 6);
    const outcomes = records.filter((r) => r.FetchOutcome !== undefined).map((r) => [r.outcome, r._aws.CloudWatchMetrics[0].Dimensions]);
    assert.deepEqual(outcomes, [
      ['GatewayUnavailable', [['service', 'environment', 'outcome']]],
      ['GatewayUnavailable', [['service', 'connection', 'report', 'environment', 'outcome']]],
      ['Success', [['service', 'environment', 'outcome']]],
    ]);
    assert.equal(records[0]._aws.CloudWatchMetrics[0].Namespace, 'PaynetReports');
    const bytes = records.find((r) => r.FetchBytes !== undefined);
    assert.deepEqual(bytes._aws.CloudWatchMetrics[0].Dimensions, [['service', 'environment']]);
    assert.deepEqual(bytes._aws.CloudWatchMetrics[0].Metrics, [{ Name: 'FetchBytes', Unit: 'Bytes' }]);
    assert.equal(records.find((r) => r.RowsWritten !== undefined).RowsWritten, 42);
  });
});

describe('createS3Client', () => {
  it('configures a local endpoint for s3rver: path style, checksums only when required', async () => {
    const client = createS3Client({ endpoint: 'http://127.0.0.1:4568', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    assert.equal(client.config.forcePathStyle, true);
    assert.equal(await client.config.requestChecksumCalculation(), 'WHEN_REQUIRED');
    assert.equal(await client.config.responseChecksumValidation(), 'WHEN_REQUIRED');
    client.destroy();
  });

  it('leaves AWS defaults alone without an endpoint', async () => {
    const client = createS3Client({ region: 'eu-west-1' });
    assert.notEqual(client.config.forcePathStyle, true);
    assert.equal(await client.config.requestChecksumCalculation(), 'WHEN_SUPPORTED');
    client.destroy();
  });
});

describe('MultipartSink against a mocked S3', () => {
  const s3 = mockClient(S3Client);
  beforeEach(() => s3.reset());
  const MiB = 1024 * 1024;
  const client = () => new S3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });

  it('writes a small object with one PutObject', async () => {
    s3.on(PutObjectCommand).resolves({ ETag: '"e"', VersionId: 'v1' });
    const sink = new MultipartSink({ client: client(), bucket: 'b', key: 'k', contentType: 'application/vnd.apache.parquet' });
    sink.write(new Uint8Array([1, 2, 3]));
    await sink.flush();
    const stored = await sink.finish();
    assert.equal(stored.versionId, 'v1');
    assert.equal(stored.bytes, 3);
    assert.equal(s3.commandCalls(CreateMultipartUploadCommand).length, 0);
    assert.equal(s3.commandCalls(PutObjectCommand)[0]!.args[0].input.ContentType, 'application/vnd.apache.parquet');
  });

  it('on AWS defaults, creates the upload with CRC32 and completes with each part checksum (as lib-storage does)', async () => {
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'u1' });
    s3.on(UploadPartCommand).callsFake((input: { PartNumber: number }) => ({ ETag: `"p${input.PartNumber}"`, ChecksumCRC32: `c${input.PartNumber}` }));
    s3.on(CompleteMultipartUploadCommand).resolves({ ETag: '"done-2"', VersionId: 'v2' });
    const sink = new MultipartSink({ client: client(), bucket: 'b', key: 'k', contentType: 'x', partSizeBytes: 5 * MiB });
    sink.write(new Uint8Array(5 * MiB));
    sink.write(new Uint8Array(10));
    await sink.flush();
    const stored = await sink.finish();
    assert.equal(stored.bytes, 5 * MiB + 10);
    assert.equal(s3.commandCalls(CreateMultipartUploadCommand)[0]!.args[0].input.ChecksumAlgorithm, 'CRC32');
    assert.deepEqual(s3.commandCalls(CompleteMultipartUploadCommand)[0]!.args[0].input.MultipartUpload?.Parts, [
      { PartNumber: 1, ETag: '"p1"', ChecksumCRC32: 'c1' },
      { PartNumber: 2, ETag: '"p2"', ChecksumCRC32: 'c2' },
    ]);
  });

  it('fills parts in buffers it reuses once a part is uploaded: each part holds its own bytes, in order', async () => {
    const sent: Array<{ part: number; bytes: Buffer; buffer: ArrayBufferLike }> = [];
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'u1' });
    s3.on(UploadPartCommand).callsFake(async (input: { PartNumber: number; Body: Uint8Array }) => {
      // What S3 receives is the body as it is when the part is sent: a copy now, the buffer's identity beside it.
      const bytes = Buffer.from(input.Body);
      sent.push({ part: input.PartNumber, bytes, buffer: input.Body.buffer });
      await new Promise((resolve) => setTimeout(resolve, 5));
      // S3 reads the body while the request lasts: it must not change until the part is uploaded.
      assert.ok(Buffer.from(input.Body).equals(bytes), `part ${input.PartNumber} changed while it was uploading`);
      return { ETag: `"p${input.PartNumber}"` };
    });
    s3.on(CompleteMultipartUploadCommand).resolves({ ETag: '"done-7"', VersionId: 'v7' });
    const sink = new MultipartSink({ client: client(), bucket: 'b', key: 'k', contentType: 'x', partSizeBytes: 5 * MiB, queueSize: 2 });
    const object = Buffer.alloc(31 * MiB + 12_345);
    for (let i = 0; i + 4 <= object.length; i += 4) object.writeUInt32LE(i, i);
    // Odd-sized chunks, cut across part boundaries; each reused by the caller after write() (a copy is taken).
    const chunk = Buffer.alloc(300_007);
    for (let at = 0; at < object.length; at += chunk.length) {
      const n = Math.min(chunk.length, object.length - at);
      object.copy(chunk, 0, at, at + n);
      sink.write(chunk.subarray(0, n));
      chunk.fill(0xee);
      await sink.flush();
    }
    const stored = await sink.finish();
    assert.equal(stored.bytes, object.length);
    assert.equal(stored.sha256, createHash('sha256').update(object).digest('hex'));
    sent.sort((a, b) => a.part - b.part);
    assert.deepEqual(sent.map((p) => p.bytes.length), [5, 5, 5, 5, 5, 5].map((m) => m * MiB).concat([MiB + 12_345]));
    assert.ok(Buffer.concat(sent.map((p) => p.bytes)).equals(object), 'the parts joined are the object, byte for byte');
    // Two uploading, one cut and waiting, one being filled: queueSize + 2 buffers at most, for 7 parts.
    const buffers = new Set(sent.map((p) => p.buffer)).size;
    assert.ok(buffers <= 4, `${buffers} part buffers for 7 parts`);
  });

  it('a failed part fails the next flush()/finish(), which aborts the upload; later writes refuse', async () => {
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'u1' });
    s3.on(UploadPartCommand).rejects(new Error('part refused'));
    s3.on(AbortMultipartUploadCommand).resolves({});
    const sink = new MultipartSink({ client: client(), bucket: 'b', key: 'k', contentType: 'x', partSizeBytes: 5 * MiB, queueSize: 1 });
    sink.write(new Uint8Array(5 * MiB)); // part 1 starts uploading
    sink.write(new Uint8Array(5 * MiB)); // part 2 waits: flush() must wait for part 1, which fails
    await assert.rejects(sink.flush(), /part refused/);
    assert.throws(() => sink.write(new Uint8Array(1)), /part refused/);
    await assert.rejects(sink.finish(), /part refused/);
    assert.equal(s3.commandCalls(UploadPartCommand).length, 1, 'no part is sent after a failure');
    assert.equal(s3.commandCalls(CompleteMultipartUploadCommand).length, 0);
    assert.equal(s3.commandCalls(AbortMultipartUploadCommand)[0]!.args[0].input.UploadId, 'u1');
    await sink.abort(); // idempotent
    assert.equal(s3.commandCalls(AbortMultipartUploadCommand).length, 1);
  });
});

describe('asByteSink (MultipartSink as the converter\'s output)', () => {
  const s3 = mockClient(S3Client);
  beforeEach(() => s3.reset());
  const MiB = 1024 * 1024;
  const client = () => new S3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });

  it('write() waits while a part is queued behind the ones in flight; end() commits and keeps what S3 stored', async () => {
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'u1' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    s3.on(UploadPartCommand).callsFake(async (input: { PartNumber: number }) => {
      if (input.PartNumber === 1) await gate;
      return { ETag: `"p${input.PartNumber}"` };
    });
    s3.on(CompleteMultipartUploadCommand).resolves({ ETag: '"done"', VersionId: 'v9' });
    const sink = asByteSink(new MultipartSink({ client: client(), bucket: 'b', key: 'k', contentType: 'x', partSizeBytes: 5 * MiB, queueSize: 1 }));
    await sink.write(new Uint8Array(5 * MiB)); // part 1 goes out at once
    let second = false;
    const writing = Promise.resolve(sink.write(new Uint8Array(5 * MiB))).then(() => (second = true)); // part 2 must wait
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(second, false, 'backpressure: the second write waits for room');
    release();
    await writing;
    const beforeEnd = sink.stored;
    assert.equal(beforeEnd, undefined, 'nothing stored before end()');
    await sink.end();
    assert.equal(sink.stored?.versionId, 'v9');
    assert.equal(sink.stored?.bytes, 10 * MiB);
  });

  it('abort() discards the upload', async () => {
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'u2' });
    s3.on(UploadPartCommand).resolves({ ETag: '"p"' });
    s3.on(AbortMultipartUploadCommand).resolves({});
    const sink = asByteSink(new MultipartSink({ client: client(), bucket: 'b', key: 'k', contentType: 'x', partSizeBytes: 5 * MiB }));
    await sink.write(new Uint8Array(5 * MiB));
    await sink.abort(new Error('schema drift'));
    assert.equal(s3.commandCalls(AbortMultipartUploadCommand)[0]!.args[0].input.UploadId, 'u2');
    assert.equal(s3.commandCalls(CompleteMultipartUploadCommand).length, 0);
    assert.equal(sink.stored, undefined);
  });
});
