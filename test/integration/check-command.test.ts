import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, beforeEach, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import { docFiles } from '../helpers/doc-commands.js';
import { simulatorLogin } from '../../local/connections/local-gateways.js';
import { TEST_ACCOUNTS } from '../../local/simulator/test-accounts.js';
import { readReportSources } from '../../functions/core/definitions/catalog-files.js';
import { headerLine } from '../../functions/core/gateway/answer.js';
import { parseAuthorizationHeader, signatureBaseString, type OAuthParams } from '../../functions/core/gateway/oauth.js';
import { hmacSha1Signature } from '../../functions/core/gateway/signature-methods.js';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { clearGatewaySecretCache } from '../../functions/aws/secrets.js';
import { runCheckCommand, type CheckDeps, type CheckOptions, type CheckResult } from '../../local/cli/check.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../local/simulator/index.js';

/**
 * `reports check` against the simulator in each of its answer modes, and against an HTTPS gateway whose
 * endpoint comes from an environment file and whose credentials come from Secrets Manager (mocked: no
 * local stand-in). The verdict and the exit code are what a user acts on.
 */

// A fixture catalog: the simulator's report under an id of its own, so the test does not rest on what the
// shipped catalog lists.
const shipped = readReportSources(FIXTURE_REPORTS_DIR).flatMap((s) => ('raw' in s ? [s.raw as { reportIdentifier: string; id: string }] : [])).find((r) => r.reportIdentifier === 'custom-transactions-report');
assert.ok(shipped, 'a fixture definition of the simulator\'s report');
const catalog = new ReportCatalog(ReportCatalog.fromSources([{ file: 'fixture.json', raw: { ...shipped, id: 'check_fixture' } }]).reports);
const definition = catalog.get('check_fixture');
const headerText = headerLine(definition.columns.map((c) => c.header), definition.delimiter);

const dir = await mkdtemp(join(tmpdir(), 'check-'));
after(() => rm(dir, { recursive: true, force: true }));
const sims: Simulator[] = [];
after(async () => {
  for (const s of sims) await s.close();
});

interface Ran {
  code: number;
  text: string;
  results?: CheckResult[];
}

async function check(opts: Partial<CheckOptions>, deps: CheckDeps = {}): Promise<Ran> {
  const lines: string[] = [];
  const code = await runCheckCommand({ report: 'check_fixture', from: '2026-11-20', ...opts }, (l) => lines.push(l), { catalog, ...deps });
  const text = lines.join('\n');
  return { code, text, ...(opts.json ? { results: JSON.parse(text) as CheckResult[] } : {}) };
}

async function againstSimulator(options: SimulatorOptions, secret?: object): Promise<{ sim: Simulator; file: string }> {
  const sim = await startSimulator({ rowsPerDay: 40, ...options });
  sims.push(sim);
  const file = join(dir, `secret-${sims.length}.json`);
  await writeFile(file, JSON.stringify(secret ?? sim.credentials.hmac));
  return { sim, file };
}

