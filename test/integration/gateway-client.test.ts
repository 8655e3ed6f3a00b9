import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, createPublicKey, createVerify, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import { after, describe, it, mock } from 'node:test';
import { promisify } from 'node:util';
import { ConfigurationError, GatewayUnavailable, InsecureEndpoint, UnexpectedAnswer } from '../../functions/core/errors.js';
import { sniff } from '../../functions/core/gateway/answer.js';
import { fetchReport, type GatewayClientOptions, type GatewayEvent } from '../../functions/core/gateway/client.js';
import { describeRequest, isLoopbackHost, secureEndpoint } from '../../functions/core/gateway/request.js';
import {
  parseAuthorizationHeader,
  signRequest,
  signatureBaseString,
  type BodySigningRule,
  type OAuthParams,
} from '../../functions/core/gateway/oauth.js';
import { peekThenReplay } from '../../functions/core/gateway/peek-stream.js';
import { parseRetryAfter, retryDelayMs } from '../../functions/core/retry.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';
import { hmacSha1Signature } from '../../functions/core/gateway/signature-methods.js';
import { skipWithoutTool } from '../helpers/required-tools.js';

/**
 * The gateway client against real HTTP servers on loopback, written here per case. No assertion on
 * wall-clock time: back-off waits go through an injected sleep that records what was asked.
 */

const PATH = '/paynet-ui/services/v2/rpt-engine';
const CONTROL_KEY = 'ck-0123456789-very-secret-control-key';
const hmacSecret: GatewaySecret = { login: 'merchant-7', controlKey: CONTROL_KEY };
const rsaKeys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const rsaSecret: GatewaySecret = { login: 'merchant-rsa', signatureMethod: 'RSA-SHA256', privateKeyPem: rsaKeys.privateKey };
const rsaPublicKey = createPublicKey(rsaKeys.publicKey);
const PEM_BODY = rsaKeys.privateKey.split('\n')[1]!;

const reportBody = {
  reportIdentifier: 'transactions-v1',
  reportEncode: 'UTF-8',
  reportName: "O'Brien & Sons $HOME `id`",
  reportCsvDelimiter: ',',
  reportFormat: 'CSV',
  inputReportParameters: [{ type: 'INPUT_TEXT', name: 'dateFrom', value: '2024-05-01 00:00:00' }],
  filters: { gates: [], currencies: [] },
};

// Everything the client could leak, gathered across the file and checked by the last test.
const signaturesSeen = new Set<string>();
const messagesSeen: string[] = [];
const eventsSeen: GatewayEvent[] = [];

