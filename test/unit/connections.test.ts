import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import {
  CONNECTIONS_VARIABLE,
  DEFAULT_CONNECTION,
  encodeConnectionsVariable,
  parseConnectionsVariable,
} from '../../functions/core/connections/connection.js';
import { connectionProblems, refuseConnectionProblems } from '../../functions/core/connections/connection-problems.js';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';
import { parseReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { ENVIRONMENTS_DIR_VARIABLE, parseEnvironment } from '../../lib/environment/environments.js';

/**
 * Connections (functions/core/connections/): how an environment file defines them, how a report names one, the
 * cross-check every command and the synth run, and the fetch function's CONNECTIONS variable.
 */

const fixture = JSON.parse(readFileSync(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8')) as Record<string, unknown>;
const definition = (id: string, connection?: string) => parseReportDefinition({ ...fixture, id, ...(connection ? { connection } : {}) }, `reports/${id}.json`);

const gateway = (host: string) => ({ endpointUrl: `https://${host}/paynet-ui/services/v2/rpt-engine` });
const topLevel = { name: 'staging', gateway: gateway('gate.test'), secret: { name: 'paynet-reports/staging/gateway' } };
const invalid = (raw: unknown, pattern: RegExp) =>
  assert.throws(() => parseEnvironment(raw, 'config/environments/staging.json'), (e: unknown) => e instanceof ConfigurationError && pattern.test(e.message));

describe('connections in an environment file', () => {
  it('the top-level gateway and secret are the connection "default", bounded at 2 requests', () => {
    const env = parseEnvironment(topLevel, 'x.json');
    assert.deepEqual(env.connections, [
      { name: DEFAULT_CONNECTION, gateway: topLevel.gateway, secret: { name: topLevel.secret.name, mode: 'create' }, maxConcurrentRequests: 2 },
    ]);
    assert.equal('gateway' in env, false, 'past the schema every connection is in one list');
  });

  it('"connections" defines more, each with its own secret and bound, beside the top-level default', () => {
    const env = parseEnvironment(
      {
        ...topLevel,
        connections: {
          'acme-pay': { gateway: gateway('acme.test'), secret: { name: 'paynet-reports/staging/acme', mode: 'existing', kmsKeyArn: 'arn:aws:kms:eu-central-1:123456789012:key/k' }, maxConcurrentRequests: 1 },
          b2: { gateway: gateway('b2.test'), secret: { name: 'paynet-reports/staging/b2' } },
        },
      },
      'x.json',
    );
    assert.deepEqual(
      env.connections.map((c) => [c.name, c.gateway.endpointUrl, c.secret.name, c.secret.mode, c.maxConcurrentRequests]),
      [
        ['default', gateway('gate.test').endpointUrl, 'paynet-reports/staging/gateway', 'create', 2],
        ['acme-pay', gateway('acme.test').endpointUrl, 'paynet-reports/staging/acme', 'existing', 1],
        ['b2', gateway('b2.test').endpointUrl, 'paynet-reports/staging/b2', 'create', 2],
      ],
    );
  });

  it('an environment of named connections alone has no default', () => {
    const env = parseEnvironment({ name: 'staging', connections: { acme: { gateway: gateway('acme.test'), secret: { name: 's/acme' } } } }, 'x.json');
    assert.deepEqual(env.connections.map((c) => c.name), ['acme']);
  });

  it('refuses, naming the field: no connection, half a default, default twice, bad names, a shared secret, a bound out of range', () => {
    invalid({ name: 'staging' }, /connections: define at least one connection/);
    invalid({ name: 'staging', gateway: topLevel.gateway }, /secret: the top-level gateway and secret go together/);
    invalid({ ...topLevel, connections: { default: { gateway: gateway('x.test'), secret: { name: 'other' } } } }, /connections\.default: defined twice/);
    invalid({ ...topLevel, connections: { Acme: { gateway: gateway('x.test'), secret: { name: 'other' } } } }, /connections\.Acme: "Acme" must be 1-32 lower-case letters/);
    invalid({ ...topLevel, connections: { '-x': { gateway: gateway('x.test'), secret: { name: 'other' } } } }, /"-x" must be/);
    invalid({ ...topLevel, connections: { b: { gateway: gateway('x.test'), secret: { name: topLevel.secret.name } } } }, /connections\.b\.secret\.name: .* is the secret of connection "default" too/);
    invalid({ ...topLevel, connections: { b: { gateway: gateway('x.test'), secret: { name: 'o' }, maxConcurrentRequests: 11 } } }, /connections\.b\.maxConcurrentRequests/);
    invalid({ ...topLevel, connections: { b: { gateway: gateway('x.test'), secret: { name: 'o' }, maxConcurrentRequests: 0 } } }, /connections\.b\.maxConcurrentRequests/);
    invalid({ ...topLevel, connections: { b: { gateway: { endpointUrl: 'http://x.test/r' }, secret: { name: 'o' } } } }, /connections\.b\.gateway\.endpointUrl: must be a full https/);
    invalid({ ...topLevel, connections: { b: { gateway: gateway('x.test'), secret: { name: 'o', kmsKeyArn: 'arn:aws:kms:eu-central-1:1:key/k' } } } }, /connections\.b\.secret\.kmsKeyArn: only for mode "existing"/);
    invalid({ ...topLevel, connections: { b: { gateway: gateway('x.test'), secret: { name: 'o' }, extra: 1 } } }, /connections\.b/);
  });
});

describe('a report names its connection', () => {
  it('absent means "default"; a name is checked like an environment\'s', () => {
    assert.deepEqual(definition('a').connections, ['default']);
    assert.deepEqual(definition('a', 'acme-pay').connections, ['acme-pay']);
    assert.throws(() => definition('a', 'Acme Pay'), /connection: must be 1-32 lower-case letters/);
  });

  it('the catalog knows each report\'s file and groups reports by connection', () => {
    const catalog = ReportCatalog.fromSources([
      { file: 'reports/a.json', raw: { ...fixture, id: 'a' } },
      { file: 'reports/b.json', raw: { ...fixture, id: 'b', connection: 'acme' } },
      { file: 'reports/c.json', raw: { ...fixture, id: 'c' } },
    ]);
    assert.equal(catalog.fileOf('b'), 'reports/b.json');
    assert.deepEqual(catalog.connections(), ['default', 'acme']);
    assert.deepEqual(catalog.reportsOver('default').map((r) => r.id), ['a', 'c']);
    assert.deepEqual(catalog.reportsOver('acme').map((r) => r.id), ['b']);
  });
});

describe('every report\'s connection is defined by every environment', () => {
  const reports = [
    { id: 'a', file: 'reports/a.json', connection: 'default' },
    { id: 'b', file: 'reports/b.json', connection: 'acme' },
    { id: 'c', file: 'reports/c.json', connection: 'nowhere' },
  ];
  const envs = [
    { file: 'environments/integration.json', names: ['default', 'acme'] },
    { file: 'environments/production.json', names: ['default'] },
  ];

  it('lists every problem at once, each naming the report\'s file, the connection and the environment', () => {
    const problems = connectionProblems(reports, envs);
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems[0]!, /^reports\/b\.json: report "b" uses connection "acme", which environments\/production\.json does not define \(it has default\)/);
    assert.match(problems[1]!, /^reports\/c\.json: report "c" uses connection "nowhere", which no environment defines \(environments\/integration\.json defines [^;]+; environments\/production\.json defines [^)]+\)/);
    assert.throws(() => refuseConnectionProblems(reports, envs), (e: unknown) => e instanceof ConfigurationError && /^2 report connection problems/.test(e.message));
  });

  it('passes when every environment defines every connection used, and when there is no environment at all', () => {
    assert.deepEqual(connectionProblems(reports.slice(0, 2), [envs[0]!]), []);
    assert.deepEqual(connectionProblems(reports, []), []);
  });
});

describe('the fetch function\'s CONNECTIONS variable', () => {
  it('round-trips every connection', () => {
    const text = encodeConnectionsVariable([
      { name: 'default', endpointUrl: 'https://a.test/r', secretName: 's/a' },
      { name: 'acme', endpointUrl: 'https://b.test:8443/r', secretName: 's/b' },
    ]);
    assert.deepEqual([...parseConnectionsVariable(text).values()], [
      { name: 'default', endpointUrl: 'https://a.test/r', secretName: 's/a' },
      { name: 'acme', endpointUrl: 'https://b.test:8443/r', secretName: 's/b' },
    ]);
  });

  it('refuses a malformed value whole, naming the variable and the field', () => {
    const refused = (text: string, pattern: RegExp) =>
      assert.throws(() => parseConnectionsVariable(text), (e: unknown) => e instanceof ConfigurationError && e.message.startsWith(CONNECTIONS_VARIABLE) && pattern.test(e.message));
    refused('{', /is not JSON/);
    refused('{"Bad Name": {"endpointUrl": "https://a.test/r", "secretName": "s"}}', /Bad Name/);
    refused('{"a": {"endpointUrl": "not a url", "secretName": "s"}}', /a\.endpointUrl/);
    refused('{"a": {"endpointUrl": "https://a.test/r"}}', /a\.secretName/);
  });
});

describe('`cdk synth` refuses a report whose connection an environment lacks', () => {
  const root = mkdtempSync(join(tmpdir(), 'connections-synth-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('exit code 1, the report\'s file and the connection named, no stack trace', async () => {
    const reportsDir = join(root, 'reports');
    const environmentsDir = join(root, 'environments');
    for (const dir of [reportsDir, environmentsDir]) mkdirSync(dir);
    writeFileSync(join(reportsDir, 'payouts.json'), JSON.stringify({ ...fixture, id: 'payouts', connection: 'acme' }));
    writeFileSync(join(environmentsDir, 'staging.json'), JSON.stringify(topLevel));
    const synth = promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/app.ts'], {
      env: { ...process.env, [REPORTS_DIR_VARIABLE]: reportsDir, [ENVIRONMENTS_DIR_VARIABLE]: environmentsDir, CDK_OUTDIR: join(root, 'cdk.out') },
    });
    const failed = (await synth.then(() => assert.fail('the synthesis succeeded'), (e: unknown) => e)) as { code: number; stderr: string };
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /^ConfigurationError: 1 report connection problem/m);
    assert.match(failed.stderr, /payouts\.json: report "payouts" uses connection "acme", which no environment defines \(config\/environments\/staging\.json defines [^)]+\)/);
    assert.doesNotMatch(failed.stderr, /^\s+at /m);
  });
});