describe('reports check against the simulator', () => {
  it('a header-only answer still loads, and the verdict asks whether the period is right, naming what the body asked for', async () => {
    const { sim, file } = await againstSimulator({ volume: { drops: { '2026-11-20': 0 } } });
    const r = await check({ gatewayUrl: sim.url, secretFile: file });
    assert.equal(r.code, 0, r.text);
    assert.match(r.text, /Records: +0$/m);
    assert.match(
      r.text,
      /Verdict: +OK: this answer would load; 0 records: is the period right\? The body asked for "2026-11-20 00:00:00" to "2026-11-21 00:00:00" \(exclusive\) \(docs\/add-a-report\.md, "The period a body asks for"\)\.$/m,
    );
  });

  it('with no URL, the embedded simulator answers any report of the catalog, not only the sample', async () => {
    const shape = JSON.parse(await readFile(new URL('../fixtures/report-shapes/payouts_cp1251.json', import.meta.url), 'utf8')) as { id: string };
    const own = ReportCatalog.fromSources([{ file: 'payouts_cp1251.json', raw: shape }]);
    const lines: string[] = [];
    const code = await runCheckCommand({ report: shape.id, from: '2026-11-20' }, (l) => lines.push(l), { catalog: own });
    const text = lines.join('\n');
    assert.equal(code, 0, text);
    assert.match(text, /Header: +equals the definition's header/);
    assert.match(text, /Verdict: +OK: this answer would load/);
  });

  it('a plain answer: every line, the header equal, "OK: this answer would load", exit 0', async () => {
    const { sim, file } = await againstSimulator({});
    const r = await check({ gatewayUrl: sim.url, secretFile: file });
    assert.equal(r.code, 0, r.text);
    for (const label of ['URL', 'Login', 'Signature method', 'HTTP status', 'Content type', 'Content coding', 'Time to first byte', 'Bytes', 'Records', 'First line', 'Header', 'Verdict']) {
      assert.match(r.text, new RegExp(`^  ${label}:`, 'm'), label);
    }
    assert.match(r.text, /HTTP status: +200/);
    assert.match(r.text, /Records: +40$/m);
    assert.match(r.text, /Header: +equals the definition's header/);
    assert.ok(r.text.includes(`First line:         ${headerText}`));
    assert.match(r.text, /Verdict: +OK: this answer would load/);
    assert.equal(sim.requests.length, 1, 'one request, nothing else');
    assert.ok(!r.text.includes((sim.credentials.hmac as { controlKey: string }).controlKey), 'no key printed');
  });

  it('text/plain, gzip-compressed, trickled: still OK, with the coding and wire size', async () => {
    const { sim, file } = await againstSimulator({ transport: { contentType: 'text/plain', compress: 'gzip', chunked: true } });
    const r = await check({ gatewayUrl: sim.url, secretFile: file, json: true });
    assert.equal(r.code, 0, r.text);
    const [res] = r.results!;
    assert.equal(res!.ok, true);
    assert.equal(res!.contentType, 'text/plain');
    assert.equal(res!.contentCoding, 'gzip');
    assert.equal(res!.records, 40);
    assert.ok(res!.wireBytes! < res!.bytes!, `${res!.wireBytes} < ${res!.bytes}`);
    assert.equal(res!.headerMatches, true);
  });

  it('a refused login: NOT OK with AuthenticationRefused and what to check, exit 1, the key never printed', async () => {
    const wrongKey = 'wrong-control-key-must-not-be-printed';
    const { sim } = await againstSimulator({});
    const badFile = join(dir, 'bad.json');
    await writeFile(badFile, JSON.stringify({ login: sim.credentials.hmac.login, controlKey: wrongKey }));
    const r = await check({ gatewayUrl: sim.url, secretFile: badFile });
    assert.equal(r.code, 1);
    assert.match(r.text, /Verdict: +NOT OK: AuthenticationRefused: the gateway refused the login/);
    assert.match(r.text, /HTTP status: +200/);
    assert.ok(!r.text.includes(wrongKey));
  });

  it('a drifted header: NOT OK, column by column, exit 1', async () => {
    const { sim, file } = await againstSimulator({ fault: { mode: 'schemaDrift' } });
    const r = await check({ gatewayUrl: sim.url, secretFile: file });
    assert.equal(r.code, 1, r.text);
    assert.match(r.text, /Header: +DIFFERS from the definition's header:/);
    assert.match(r.text, /column 3: expected "Merchant_OID", got "Merchant_Order_ID"/);
    assert.match(r.text, /column 8: expected "Order_description", got "Transaction_status"/);
    assert.match(r.text, /column 10: expected \(none\), got "Date_of_report"/);
    assert.match(r.text, /Verdict: +NOT OK: .*SchemaDrift/);
  });

  it('an HTML page: NOT OK with UnexpectedAnswer quoting it and the start a report would have, exit 1', async () => {
    const { sim, file } = await againstSimulator({ fault: { mode: 'htmlError' } });
    const r = await check({ gatewayUrl: sim.url, secretFile: file });
    assert.equal(r.code, 1);
    assert.match(r.text, /Error: +UnexpectedAnswer: .*web page/);
    assert.ok(r.text.includes(`Expected start:     ${headerText.slice(0, 100)}`));
    assert.match(r.text, /Content type: +text\/html/);
  });

  it('a report cut mid-body: NOT OK with GatewayUnavailable, exit 1', async () => {
    const { sim, file } = await againstSimulator({ fault: { mode: 'dropMidBody' }, rowsPerDay: 400 });
    const r = await check({ gatewayUrl: sim.url, secretFile: file });
    assert.equal(r.code, 1);
    assert.match(r.text, /Verdict: +NOT OK: GatewayUnavailable/);
  });

  it('refuses a bad --gateway-url before any request, and --report with --all', async () => {
    await assert.rejects(check({ gatewayUrl: 'https://gw.example.com', secretFile: join(dir, 'x.json') }), /has no path/);
    await assert.rejects(check({ all: true }), /exclude each other/);
  });
});

describe('reports check --environment', () => {
  const sm = mockClient(SecretsManagerClient);
  // The caller's credentials, which the command resolves before any call (local/args/aws-access.ts); the mocked
  // client sends nothing anywhere.
  before(() => Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'not-a-real-secret' }));
  after(() => {
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
  });
  const CONTROL_KEY = 'env-control-key-0123456789-secret';
  let cert: Buffer | undefined;
  let url = '';
  const signatures: string[] = [];
  let server: https.Server | undefined;

  before(async () => {
    try {
      await promisify(execFile)('openssl', [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
        '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'),
      ]);
    } catch {
      return;
    }
    cert = await readFile(join(dir, 'c.pem'));
    // A gateway that is not the simulator: it checks the HMAC signature with the key from "Secrets Manager".
    server = https.createServer({ key: await readFile(join(dir, 'k.pem')), cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const o = parseAuthorizationHeader(req.headers.authorization) ?? {};
        signatures.push(o.oauth_signature ?? '');
        const oauth: OAuthParams = {
          oauth_consumer_key: o.oauth_consumer_key ?? '',
          oauth_nonce: o.oauth_nonce ?? '',
          oauth_signature_method: 'HMAC-SHA1',
          oauth_timestamp: o.oauth_timestamp ?? '',
          oauth_version: '1.0',
        };
        const base = signatureBaseString('POST', new URL(req.url ?? '/', url), oauth, Buffer.concat(chunks).toString(), 'excluded');
        if (o.oauth_consumer_key !== 'env-merchant' || hmacSha1Signature(base, CONTROL_KEY) !== o.oauth_signature) {
          res.writeHead(200, { 'Content-Type': 'text/plain' }).end('You are not authorized to perform this request.');
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(`${headerText}\r\n${definition.columns.map(() => '"1"').join(',')}\r\n`);
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/paynet-ui/services/v2/rpt-engine`;
    await writeFile(
      join(dir, 'staging.json'),
      JSON.stringify({ name: 'staging', region: 'eu-central-1', gateway: { endpointUrl: url }, secret: { name: 'paynet-reports/staging/gateway' } }),
    );
  });
  after(() => {
    server?.closeAllConnections();
    server?.close();
    sm.restore();
  });
  beforeEach(() => {
    sm.reset();
    clearGatewaySecretCache();
  });

  it('takes the endpoint from the environment file and the credentials from its secret; never prints key or signature', async (t) => {
    if (!cert) return t.skip('openssl is not installed');
    sm.on(GetSecretValueCommand, { SecretId: 'paynet-reports/staging/gateway' }).resolves({
      SecretString: JSON.stringify({ login: 'env-merchant', controlKey: CONTROL_KEY }),
    });
    const r = await check({ environment: 'staging' }, { environmentsDir: pathToFileURL(`${dir}/`), gateway: { ca: cert } });
    assert.equal(r.code, 0, r.text);
    assert.match(r.text, /Login: +"env-merchant"/);
    assert.ok(r.text.includes(`URL:                ${url}`));
    assert.match(r.text, /Records: +1$/m);
    assert.equal(sm.commandCalls(GetSecretValueCommand).length, 1);
    assert.ok(signatures.length >= 1 && signatures.every((s) => s.length > 10));
    assert.ok(!r.text.includes(CONTROL_KEY));
    for (const s of signatures) assert.ok(!r.text.includes(s) && !r.text.includes(encodeURIComponent(s)));
  });

  it('a wrong key in the secret: NOT OK, exit 1', async (t) => {
    if (!cert) return t.skip('openssl is not installed');
    sm.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ login: 'env-merchant', controlKey: 'not-the-key' }) });
    const r = await check({ environment: 'staging' }, { environmentsDir: pathToFileURL(`${dir}/`), gateway: { ca: cert } });
    assert.equal(r.code, 1);
    assert.match(r.text, /AuthenticationRefused/);
    assert.ok(!r.text.includes('not-the-key'));
  });

  it('names a missing environment file and refuses mixing --environment with --gateway-url', async () => {
    await assert.rejects(check({ environment: 'nowhere' }, { environmentsDir: pathToFileURL(`${dir}/`) }), /config\/environments\/nowhere\.json/);
    await assert.rejects(check({ environment: 'staging', gatewayUrl: 'https://x/y' }), /leave out --gateway-url/);
    await assert.rejects(check({ environment: '../etc' }), /not an environment name/);
  });
});

describe('the simulator logins the docs name', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  /** Every `sim-…` login written in README.md and docs/*.md, with the line it is on and the three before it. */
  const written = docFiles(root).flatMap((file) => {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    return lines.flatMap((line, i) =>
      [...line.matchAll(/\bsim-[A-Za-z0-9<>-]+/g)].map((m) => ({ where: `${file}:${i + 1}`, login: m[0], context: lines.slice(Math.max(0, i - 3), i + 1).join('\n') })),
    );
  });

  it('are the logins the simulators issue: sim-<connection>-<account> for the connection named beside it', () => {
    // Before: docs/gateway.md showed "sim-merchant-hmac" for the connection default and "sim-merchant-<connection>".
    assert.ok(written.length > 0);
    const standalone = Object.values(TEST_ACCOUNTS).map((a) => a.login as string);
    const wrong = written.filter(({ login, context }) => {
      const m = /^sim-(.+)-(hmac|rsa)$/.exec(login);
      if (!m) return true;
      const [, connection, account] = m as unknown as [string, string, 'hmac' | 'rsa'];
      if (standalone.includes(login) && /npm run simulator|reports simulator/.test(context)) return false;
      if (connection === '<connection>') return login !== simulatorLogin('<connection>', account);
      const named = new RegExp(`(connection|Connection)[:\\s"]+${connection}\\b|^\\s+(OK|NOT OK)\\s+${connection}:|\`${connection}\``, 'm');
      return login !== simulatorLogin(connection, account) || !named.test(context);
    });
    assert.deepEqual(wrong.map((w) => `${w.where}: ${w.login}`), []);
  });

  it('the check example shows the login the embedded simulator signs with', async () => {
    const lines: string[] = [];
    await runCheckCommand({ report: 'check_fixture', from: '2026-11-20', json: true }, (l) => lines.push(l), { catalog });
    const [result] = JSON.parse(lines.join('\n')) as CheckResult[];
    const doc = readFileSync(join(root, 'docs/gateway.md'), 'utf8');
    assert.ok(doc.includes(`  Login:              "${result!.login}"`), `docs/gateway.md's check example, login ${result!.login}`);
    assert.ok(doc.includes(`login "${result!.login}" (${result!.signatureMethod})`));
  });
});
