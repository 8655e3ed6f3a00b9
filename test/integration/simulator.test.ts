import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { parseAuthorizationHeader, percentEncode, signRequest, type BodySigningRule } from '../../functions/core/gateway/oauth.js';
import { parseGatewaySecret, type GatewaySecret } from '../../functions/core/gateway/secret.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import {
  DRIFTED_HEADER,
  HARD_CASES,
  HTML_ERROR_PAGE,
  NOT_AUTHORISED_MESSAGE,
  REPORT_HEADER,
  generateTransactions,
  runStandaloneSimulator,
  startSimulator,
  writeReportCsv,
  type FaultOptions,
  type Simulator,
  type SimulatorOptions,
  type StandaloneReady,
} from '../../local/simulator/index.js';
import { skipWithoutTool } from '../helpers/required-tools.js';
import { useConnectionFixtures } from '../helpers/connection-fixtures.js';

/** The gateway simulator over real HTTP on loopback, signed with the client's own oauth.ts. */

const DAY = { from: '2026-11-20 00:00:00', to: '2026-11-21 00:00:00' };
const NEXT_DAY = { from: '2026-11-21 00:00:00', to: '2026-11-22 00:00:00' };

function reportBody(over: Record<string, unknown> = {}, period = DAY): string {
  return JSON.stringify({
    reportIdentifier: 'custom-transactions-report',
    reportEncode: 'UTF-8',
    reportName: 'Custom transactions report',
    reportCsvDelimiter: ',',
    reportFormat: 'CSV',
    configurationReportParameters: [],
    inputReportParameters: [
      { type: 'INPUT_TEXT', name: 'dateFrom', value: period.from },
      { type: 'INPUT_TEXT', name: 'dateTo', value: period.to },
    ],
    outputReportParameters: [],
    filters: { gates: [], companies: [], projects: [], endpoints: [], merchants: [], processors: [], managers: [], resellers: [], currencies: [] },
    ...over,
  });
}

interface Answer {
  status: number;
  type: string;
  headers: Headers;
  bytes: Buffer;
  text: string;
}

interface CallOptions {
  secret?: GatewaySecret;
  body?: string;
  /** Replace the Authorization header; receives the one signRequest made. */
  authorization?: (signed: string) => string | undefined;
  contentType?: string;
  method?: string;
  url?: string;
  timestamp?: string;
  nonce?: string;
  bodySigning?: BodySigningRule;
}

async function call(sim: Simulator, opts: CallOptions = {}): Promise<Answer> {
  const url = opts.url ?? sim.url;
  const body = opts.body ?? reportBody();
  const signed = signRequest(opts.secret ?? sim.credentials.hmac, {
    url: new URL(url),
    body,
    timestamp: opts.timestamp,
    nonce: opts.nonce,
    bodySigning: opts.bodySigning,
  }).authorization;
  const authorization = opts.authorization ? opts.authorization(signed) : signed;
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  const method = opts.method ?? 'POST';
  const res = await fetch(url, { method, headers, body: method === 'GET' ? undefined : body });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type') ?? '', headers: res.headers, bytes, text: bytes.toString('utf8') };
}

const lastLog = (sim: Simulator) => sim.requests[sim.requests.length - 1]!;

function assertRefused(sim: Simulator, a: Answer, reason: string) {
  assert.equal(a.status, 200);
  assert.equal(a.type, 'text/plain');
  assert.equal(a.text, NOT_AUTHORISED_MESSAGE);
  assert.equal(lastLog(sim).outcome, 'refused');
  assert.equal(lastLog(sim).detail, reason);
}

function assertReport(a: Answer) {
  assert.equal(a.status, 200, a.text.slice(0, 200));
  assert.match(a.type, /^text\/csv; charset=/);
  assert.ok(a.text.startsWith('"Merchant_Name","Transaction_id",'), a.text.slice(0, 100));
}

const csvRows = (text: string, delimiter = ','): string[][] => parse(text, { delimiter }) as string[][];

