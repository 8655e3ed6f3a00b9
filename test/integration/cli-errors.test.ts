import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import { runBackfillCommand } from '../../local/cli/backfill.js';
import { ensureWritableDir } from '../../local/lake/lake-thread.js';
import { runLocal } from '../../local/cli/run.js';
import { runQueryCommand } from '../../local/cli/query.js';
import { runStandaloneSimulator, type StandaloneReady } from '../../local/simulator/index.js';

/** Mistakes a newcomer makes, each caught before any work with one line that names the flag or field. */

/** Runs `reports <args>`; resolves with the exit code and both outputs. */
async function cli(args: string[], timeoutMs = 0): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/reports.ts', ...args], { timeout: timeoutMs }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

const oneLine = (stderr: string) => stderr.trim().split('\n').filter((l) => !/^\(node:\d+\)|--trace-warnings/.test(l));

describe('errors before work', () => {
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-errors-'));
    file = join(dir, 'a-file');
    await writeFile(file, 'not a directory');
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('--lake: a file, a path under a file, a read-only directory; a missing one is created', async () => {
    await assert.rejects(ensureWritableDir(file), (e: unknown) => e instanceof ConfigurationError && /^--lake .*a-file: is a file, not a directory\. Pass --lake a directory/.test(e.message));
    await assert.rejects(ensureWritableDir(join(file, 'lake')), /--lake .*: .*a-file is a file, not a directory/);
    await ensureWritableDir(join(dir, 'new', 'lake'));
    assert.ok(existsSync(join(dir, 'new', 'lake')));
    if (process.getuid?.() !== 0) {
      // root writes anywhere, so only another user can see this one.
      const readOnly = join(dir, 'read-only');
      await ensureWritableDir(readOnly);
      await chmod(readOnly, 0o555);
      await assert.rejects(ensureWritableDir(readOnly), /--lake .*read-only: is not writable/);
      await assert.rejects(ensureWritableDir(join(readOnly, 'lake')), /cannot be created: .*read-only is not writable/);
    }
  });

  it('run and backfill check --lake first; the command line says it in one line, no stack', async () => {
    await assert.rejects(runLocal({ report: 'transactions', lake: file }, () => undefined), /--lake .*is a file, not a directory/);
    await assert.rejects(runQueryCommand('SELECT 1', { lake: file }, { out: () => undefined, err: () => undefined }), /--lake .*is a file, not a directory/);
    await assert.rejects(runBackfillCommand({ report: 'transactions', from: '2026-11-01', to: '2026-11-02', concurrency: 1, lake: file, tty: false }, () => undefined), /--lake .*is a file/);
    const { code, stdout, stderr } = await cli(['run', '--lake', join(file, 'lake')]);
    assert.equal(code, 1);
    assert.equal(stdout, '', 'nothing started');
    assert.deepEqual(oneLine(stderr).length, 1, stderr);
    assert.match(stderr, /^ConfigurationError: --lake .*a-file is a file, not a directory/);
  });

  it('a run that fails once the lake thread has started stops it and exits (run.ts starts the thread before the pipeline)', async () => {
    // The simulator refuses the sample after the lake's server thread was started: a thread nobody stopped
    // would keep the process alive, and this command would never return.
    const lake = join(dir, 'started-lake');
    const { code, stderr } = await cli(['run', '--lake', lake, '--sample', `transactions=${join(dir, 'missing.csv')}`], 60_000);
    assert.equal(code, 1, `killed after 60 s, or: ${stderr}`);
    assert.match(stderr, /--sample transactions=.*missing\.csv: cannot read the file \(ENOENT\)/);
    assert.ok(existsSync(join(lake, 'paynet-reports-local-raw')), 'the lake thread had started (it creates the buckets)');
  });

  it('query --file that is not there: one line naming the flag and the path, no ENOENT stack', async () => {
    const missing = join(dir, 'daily.sql');
    await assert.rejects(
      runQueryCommand(undefined, { lake: join(dir, 'lake'), file: missing }, { out: () => undefined, err: () => undefined }),
      (e: unknown) => e instanceof ConfigurationError && /^--file .*daily\.sql: cannot read it: there is no such file/.test(e.message),
    );
    const { code, stdout, stderr } = await cli(['query', '--lake', join(dir, 'lake'), '--file', missing]);
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(oneLine(stderr).length, 1, stderr);
    assert.match(stderr, /^ConfigurationError: --file .*daily\.sql: cannot read it: there is no such file \(paths are relative to /);
  });

  it('a secret file names the missing or misspelled field, before anything starts', async () => {
    const secret = join(dir, 'secret.json');
    await writeFile(secret, JSON.stringify({ login: 'merchant', controlkey: 'k' }));
    const lines: string[] = [];
    await assert.rejects(
      runLocal({ report: 'transactions', lake: join(dir, 'lake'), gatewayUrl: 'http://127.0.0.1:9/x', secretFile: secret }, (l) => void lines.push(l)),
      /secret\.json: .*"controlkey" is not a field: did you mean "controlKey"\?/,
    );
    assert.deepEqual(lines, []);
  });

  it('simulator: a busy port names the port and the flag, on the command line without a stack', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      await assert.rejects(
        runStandaloneSimulator({ port, secretsDir: join(dir, 'sim'), print: () => undefined }),
        (e: unknown) => e instanceof ConfigurationError && new RegExp(`Port ${port} on 127.0.0.1 is already in use .*--port`).test(e.message),
      );
      const { code, stderr } = await cli(['simulator', '--port', String(port), '--secrets-dir', join(dir, 'sim')]);
      assert.equal(code, 1);
      assert.equal(oneLine(stderr).length, 1, stderr);
      assert.match(stderr, new RegExp(`^ConfigurationError: Port ${port} .*pass another --port, or --port 0`));
    } finally {
      busy.close();
    }
  });

  it('two simulators at once keep their own secret files (by port), removed when each stops', async () => {
    const secretsDir = join(dir, 'sims');
    const start = () => {
      const stop = new AbortController();
      let ready!: (r: StandaloneReady) => void;
      const started = new Promise<StandaloneReady>((resolve) => (ready = resolve));
      const running = runStandaloneSimulator({ secretsDir, rowsPerDay: 5, signal: stop.signal, print: () => undefined, onReady: ready });
      return { stop, started, running };
    };
    const a = start();
    const b = start();
    try {
      const [ra, rb] = await Promise.all([a.started, b.started]);
      const portOf = (r: StandaloneReady) => new URL(r.simulator.url).port;
      assert.notEqual(ra.files.rsa, rb.files.rsa);
      assert.equal(ra.files.rsa, join(secretsDir, portOf(ra), 'rsa.json'));
      assert.equal(rb.files.rsa, join(secretsDir, portOf(rb), 'rsa.json'));
      // Each file holds its own simulator's key (a new RSA pair per start), not the other's.
      assert.notEqual(await readFile(ra.files.rsa, 'utf8'), await readFile(rb.files.rsa, 'utf8'));
      assert.deepEqual(JSON.parse(await readFile(ra.files.rsa, 'utf8')), ra.simulator.credentials.rsa);
      a.stop.abort();
      await a.running;
      assert.equal(existsSync(ra.files.hmac), false, 'a stopped simulator\'s files are gone');
      assert.equal(existsSync(rb.files.hmac), true, 'the running one keeps its own');
    } finally {
      a.stop.abort();
      b.stop.abort();
      await Promise.allSettled([a.running, b.running]);
    }
  });
});

