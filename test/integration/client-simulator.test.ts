import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { describe, it } from 'node:test';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { renderBody } from '../../functions/core/gateway/body-template.js';
import {
  AuthenticationRefused,
  GatewayUnavailable,
  UnexpectedAnswer,
  type PipelineError,
} from '../../functions/core/errors.js';
import { fetchReport, type GatewayClientOptions } from '../../functions/core/gateway/client.js';
import { describeRequest } from '../../functions/core/gateway/request.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';
import { parseLocalDateTime, type ReportWindow } from '../../functions/core/time/window.js';
import { startSimulator, type FaultOptions, type Simulator, type SimulatorOptions } from '../../local/simulator/index.js';

/**
 * The client against the simulator over real HTTP: what `npm start` and the fetch Lambda do, for both
 * signature methods, every refusal and every fault mode. The client's own unit-level behaviours
 * (back-off arithmetic, header parsing) are tested in test/integration/gateway-client.test.ts.
 */

const report = loadCatalog().get('transactions');
const window: ReportWindow = { start: parseLocalDateTime('2026-11-20'), end: parseLocalDateTime('2026-11-21') };
const noSleep: GatewayClientOptions['sleep'] = async () => {};

async function withSimulator<T>(opts: SimulatorOptions, fn: (sim: Simulator) => Promise<T>): Promise<T> {
  const sim = await startSimulator(opts);
  try {
    return await fn(sim);
  } finally {
    await sim.close();
  }
}

async function readAll(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
}

/** The same request made without our client: the bytes the gateway sends, for byte-for-byte checks. */
function rawCall(sim: Simulator, secret: GatewaySecret, body: unknown): Promise<Buffer> {
  const described = describeRequest({ endpointUrl: sim.url, secret, body });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      sim.url,
      { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: described.authorization } },
      (res) => readAll(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(described.body);
  });
}

const bodyFor = (over: Record<string, unknown> = {}) => ({
  ...(renderBody(report.bodyTemplate, window) as Record<string, unknown>),
  ...over,
});

const secretText = (s: GatewaySecret) => ('controlKey' in s ? s.controlKey : s.privateKeyPem);

describe('client and simulator: reports', () => {
  for (const method of ['hmac', 'rsa'] as const) {
    it(`fetches the sample report signed with ${method === 'hmac' ? 'HMAC-SHA1' : 'RSA-SHA256'}`, async () => {
      await withSimulator({}, async (sim) => {
        const secret = sim.credentials[method];
        const answer = await fetchReport({ endpointUrl: sim.url, secret, body: bodyFor() });
        assert.equal(answer.kind, 'csv');
        assert.equal(answer.attempts, 1);
        const bytes = await readAll(answer.body);
        assert.ok(bytes.toString('utf8').startsWith('"Merchant_Name","Transaction_id"'));
        assert.equal(sim.requests.length, 1);
        assert.equal(sim.requests[0]?.outcome, 'report');
      });
    });
  }

  it('fetches a windows-1251 CSV with ";" byte for byte', async () => {
    await withSimulator({}, async (sim) => {
      const body = bodyFor({ reportEncode: 'windows-1251', reportCsvDelimiter: ';' });
      const answer = await fetchReport({ endpointUrl: sim.url, secret: sim.credentials.hmac, body });
      const got = await readAll(answer.body);
      const expected = await rawCall(sim, sim.credentials.hmac, body);
      assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(expected).digest('hex'));
      assert.ok(got.includes(Buffer.from([0xce, 0xce, 0xce])), 'Cyrillic "ООО" encoded as windows-1251');
      assert.ok(got.includes(Buffer.from('";"')));
    });
  });

  it('fetches a PDF byte for byte', async () => {
    await withSimulator({}, async (sim) => {
      const body = bodyFor({ reportFormat: 'PDF' });
      const answer = await fetchReport({ endpointUrl: sim.url, secret: sim.credentials.rsa, body });
      assert.equal(answer.kind, 'pdf');
      assert.equal(answer.fileExtension, 'pdf');
      const got = await readAll(answer.body);
      assert.equal(got.subarray(0, 5).toString(), '%PDF-');
      // Rows are seeded by login and window, so the same login gives the same document.
      const expected = await rawCall(sim, sim.credentials.rsa, body);
      assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(expected).digest('hex'));
    });
  });
});