interface Seen {
  headers: http.IncomingHttpHeaders;
  url: string;
  body: string;
  oauth: Record<string, string>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void;

interface TestServer {
  url: string;
  seen: Seen[];
  close: () => Promise<void>;
}

const servers: http.Server[] = [];
after(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A loopback server that records each request (after reading its body) and then calls `handler`. */
async function serve(handler: Handler): Promise<TestServer> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const oauth = parseAuthorizationHeader(req.headers.authorization) ?? {};
      if (oauth.oauth_signature) signaturesSeen.add(oauth.oauth_signature);
      seen.push({ headers: req.headers, url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), oauth });
      handler(req, res, seen.length - 1);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${PATH}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Recomputes the signature on the server side: HMAC with the control key, RSA with the public key. */
function verifySignature(
  seen: Seen,
  endpoint: string,
  secret: GatewaySecret,
  publicKey?: KeyObject,
  rule: BodySigningRule = 'excluded',
): void {
  const o = seen.oauth;
  assert.equal(o.realm, '');
  assert.equal(o.oauth_consumer_key, secret.login);
  assert.equal(o.oauth_version, '1.0');
  assert.match(o.oauth_nonce ?? '', /^[A-Za-z0-9]{11,}$/);
  assert.match(o.oauth_timestamp ?? '', /^\d+$/);
  const oauth: OAuthParams = {
    oauth_consumer_key: o.oauth_consumer_key!,
    oauth_nonce: o.oauth_nonce!,
    oauth_signature_method: o.oauth_signature_method as OAuthParams['oauth_signature_method'],
    oauth_timestamp: o.oauth_timestamp!,
    oauth_version: '1.0',
  };
  const base = signatureBaseString('POST', new URL(seen.url, endpoint), oauth, seen.body, rule);
  if (secret.signatureMethod === 'RSA-SHA256') {
    assert.equal(o.oauth_signature_method, 'RSA-SHA256');
    assert.ok(createVerify('RSA-SHA256').update(base).verify(publicKey!, o.oauth_signature!, 'base64'), 'RSA signature verifies');
  } else {
    assert.equal(o.oauth_signature_method, 'HMAC-SHA1');
    assert.equal(o.oauth_signature, hmacSha1Signature(base, (secret as { controlKey: string }).controlKey));
  }
}

/** Options for a fast, quiet run: sleeps are recorded, never waited. */
function fast(endpointUrl: string, extra: Partial<GatewayClientOptions> = {}) {
  const sleeps: number[] = [];
  const events: GatewayEvent[] = [];
  const options: GatewayClientOptions = {
    endpointUrl,
    secret: hmacSecret,
    body: reportBody,
    retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 5_000 },
    timeouts: { connectMs: 1_000, totalMs: 3_000 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    onEvent: (e) => {
      events.push(e);
      eventsSeen.push(e);
    },
    ...extra,
  };
  return { options, sleeps, events };
}

async function sha256(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function expectError<T extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => T): Promise<T> {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof type, `expected ${type.name}, got ${String(e)}`);
    messagesSeen.push(e.message, String((e as { firstBytes?: string }).firstBytes ?? ''));
    return e;
  }
  assert.fail(`expected ${type.name}, but the call succeeded`);
}

