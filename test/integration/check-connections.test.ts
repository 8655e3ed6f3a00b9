import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, beforeEach, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import { readReportSources } from '../../functions/core/definitions/catalog-files.js';
import { headerLine } from '../../functions/core/gateway/answer.js';
import { parseAuthorizationHeader, signatureBaseString, type OAuthParams } from '../../functions/core/gateway/oauth.js';
import { gatewayAccountOf, signatureMethodOf, verifierOf, type GatewaySecret } from '../../functions/core/gateway/signature-methods.js';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { clearGatewaySecretCache } from '../../functions/aws/secrets.js';
import { runCheckCommand, type CheckDeps, type CheckOptions, type CheckResult } from '../../local/cli/check.js';
import { startSimulator, type Simulator } from '../../local/simulator/index.js';
import { skipWithoutTool, toolInstalled } from '../helpers/required-tools.js';

/**
 * `reports check` over several connections: each connection its own gateway and login, each checked with its own
 * report, one verdict line each. Against the embedded simulators (one per connection), a simulator the test
 * starts (--gateway-url with --connection), and two HTTPS gateways that are not the simulator, one signing
 * HMAC-SHA1 and one RSA-SHA256, whose credentials come from Secrets Manager (mocked) by the environment file.
 */

type RawDefinition = { id: string; reportIdentifier: string; connection?: string };
const fixture = readReportSources(FIXTURE_REPORTS_DIR)
  .flatMap((s) => ('raw' in s ? [s.raw as RawDefinition] : []))
  .find((r) => r.reportIdentifier === 'custom-transactions-report');
assert.ok(fixture, "a fixture definition of the simulator's report");
const payouts = JSON.parse(await readFile(new URL('../fixtures/report-shapes/payouts_cp1251.json', import.meta.url), 'utf8')) as RawDefinition;

/** Two connections, a report on each: the simulator's own report over "default", payouts over "provider-b". */
const simulatorCatalog = new ReportCatalog(
  ReportCatalog.fromSources([
    { file: 'a.json', raw: { ...fixture, id: 'check_a' } },
    { file: 'b.json', raw: { ...payouts, connection: 'provider-b' } },
  ]).reports,
);
/** Two named connections, one report each, both of the simulator's shape (what the foreign gateways answer). */
const environmentCatalog = new ReportCatalog(
  ReportCatalog.fromSources([
    { file: 'a.json', raw: { ...fixture, id: 'check_a', connection: 'provider-a' } },
    { file: 'b.json', raw: { ...fixture, id: 'check_b', connection: 'provider-b' } },
  ]).reports,
);
const definition = environmentCatalog.get('check_a');
const headerText = headerLine(definition.columns.map((c) => c.header), definition.delimiter);

const dir = await mkdtemp(join(tmpdir(), 'check-connections-'));
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
  await rm(dir, { recursive: true, force: true });
});

interface Ran {
  code: number;
  text: string;
  results?: CheckResult[];
}

async function check(opts: Partial<CheckOptions>, deps: CheckDeps): Promise<Ran> {
  const lines: string[] = [];
  const code = await runCheckCommand({ from: '2026-11-20', ...opts }, (l) => lines.push(l), deps);
  const text = lines.join('\n');
  return { code, text, ...(opts.json ? { results: JSON.parse(text) as CheckResult[] } : {}) };
}

/** The lines under "Connections:", one per connection. */
const verdictLines = (text: string) => text.slice(text.indexOf('Connections:\n') + 'Connections:\n'.length).split('\n');