let shared: Simulator;
let rsaPem: string;
/** Quick fault/option simulators reuse the shared RSA key instead of generating one each. */
const startQuick = (o: SimulatorOptions = {}) => startSimulator({ rowsPerDay: 60, rsa: { privateKeyPem: rsaPem }, ...o });

before(async () => {
  shared = await startSimulator({ rowsPerDay: 100 });
  rsaPem = (shared.credentials.rsa as { privateKeyPem: string }).privateKeyPem;
});
after(() => shared.close());

describe('authentication', () => {
  it('accepts HMAC-SHA1 and RSA-SHA256 signatures', async () => {
    assertReport(await call(shared, { secret: shared.credentials.hmac }));
    assert.equal(lastLog(shared).signatureMethod, 'HMAC-SHA1');
    assertReport(await call(shared, { secret: shared.credentials.rsa }));
    assert.equal(lastLog(shared).signatureMethod, 'RSA-SHA256');
    assert.equal(lastLog(shared).outcome, 'report');
  });

  it('accepts header pairs in reverse order, without spaces, realm last', async () => {
    const reorder = (signed: string) => {
      const pairs = Object.entries(parseAuthorizationHeader(signed)!).reverse();
      return `OAuth ${pairs.map(([k, v]) => `${k}="${percentEncode(v)}"`).join(',')}`;
    };
    for (const secret of [shared.credentials.hmac, shared.credentials.rsa]) {
      assertReport(await call(shared, { secret, authorization: reorder }));
    }
    // The provider's own sample order.
    const providerOrder = (signed: string) => {
      const p = parseAuthorizationHeader(signed)!;
      const order = ['realm', 'oauth_version', 'oauth_consumer_key', 'oauth_nonce', 'oauth_signature_method', 'oauth_timestamp', 'oauth_signature'];
      return `OAuth ${order.map((k) => `${k}="${percentEncode(p[k] ?? '')}"`).join(',')}`;
    };
    assertReport(await call(shared, { authorization: providerOrder }));
  });

  it('refuses a bad signature', async () => {
    const wrongKey = { login: shared.credentials.hmac.login, controlKey: 'not-the-key' };
    assertRefused(shared, await call(shared, { secret: wrongKey }), 'bad-signature');
    // A signature for another URL (the base string must be the server's view of the URL).
    const elsewhere = () =>
      signRequest(shared.credentials.hmac, { url: new URL('http://127.0.0.1:1/paynet-ui/services/v2/rpt-engine') }).authorization;
    assertRefused(shared, await call(shared, { authorization: elsewhere }), 'bad-signature');
    // A signed parameter changed after signing (RSA).
    const tampered = (signed: string) => signed.replace(/oauth_timestamp="(\d+)"/, (_m, t: string) => `oauth_timestamp="${Number(t) - 1}"`);
    assertRefused(shared, await call(shared, { secret: shared.credentials.rsa, authorization: tampered }), 'bad-signature');
  });

  it('refuses an unknown login', async () => {
    assertRefused(shared, await call(shared, { secret: { login: 'nobody', controlKey: 'x' } }), 'unknown-login');
  });

  it('refuses the wrong signature method for a login', async () => {
    const hmacLoginSignedWithRsa: GatewaySecret = { login: shared.credentials.hmac.login, signatureMethod: 'RSA-SHA256', privateKeyPem: rsaPem };
    assertRefused(shared, await call(shared, { secret: hmacLoginSignedWithRsa }), 'wrong-signature-method');
  });

  it('refuses a replayed nonce', async () => {
    const nonce = `replay${Date.now()}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    assertReport(await call(shared, { nonce, timestamp }));
    assertRefused(shared, await call(shared, { nonce, timestamp }), 'replayed-nonce');
  });

  it('refuses missing header, missing parameters, another oauth_version', async () => {
    assertRefused(shared, await call(shared, { authorization: () => undefined }), 'no-authorization-header');
    assertRefused(shared, await call(shared, { authorization: () => 'Basic dXNlcjpwYXNz' }), 'not-an-oauth-header');
    assertRefused(shared, await call(shared, { authorization: (s) => s.replace(/,\s*oauth_nonce="[^"]*"/, '') }), 'missing-oauth-parameter');
    assertRefused(shared, await call(shared, { authorization: (s) => s.replace('oauth_version="1.0"', 'oauth_version="2.0"') }), 'unsupported-oauth-version');
  });

  it('checks the timestamp against the simulator clock (injected)', async () => {
    const fixed = new Date('2031-05-05T12:00:00Z');
    const t = Math.floor(fixed.getTime() / 1000);
    const sim = await startQuick({ now: () => fixed, maxSkewSeconds: 300 });
    try {
      assertRefused(sim, await call(sim), 'stale-timestamp'); // the real clock is years away
      assertRefused(sim, await call(sim, { timestamp: String(t - 301) }), 'stale-timestamp');
      assertRefused(sim, await call(sim, { timestamp: String(t + 301) }), 'stale-timestamp');
      assertReport(await call(sim, { timestamp: String(t - 299) }));
      assertReport(await call(sim, { timestamp: String(t + 299) }));
      assert.equal(lastLog(sim).time.getTime(), fixed.getTime());
    } finally {
      await sim.close();
    }
  });

  it('signs the body with the asFormParameters rule when configured so', async () => {
    const sim = await startQuick({ bodySigning: 'asFormParameters' });
    try {
      assertReport(await call(sim, { bodySigning: 'asFormParameters' }));
      assertRefused(sim, await call(sim, { bodySigning: 'excluded' }), 'bad-signature');
    } finally {
      await sim.close();
    }
  });

  it('never records a signature or key in the request log', () => {
    const log = JSON.stringify(shared.requests);
    assert.ok(!log.includes('oauth_signature'));
    assert.ok(!log.includes((shared.credentials.hmac as { controlKey: string }).controlKey));
    assert.ok(!log.includes('PRIVATE KEY'));
    assert.ok(shared.requests.every((r) => !('signature' in r)));
  });
});

describe('request checks', () => {
  const cases: Array<[string, CallOptions, RegExp]> = [
    ['not JSON', { body: '{"reportIdentifier":' }, /not valid JSON/],
    ['a JSON array', { body: '[]' }, /must be a JSON object/],
    ['wrong content type', { contentType: 'text/plain' }, /Content-Type must be application\/json/],
    ['no reportIdentifier', { body: reportBody({ reportIdentifier: undefined }) }, /reportIdentifier is missing/],
    ['unknown reportIdentifier', { body: reportBody({ reportIdentifier: 'other-report' }) }, /Unknown reportIdentifier "other-report"/],
    ['no reportFormat', { body: reportBody({ reportFormat: undefined }) }, /reportFormat is missing/],
    ['unknown reportFormat', { body: reportBody({ reportFormat: 'XLSX' }) }, /Unsupported reportFormat "XLSX"/],
    ['unknown encoding', { body: reportBody({ reportEncode: 'KLINGON-8' }) }, /Unsupported reportEncode "KLINGON-8"/],
    ['two-character delimiter', { body: reportBody({ reportCsvDelimiter: ';;' }) }, /reportCsvDelimiter ";;" must be exactly one character/],
    ['quote as delimiter', { body: reportBody({ reportCsvDelimiter: '"' }) }, /must not be a double quote/],
    ['no inputReportParameters', { body: reportBody({ inputReportParameters: undefined }) }, /inputReportParameters is missing/],
    ['no dateTo', { body: reportBody({ inputReportParameters: [{ type: 'INPUT_TEXT', name: 'dateFrom', value: DAY.from }] }) }, /dateTo is missing/],
    ['bad dateFrom', { body: reportBody({}, { from: '2026-11-20', to: DAY.to }) }, /dateFrom "2026-11-20" is not a date-time/],
    ['impossible date', { body: reportBody({}, { from: '2026-02-30 00:00:00', to: DAY.to }) }, /dateFrom "2026-02-30 00:00:00" is not/],
    ['dateFrom after dateTo', { body: reportBody({}, { from: DAY.to, to: DAY.from }) }, /dateFrom must be before dateTo/],
    ['empty period', { body: reportBody({}, { from: DAY.from, to: DAY.from }) }, /dateFrom must be before dateTo/],
    ['over 31 days', { body: reportBody({}, { from: '2026-01-01 00:00:00', to: '2026-02-01 00:00:01' }) }, /must not exceed 31 days/],
  ];
  for (const [name, opts, message] of cases) {
    it(`answers 400 text/plain for ${name}`, async () => {
      const a = await call(shared, opts);
      assert.equal(a.status, 400);
      assert.equal(a.type, 'text/plain; charset=UTF-8');
      assert.match(a.text, message);
      assert.equal(lastLog(shared).outcome, 'bad-request');
    });
  }

  it('accepts exactly 31 days', async () => {
    const sim = await startQuick({ rowsPerDay: 5 });
    try {
      assertReport(await call(sim, { body: reportBody({}, { from: '2026-01-01 00:00:00', to: '2026-02-01 00:00:00' }) }));
    } finally {
      await sim.close();
    }
  });

  it('checks authentication before the body', async () => {
    assertRefused(shared, await call(shared, { secret: { login: 'nobody', controlKey: 'x' }, body: 'garbage' }), 'unknown-login');
  });

  it('answers 404 on another path and 405 on another method', async () => {
    const wrong = shared.url.replace('/paynet-ui/', '/other/');
    const a = await call(shared, { url: wrong });
    assert.equal(a.status, 404);
    assert.match(a.type, /^text\/plain/);
    const g = await call(shared, { method: 'GET' });
    assert.equal(g.status, 405);
    assert.equal(g.headers.get('allow'), 'POST');
  });

  it('serves the endpoint under a configured path prefix', async () => {
    const sim = await startQuick({ pathPrefix: '/gw/v1/' });
    try {
      assert.match(sim.url, /^http:\/\/127\.0\.0\.1:\d+\/gw\/v1\/services\/v2\/rpt-engine$/);
      assertReport(await call(sim));
    } finally {
      await sim.close();
    }
  });
});

describe('the CSV report', () => {
  let utf8: Answer;
  let rows: string[][];
  before(async () => {
    utf8 = await call(shared);
    rows = csvRows(utf8.text);
  });

  it('has the spec header, quoted fields, CRLF records and a file name', () => {
    assert.equal(utf8.type, 'text/csv; charset=UTF-8');
    assert.equal(
      utf8.headers.get('content-disposition'),
      'attachment; filename="custom-transactions-report_20261120000000_20261121000000.csv"',
    );
    assert.deepEqual(rows[0], [...REPORT_HEADER]);
    assert.equal(rows.length, 1 + 100);
    assert.ok(utf8.text.startsWith(`${REPORT_HEADER.map((h) => `"${h}"`).join(',')}\r\n`));
    assert.ok(utf8.text.endsWith('"\r\n'));
    // Every field quoted: re-quoting what was parsed gives back the bytes exactly.
    assert.equal(writeReportCsv(rows[0]!, rows.slice(1), { delimiter: ',', encoding: 'UTF-8' }).toString('utf8'), utf8.text);
  });

  it('has values of the documented shapes, inside the half-open window', () => {
    for (const r of rows.slice(1)) {
      assert.equal(r.length, REPORT_HEADER.length);
      const [, id, oid, created, amount, currency, type, , reportDate] = r as [string, string, string, string, string, string, string, string, string];
      assert.match(id, /^\d+$/);
      assert.ok(BigInt(id) > 2n ** 32n);
      assert.match(oid, /^[A-Za-z0-9]+$/);
      assert.match(created, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      assert.ok(created >= DAY.from && created < DAY.to, created);
      assert.match(amount, /^-?\d+\.\d{3}$/);
      assert.match(currency, /^[A-Z]{3}$/);
      assert.match(type, /^[A-Z]+$/);
      assert.equal(reportDate, '20.11.2026');
    }
    const created = rows.slice(1).map((r) => r[3]!);
    assert.deepEqual([...created].sort(), created, 'rows are in time order');
    assert.equal(new Set(rows.slice(1).map((r) => r[1])).size, 100, 'ids are unique');
  });

  it('contains every hard case', () => {
    const data = rows.slice(1);
    const descriptions = data.map((r) => r[7]);
    const merchants = data.map((r) => r[0]);
    for (const h of HARD_CASES) {
      if (h.description !== undefined) assert.ok(descriptions.includes(h.description), h.what);
      if (h.merchant !== undefined) assert.ok(merchants.includes(h.merchant), h.what);
      if (h.type !== undefined) assert.ok(data.some((r) => r[6] === h.type && r[4]!.startsWith('-')), h.what);
    }
    const ids = data.map((r) => BigInt(r[1]!));
    assert.ok(ids.some((id) => id > 2n ** 53n && !Number.isSafeInteger(Number(id)) && BigInt(Number(id)) !== id), 'id not representable as a double');
    assert.ok(ids.some((id) => id > 2n ** 62n && id < 2n ** 63n), 'id near the int64 limit');
    // The raw bytes hold the escaped forms.
    assert.ok(utf8.text.includes('"Gift box ""Premium"", size ""XL"""'));
    assert.ok(utf8.text.includes('"First line\r\nsecond line"'));
    assert.ok(utf8.text.includes('"First line\rsecond line"'));
    assert.ok(utf8.text.includes(',"",'));
  });

  it('is deterministic: same login and window give the same bytes', async () => {
    const again = await call(shared);
    assert.ok(again.bytes.equals(utf8.bytes));
    const otherWindow = await call(shared, { body: reportBody({}, NEXT_DAY) });
    assert.ok(!otherWindow.bytes.equals(utf8.bytes));
    assert.equal(csvRows(otherWindow.text)[1]![8], '21.11.2026');
    const otherLogin = await call(shared, { secret: shared.credentials.rsa });
    assert.ok(!otherLogin.bytes.equals(utf8.bytes));
  });

  it('encodes windows-1251 to the same rows', async () => {
    const cp = await call(shared, { body: reportBody({ reportEncode: 'windows-1251' }) });
    assert.equal(cp.type, 'text/csv; charset=windows-1251');
    assert.ok(!cp.bytes.equals(utf8.bytes));
    assert.ok(cp.bytes.includes(Buffer.from([0xab])), '« as one windows-1251 byte');
    assert.deepEqual(csvRows(iconv.decode(cp.bytes, 'windows-1251')), rows);
  });

  it('honours the delimiter', async () => {
    const semi = await call(shared, { body: reportBody({ reportCsvDelimiter: ';' }) });
    assert.ok(semi.text.startsWith('"Merchant_Name";"Transaction_id";'));
    assert.deepEqual(csvRows(semi.text, ';'), rows);
    const tab = await call(shared, { body: reportBody({ reportCsvDelimiter: '\t' }) });
    assert.deepEqual(csvRows(tab.text, '\t'), rows);
  });

  it('scales rows with the window length', async () => {
    const hour = await call(shared, { body: reportBody({}, { from: '2026-11-20 10:00:00', to: '2026-11-20 16:00:00' }) });
    const r = csvRows(hour.text).slice(1);
    assert.equal(r.length, 25);
    assert.ok(r.every((x) => x[3]! >= '2026-11-20 10:00:00' && x[3]! < '2026-11-20 16:00:00'));
  });
});

describe('the pure row generator and CSV writer', () => {
  const window: ReportWindow = {
    start: { year: 2026, month: 3, day: 1, hour: 0, minute: 0, second: 0 },
    end: { year: 2026, month: 3, day: 2, hour: 0, minute: 0, second: 0 },
  };

  it('are deterministic and agree with the server', async () => {
    const a = generateTransactions('login-a', window, 40);
    assert.deepEqual(generateTransactions('login-a', window, 40), a);
    assert.notDeepEqual(generateTransactions('login-b', window, 40), a);
    assert.equal(a.length, 40);
    const served = await call(shared, { body: reportBody({}, { from: '2026-03-01 00:00:00', to: '2026-03-02 00:00:00' }) });
    const expected = writeReportCsv(REPORT_HEADER, generateTransactions(shared.credentials.hmac.login, window, 100), { delimiter: ',', encoding: 'UTF-8' });
    assert.ok(served.bytes.equals(expected));
  });

  it('puts the first hard cases in a short report', () => {
    const few = generateTransactions('x', window, 5);
    assert.equal(few.length, 5);
    assert.equal(few[0]![7], HARD_CASES[0]!.description);
  });

  it('streams large reports in chunks with the same bytes', () => {
    const rows = generateTransactions('big', window, 2500);
    const csv = writeReportCsv(REPORT_HEADER, rows, { delimiter: '|', encoding: 'windows-1251' });
    assert.deepEqual(csvRows(iconv.decode(csv, 'windows-1251'), '|').slice(1), rows);
  });
});

describe('the PDF report', () => {
  it('is a deterministic multi-page PDF', async () => {
    const body = reportBody({ reportFormat: 'PDF' });
    const a = await call(shared, { body });
    const b = await call(shared, { body });
    assert.equal(a.status, 200);
    assert.equal(a.type, 'application/pdf');
    assert.match(a.headers.get('content-disposition') ?? '', /filename=".*\.pdf"/);
    assert.equal(a.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.match(a.bytes.subarray(-8).toString('latin1'), /%%EOF\s*$/);
    assert.ok(a.bytes.equals(b.bytes), 'same request, same bytes');
    const pages = a.bytes.toString('latin1').match(/\/Type \/Page\b(?!s)/g) ?? [];
    assert.ok(pages.length >= 2, `pages: ${pages.length}`);
    const otherWindow = await call(shared, { body: reportBody({ reportFormat: 'PDF' }, NEXT_DAY) });
    assert.ok(!otherWindow.bytes.equals(a.bytes));
  });

  it('shows the rows (transliterated), read back by pdftotext', async (t) => {
    if (skipWithoutTool(t, 'pdftotext')) return;
    const a = await call(shared, { body: reportBody({ reportFormat: 'PDF' }) });
    const dir = await mkdtemp(join(tmpdir(), 'sim-pdf-'));
    try {
      await writeFile(join(dir, 'r.pdf'), a.bytes);
      const text = spawnSync('pdftotext', ['-layout', join(dir, 'r.pdf'), '-'], { encoding: 'utf8' }).stdout;
      assert.match(text, /Merchant_Name/);
      assert.match(text, /OOO «Romashka»/);
      assert.match(text, /20\.11\.2026/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('fault modes', () => {
  const withFault = async (fault: FaultOptions, test: (sim: Simulator) => Promise<void>) => {
    const sim = await startQuick({ fault });
    try {
      await test(sim);
    } finally {
      await sim.close();
    }
  };

  it('error500 for the first request only, before authentication', () =>
    withFault({ mode: 'error500', times: 2 }, async (sim) => {
      const a = await call(sim, { secret: { login: 'nobody', controlKey: 'x' } });
      assert.equal(a.status, 500);
      assert.match(a.type, /^text\/plain/);
      assert.equal((await call(sim)).status, 500);
      assertReport(await call(sim));
      assert.deepEqual(sim.requests.map((r) => r.outcome), ['fault', 'fault', 'report']);
    }));

  it('rateLimited answers 429 with Retry-After', () =>
    withFault({ mode: 'rateLimited', retryAfterSeconds: 7, times: 1 }, async (sim) => {
      const a = await call(sim);
      assert.equal(a.status, 429);
      assert.equal(a.headers.get('retry-after'), '7');
      assertReport(await call(sim));
    }));

  it('slow waits before answering normally', () =>
    withFault({ mode: 'slow', delayMs: 300, times: 1 }, async (sim) => {
      let t = performance.now();
      assertReport(await call(sim));
      assert.ok(performance.now() - t >= 280);
      t = performance.now();
      assertReport(await call(sim));
      assert.ok(performance.now() - t < 280);
    }));

  it('htmlError answers 200 text/html', () =>
    withFault({ mode: 'htmlError' }, async (sim) => {
      const a = await call(sim);
      assert.equal(a.status, 200);
      assert.match(a.type, /^text\/html/);
      assert.equal(a.text, HTML_ERROR_PAGE);
    }));

  it('emptyBody answers 200 text/csv with no bytes', () =>
    withFault({ mode: 'emptyBody', times: 1 }, async (sim) => {
      const a = await call(sim);
      assert.equal(a.status, 200);
      assert.match(a.type, /^text\/csv/);
      assert.equal(a.bytes.length, 0);
      assertReport(await call(sim));
    }));

  it('dropMidBody sends part of the report, then cuts the connection', () =>
    withFault({ mode: 'dropMidBody', times: 1 }, async (sim) => {
      const body = reportBody();
      const got = await new Promise<{ status: number; length: number; received: Buffer; error: boolean }>((resolve, reject) => {
        const req = httpRequest(sim.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: signRequest(sim.credentials.hmac, { url: new URL(sim.url), body }).authorization },
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          let failed = false;
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', () => (failed = true));
          res.on('aborted', () => (failed = true));
          res.on('close', () =>
            resolve({ status: res.statusCode ?? 0, length: Number(res.headers['content-length']), received: Buffer.concat(chunks), error: failed || !res.complete }),
          );
        });
        req.on('error', reject);
        req.end(body);
      });
      assert.equal(got.status, 200);
      assert.ok(got.error, 'the body ends early');
      assert.ok(got.received.length > 0 && got.received.length < got.length);
      assert.ok(got.received.toString('utf8').startsWith('"Merchant_Name",'));
      assert.equal(lastLog(sim).detail, 'dropMidBody');
      assertReport(await call(sim)); // times: 1
    }));

  it('schemaDrift changes the header on authorised requests only', () =>
    withFault({ mode: 'schemaDrift', times: 1 }, async (sim) => {
      assertRefused(sim, await call(sim, { secret: { login: 'nobody', controlKey: 'x' } }), 'unknown-login');
      const drifted = await call(sim);
      assert.equal(drifted.status, 200);
      const rows = csvRows(drifted.text);
      assert.deepEqual(rows[0], [...DRIFTED_HEADER]);
      assert.ok(rows.slice(1).every((r) => r.length === DRIFTED_HEADER.length && /^[A-Z]+$/.test(r[7]!)));
      assert.deepEqual(csvRows((await call(sim)).text)[0], [...REPORT_HEADER]); // times: 1, the refusal did not count
    }));
});

describe('standalone', () => {
  it('writes usable secret files, prints how to use them, and stops on abort', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sim-standalone-'));
    const lines: string[] = [];
    const stop = new AbortController();
    try {
      let ready!: (files: { hmac: string; rsa: string; rsaPublicKey: string }, url: string) => void;
      const started = new Promise<{ files: { hmac: string; rsa: string; rsaPublicKey: string }; url: string }>((r) => (ready = (files, url) => r({ files, url })));
      const running = runStandaloneSimulator({
        secretsDir: dir,
        rowsPerDay: 20,
        signal: stop.signal,
        print: (l) => lines.push(l),
        onReady: ({ simulator, files }) => ready(files, simulator.url),
      });
      const { files, url } = await started;
      const out = lines.join('\n');
      assert.ok(out.includes(url));
      assert.ok(out.includes(`npm start -- --gateway-url ${url} --secret-file`));
      assert.match(out, /throwaway test credentials/);
      assert.match(await readFile(files.rsaPublicKey, 'utf8'), /BEGIN PUBLIC KEY/);
      for (const file of [files.hmac, files.rsa]) {
        const secret = parseGatewaySecret(await readFile(file, 'utf8'), file);
        const body = reportBody();
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: signRequest(secret, { url: new URL(url), body }).authorization },
          body,
        });
        assert.equal(res.status, 200);
        assert.ok((await res.text()).startsWith('"Merchant_Name"'));
      }
      assert.ok(lines.some((l) => / -> 200 report/.test(l)));
      stop.abort();
      await running;
      assert.equal(lines[lines.length - 1], 'Gateway simulator stopped.');
    } finally {
      stop.abort();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('standalone, one connection refused (--refuse)', () => {
  it('answers that connection with the refusal; its printed Try: command runs every connection against it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sim-refuse-'));
    const saved = { ...process.env };
    const lines: string[] = [];
    const stop = new AbortController();
    let running: Promise<void> | undefined;
    try {
      await useConnectionFixtures(dir, [{ id: 'acme_tx', connection: 'acme' }, { id: 'beta_tx', connection: 'beta' }], { staging: [{ name: 'acme' }, { name: 'beta' }] });
      await assert.rejects(runStandaloneSimulator({ secretsDir: join(dir, 'sim'), refuse: ['gamma'], print: () => undefined }), /--refuse gamma: no report uses the connection "gamma" \(the reports' connections: acme, beta\)/);
      let ready!: (r: StandaloneReady) => void;
      const started = new Promise<StandaloneReady>((r) => (ready = r));
      running = runStandaloneSimulator({ secretsDir: join(dir, 'sim'), rowsPerDay: 5, refuse: ['Beta'], signal: stop.signal, print: (l) => lines.push(l), onReady: ready });
      const { simulator, connectionFiles } = await started;
      assert.deepEqual(Object.keys(connectionFiles), ['acme', 'beta']);
      const out = lines.join('\n');
      assert.match(out, /^ {2}Refused: {5}beta: logins "sim-beta-hmac" get "You are not authorized to perform this request\."$/m);
      // Before: the only Try: lines pointed the connection "default" at it, which no report of this catalog uses.
      const tries = lines.slice(lines.indexOf('Try:') + 1).filter((l) => l.startsWith('  npm start'));
      assert.deepEqual(tries.length, 1, out);
      const argv = tries[0]!.trim().split(/\s+/).slice(3);
      assert.deepEqual(argv.filter((a) => a.startsWith('--')), ['--gateway-url', '--secret-file', '--gateway-url', '--secret-file']);
      // As printed, with a lake of its own: acme loads from this simulator, beta is refused.
      // Not spawnSync: the simulator answers from this process's event loop.
      const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
        execFile(process.execPath, ['bin/reports.mjs', 'run', ...argv, '--lake', join(dir, 'lake')], { env: process.env }, (e, stdout, stderr) =>
          done({ status: e ? ((e as { code?: number }).code ?? null) : 0, stdout, stderr }),
        );
      });
      assert.equal(run.status, 1, run.stdout + run.stderr);
      assert.match(run.stdout, /Connection "acme": http:\/\/127\.0\.0\.1:\d+\S+, login "sim-acme-hmac"/);
      assert.match(run.stdout, /fetch failed: AuthenticationRefused: The gateway of connection "beta" refused to authorise login "sim-beta-hmac"/);
      const answered = simulator.requests.map((r) => [r.login, r.outcome, r.detail ?? '']);
      assert.ok(answered.some(([login, outcome]) => login === 'sim-acme-hmac' && outcome === 'report'), JSON.stringify(answered));
      assert.deepEqual(answered.filter(([login]) => login === 'sim-beta-hmac'), [['sim-beta-hmac', 'refused', 'login-refused']]);
    } finally {
      stop.abort();
      await running?.catch(() => undefined);
      process.env = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