function sampleCsv(minBytes: number): Buffer {
  const header = '"Merchant_Name","Transaction_id","Merchant_OID","Created_date","Amount","Currency","Transaction_type","Order_description","Date_of_report"\r\n';
  const lines = [header];
  let size = header.length;
  for (let i = 0; size < minBytes; i++) {
    const line = `"Shop ${i % 97}","${1_000_000 + i}","OID${i}","2024-05-01 12:${String(i % 60).padStart(2, '0')}:00","${(i % 10_000) / 1000 + 1}.000","EUR","SALE","Order, ""quoted"" ${i}","02.05.2024"\r\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  return Buffer.from(lines.join(''));
}

describe('gateway client: reports', () => {
  it('signs with HMAC-SHA1 (verified by the server) and streams a 2 MB CSV back byte for byte', async () => {
    const csv = sampleCsv(2 * 1024 * 1024);
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv; charset=UTF-8' });
      res.end(csv);
    });
    const { options } = fast(server.url);
    const report = await fetchReport(options);
    assert.equal(report.status, 200);
    assert.equal(report.kind, 'csv');
    assert.equal(report.fileExtension, 'csv');
    assert.equal(report.contentType, 'text/csv; charset=UTF-8');
    assert.equal(report.attempts, 1);
    // A consumer that starts late (the server has long finished and closed) still gets every byte.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await sha256(report.body), createHash('sha256').update(csv).digest('hex'));

    assert.equal(server.seen.length, 1);
    const seen = server.seen[0]!;
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.match(seen.headers.accept ?? '', /text\/csv/);
    assert.match(seen.headers.accept ?? '', /application\/pdf/);
    assert.equal(seen.body, JSON.stringify(reportBody));
    verifySignature(seen, server.url, hmacSecret);
  });

  it('signs with RSA-SHA256 (verified with the public key) and streams a binary PDF back byte for byte', async () => {
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'), randomBytes(300_000)]);
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/pdf' });
      res.end(pdf);
    });
    const { options } = fast(server.url, { secret: rsaSecret });
    const report = await fetchReport(options);
    assert.equal(report.kind, 'pdf');
    assert.equal(report.fileExtension, 'pdf');
    assert.equal(await sha256(report.body), createHash('sha256').update(pdf).digest('hex'));
    verifySignature(server.seen[0]!, server.url, rsaSecret, rsaPublicKey);
  });

  it('signs the body members when the body-signing rule says so', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.end('"a","b"\r\n"1","2"\r\n');
    });
    const { options } = fast(server.url, { bodySigning: 'asFormParameters' });
    const report = await fetchReport(options);
    await sha256(report.body);
    verifySignature(server.seen[0]!, server.url, hmacSecret, undefined, 'asFormParameters');
  });

  it('lets the bytes decide under application/octet-stream, and returns short bodies whole', async () => {
    const bodies = ['"Merchant_Name","Amount"\n"Shop","1.000"\n', '%PDF-1.4\nshort'];
    const server = await serve((_req, res, i) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(bodies[i]);
    });
    const csv = await fetchReport(fast(server.url).options);
    assert.equal(csv.kind, 'csv');
    assert.equal(Buffer.concat(await csv.body.toArray()).toString(), bodies[0]);
    const pdf = await fetchReport(fast(server.url).options);
    assert.equal(pdf.kind, 'pdf');
    assert.equal(Buffer.concat(await pdf.body.toArray()).toString(), bodies[1]);
  });
});

describe('gateway client: answers that are not reports', () => {
  it('turns the 200 text/plain "not authorised" body into AuthenticationRefused, with one request (HMAC)', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain;charset=UTF-8' });
      res.end('You are not authorized to perform this request.\nPlease contact support.');
    });
    const { options, sleeps } = fast(server.url);
    const e = await expectError(fetchReport(options), Error);
    assert.equal((e as { code?: string }).code, 'AuthenticationRefused');
    assert.equal(server.seen.length, 1);
    assert.deepEqual(sleeps, []);
    assert.match(e.message, /merchant-7/);
    assert.match(e.message, /HMAC-SHA1/);
    assert.match(e.message, /You are not authorized to perform this request/);
    assert.ok(!e.message.includes(CONTROL_KEY));
  });

  it('names RSA-SHA256 and never the PEM when an RSA-signed call is refused (also on a 403)', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(403, { 'Content-Type': 'text/plain' });
      res.end('Unauthorised: signature check failed');
    });
    const e = await expectError(fetchReport(fast(server.url, { secret: rsaSecret }).options), Error);
    assert.equal((e as { code?: string }).code, 'AuthenticationRefused');
    assert.equal(server.seen.length, 1);
    assert.match(e.message, /merchant-rsa/);
    assert.match(e.message, /RSA-SHA256/);
    assert.ok(!e.message.includes(PEM_BODY));
  });

  const cases: Array<{ name: string; status: number; headers: Record<string, string>; body: string; quote: string }> = [
    {
      name: 'an HTML page',
      status: 200,
      headers: { 'Content-Type': 'text/html; charset=utf-8' },
      body: '<!DOCTYPE html><html><body>Maintenance</body></html>',
      quote: '<!DOCTYPE html><html>',
    },
    {
      name: 'HTML under a CSV content type',
      status: 200,
      headers: { 'Content-Type': 'text/csv' },
      body: '\r\n<!DOCTYPE html><title>Login</title>',
      quote: '\r\n<!DOCTYPE html>',
    },
    { name: 'an empty body', status: 200, headers: { 'Content-Type': 'text/csv' }, body: '', quote: '' },
    {
      name: 'another text/plain message',
      status: 200,
      headers: { 'Content-Type': 'text/plain' },
      body: 'Report engine error: unknown reportIdentifier transactions-v1',
      quote: 'Report engine error: unknown',
    },
    {
      name: 'an unknown content type',
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: '{"error":"bad filters"}',
      quote: '{"error":"bad filters"}',
    },
    {
      name: 'a PDF type without %PDF-',
      status: 200,
      headers: { 'Content-Type': 'application/pdf' },
      body: 'oops\u0000\u001b[31m',
      quote: 'oops\\x00\\x1b[31m',
    },
    {
      name: 'a 404',
      status: 404,
      headers: { 'Content-Type': 'text/html' },
      body: '<html><h1>Not Found</h1></html>',
      quote: '<html><h1>Not Found',
    },
    {
      name: 'a redirect',
      status: 302,
      headers: { Location: 'https://gw.example.com/new-path', 'Content-Type': 'text/html' },
      body: '<a href="https://gw.example.com/new-path">moved</a>',
      quote: '<a href=',
    },
  ];
  for (const c of cases) {
    it(`refuses ${c.name} as UnexpectedAnswer after one request, quoting its start`, async () => {
      const server = await serve((_req, res) => {
        res.writeHead(c.status, c.headers);
        res.end(c.body);
      });
      const { options, sleeps } = fast(server.url);
      const e = await expectError(fetchReport(options), UnexpectedAnswer);
      assert.equal(server.seen.length, 1);
      assert.deepEqual(sleeps, []);
      assert.equal(e.status, c.status);
      assert.ok(e.firstBytes.startsWith(c.quote), `firstBytes ${JSON.stringify(e.firstBytes)}`);
      assert.ok(e.message.includes(JSON.stringify(e.firstBytes)));
      if (c.status === 302) assert.match(e.message, /new-path/);
    });
  }

  it('quotes at most ~200 characters and redacts a signature the server echoes back', async () => {
    const server = await serve((req, res) => {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(`Bad request. You sent: ${req.headers.authorization}. ${'x'.repeat(2000)}`);
    });
    const e = await expectError(fetchReport(fast(server.url).options), UnexpectedAnswer);
    const signature = server.seen[0]!.oauth.oauth_signature!;
    assert.ok(!e.message.includes(signature));
    assert.ok(!e.message.includes(encodeURIComponent(signature)));
    assert.match(e.firstBytes, /\[signature\]/);
    assert.ok(e.firstBytes.length <= 210);
  });
});

describe('gateway client: retries', () => {
  it('retries a 500 and succeeds on the second attempt, signing afresh (a new nonce)', async () => {
    const server = await serve((_req, res, i) => {
      if (i === 0) {
        res.writeHead(500, { 'Content-Type': 'text/html' });
        res.end('<h1>Internal error</h1>');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.end('"a","b"\r\n');
    });
    const { options, sleeps, events } = fast(server.url);
    const report = await fetchReport(options);
    assert.equal(report.attempts, 2);
    assert.equal(Buffer.concat(await report.body.toArray()).toString(), '"a","b"\r\n');
    assert.equal(server.seen.length, 2);
    const [first, second] = server.seen;
    assert.notEqual(first!.oauth.oauth_nonce, second!.oauth.oauth_nonce);
    verifySignature(first!, server.url, hmacSecret);
    verifySignature(second!, server.url, hmacSecret);
    // Full jitter: random 0.5 of the first ceiling (base 100 ms).
    assert.deepEqual(sleeps, [50]);
    const retry = events.find((e) => e.type === 'retry');
    assert.ok(retry && retry.type === 'retry' && /HTTP 500/.test(retry.problem));
  });

  it('honours Retry-After in seconds on a 429', async () => {
    const server = await serve((_req, res, i) => {
      if (i === 0) {
        res.writeHead(429, { 'Retry-After': '2' });
        res.end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.end('"a"\n');
    });
    const { options, sleeps } = fast(server.url, { random: () => 0 });
    const report = await fetchReport(options);
    await report.body.toArray();
    assert.equal(sleeps.length, 1);
    assert.ok(sleeps[0]! >= 2000, `asked to sleep ${sleeps[0]} ms`);
  });

  it('honours Retry-After as an HTTP date (against the injected clock)', async () => {
    const now = new Date('2024-05-02T03:00:00Z');
    const server = await serve((_req, res, i) => {
      if (i === 0) {
        res.writeHead(503, { 'Retry-After': new Date(now.getTime() + 3000).toUTCString() });
        res.end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.end('"a"\n');
    });
    const { options, sleeps } = fast(server.url, { random: () => 0, now: () => now });
    await (await fetchReport(options)).body.toArray();
    assert.deepEqual(sleeps, [3000]);
    assert.equal(server.seen[0]!.oauth.oauth_timestamp, String(now.getTime() / 1000));
  });

  it('gives up on a persistent 503 after the configured attempts, with exponential ceilings', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(503, { 'Content-Type': 'text/plain' });
      res.end('busy');
    });
    const { options, sleeps } = fast(server.url, { random: () => 0.999 });
    const e = await expectError(fetchReport(options), GatewayUnavailable);
    assert.equal(e.attempts, 3);
    assert.match(e.lastProblem, /HTTP 503/);
    assert.equal(server.seen.length, 3);
    assert.equal(sleeps.length, 2);
    assert.ok(sleeps[0]! < 100 && sleeps[1]! >= 100 && sleeps[1]! < 200, `sleeps ${sleeps.join(', ')}`);
  });

  it('times out a server that accepts and never answers, then gives up', async () => {
    const server = await serve(() => {
      // Never answers.
    });
    const { options, sleeps } = fast(server.url, {
      retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 100 },
      timeouts: { connectMs: 1_000, totalMs: 200 },
    });
    const e = await expectError(fetchReport(options), GatewayUnavailable);
    assert.equal(e.attempts, 2);
    assert.match(e.lastProblem, /total time-out of 200 ms/);
    assert.equal(server.seen.length, 2);
    assert.equal(sleeps.length, 1);
    await server.close();
  });

  it('retries a connection dropped before the headers', async () => {
    const server = await serve((req, res, i) => {
      if (i === 0) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.end('"a"\n');
    });
    const { options, events } = fast(server.url);
    const report = await fetchReport(options);
    await report.body.toArray();
    assert.equal(report.attempts, 2);
    assert.equal(server.seen.length, 2);
    const retry = events.find((e) => e.type === 'retry');
    assert.ok(retry && retry.type === 'retry' && /socket hang up|ECONNRESET/.test(retry.problem), JSON.stringify(retry));
  });

  it('retries a refused connection, then reports it', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise((r) => probe.close(r));
    const { options, sleeps } = fast(`http://127.0.0.1:${port}${PATH}`, { retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 100 } });
    const e = await expectError(fetchReport(options), GatewayUnavailable);
    assert.equal(e.attempts, 2);
    assert.match(e.lastProblem, /ECONNREFUSED/);
    assert.equal(sleeps.length, 1);
  });

  it('stops at once, with the reason, when the caller aborts', async () => {
    const controller = new AbortController();
    const reason = new Error('the Lambda is out of time');
    const server = await serve(() => controller.abort(reason));
    const { options, sleeps } = fast(server.url, { signal: controller.signal });
    await assert.rejects(fetchReport(options), (e) => e === reason);
    assert.equal(server.seen.length, 1);
    assert.deepEqual(sleeps, []);
    await server.close();
  });
});