describe('reports check over two connections, without an environment', () => {
  it('starts one embedded simulator per connection, each with its reports and a login of its own; one verdict line each', async () => {
    const r = await check({}, { catalog: simulatorCatalog });
    assert.equal(r.code, 0, r.text);
    const lines = verdictLines(r.text);
    assert.equal(lines.length, 2, r.text);
    assert.match(lines[0]!, /^ {2}OK +default: http:\/\/127\.0\.0\.1:\d+\/paynet-ui\/services\/v2\/rpt-engine, the embedded simulator's test account, login "sim-default-hmac" \(HMAC-SHA1\); report check_a: OK: this answer would load$/);
    assert.match(lines[1]!, /^ {2}OK +provider-b: http:\/\/127\.0\.0\.1:\d+\/.*login "sim-provider-b-hmac" \(HMAC-SHA1\); report payouts_cp1251: OK/);
    const port = (line: string) => /127\.0\.0\.1:(\d+)/.exec(line)![1];
    assert.notEqual(port(lines[0]!), port(lines[1]!), 'a simulator each');
    assert.match(r.text, /^ {2}Connection: +provider-b$/m);
  });

  it('--connection checks that one only; --json gives each result its connection', async () => {
    const r = await check({ connection: 'provider-b', json: true }, { catalog: simulatorCatalog });
    assert.equal(r.code, 0, r.text);
    assert.deepEqual(
      r.results!.map((x) => [x.connection, x.report, x.login, x.ok]),
      [['provider-b', 'payouts_cp1251', 'sim-provider-b-hmac', true]],
    );
  });

  it('a name that is not a connection, or a report over another, is refused before any request', async () => {
    await assert.rejects(check({ connection: 'nowhere' }, { catalog: simulatorCatalog }), /--connection "nowhere" is not a connection of the catalog: default, provider-b/);
    await assert.rejects(check({ connection: 'default', report: 'payouts_cp1251' }, { catalog: simulatorCatalog }), /is over connection "provider-b", not "default"/);
  });

  it('--gateway-url with --connection: that connection\'s report against the given gateway', async () => {
    const sim: Simulator = await startSimulator({ reports: simulatorCatalog.reportsOver('provider-b'), hmac: { login: 'given-b' } });
    cleanups.push(() => sim.close());
    const file = join(dir, 'b.json');
    await writeFile(file, JSON.stringify(sim.credentials.hmac));
    const r = await check({ gatewayUrl: sim.url, secretFile: file, connection: 'provider-b', json: true }, { catalog: simulatorCatalog });
    assert.equal(r.code, 0, r.text);
    assert.deepEqual(r.results!.map((x) => [x.connection, x.report, x.login]), [['provider-b', 'payouts_cp1251', 'given-b']]);
    assert.equal(sim.requests.length, 1);
    assert.equal(sim.requests[0]!.login, 'given-b');
  });
});

interface ForeignGateway {
  url: string;
  /** The login of every request received. */
  logins: string[];
  signatures: string[];
}

describe('reports check --environment with two connections', () => {
  const sm = mockClient(SecretsManagerClient);
  // The caller's credentials, which the command resolves before any call (local/args/aws-access.ts); the mocked
  // client sends nothing anywhere.
  before(() => Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'not-a-real-secret' }));
  after(() => {
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
  });
  const HMAC: GatewaySecret = { login: 'merchant-a', controlKey: 'control-key-a-0123456789-never-printed' };
  const RSA: GatewaySecret = {
    login: 'merchant-b',
    signatureMethod: 'RSA-SHA256',
    privateKeyPem: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  const SECRETS = { 'provider-a': 'paynet-reports/two/provider-a', 'provider-b': 'paynet-reports/two/provider-b' };
  let cert: Buffer | undefined;
  const gateways: ForeignGateway[] = [];

  /** A gateway that is not the simulator: it knows one login, and verifies its signature with that login's record. */
  async function foreignGateway(secret: GatewaySecret): Promise<ForeignGateway> {
    const verify = verifierOf(gatewayAccountOf(secret));
    const seen: ForeignGateway = { url: '', logins: [], signatures: [] };
    const server = https.createServer({ key: await readFile(join(dir, 'k.pem')), cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const o = parseAuthorizationHeader(req.headers.authorization) ?? {};
        seen.logins.push(o.oauth_consumer_key ?? '');
        seen.signatures.push(o.oauth_signature ?? '');
        const oauth: OAuthParams = {
          oauth_consumer_key: o.oauth_consumer_key ?? '',
          oauth_nonce: o.oauth_nonce ?? '',
          // The login's own method: a request signed with another fails the check.
          oauth_signature_method: signatureMethodOf(secret),
          oauth_timestamp: o.oauth_timestamp ?? '',
          oauth_version: '1.0',
        };
        const base = signatureBaseString('POST', new URL(req.url ?? '/', seen.url), oauth, Buffer.concat(chunks).toString(), 'excluded');
        if (o.oauth_consumer_key !== secret.login || !verify(base, o.oauth_signature ?? '')) {
          res.writeHead(200, { 'Content-Type': 'text/plain' }).end('You are not authorized to perform this request.');
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(`${headerText}\r\n${definition.columns.map(() => '"1"').join(',')}\r\n`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    seen.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/paynet-ui/services/v2/rpt-engine`;
    return seen;
  }

  before(async () => {
    // A missing openssl skips (or, under CI, fails) each test; a failing openssl fails here with its own message.
    if (!toolInstalled('openssl')) return;
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'),
    ]);
    cert = await readFile(join(dir, 'c.pem'));
    gateways.push(await foreignGateway(HMAC), await foreignGateway(RSA));
    const connections = Object.fromEntries(
      (['provider-a', 'provider-b'] as const).map((name, i) => [name, { gateway: { endpointUrl: gateways[i]!.url }, secret: { name: SECRETS[name], mode: 'existing' } }]),
    );
    await writeFile(join(dir, 'two.json'), JSON.stringify({ name: 'two', region: 'eu-central-1', connections }));
  });
  after(() => sm.restore());
  beforeEach(() => {
    sm.reset();
    clearGatewaySecretCache();
    for (const g of gateways) g.logins.length = g.signatures.length = 0;
  });

  const deps = (): CheckDeps => ({ catalog: environmentCatalog, environmentsDir: pathToFileURL(`${dir}/`), gateway: { ca: cert } });
  const bothSecrets = () => {
    sm.on(GetSecretValueCommand, { SecretId: SECRETS['provider-a'] }).resolves({ SecretString: JSON.stringify(HMAC) });
    sm.on(GetSecretValueCommand, { SecretId: SECRETS['provider-b'] }).resolves({ SecretString: JSON.stringify(RSA) });
  };

  it('checks every connection with its own secret: each gateway sees only its login; a verdict line each, no key printed', async (t) => {
    if (skipWithoutTool(t, 'openssl')) return;
    bothSecrets();
    const r = await check({ environment: 'two' }, deps());
    assert.equal(r.code, 0, r.text);
    assert.deepEqual(gateways.map((g) => g.logins), [['merchant-a'], ['merchant-b']]);
    const lines = verdictLines(r.text);
    assert.deepEqual(lines, [
      `  OK     provider-a: ${gateways[0]!.url}, secret "${SECRETS['provider-a']}", login "merchant-a" (HMAC-SHA1); report check_a: OK: this answer would load`,
      `  OK     provider-b: ${gateways[1]!.url}, secret "${SECRETS['provider-b']}", login "merchant-b" (RSA-SHA256); report check_b: OK: this answer would load`,
    ]);
    assert.ok(!r.text.includes((HMAC as { controlKey: string }).controlKey));
    assert.ok(!r.text.includes('PRIVATE KEY'));
    for (const s of gateways.flatMap((g) => g.signatures)) assert.ok(!r.text.includes(s) && !r.text.includes(encodeURIComponent(s)));
  });

  it('--json: each result names its connection and secret', async (t) => {
    if (skipWithoutTool(t, 'openssl')) return;
    bothSecrets();
    const r = await check({ environment: 'two', json: true }, deps());
    assert.deepEqual(
      r.results!.map((x) => [x.connection, x.report, x.secretName, x.signatureMethod, x.ok]),
      [
        ['provider-a', 'check_a', SECRETS['provider-a'], 'HMAC-SHA1', true],
        ['provider-b', 'check_b', SECRETS['provider-b'], 'RSA-SHA256', true],
      ],
    );
  });

  it('--connection: that connection only, its secret only', async (t) => {
    if (skipWithoutTool(t, 'openssl')) return;
    bothSecrets();
    const r = await check({ environment: 'two', connection: 'provider-b' }, deps());
    assert.equal(r.code, 0, r.text);
    assert.deepEqual(gateways.map((g) => g.logins), [[], ['merchant-b']]);
    assert.deepEqual(sm.commandCalls(GetSecretValueCommand).map((c) => c.args[0].input.SecretId), [SECRETS['provider-b']]);
    assert.equal(verdictLines(r.text).length, 1);
    await assert.rejects(check({ environment: 'two', connection: 'default' }, deps()), /--connection "default" is not a connection of config\/environments\/two\.json: provider-a, provider-b/);
  });

  it('one connection failing: its line says NOT OK and why, the other is still checked, exit 1', async (t) => {
    if (skipWithoutTool(t, 'openssl')) return;
    sm.on(GetSecretValueCommand, { SecretId: SECRETS['provider-a'] }).resolves({ SecretString: JSON.stringify({ ...HMAC, controlKey: 'not-the-key' }) });
    sm.on(GetSecretValueCommand, { SecretId: SECRETS['provider-b'] }).resolves({ SecretString: JSON.stringify(RSA) });
    const r = await check({ environment: 'two' }, deps());
    assert.equal(r.code, 1);
    const [a, b] = verdictLines(r.text);
    assert.match(a!, /^ {2}NOT OK provider-a: .*report check_a: NOT OK: AuthenticationRefused: the gateway refused the login: check the login and the control key/);
    assert.match(b!, /^ {2}OK +provider-b: /);
    assert.ok(!r.text.includes('not-the-key'));
  });

  it('a connection no report names: WARN on its line, saying it is still deployed and what to do; exit 0', async (t) => {
    if (skipWithoutTool(t, 'openssl')) return;
    bothSecrets();
    sm.on(GetSecretValueCommand, { SecretId: 'paynet-reports/idle/default' }).resolves({ SecretString: JSON.stringify(HMAC) });
    const two = JSON.parse(await readFile(join(dir, 'two.json'), 'utf8')) as Record<string, unknown>;
    // The top-level gateway and secret: the connection "default", which no report of this catalog names.
    await writeFile(join(dir, 'idle.json'), JSON.stringify({ ...two, name: 'idle', gateway: { endpointUrl: gateways[0]!.url }, secret: { name: 'paynet-reports/idle/default', mode: 'existing' } }));
    const r = await check({ environment: 'idle' }, deps());
    assert.equal(r.code, 0, r.text);
    const idle = verdictLines(r.text).find((l) => l.includes(' default: '));
    // Before: "OK     default: …; NOT CHECKED: no report of the catalog names this connection, so nothing would be requested over it".
    assert.match(
      idle!,
      /^ {2}WARN {3}default: .*NOT CHECKED: no report names the connection "default" \(the top-level gateway and secret of config\/environments\/idle\.json\), yet it gets a secret, a scheduled-runs queue and alarms of its own: name it in a report's "connection", or remove it from the file$/,
    );
  });

  it('a connection whose secret does not exist: NOT OK naming the secret, no request for it, the other checked', async (t) => {
    if (skipWithoutTool(t, 'openssl')) return;
    sm.on(GetSecretValueCommand, { SecretId: SECRETS['provider-a'] }).resolves({ SecretString: JSON.stringify(HMAC) });
    sm.on(GetSecretValueCommand, { SecretId: SECRETS['provider-b'] }).rejects(Object.assign(new Error('Secrets Manager can\'t find the specified secret.'), { name: 'ResourceNotFoundException' }));
    const r = await check({ environment: 'two' }, deps());
    assert.equal(r.code, 1, r.text);
    assert.deepEqual(gateways.map((g) => g.logins), [['merchant-a'], []]);
    const [, b] = verdictLines(r.text);
    assert.match(b!, /^ {2}NOT OK provider-b: .*secret "paynet-reports\/two\/provider-b"; report check_b: NOT OK: ConfigurationError: the credentials could not be read/);
    assert.match(r.text, /Error: +ConfigurationError: Secrets Manager secret "paynet-reports\/two\/provider-b" does not exist/);
  });
});
