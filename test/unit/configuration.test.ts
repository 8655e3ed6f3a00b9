import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { loadConfiguration } from '../../lib/environment/configuration.js';
import { ENVIRONMENTS_DIR_VARIABLE } from '../../lib/environment/environments.js';

/**
 * Every configuration problem in one round (issue 45): a broken definition, two broken environment files and a
 * connection no environment defines are all named by the first `cdk synth`, `npm start` or command, not one file's
 * problems per attempt.
 */

const fixture = JSON.parse(readFileSync(new URL('../fixtures/reports/transactions.json', import.meta.url), 'utf8')) as Record<string, unknown>;
delete fixture.$schema;
const environment = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  gateway: { endpointUrl: 'https://gateway.test/paynet-ui/services/v2/rpt-engine' },
  secret: { name: `paynet-reports/${name}/gateway` },
  ...extra,
});

const root = mkdtempSync(join(tmpdir(), 'configuration-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A checkout's config folders: a definition with a bad field, one over an undefined connection, two bad environment files. */
function brokenCheckout(): { reportsDir: string; environmentsDir: string } {
  const reportsDir = join(root, 'reports');
  const environmentsDir = join(root, 'environments');
  for (const dir of [reportsDir, environmentsDir]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(reportsDir, 'broken.json'), JSON.stringify({ ...fixture, id: 'broken', lookback: 'two' }));
  writeFileSync(join(reportsDir, 'gamma.json'), JSON.stringify({ ...fixture, id: 'gamma', connection: 'gamma' }));
  writeFileSync(join(environmentsDir, 'staging.json'), JSON.stringify(environment('staging', { logLevel: 'LOUD' })));
  writeFileSync(join(environmentsDir, 'production.json'), JSON.stringify(environment('production', { removalPolicy: 'keep' })));
  return { reportsDir, environmentsDir };
}

const sourcesOf = (file: string, raw: unknown) => ({ file, raw });

describe('loadConfiguration', () => {
  it('lists the definitions\' and both environment files\' problems in one round', () => {
    const { reportsDir, environmentsDir } = brokenCheckout();
    const env = { ...process.env };
    process.env[REPORTS_DIR_VARIABLE] = reportsDir;
    process.env[ENVIRONMENTS_DIR_VARIABLE] = environmentsDir;
    try {
      assert.throws(
        () => loadConfiguration(),
        (e: unknown) => {
          assert.ok(e instanceof ConfigurationError);
          // Before: only the definition's problem; the environment files' came one fix later.
          assert.match(e.message, /^2 kinds of configuration problem, every one listed:/);
          assert.match(e.message, /broken\.json: report "broken" is invalid:\n {2}lookback: must be a number, not the string "two"/);
          assert.match(e.message, /staging\.json: environment is invalid:\n {2}logLevel: /);
          assert.match(e.message, /production\.json: environment is invalid:\n {2}removalPolicy: must be one of "retain", "destroy", not the string "keep"/);
          return true;
        },
      );
    } finally {
      process.env = env;
    }
  });

  it('checks the connections of the reports that load against environments that all load, beside the broken definition', () => {
    assert.throws(
      () =>
        loadConfiguration({
          reports: [sourcesOf('config/reports/broken.json', { ...fixture, id: 'broken', lookback: 'two' }), sourcesOf('config/reports/gamma.json', { ...fixture, id: 'gamma', connection: 'gamma' })],
          environments: [sourcesOf('config/environments/staging.json', environment('staging'))],
        }),
      (e: unknown) =>
        e instanceof ConfigurationError &&
        /report "broken" is invalid/.test(e.message) &&
        /\n\n1 report connection problem .*:\nconfig\/reports\/gamma\.json: report "gamma" uses connection "gamma", which no environment defines \(config\/environments\/staging\.json defines default\)/.test(e.message),
    );
  });

  it('one kind of problem is thrown as it always was; none gives the catalog and the environments', () => {
    assert.throws(
      () => loadConfiguration({ reports: [sourcesOf('config/reports/gamma.json', { ...fixture, id: 'gamma', connection: 'gamma' })], environments: [sourcesOf('config/environments/staging.json', environment('staging'))] }),
      /: 1 report connection problem \(every report's connection must be defined by every environment\):\n/,
    );
    const { catalog, environments } = loadConfiguration({ reports: [sourcesOf('config/reports/t.json', { ...fixture, id: 't' })], environments: [sourcesOf('config/environments/staging.json', environment('staging'))] });
    assert.deepEqual([catalog.ids(), environments.map((e) => e.name)], [['t'], ['staging']]);
  });

  it('`cdk synth` and `npm start` both say every problem at once', async () => {
    const { reportsDir, environmentsDir } = brokenCheckout();
    const env = { ...process.env, [REPORTS_DIR_VARIABLE]: reportsDir, [ENVIRONMENTS_DIR_VARIABLE]: environmentsDir, CDK_OUTDIR: join(root, 'cdk.out') };
    for (const args of [['--import', 'tsx', 'bin/app.ts'], ['bin/reports.mjs', 'run', '--lake', join(root, 'lake')]]) {
      const failed = (await promisify(execFile)(process.execPath, args, { env }).then(
        () => assert.fail(`${args.join(' ')} succeeded`),
        (e: unknown) => e,
      )) as { stderr: string };
      for (const file of ['broken.json', 'staging.json', 'production.json']) assert.ok(failed.stderr.includes(file), `${args.join(' ')}: ${file}\n${failed.stderr}`);
    }
  });
});