describe('gateway client: failures after the hand-over', () => {
  it('errors the returned stream when the connection drops mid-body', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv', 'Content-Length': String(1_000_000) });
      res.write(sampleCsv(64 * 1024), () => res.socket?.destroy());
    });
    const { options, events } = fast(server.url);
    const report = await fetchReport(options);
    assert.equal(report.attempts, 1);
    await assert.rejects(sha256(report.body), (e: Error & { code?: string }) => {
      messagesSeen.push(e.message);
      return e instanceof GatewayUnavailable && /connection broke after \d+ byte/.test(e.lastProblem);
    });
    assert.equal(server.seen.length, 1);
    assert.ok(events.some((e) => e.type === 'body-error'));
  });

  it('errors the returned stream when the total time-out runs out mid-body', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.write(sampleCsv(4096));
      // ...and never another byte.
    });
    const { options } = fast(server.url, { timeouts: { connectMs: 1_000, totalMs: 300 } });
    const report = await fetchReport(options);
    await assert.rejects(sha256(report.body), (e: Error) => {
      messagesSeen.push(e.message);
      return e instanceof GatewayUnavailable && /total time-out of 300 ms/.test(e.lastProblem);
    });
    await server.close();
  });

  it('replays the peeked bytes and leaves the rest in the source until the consumer reads (backpressure)', async () => {
    const source = new PassThrough();
    source.write('"a","b"\n');
    const peeked = peekThenReplay(source, 4, (e) => e);
    const { head, complete, body } = await peeked;
    assert.equal(head.toString(), '"a","b"\n');
    assert.equal(complete, false);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 32; i++) source.write(chunk);
    source.end();
    await new Promise((r) => setImmediate(r));
    assert.equal(body.readableLength, 0, 'nothing pulled before the consumer reads');
    assert.ok(source.readableLength > 0, 'the rest waits in the source');
    const all = Buffer.concat(await body.toArray());
    assert.equal(all.length, 8 + 32 * chunk.length);
    assert.equal(all.subarray(0, 8).toString(), '"a","b"\n');
  });
});

