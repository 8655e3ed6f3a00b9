import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { renderBody } from '../../functions/core/gateway/body-template.js';
import { DECODABLE_CODINGS } from '../../functions/core/gateway/content-coding.js';
import { ConfigurationError, EndpointUnreachable, GatewayUnavailable, InsecureEndpoint, UnexpectedAnswer } from '../../functions/core/errors.js';
import { expectationOf } from '../../functions/core/gateway/answer.js';
import { fetchReport, type GatewayClientOptions, type GatewayEvent } from '../../functions/core/gateway/client.js';
import { describeRequest, validateGatewayUrl } from '../../functions/core/gateway/request.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { runLocal } from '../../local/cli/run.js';
import { parseStandaloneArgs, startSimulator, type Simulator, type TransportOptions } from '../../local/simulator/index.js';

/**
 * How the answer travels, over real HTTP on loopback: labels, content codings (asked and unasked),
 * trickled chunks, and connections that fail in ways that say what to fix. The simulator's transport
 * options produce most answers; a few hand-written servers produce what it never would.
 */

const report = loadCatalog().get('transactions');
const window = windowAt(parseLocalDateTime('2026-11-20'), parseWindowSize(report.window));
const body = renderBody(report.bodyTemplate, window);
const expect = expectationOf(report);
const ROWS = 120;

