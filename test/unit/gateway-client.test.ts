import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { AuthenticationRefused, ConfigurationError, GatewayUnavailable, UnexpectedAnswer } from '../../functions/core/errors.js';
import { abortReason } from '../../functions/core/gateway/attempt-watch.js';
import { fetchReport, type GatewayClientOptions, type GatewayEvent } from '../../functions/core/gateway/client.js';

/**
 * The gateway client against real HTTP servers on loopback, one per test (functions/core/gateway/client.ts and
 * its attempt watch, attempt-watch.ts). Back-off waits go through the client's sleep seam, which records what
 * was asked; time-outs are a few milliseconds against a server that never answers, and nothing asserts time.
 */

const SECRET = { login: 'merchant-1', controlKey: 'k' };
const HEADER = ['Merchant_Name', 'Amount'];
const CSV = '"Merchant_Name","Amount"\r\n"Shop","1.00"\r\n'; // 26 + 15 = 41 bytes
/** More than the client's 1 KB peek, so the report is handed over before the server stops: 26 + 70 * 15 = 1076 bytes. */
const LONG = `"Merchant_Name","Amount"\r\n${'"Shop","1.00"\r\n'.repeat(70)}`;

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback server answering the n-th request with handlers[n] (the last one again after that). */
async function serve(t: { after: (fn: () => unknown) => void }, ...handlers: Handler[]): Promise<{ url: string; requests: Array<{ req: IncomingMessage; body: string }> }> {
  const requests: Array<{ req: IncomingMessage; body: string }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      requests.push({ req, body });
      handlers[Math.min(requests.length, handlers.length) - 1]!(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpt`, requests };
}

const answer = (status: number, body: string | Buffer, headers: http.OutgoingHttpHeaders = { 'Content-Type': 'text/csv' }): Handler => (_req, res) => {
  res.writeHead(status, headers);
  res.end(body);
};

/** Options with a recording sleep and event list. */
function client(url: string, extra: Partial<GatewayClientOptions> = {}) {
  const events: GatewayEvent[] = [];
  const slept: number[] = [];
  const options: GatewayClientOptions = {
    endpointUrl: url,
    secret: SECRET,
    body: { reportName: 'daily' },
    expect: { format: 'CSV', delimiter: ',', encoding: 'UTF-8', header: HEADER },
    retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 1000 },
    random: () => 0.5,
    sleep: async (ms) => void slept.push(ms),
    onEvent: (e) => events.push(e),
    ...extra,
  };
  return { options, events, slept };
}

const readAll = async (body: Readable) => Buffer.concat(await body.toArray()).toString();
const without = <T extends object>(events: T[], key: string) => events.map((e) => Object.fromEntries(Object.entries(e).filter(([k]) => k !== key)));

describe('fetchReport: a report', () => {
  it('POSTs the signed compact JSON and hands back the report with what it knows of it', async (t) => {
    const server = await serve(t, answer(200, CSV, { 'Content-Type': 'text/csv; charset=UTF-8' }));
    const { options, events } = client(server.url);
    const started = performance.now();
    const report = await fetchReport(options);
    assert.equal(await readAll(report.body), CSV);
    const took = performance.now() - started;
    for (const event of events) {
      const { elapsedMs } = event as { elapsedMs?: number };
      if (event.type === 'response' || event.type === 'body-end') assert.ok(typeof elapsedMs === 'number' && elapsedMs >= 0 && elapsedMs <= Math.ceil(took), `${event.type}: ${elapsedMs} ms of the attempt, within the call's ${took} ms`);
    }
    assert.deepEqual(
      { ...report, body: undefined, wireBytes: report.wireBytes() },
      { status: 200, contentType: 'text/csv; charset=UTF-8', kind: 'csv', fileExtension: 'csv', body: undefined, attempts: 1, contentCoding: 'identity', wireBytes: 41, firstLine: '"Merchant_Name","Amount"', headerMatches: true },
    );
    const [{ req, body }] = server.requests as [{ req: IncomingMessage; body: string }];
    assert.equal(req.method, 'POST');
    assert.equal(body, '{"reportName":"daily"}');
    assert.equal(req.headers['content-length'], '22');
    assert.equal(req.headers['accept-encoding'], 'gzip, deflate, br');
    assert.match(req.headers.authorization ?? '', /^OAuth realm="", oauth_consumer_key="merchant-1", oauth_nonce="[^"]+", oauth_signature="[^"]+", oauth_signature_method="HMAC-SHA1"/);
    assert.deepEqual(without(events, 'elapsedMs'), [
      { type: 'attempt', attempt: 1, maxAttempts: 3, endpoint: server.url, login: 'merchant-1', signatureMethod: 'HMAC-SHA1' },
      { type: 'response', attempt: 1, status: 200, contentType: 'text/csv; charset=UTF-8', contentCoding: 'identity' },
      { type: 'accepted', attempt: 1, status: 200, contentType: 'text/csv; charset=UTF-8', contentCoding: 'identity', kind: 'csv', headerMatches: true },
      { type: 'body-end', attempt: 1, bytes: 41, wireBytes: 41 },
    ]);
  });

  it('decodes a gzip answer, counting wire bytes apart, and says the header differs with the first line', async (t) => {
    const drifted = '"Merchant_Name","Total"\r\n"Shop","1.00"\r\n';
    const gz = zlib.gzipSync(drifted);
    const server = await serve(t, answer(200, gz, { 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip' }));
    const { options, events } = client(`${server.url}?q=1`, { acceptEncoding: false });
    const report = await fetchReport(options);
    assert.equal(await readAll(report.body), drifted);
    assert.equal(report.contentCoding, 'gzip');
    assert.equal(report.wireBytes(), gz.length);
    assert.equal(report.headerMatches, false);
    assert.equal(report.firstLine, '"Merchant_Name","Total"');
    assert.equal(server.requests[0]!.req.headers['accept-encoding'], undefined);
    assert.deepEqual(events.find((e) => e.type === 'accepted'), {
      type: 'accepted', attempt: 1, status: 200, contentType: 'application/octet-stream', contentCoding: 'gzip', kind: 'csv', headerMatches: false, firstLine: '"Merchant_Name","Total"',
    });
    assert.equal(events[0]!.type === 'attempt' && events[0]!.endpoint, server.url);
  });

  it('a PDF has no first line or header verdict; a logger that throws does not fail the call', async (t) => {
    const server = await serve(t, answer(200, '%PDF-1.7\n%%EOF\n', { 'Content-Type': 'application/pdf' }));
    const report = await fetchReport({ ...client(server.url).options, expect: undefined, onEvent: () => { throw new Error('logger down'); } });
    assert.deepEqual([report.kind, report.fileExtension, 'firstLine' in report, 'headerMatches' in report], ['pdf', 'pdf', false, false]);
    await readAll(report.body);
  });
});

describe('fetchReport: an answer without a content type', () => {
  it('is told by its bytes, and its content type is reported as empty', async (t) => {
    const server = await serve(t, answer(200, CSV, {}));
    const { options, events } = client(server.url);
    const report = await fetchReport(options);
    await readAll(report.body);
    assert.deepEqual([report.kind, report.contentType], ['csv', '']);
    assert.deepEqual(without(events.filter((event) => event.type === 'response'), 'elapsedMs'), [{ type: 'response', attempt: 1, status: 200, contentType: '', contentCoding: 'identity' }]);
  });
});

describe('fetchReport: a PDF in the events', () => {
  it("a PDF's accepted event carries no header verdict and no first line, not even as undefined", async (t) => {
    const server = await serve(t, answer(200, '%PDF-1.7\n%%EOF\n', { 'Content-Type': 'application/pdf' }));
    const events: object[] = [];
    const report = await fetchReport({ ...client(server.url).options, expect: undefined, onEvent: (event) => events.push(event) });
    await readAll(report.body);
    const accepted = events.find((event) => (event as { type: string }).type === 'accepted');
    assert.deepEqual(accepted, { type: 'accepted', attempt: 1, status: 200, contentType: 'application/pdf', contentCoding: 'identity', kind: 'pdf' });
  });
});

describe('fetchReport: how far the client reads before deciding', () => {
  // 250 quoted names of 13 characters and 249 commas: a 3,499-byte header row.
  const names = Array.from({ length: 250 }, (_, i) => `column_${String(i).padStart(4, '0')}`);
  const wide = names.map((n) => `"${n}"`).join(',');

  it('a header row longer than the first 1 KB is read to its line end (within 64 KB) before deciding', async (t) => {
    const server = await serve(t, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.write(wide.slice(0, 2000));
      setTimeout(() => res.end(`${wide.slice(2000)}\r\n${names.map(() => '"1"').join(',')}\r\n`), 50);
    });
    const report = await fetchReport(client(server.url, { expect: { format: 'CSV', delimiter: ',', encoding: 'UTF-8', header: names } }).options);
    assert.equal(report.headerMatches, true);
    assert.equal(report.firstLine, wide.slice(0, 200));
    assert.equal((await readAll(report.body)).length, 3499 + 2 + 250 * 4 - 1 + 2);
  });

  it('a first line that has not ended after 64 KB of a body that goes on is not a report', async (t) => {
    const server = await serve(t, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.write(`"a","${'x'.repeat(70_000)}`);
    });
    await assert.rejects(fetchReport(client(server.url).options), (e: unknown) => e instanceof UnexpectedAnswer && /its first line does not end within the first bytes/.test(e.message));
  });
});