describe('gateway client: endpoint policy', () => {
  it('refuses plain HTTP off loopback before any request', async () => {
    const httpSpy = mock.method(http, 'request');
    const httpsSpy = mock.method(https, 'request');
    try {
      const { options, events } = fast('http://example.com/paynet-ui/services/v2/rpt-engine');
      const e = await expectError(fetchReport(options), InsecureEndpoint);
      assert.match(e.message, /example\.com/);
      assert.equal(httpSpy.mock.callCount(), 0);
      assert.equal(httpsSpy.mock.callCount(), 0);
      assert.deepEqual(events, []);
    } finally {
      httpSpy.mock.restore();
      httpsSpy.mock.restore();
    }
  });

  it('allows loopback only', () => {
    for (const host of ['localhost', '127.0.0.1', '127.8.9.10', '[::1]', '[::ffff:7f00:1]']) assert.ok(isLoopbackHost(host), host);
    for (const host of ['example.com', '128.0.0.1', 'localhost.example.com', '127.0.0.1.nip.io', '[::2]', '10.0.0.1']) {
      assert.ok(!isLoopbackHost(host), host);
    }
    assert.equal(secureEndpoint('http://[::1]:8080/x').port, '8080');
    assert.equal(secureEndpoint('https://gw.example.com/x').hostname, 'gw.example.com');
    assert.throws(() => secureEndpoint('http://127.0.0.1.nip.io/x'), InsecureEndpoint);
    assert.throws(() => secureEndpoint('ftp://gw.example.com/x'), ConfigurationError);
    assert.throws(() => secureEndpoint('not a url'), ConfigurationError);
  });
});

