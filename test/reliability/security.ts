import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import dc from 'node:diagnostics_channel';
import { createServer, request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe } from 'node:test';
import { renderBody } from '../../functions/core/gateway/body-template.js';
import { AuthenticationRefused, InsecureEndpoint, UnexpectedAnswer } from '../../functions/core/errors.js';
import { parseAuthorizationHeader, signRequest } from '../../functions/core/gateway/oauth.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';
import { logger } from '../../functions/aws/powertools.js';
import { NOT_AUTHORISED_MESSAGE, type Simulator } from '../../local/simulator/index.js';
import { REPLAY_HEADER, leakGuard } from '../helpers/leak-guard.js';
import { assertLoadedOnce, assertNothingStored, fetchOutcomes, loadedParse, logLine, simulatorIds, withoutJitter } from './expect.js';
import { backfillOf, day, gatewayAt, getWorld, it, report } from './harness.js';

/**
 * Security properties of the chain: credentials never leave in clear (plain HTTP off loopback is refused
 * before any connection), the simulator refuses stale and replayed requests as a careful gateway must, and
 * the client signs every attempt afresh. The suite-wide scan for leaked keys and signatures is the last
 * case of the suite (reliability.test.ts), after everything else has printed, thrown and stored what it does;
 * the first case here proves that the scan sees every channel.
 */

const ROWS = 12;

/** Watches the HTTP requests this process starts, by host. */
function watchRequests() {
  const hosts: string[] = [];
  const onStart = (message: unknown) => {
    const request = (message as { request: ClientRequest }).request;
    hosts.push(String(request.getHeader('host') ?? request.host));
  };
  dc.subscribe('http.client.request.start', onStart);
  return { hosts, stop: () => dc.unsubscribe('http.client.request.start', onStart) };
}