describe('fetchReport: retries', () => {
  it('retries a busy gateway after the Retry-After it asks for, with a new nonce each time', async (t) => {
    const server = await serve(t, answer(503, 'busy', { 'Retry-After': '2' }), answer(200, CSV));
    const { options, events, slept } = client(server.url, { retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 5000 } });
    const report = await fetchReport(options);
    await readAll(report.body);
    assert.equal(report.attempts, 2);
    assert.deepEqual(slept, [2000]);
    assert.deepEqual(events.find((e) => e.type === 'retry'), { type: 'retry', attempt: 1, problem: 'HTTP 503 Service Unavailable (Retry-After: 2 s)', delayMs: 2000, retryAfterMs: 2000 });
    const nonce = (i: number) => /oauth_nonce="([^"]+)"/.exec(server.requests[i]!.req.headers.authorization!)![1];
    assert.notEqual(nonce(0), nonce(1));
  });

  it('gives up after the last attempt with GatewayUnavailable naming the last problem; back-off doubles', async (t) => {
    const server = await serve(t, answer(429, 'slow down'));
    const { options, slept } = client(server.url);
    await assert.rejects(fetchReport(options), (e: unknown) => e instanceof GatewayUnavailable && e.attempts === 3 && e.lastProblem === 'HTTP 429 Too Many Requests');
    assert.equal(server.requests.length, 3);
    // random 0.5 of a ceiling of 100, then 200 ms.
    assert.deepEqual(slept, [50, 100]);
  });

  it('without a sleep seam it waits for real (0 ms here); an abort during the wait ends the call with its reason', async (t) => {
    const server = await serve(t, answer(503, 'busy'), answer(200, CSV));
    const { options } = client(server.url, { retry: { attempts: 2, baseDelayMs: 0, maxDelayMs: 0 } });
    const report = await fetchReport({ ...options, sleep: undefined });
    assert.equal(report.attempts, 2);
    await readAll(report.body);
    const busy = { ...options, endpointUrl: (await serve(t, answer(503, 'busy'))).url };
    const controller = new AbortController();
    const sleep = async (_ms: number, signal?: AbortSignal) => {
      controller.abort(new Error('stopped during back-off'));
      throw signal?.reason;
    };
    await assert.rejects(fetchReport({ ...busy, signal: controller.signal, sleep }), { message: 'stopped during back-off' });
    // A sleep that fails with its own AbortError (as node:timers does) still ends the call with the signal's reason.
    const aborting = new AbortController();
    const timersLike = async () => {
      aborting.abort(new Error('stopped by the run'));
      throw new DOMException('The operation was aborted', 'AbortError');
    };
    await assert.rejects(fetchReport({ ...busy, signal: aborting.signal, sleep: timersLike }), { message: 'stopped by the run' });
    // A sleep that fails on its own, not aborted, is passed on as it is.
    await assert.rejects(fetchReport({ ...busy, sleep: async () => { throw new Error('timer broke'); } }), { message: 'timer broke' });
  });

  it("the real wait is a real wait, which the signal cuts short with its reason", async (t) => {
    const server = await serve(t, answer(503, 'busy'));
    const controller = new AbortController();
    const { options } = client(server.url, { retry: { attempts: 2, baseDelayMs: 600_000, maxDelayMs: 600_000 }, random: () => 1 });
    // 200 ms into the wait: long enough for a second request to have reached the server had there been no wait.
    const onEvent = (event: GatewayEvent) => {
      if (event.type === 'retry') setTimeout(() => controller.abort(new Error('stopped during a ten-minute back-off')), 200);
    };
    await assert.rejects(fetchReport({ ...options, sleep: undefined, signal: controller.signal, onEvent }), { message: 'stopped during a ten-minute back-off' });
    assert.equal(server.requests.length, 1, 'no second attempt: the wait had not ended');
  });

  it('a busy status with no name of its own is named by its number alone', async (t) => {
    const server = await serve(t, answer(599, 'busy'));
    const { options } = client(server.url, { retry: { attempts: 1 } });
    await assert.rejects(fetchReport(options), (e: unknown) => e instanceof GatewayUnavailable && e.lastProblem === 'HTTP 599');
  });

  it('a refused connection is retried and then named with host and port', async (t) => {
    const server = await serve(t, answer(200, CSV));
    const port = new URL(server.url).port;
    // A port just bound and closed: nothing listens there.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { options } = client(`http://127.0.0.1:${deadPort}/rpt`, { retry: { attempts: 2, baseDelayMs: 0, maxDelayMs: 0 } });
    await assert.rejects(fetchReport(options), (e: unknown) =>
      e instanceof GatewayUnavailable && e.attempts === 2 && e.lastProblem === `connection refused by 127.0.0.1:${deadPort} (ECONNREFUSED): nothing accepts connections there; check the URL's host and port`
      // The socket's own error stays attached, for the log's stack.
      && (e.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED');
    assert.notEqual(port, String(deadPort));
  });

  it('a connection that never completes (here: a DNS lookup that never answers) ends the attempt at the connect time-out', async (t) => {
    const server = await serve(t, answer(200, CSV));
    const port = new URL(server.url).port;
    const { options } = client(`http://localhost:${port}/rpt`, { retry: { attempts: 1 }, timeouts: { connectMs: 20 }, lookup: () => undefined });
    await assert.rejects(fetchReport(options), (e: unknown) => e instanceof GatewayUnavailable && e.lastProblem === 'could not connect within 20 ms');
    assert.equal(server.requests.length, 0);
  });

  it('an answer slower than the connect time-out is no connect failure once connected', async (t) => {
    const server = await serve(t, (_req, res) => void setTimeout(() => answer(200, CSV)(_req, res, ''), 600));
    const report = await fetchReport(client(server.url, { retry: { attempts: 1 }, timeouts: { connectMs: 300 } }).options);
    assert.equal(await readAll(report.body), CSV);
  });

  it('an answer that breaks off in its first bytes is retried', async (t) => {
    const cut: Handler = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv', 'Content-Length': '1000' });
      res.write('"Merchant_Name"');
      setImmediate(() => res.destroy());
    };
    const server = await serve(t, cut);
    const { options } = client(server.url, { retry: { attempts: 1 } });
    await assert.rejects(fetchReport(options), (e: unknown) => {
      assert.ok(e instanceof GatewayUnavailable);
      assert.match(e.lastProblem, /^the answer broke off in its first bytes: /);
      assert.equal((e.cause as NodeJS.ErrnoException | undefined)?.code, 'ECONNRESET', 'the network error is kept as the cause, for the log');
      return true;
    });
  });

  it('no complete answer within the total time-out is retried, then reported with the limit', async (t) => {
    const server = await serve(t, () => undefined);
    const { options } = client(server.url, { retry: { attempts: 1 }, timeouts: { totalMs: 30 } });
    await assert.rejects(fetchReport(options), (e: unknown) => e instanceof GatewayUnavailable && e.lastProblem === 'no complete answer within the total time-out of 30 ms');
  });
});