describe('describeRequest (reports sign)', () => {
  const now = new Date('2024-05-02T03:00:00Z');
  const nonce = 'fixedNonce1234567890';

  it('returns the Authorization header for the given nonce and time, and a curl line that quotes safely', async () => {
    const d = describeRequest({ endpointUrl: `https://gw.example.com${PATH}?a=b&c=d`, secret: hmacSecret, body: reportBody, now: () => now, nonce: () => nonce });
    const expected = signRequest(hmacSecret, { url: new URL(`https://gw.example.com${PATH}?a=b&c=d`), nonce, timestamp: String(now.getTime() / 1000) });
    assert.equal(d.authorization, expected.authorization);
    assert.equal(d.body, JSON.stringify(reportBody));
    // Let a real shell split the command line and print each argument NUL-terminated.
    const args = d.curl.replace(/^curl /, '');
    const { stdout } = await promisify(execFile)('sh', ['-c', `set -- ${args}; for a in "$@"; do printf '%s\\0' "$a"; done`]);
    assert.deepEqual(stdout.split('\0').slice(0, -1), [
      '-sS',
      '--compressed',
      '-X',
      'POST',
      `https://gw.example.com${PATH}?a=b&c=d`,
      '-H',
      'Content-Type: application/json',
      '-H',
      'Accept: text/csv, application/csv, application/pdf, application/octet-stream;q=0.5, */*;q=0.1',
      '-H',
      `Authorization: ${expected.authorization}`,
      '--data-binary',
      JSON.stringify(reportBody),
    ]);
  });

  it('produces a curl command that the server accepts as correctly signed (RSA)', async (t) => {
    if (skipWithoutTool(t, 'curl')) return;
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.end('"ok"\n');
    });
    const d = describeRequest({ endpointUrl: server.url, secret: rsaSecret, body: reportBody });
    const { stdout } = await promisify(execFile)('sh', ['-c', d.curl]);
    assert.equal(stdout, '"ok"\n');
    assert.equal(server.seen[0]!.body, JSON.stringify(reportBody));
    verifySignature(server.seen[0]!, server.url, rsaSecret, rsaPublicKey);
  });

  it('applies the endpoint policy too', () => {
    assert.throws(() => describeRequest({ endpointUrl: 'http://example.com/x', secret: hmacSecret, body: {} }), InsecureEndpoint);
  });
});