describe('AWS commands without a region or credentials', () => {
  let home: string;
  before(async () => (home = await mkdtemp(join(tmpdir(), 'no-aws-home-'))));
  after(async () => rm(home, { recursive: true, force: true }));

  /** `reports <args>` on a machine with no AWS set-up: no AWS_* variables, an empty home (no ~/.aws), no instance metadata. */
  async function bare(args: string[], extra: Record<string, string> = {}) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') || k === 'AWS_CA_BUNDLE'));
    return promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/reports.ts', ...args], {
      env: { ...env, HOME: home, AWS_EC2_METADATA_DISABLED: 'true', ...extra },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  }

  it('status with no region says so, in one line, with no SDK warning about the Node version', async () => {
    const { code, stdout, stderr } = await bare(['status', '--environment', 'integration']);
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(
      stderr,
      'ConfigurationError: No AWS region: pass --region, or set "region" in config/environments/integration.json, or set AWS_REGION ' +
        "(or a profile's region, with AWS_PROFILE). Nothing was called.\n",
    );
  });

  it('status and backfill --deployed with a region but no credentials say that, not a missing permission', async () => {
    const status = await bare(['status', '--environment', 'integration'], { AWS_REGION: 'eu-central-1' });
    assert.equal(status.code, 1);
    assert.equal(status.stderr.trim().split('\n').length, 1, status.stderr);
    assert.match(status.stderr, /^ConfigurationError: No AWS credentials: sign in first, e\.g\. aws sso login --profile NAME .*Nothing was called \(region eu-central-1\)\.$/m);
    assert.doesNotMatch(status.stderr, /cloudformation:DescribeStacks|permission/);
    const backfill = await bare(
      ['backfill', '--deployed', '--function-name', 'fetch', '--report', 'transactions', '--from', '2026-11-01', '--to', '2026-11-02'],
      { AWS_REGION: 'eu-central-1', AWS_PROFILE: 'ops' },
    );
    assert.equal(backfill.code, 1);
    assert.match(backfill.stderr, /^ConfigurationError: No AWS credentials for the profile "ops" \(AWS_PROFILE\): sign in first/m);
    assert.doesNotMatch(backfill.stderr, /NodeVersionSupportWarning/);
    // check --environment reads each connection's secret: without credentials, said once instead of a verdict per secret.
    const check = await bare(['check', '--environment', 'integration']);
    assert.equal(check.code, 1);
    assert.equal(check.stdout, '');
    assert.match(check.stderr, /^ConfigurationError: No AWS region: set "region" in config\/environments\/integration\.json, or set AWS_REGION/);
  });
});