const simulators: Simulator[] = [];
const servers: http.Server[] = [];
after(async () => {
  for (const s of simulators) await s.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function simulator(transport?: TransportOptions): Promise<Simulator> {
  const sim = await startSimulator({ rowsPerDay: ROWS, transport });
  simulators.push(sim);
  return sim;
}

const quick = (endpointUrl: string, secret: GatewaySecret, extra: Partial<GatewayClientOptions> = {}) => {
  const events: GatewayEvent[] = [];
  const sleeps: number[] = [];
  const options: GatewayClientOptions = {
    endpointUrl,
    secret,
    body,
    expect,
    retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    timeouts: { connectMs: 2_000, totalMs: 10_000 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    onEvent: (e) => events.push(e),
    ...extra,
  };
  return { options, events, sleeps };
};

async function fetchAll(options: GatewayClientOptions) {
  const answer = await fetchReport(options);
  const bytes = Buffer.concat(await answer.body.toArray());
  return { answer, bytes };
}

/** What the simulator sends with no transport option: the oracle for every other mode. */
let reference: Buffer;
before(async () => {
  const sim = await simulator();
  reference = (await fetchAll(quick(sim.url, sim.credentials.hmac).options)).bytes;
  assert.ok(reference.length > 10_000);
});

async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/paynet-ui/services/v2/rpt-engine`;
}

describe('a report under any label', () => {
  for (const contentType of ['text/plain', 'text/csv', 'application/octet-stream', 'application/vnd.ms-excel', 'application/x-download', '']) {
    it(`loads a report sent as ${contentType || '(no Content-Type)'}, byte for byte, header recognised`, async () => {
      const sim = await simulator({ contentType });
      const { answer, bytes } = await fetchAll(quick(sim.url, sim.credentials.hmac).options);
      assert.equal(answer.kind, 'csv');
      assert.equal(answer.contentType, contentType);
      assert.equal(answer.headerMatches, true);
      assert.ok(bytes.equals(reference));
    });
  }
});

describe('content codings', () => {
  // Every coding the client decodes, each sent by the simulator's encoder of the same entry (content-coding.ts).
  for (const coding of DECODABLE_CODINGS) {
    for (const asked of [true, false]) {
      it(`decodes ${coding} ${asked ? 'asked for' : 'sent unasked'}: the decoded report, and the wire size beside it`, async () => {
        const sim = await simulator({ compress: coding });
        const { options, events } = quick(sim.url, sim.credentials.hmac, asked ? {} : { acceptEncoding: false });
        const { answer, bytes } = await fetchAll(options);
        assert.ok(bytes.equals(reference), 'the decoded bytes are the report');
        assert.equal(answer.contentCoding, coding);
        assert.ok(answer.wireBytes() > 0 && answer.wireBytes() < bytes.length / 2, `${answer.wireBytes()} wire bytes for ${bytes.length}`);
        assert.equal(sim.requests.at(-1)!.coding, `${coding} (${asked ? 'asked' : 'unasked'})`);
        const end = events.find((e) => e.type === 'body-end');
        assert.ok(end && end.type === 'body-end' && end.wireBytes === answer.wireBytes() && end.bytes === bytes.length);
      });
    }
  }

  it('sends Accept-Encoding: gzip, deflate, br', async () => {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(String(req.headers['accept-encoding']));
      res.writeHead(200, { 'Content-Type': 'text/csv' }).end(reference);
    });
    await fetchAll(quick(url, { login: 'x', controlKey: 'y' }).options);
    assert.deepEqual(seen, ['gzip, deflate, br']);
  });

  it('decodes raw DEFLATE sent as "deflate" and x-gzip, as lenient clients do', async () => {
    const bodies = [
      { coding: 'deflate', data: zlib.deflateRawSync(reference) },
      { coding: 'x-gzip', data: zlib.gzipSync(reference) },
    ];
    let i = 0;
    const url = await serve((_req, res) => {
      const b = bodies[i++]!;
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Encoding': b.coding }).end(b.data);
    });
    for (const b of bodies) {
      const { bytes, answer } = await fetchAll(quick(url, { login: 'x', controlKey: 'y' }).options);
      assert.ok(bytes.equals(reference), b.coding);
      assert.equal(answer.wireBytes(), b.data.length);
    }
  });

  it('a gzip stream that breaks off errors the body as GatewayUnavailable (the connection ended cleanly)', async () => {
    const big = Buffer.concat(Array.from({ length: 40 }, () => reference));
    const gz = zlib.gzipSync(big);
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/csv', 'Content-Encoding': 'gzip' });
      res.end(gz.subarray(0, Math.floor(gz.length / 2)));
    });
    const { options, events } = quick(url, { login: 'x', controlKey: 'y' });
    const answer = await fetchReport(options);
    await assert.rejects(answer.body.toArray(), (e: unknown) => {
      assert.ok(e instanceof GatewayUnavailable, String(e));
      assert.match(e.lastProblem, /gzip-compressed answer broke off after \d+ decoded byte\(s\)/);
      return true;
    });
    assert.ok(events.some((e) => e.type === 'body-error'));
  });

  it('refuses an unknown coding by name, after one request', async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      res.writeHead(200, { 'Content-Type': 'text/csv', 'Content-Encoding': 'compress' }).end('whatever');
    });
    await assert.rejects(fetchReport(quick(url, { login: 'x', controlKey: 'y' }).options), (e: unknown) => {
      assert.ok(e instanceof UnexpectedAnswer, String(e));
      assert.match(e.message, /content coding "compress"/);
      return true;
    });
    assert.equal(calls, 1);
  });
});

describe('simulator transport options', () => {
  it('reads --content-type, --compress and --chunked, and refuses an unknown compression', async () => {
    assert.deepEqual(parseStandaloneArgs(['--content-type', 'none', '--compress', 'br', '--chunked']).transport, { contentType: '', compress: 'br', chunked: true });
    assert.deepEqual(parseStandaloneArgs(['--content-type', 'text/plain']).transport, { contentType: 'text/plain' });
    assert.equal(parseStandaloneArgs([]).transport, undefined);
    assert.throws(() => parseStandaloneArgs(['--compress', 'zip']), /--compress must be one of gzip, deflate, br/);
    await assert.rejects(startSimulator({ transport: { compress: 'lzma' as 'gzip' } }), /Unknown compression "lzma"/);
  });

  it('dropMidBody with --compress: the client sees a compressed stream break off, as GatewayUnavailable', async () => {
    const sim = await startSimulator({ rowsPerDay: 2000, transport: { compress: 'gzip' }, fault: { mode: 'dropMidBody' } });
    simulators.push(sim);
    // Where the break lands depends on how the socket's last bytes and its reset race on a busy machine:
    // inside the first bytes the client reads before deciding (fetchReport rejects), or later (the body does).
    const read = async () => {
      const answer = await fetchReport(quick(sim.url, sim.credentials.hmac).options);
      await answer.body.toArray();
    };
    await assert.rejects(read(), (e: unknown) => e instanceof GatewayUnavailable && /broke/.test(e.lastProblem));
  });
});

describe('chunked, trickled answers', () => {
  it('loads a report sent without Content-Length in small pieces', async () => {
    const sim = await simulator({ chunked: true, trickleBytes: 256 });
    const { answer, bytes } = await fetchAll(quick(sim.url, sim.credentials.hmac).options);
    assert.ok(bytes.equals(reference));
    assert.equal(answer.headerMatches, true);

    // The same request by hand, to see the transport itself: no Content-Length, many small pieces.
    const d = describeRequest({ endpointUrl: sim.url, secret: sim.credentials.hmac, body });
    const pieces: number[] = [];
    const headers = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      const req = http.request(sim.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: d.authorization } }, (res) => {
        res.on('data', (c: Buffer) => pieces.push(c.length));
        res.on('end', () => resolve(res.headers));
      });
      req.on('error', reject);
      req.end(d.body);
    });
    assert.equal(headers['content-length'], undefined);
    assert.equal(headers['transfer-encoding'], 'chunked');
    assert.ok(pieces.length >= Math.floor(reference.length / 256) / 2, `${pieces.length} pieces`);
    assert.ok(Math.max(...pieces) <= 256 * 4);
  });
});

describe('connections that fail say what to fix', () => {
  it('host not found: EndpointUnreachable at once (one attempt, no retry), naming the host', async () => {
    const lookup = ((hostname: string, _opts: unknown, callback: (e: NodeJS.ErrnoException) => void) => {
      const e: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      e.code = 'ENOTFOUND';
      process.nextTick(() => callback(e));
    }) as unknown as GatewayClientOptions['lookup'];
    const { options, events, sleeps } = quick('https://gateway.example.invalid/paynet-ui/services/v2/rpt-engine', { login: 'x', controlKey: 'y' }, { lookup });
    await assert.rejects(fetchReport(options), (e: unknown) => {
      assert.ok(e instanceof EndpointUnreachable, String(e));
      assert.match(e.message, /"gateway\.example\.invalid"/);
      assert.match(e.message, /Check the URL/);
      return true;
    });
    assert.equal(events.filter((e) => e.type === 'attempt').length, 1);
    assert.deepEqual(sleeps, []);
  });

  it('connection refused: retried, and the message names host and port and says to check the URL', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise((r) => probe.close(r));
    const { options, events } = quick(`http://127.0.0.1:${port}/paynet-ui/services/v2/rpt-engine`, { login: 'x', controlKey: 'y' });
    await assert.rejects(fetchReport(options), (e: unknown) => {
      assert.ok(e instanceof GatewayUnavailable, String(e));
      assert.equal(e.attempts, 2);
      assert.match(e.lastProblem, new RegExp(`connection refused by 127\\.0\\.0\\.1:${port}.*check the URL's host and port`));
      return true;
    });
    assert.equal(events.filter((e) => e.type === 'attempt').length, 2);
  });

  it('an untrusted TLS certificate: EndpointUnreachable at once, naming the CA; the same server with its CA trusted works', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'tls-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    try {
      await promisify(execFile)('openssl', [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
        '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ]);
    } catch {
      t.skip('openssl is not installed');
      return;
    }
    const [key, cert] = await Promise.all([readFile(join(dir, 'key.pem')), readFile(join(dir, 'cert.pem'))]);
    const server = https.createServer({ key, cert }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(reference));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/paynet-ui/services/v2/rpt-engine`;
    const { options, events } = quick(url, { login: 'x', controlKey: 'y' });
    await assert.rejects(fetchReport(options), (e: unknown) => {
      assert.ok(e instanceof EndpointUnreachable, String(e));
      assert.match(e.message, /certificate was not accepted \(DEPTH_ZERO_SELF_SIGNED_CERT/);
      assert.match(e.message, /NODE_EXTRA_CA_CERTS/);
      return true;
    });
    assert.equal(events.filter((e) => e.type === 'attempt').length, 1);
    const trusted = await fetchAll(quick(url, { login: 'x', controlKey: 'y' }, { ca: cert }).options);
    assert.ok(trusted.bytes.equals(reference));
  });
});

describe('--gateway-url is checked before anything starts', () => {
  it('validates scheme, host and path', () => {
    assert.equal(validateGatewayUrl('https://gw.example.com/paynet-ui/services/v2/rpt-engine').hostname, 'gw.example.com');
    assert.throws(() => validateGatewayUrl('gw.example.com/paynet-ui'), (e: unknown) => e instanceof ConfigurationError && /full URL/.test(e.message));
    assert.throws(() => validateGatewayUrl('ftp://gw.example.com/x'), ConfigurationError);
    assert.throws(() => validateGatewayUrl('http://gw.example.com/x'), InsecureEndpoint);
    assert.throws(() => validateGatewayUrl('https://gw.example.com'), /has no path/);
    assert.throws(() => validateGatewayUrl('https://gw.example.com/'), /has no path/);
    assert.throws(() => validateGatewayUrl('https://user:pw@gw.example.com/x'), /user name or password/);
    assert.throws(() => validateGatewayUrl('https://gw.example.com/x#frag'), /fragment/);
  });

  it('`reports run` refuses a bad URL before the lake or the simulator starts', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'run-url-'));
    const lake = join(parent, 'lake');
    try {
      await assert.rejects(
        runLocal({ report: report.id, gatewayUrl: 'https://gw.example.com', secretFile: join(parent, 'missing.json'), lake }, () => {}),
        /has no path/,
      );
      assert.equal(existsSync(lake), false, 'no lake directory was created');
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