describe('client and simulator: refusals are AuthenticationRefused, never retried', () => {
  const cases: Array<[string, (sim: Simulator) => GatewaySecret, SimulatorOptions?]> = [
    ['a wrong control key', (sim) => ({ login: sim.credentials.hmac.login, controlKey: 'wrong-key' })],
    ['an unknown login', () => ({ login: 'nobody', controlKey: 'whatever' })],
    ['a clock 10 minutes off', (sim) => sim.credentials.hmac, { now: () => new Date(Date.now() + 600_000) }],
    ['the wrong method for the login', (sim) => ({ login: sim.credentials.rsa.login, controlKey: 'x' })],
  ];
  for (const [what, secretOf, opts] of cases) {
    it(`with ${what}`, async () => {
      await withSimulator(opts ?? {}, async (sim) => {
        const secret = secretOf(sim);
        await assert.rejects(
          fetchReport({ endpointUrl: sim.url, secret, body: bodyFor(), sleep: noSleep }),
          (e: unknown) => {
            assert.ok(e instanceof AuthenticationRefused);
            assert.match(e.message, new RegExp(`login "${secret.login}"`));
            assert.match(e.message, /HMAC-SHA1/);
            assert.ok(!e.message.includes(secretText(secret)));
            return true;
          },
        );
        assert.equal(sim.requests.length, 1, 'not retried');
        assert.equal(sim.requests[0]?.outcome, 'refused');
      });
    });
  }

  it('with RSA-SHA256 signed by a key the gateway does not hold', async () => {
    await withSimulator({}, async (sim) => {
      const other = await startSimulator();
      try {
        const secret = { ...other.credentials.rsa, login: sim.credentials.rsa.login };
        await assert.rejects(fetchReport({ endpointUrl: sim.url, secret, body: bodyFor(), sleep: noSleep }), (e: unknown) => {
          assert.ok(e instanceof AuthenticationRefused);
          assert.match(e.message, /RSA-SHA256/);
          assert.ok(!e.message.includes('PRIVATE KEY'));
          return true;
        });
      } finally {
        await other.close();
      }
    });
  });
});

describe('client and simulator: fault modes', () => {
  const expectError = async (fault: FaultOptions, check: (e: PipelineError, sim: Simulator) => void, retry = { attempts: 3 }) => {
    await withSimulator({ fault }, async (sim) => {
      const delays: number[] = [];
      await assert.rejects(
        fetchReport({
          endpointUrl: sim.url,
          secret: sim.credentials.hmac,
          body: bodyFor(),
          retry,
          timeouts: { totalMs: 500 },
          sleep: async (ms) => {
            delays.push(ms);
          },
        }).then((a) => readAll(a.body)),
        (e: unknown) => {
          check(e as PipelineError, sim);
          return true;
        },
      );
    });
  };

  it('500 then success: retried with a fresh nonce', async () => {
    await withSimulator({ fault: { mode: 'error500', times: 1 } }, async (sim) => {
      const answer = await fetchReport({ endpointUrl: sim.url, secret: sim.credentials.hmac, body: bodyFor(), sleep: noSleep });
      assert.equal(answer.attempts, 2);
      assert.ok((await readAll(answer.body)).length > 0);
      const nonces = sim.requests.map((r) => r.nonce);
      assert.equal(new Set(nonces).size, 2);
    });
  });

  it('429 honours Retry-After, then succeeds', async () => {
    await withSimulator({ fault: { mode: 'rateLimited', times: 1, retryAfterSeconds: 3 } }, async (sim) => {
      const delays: number[] = [];
      const answer = await fetchReport({
        endpointUrl: sim.url,
        secret: sim.credentials.rsa,
        body: bodyFor(),
        sleep: async (ms) => {
          delays.push(ms);
        },
      });
      assert.equal(answer.attempts, 2);
      assert.ok(delays[0]! >= 3000, `waited ${delays[0]} ms`);
      await readAll(answer.body);
    });
  });

  it('persistent 500: GatewayUnavailable after every attempt', () =>
    expectError({ mode: 'error500' }, (e, sim) => {
      assert.ok(e instanceof GatewayUnavailable);
      assert.equal(e.attempts, 3);
      assert.equal(sim.requests.length, 3);
    }));

  it('a slow answer beyond the time-out: GatewayUnavailable', () =>
    expectError({ mode: 'slow', delayMs: 3000 }, (e) => {
      assert.ok(e instanceof GatewayUnavailable);
      assert.match(e.message, /time-out/);
    }, { attempts: 2 }));

  it('connection dropped mid-body: the stream fails with GatewayUnavailable', () =>
    expectError({ mode: 'dropMidBody' }, (e) => {
      assert.ok(e instanceof GatewayUnavailable);
      assert.match(e.message, /byte\(s\)/);
    }));

  it('an HTML error page: UnexpectedAnswer quoting it, one request', () =>
    expectError({ mode: 'htmlError' }, (e, sim) => {
      assert.ok(e instanceof UnexpectedAnswer);
      assert.match(e.message, /Bad Gateway/);
      assert.equal(sim.requests.length, 1);
    }));

  it('an empty body: UnexpectedAnswer, one request', () =>
    expectError({ mode: 'emptyBody' }, (e, sim) => {
      assert.ok(e instanceof UnexpectedAnswer);
      assert.match(e.message, /empty/i);
      assert.equal(sim.requests.length, 1);
    }));

  it('a changed header row still arrives (drift is the parser\'s to judge)', async () => {
    await withSimulator({ fault: { mode: 'schemaDrift' } }, async (sim) => {
      const answer = await fetchReport({ endpointUrl: sim.url, secret: sim.credentials.hmac, body: bodyFor() });
      const text = (await readAll(answer.body)).toString('utf8');
      assert.match(text.slice(0, 300), /Merchant_Order_ID/);
    });
  });

  it('a body the gateway rejects (unknown report): UnexpectedAnswer quoting its sentence', async () => {
    await withSimulator({}, async (sim) => {
      await assert.rejects(
        fetchReport({ endpointUrl: sim.url, secret: sim.credentials.hmac, body: bodyFor({ reportIdentifier: 'nope' }) }),
        (e: unknown) => e instanceof UnexpectedAnswer && /nope|reportIdentifier/i.test(e.message),
      );
    });
  });
});