describe('fetchReport: what is not retried', () => {
  it('a refusal, a redirect and an undecodable coding fail at once, after one request', async (t) => {
    const refusal = await serve(t, answer(200, 'You are not authorized.', { 'Content-Type': 'text/plain' }));
    await assert.rejects(fetchReport(client(refusal.url).options), AuthenticationRefused);
    assert.equal(refusal.requests.length, 1);
    const zstd = await serve(t, answer(200, 'xx', { 'Content-Type': 'text/csv', 'Content-Encoding': 'zstd' }));
    await assert.rejects(fetchReport(client(zstd.url).options), (e: unknown) =>
      e instanceof UnexpectedAnswer && e.message.startsWith('The gateway\'s answer is not a report (an answer in the content coding "zstd", which this client cannot decode (it asks for gzip, deflate, br and decodes those whether asked or not); HTTP 200, content type "text/csv"). It began: "".'));
    assert.equal(zstd.requests.length, 1);
  });

  it('an echo of the request never shows the signature, raw or percent-encoded', async (t) => {
    const echo: Handler = (req, res) => {
      const encoded = /oauth_signature="([^"]+)"/.exec(req.headers.authorization!)![1]!;
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<html>${decodeURIComponent(encoded)} ${encoded}</html>`);
    };
    const server = await serve(t, echo);
    const e = await fetchReport(client(server.url).options).catch((error: unknown) => error);
    assert.ok(e instanceof UnexpectedAnswer);
    assert.equal(e.firstBytes, '<html>[signature] [signature]</html>');
  });

  it('refuses time-outs that are not positive, naming the field and value', async () => {
    for (const [timeouts, message] of [
      [{ connectMs: 0 }, 'timeouts.connectMs must be a positive number of milliseconds (got 0).'],
      [{ totalMs: -1 }, 'timeouts.totalMs must be a positive number of milliseconds (got -1).'],
      [{ totalMs: Number.POSITIVE_INFINITY }, 'timeouts.totalMs must be a positive number of milliseconds (got Infinity).'],
    ] as const) {
      await assert.rejects(fetchReport({ ...client('http://127.0.0.1:9/rpt').options, timeouts }), (e: unknown) => e instanceof ConfigurationError && e.message === message);
    }
  });
});

describe('fetchReport: after the hand-over', () => {
  it('a break of the body is GatewayUnavailable of the body, with the bytes so far, and a body-error event', async (t) => {
    const server = await serve(t, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv', 'Content-Length': '100000' });
      res.write(LONG);
      setImmediate(() => res.destroy());
    });
    const { options, events } = client(server.url);
    const report = await fetchReport(options);
    await assert.rejects(readAll(report.body), (e: unknown) => e instanceof GatewayUnavailable && e.lastProblem.startsWith('the connection broke after 1076 byte(s) of the report: '));
    const bodyError = events.find((e) => e.type === 'body-error');
    assert.ok(bodyError?.type === 'body-error' && bodyError.bytes === 1076 && bodyError.problem.startsWith('the connection broke after 1076 byte(s)'));
  });

  it('the total time-out destroys a body that stalls, naming the bytes received', async (t) => {
    const server = await serve(t, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.write(LONG);
    });
    const report = await fetchReport(client(server.url, { timeouts: { totalMs: 1000 } }).options);
    await assert.rejects(readAll(report.body), (e: unknown) => e instanceof GatewayUnavailable && e.lastProblem === 'the total time-out of 1000 ms ran out after 1076 byte(s) of the report');
  });

  it('an abort destroys the body with the signal\'s reason; an aborted signal stops before any request', async (t) => {
    const server = await serve(t, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.write(LONG);
    });
    const controller = new AbortController();
    const report = await fetchReport(client(server.url, { signal: controller.signal }).options);
    const reading = readAll(report.body);
    controller.abort(new Error('run stopped'));
    await assert.rejects(reading, { message: 'run stopped' });
    const before = server.requests.length;
    await assert.rejects(fetchReport(client(server.url, { signal: controller.signal }).options), { message: 'run stopped' });
    assert.equal(server.requests.length, before);
    const plain = new AbortController();
    plain.abort();
    await assert.rejects(fetchReport(client(server.url, { signal: plain.signal }).options), { name: 'AbortError' });
  });

  it('an abort whose reason is not an Error destroys the body with an Error of that text', async (t) => {
    const server = await serve(t, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv' });
      res.write(LONG);
    });
    const controller = new AbortController();
    const report = await fetchReport(client(server.url, { signal: controller.signal }).options);
    const reading = readAll(report.body);
    controller.abort('operator pressed stop');
    await assert.rejects(reading, (e: unknown) => e instanceof Error && e.message === 'operator pressed stop');
  });

  it('a signal without a reason (an older AbortSignal) aborts with an AbortError that says so', () => {
    const reason = abortReason({ aborted: true, reason: undefined } as unknown as AbortSignal);
    assert.ok(reason instanceof DOMException);
    assert.equal(reason.name, 'AbortError');
    assert.equal(reason.message, 'The gateway call was aborted.');
  });

  it('once the body is read, the call leaves no abort listener on the signal', async (t) => {
    const server = await serve(t, answer(200, CSV));
    const controller = new AbortController();
    const report = await fetchReport(client(server.url, { signal: controller.signal }).options);
    await readAll(report.body);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('an abort while waiting for the answer ends the call with the reason, not a retry', async (t) => {
    const controller = new AbortController();
    const server = await serve(t, () => controller.abort(new Error('stopped while waiting')));
    const { options, slept } = client(server.url, { signal: controller.signal });
    await assert.rejects(fetchReport(options), { message: 'stopped while waiting' });
    assert.deepEqual(slept, []);
    assert.equal(server.requests.length, 1);
  });
});