/** Sends exactly the headers and body of an earlier request again, as an eavesdropper would. */
function replay(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, [REPLAY_HEADER]: '1' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('reliability: security', () => {
  it('the leak scan sees stdout, stderr, console, Powertools lines and errors (a canary in each is found)', async () => {
    const w = await getWorld();
    const canary = `canary-${randomBytes(12).toString('hex')}`;
    leakGuard.secret('canary', canary);
    await leakGuard.muted(async () => {
      process.stdout.write(`stdout ${canary}\n`);
      process.stderr.write(Buffer.from(`stderr ${canary}\n`));
      console.log('console.log', canary);
      console.error('console.error', canary);
      logger.warn(`a Powertools line outside a capture ${canary}`);
    });
    await w.capture('canary capture', async () => {
      logger.info(`a Powertools line inside a capture ${canary}`);
      throw new Error('a thrown error', { cause: new Error(`its cause ${canary}`) });
    });
    const where = new Set(leakGuard.scan().filter((f) => f.secret === 'canary').map((f) => f.where));
    for (const channel of ['process.stdout', 'process.stderr', 'captured log lines: canary capture', 'error: canary capture', 'error: canary capture (inspect)']) {
      assert.ok(where.has(channel), `the canary is found in ${channel}; found in: ${[...where].join(', ')}`);
    }
    leakGuard.forget(canary);
    assert.deepEqual(leakGuard.scan().filter((f) => f.secret === 'canary'), []);

    // A careless log line with the whole secret and a signed header: the logger's redaction must mask them
    // (the suite's last case fails otherwise, since the values are real).
    const { signature } = signRequest(w.hmac, { url: new URL('https://gateway.example.com/paynet-ui/services/v2/rpt-engine') });
    leakGuard.signature(signature);
    await w.capture('careless log line', async () => {
      logger.info('Debugging the gateway call', {
        secret: w.hmac,
        rsaSecret: w.rsa,
        headers: { Authorization: `OAuth realm="", oauth_signature="${encodeURIComponent(signature)}", oauth_nonce="x"` },
        note: `retrying with oauth_signature=${signature}&oauth_nonce=x`,
      });
    });
  });

  it('plain HTTP to a host other than loopback: InsecureEndpoint before any connection, nothing stored', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS });
    w.useGateway(sim);
    const date = '2026-04-01';
    const path = '/paynet-ui/services/v2/rpt-engine';
    for (const [url, host] of [
      [`http://gateway.example.com${path}`, 'gateway.example.com'],
      [`http://10.0.0.8:8080${path}`, '10.0.0.8'],
      [`http://[::ffff:10.0.0.8]${path}`, '[::ffff:a00:8]'],
      [`http://localhost.example.com${path}`, 'localhost.example.com'],
      [`http://127.0.0.1.nip.io${path}`, '127.0.0.1.nip.io'],
      [`http://0.0.0.0${path}`, '0.0.0.0'],
    ] as const) {
      process.env.CONNECTIONS = gatewayAt(url);
      const watch = watchRequests();
      const before = leakGuard.wire.clientRequests;
      let run;
      try {
        run = await w.fetch(backfillOf(date), `insecure-${host}`);
      } finally {
        watch.stop();
      }
      assert.ok(run.error instanceof InsecureEndpoint, `${url}: ${String(run.error)}`);
      assert.equal(run.error.retryable, false);
      assert.equal(run.error.message, `Refusing plain HTTP to "${host}": only loopback hosts may be called without TLS. Use the https:// URL the provider publishes.`);
      assert.deepEqual(fetchOutcomes(run), ['InsecureEndpoint']);
      assert.equal(leakGuard.wire.clientRequests, before, 'no signed request was made');
      assert.ok(!watch.hosts.some((h) => h.includes(host)), `no request to ${host}: ${watch.hosts.join(', ')}`);
    }
    await assertNothingStored(w, date);
    // Loopback over plain HTTP is the simulator's case, and allowed.
    w.useGateway(sim);
    const ok = await w.fetch(backfillOf(date), 'loopback-http');
    assert.equal(ok.error, undefined, String(ok.error));
  });

  it('a gateway error page echoing the signed request: quoted in the error with the signature redacted', async () => {
    const w = await getWorld();
    const server = createServer((req, res) => {
      req.resume();
      const signature = parseAuthorizationHeader(req.headers.authorization)?.oauth_signature ?? '';
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<p>Bad signature ${signature} in Authorization: ${req.headers.authorization}</p>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      process.env.CONNECTIONS = gatewayAt(`http://127.0.0.1:${(server.address() as AddressInfo).port}/paynet-ui/services/v2/rpt-engine`);
      const date = '2026-04-07';
      const run = await w.fetch(backfillOf(date), 'echo');
      assert.ok(run.error instanceof UnexpectedAnswer, String(run.error));
      assert.match(run.error.message, /Bad signature \[signature\] in Authorization: .*oauth_signature=\\"\[signature\]\\"/);
      for (const signature of leakGuard.wire.signatures) assert.ok(!run.error.message.includes(signature));
      await assertNothingStored(w, date);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  for (const [skewSeconds, method] of [
    [+301, 'hmac'],
    [-301, 'rsa'],
  ] as const) {
    it(`a clock ${Math.abs(skewSeconds)} s ${skewSeconds > 0 ? 'behind' : 'ahead of'} the gateway's (${method}): the stale timestamp is refused, not retried, nothing stored`, async () => {
      const w = await getWorld();
      const sim = await w.simulator({ rowsPerDay: ROWS, now: () => new Date(Date.now() + skewSeconds * 1000) });
      w.useGateway(sim, method === 'hmac' ? w.hmac : w.rsa);
      const date = skewSeconds > 0 ? '2026-04-02' : '2026-04-03';
      const run = await w.fetch(backfillOf(date), `stale-${method}`);
      assert.ok(run.error instanceof AuthenticationRefused, String(run.error));
      assert.match(run.error.message, /and that this machine's clock is right; put the new value into the connection's secret, Secrets Manager secret "[^"]+"\. Its secret was re-read after the refusal: unchanged, so not retried\.$/);
      assert.deepEqual(sim.requests.map((r) => [r.outcome, r.detail]), [['refused', 'stale-timestamp']]);
      assert.deepEqual(fetchOutcomes(run), ['AuthenticationRefused']);
      await assertNothingStored(w, date);
    });
  }

  it('a clock off by less than the allowed skew (290 s) is accepted, with RSA-SHA256', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, now: () => new Date(Date.now() - 290_000) });
    w.useGateway(sim, w.rsa);
    const date = '2026-04-04';
    const run = await w.fetch(backfillOf(date), 'skew-within');
    assert.equal(run.error, undefined, String(run.error));
    loadedParse(run, date);
    await assertLoadedOnce(w, date, w.expectedReport(w.rsa.login, date, ROWS), simulatorIds(w.rsa.login, date, ROWS));
  });

  it('an RSA key pair rotated inside the secret cache: refused once, re-read, retried with the new key, loaded once; no refusal metric, neither key leaks', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS });
    // The old pair, which the provider no longer holds, is what this container read and cached.
    const old = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const before: GatewaySecret = { login: w.rsa.login, signatureMethod: 'RSA-SHA256', privateKeyPem: old.privateKey };
    leakGuard.gatewaySecret('the RSA key rotated away', before);
    w.useGateway(sim, [before, w.rsa]);
    const date = '2026-04-08';
    const run = await w.fetch(backfillOf(date), 'rotated-rsa');
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(sim.requests.map((r) => [r.outcome, r.detail ?? '']), [['refused', 'bad-signature'], ['report', '']]);
    assert.deepEqual(fetchOutcomes(run), ['Success']);
    logLine(run, /secret has changed since \(rotated\): retrying this window with the new value/);
    loadedParse(run, date);
    await assertLoadedOnce(w, date, w.expectedReport(w.rsa.login, date, ROWS), simulatorIds(w.rsa.login, date, ROWS));
  });

  it('a captured request replayed: refused as a replayed nonce at once, as a stale timestamp later; never a second report', async () => {
    const w = await getWorld();
    let offsetMs = 0;
    const sim: Simulator = await w.simulator({ rowsPerDay: ROWS, now: () => new Date(Date.now() + offsetMs) });
    w.useGateway(sim);
    const date = '2026-04-05';
    let captured: Record<string, string> | undefined;
    const onStart = (message: unknown) => {
      const request = (message as { request: ClientRequest }).request;
      if (request.getHeader('authorization') && !captured) {
        captured = Object.fromEntries(Object.entries(request.getHeaders()).map(([k, v]) => [k, String(v)]));
      }
    };
    dc.subscribe('http.client.request.start', onStart);
    let run;
    try {
      run = await w.fetch(backfillOf(date), 'replay-original');
    } finally {
      dc.unsubscribe('http.client.request.start', onStart);
    }
    assert.equal(run.error, undefined, String(run.error));
    assert.ok(captured?.authorization, 'the signed request was seen');
    // The body the client sent: compact JSON of the rendered template.
    const body = JSON.stringify(renderBody(report.bodyTemplate, day(date)));

    const first = await replay(sim.url, captured, body);
    assert.deepEqual([first.status, first.contentType, first.text], [200, 'text/plain', NOT_AUTHORISED_MESSAGE]);
    assert.equal(sim.requests.at(-1)!.detail, 'replayed-nonce');

    offsetMs = 400_000; // long after: the nonce may be forgotten, but the timestamp is stale
    const later = await replay(sim.url, captured, body);
    assert.equal(later.text, NOT_AUTHORISED_MESSAGE);
    assert.equal(sim.requests.at(-1)!.detail, 'stale-timestamp');
    assert.equal(sim.requests.filter((r) => r.outcome === 'report').length, 1, 'one report for one signed request');
  });

  it('the client never reuses a nonce: four attempts against 500, 500, 500 then success are four nonces and signatures', async () => {
    const w = await getWorld();
    const sim = await w.simulator({ rowsPerDay: ROWS, fault: { mode: 'error500', times: 3 } });
    w.useGateway(sim);
    const date = '2026-04-06';
    const signaturesBefore = leakGuard.wire.signatures.size;
    const run = await withoutJitter(() => w.fetch(backfillOf(date), 'nonces'));
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.result!.windows[0]!.attempts, 4);
    const nonces = sim.requests.map((r) => r.nonce);
    assert.equal(nonces.length, 4);
    assert.equal(new Set(nonces).size, 4, 'a fresh nonce per attempt');
    assert.ok(nonces.every((n) => n && /^[A-Za-z0-9]{20,30}$/.test(n)), 'crypto-random alphanumeric nonces of 20 to 30 characters');
    assert.equal(leakGuard.wire.signatures.size - signaturesBefore, 4, 'a fresh signature per attempt');
    const now = Math.floor(Date.now() / 1000);
    assert.ok(sim.requests.every((r) => Math.abs(Number(r.timestamp) - now) < 60), 'each attempt carries the current time');
  });
});