describe('helpers', () => {
  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2024-05-02T03:00:00Z');
    assert.equal(parseRetryAfter('2', now), 2000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Thu, 02 May 2024 03:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Thu, 02 May 2024 02:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('1.5', now), undefined);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });

  it('draws full-jitter delays under doubling ceilings, with Retry-After as a floor and maxDelay as a cap', () => {
    const policy = { attempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000 };
    assert.equal(retryDelayMs(1, policy, () => 0.999), 999);
    assert.equal(retryDelayMs(3, policy, () => 0.5), 2000);
    assert.equal(retryDelayMs(10, policy, () => 0.999), 29_970);
    assert.equal(retryDelayMs(1, policy, () => 0, 2000), 2000);
    assert.equal(retryDelayMs(1, policy, () => 0, 120_000), 30_000);
  });

  it('sniffs the first bytes', () => {
    assert.equal(sniff(Buffer.from('\ufeff"a","b"\r\n')), 'csv-like');
    assert.equal(sniff(Buffer.from('a;b\n1;2')), 'csv-like');
    assert.equal(sniff(Buffer.from('  <!doctype html>')), 'markup');
    assert.equal(sniff(Buffer.from('%PDF-1.7')), 'pdf');
    assert.equal(sniff(Buffer.from('{"error":1}')), 'json');
    assert.equal(sniff(Buffer.from([0x00, 0x01, 0x2c])), 'unknown');
    assert.equal(sniff(Buffer.from('just words')), 'unknown');
  });
});

describe('secrets', () => {
  it('never puts the control key, the PEM or a signature into an error message or an event', () => {
    assert.ok(signaturesSeen.size > 5, 'the tests above saw signatures');
    assert.ok(messagesSeen.length > 5, 'the tests above saw errors');
    const texts = [...messagesSeen, ...eventsSeen.map((e) => JSON.stringify(e))];
    for (const text of texts) {
      assert.ok(!text.includes(CONTROL_KEY), text);
      assert.ok(!text.includes(PEM_BODY), text);
      // An echoed header may appear (the 400 test), but only with its signature redacted.
      assert.doesNotMatch(text, /oauth_signature=\\?"(?!\[signature\])/, text);
      for (const s of signaturesSeen) {
        assert.ok(!text.includes(s) && !text.includes(encodeURIComponent(s)), `a signature leaked into: ${text}`);
      }
    }
  });
});
