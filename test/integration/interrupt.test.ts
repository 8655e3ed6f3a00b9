import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bucketNames } from '../../functions/core/naming.js';
import { isWholeParquet } from '../../local/pipeline/interrupt.js';
import { runBackfillCommand } from '../../local/cli/backfill.js';
import { LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { startSimulator, type Simulator } from '../../local/simulator/index.js';
import { useConnectionFixtures } from '../helpers/connection-fixtures.js';

/**
 * Ctrl-C in `run` and `backfill`, through a real child process. Where util-linux `script` exists the
 * child runs on a pseudo-terminal and gets Ctrl-C as a typed ^C (the terminal sends SIGINT to it, and
 * the backfill draws its progress bar, so restoring the terminal is checked); elsewhere it gets SIGINT.
 * The interrupt lands while a window is in flight: the gateway here takes the request and never answers.
 */

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

interface Interrupted {
  code: number | null;
  output: string;
}

/** Runs `reports <args>`, types Ctrl-C once `inFlight` resolves, and collects everything it printed. */
async function interrupt(args: string[], inFlight: Promise<void>): Promise<Interrupted> {
  const node = [process.execPath, '--import', 'tsx', 'bin/reports.ts', ...args];
  const child = hasScript
    ? spawn('script', ['-qefc', node.map(quote).join(' '), '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(node[0]!, node.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  await Promise.race([inFlight, closed]);
  if (hasScript) child.stdin.write('\x03');
  else child.kill('SIGINT');
  const code = await closed;
  return { code, output: output.replace(/\r\n/g, '\n') };
}

describe('Ctrl-C in run and backfill', { skip: process.platform === 'win32' && 'no SIGINT to a child on Windows' }, () => {
  let dir: string;
  let simulator: Simulator;
  let hanging: Server;
  let hangingUrl: string;
  let arrived: () => void;
  let secretFile: string;
  const requestArrived = () => new Promise<void>((resolve) => (arrived = resolve));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'interrupt-'));
    simulator = await startSimulator({ rowsPerDay: 30 });
    secretFile = join(dir, 'hmac.json');
    await writeFile(secretFile, JSON.stringify(simulator.credentials.hmac));
    // A gateway that takes the report request and never answers: the window stays in flight.
    hanging = createServer((req) => {
      req.resume();
      arrived();
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/paynet-ui/services/v2/rpt-engine`;
  });
  after(async () => {
    hanging.closeAllConnections();
    hanging.close();
    await simulator.close();
    await rm(dir, { recursive: true, force: true });
  });

  const parquetFiles = async (lake: string) =>
    (await readdir(join(lake, bucketNames(LOCAL_ENVIRONMENT).curated, 'tables', 'transactions'), { recursive: true }))
      .filter((f) => f.endsWith('.parquet._S3rver_object'))
      .sort();

  it('backfill: terminal restored, what is done counted, exit 130; the same command then resumes, skipping loaded windows', async () => {
    const lake = join(dir, 'backfill-lake');
    const quiet = () => undefined;
    const first = await runBackfillCommand(
      { report: 'transactions', from: '2026-11-01', to: '2026-11-03', concurrency: 1, lake, gatewayUrl: simulator.url, secretFile, tty: false },
      quiet,
    );
    assert.equal(first.done, 2);

    const args = ['backfill', '--from', '2026-11-01', '--to', '2026-11-05', '--concurrency', '1', '--lake', lake, '--gateway-url', hangingUrl, '--secret-file', secretFile];
    const { code, output } = await interrupt(args, requestArrived());
    assert.equal(code, 130, output);
    assert.match(output, /Interrupted: 4 window\(s\) asked: 0 done, 2 skipped, 0 failed, 1 stopped in flight \(2026-11-03\), 1 not started\./);
    assert.match(output, /Re-run the same command to resume: windows already loaded are skipped/);
    if (hasScript) {
      // cli-progress hid the cursor and turned line wrap off; both come back before the summary.
      const hid = output.lastIndexOf('\x1b[?25l');
      assert.ok(hid >= 0, 'the bar was drawn on the terminal');
      assert.ok(output.lastIndexOf('\x1b[?25h') > hid, 'cursor shown again');
      assert.ok(output.lastIndexOf('\x1b[?7h') > output.lastIndexOf('\x1b[?7l'), 'line wrap on again');
    }
    assert.doesNotMatch(output, /Error:|\n\s+at /, 'no stack trace');
    for (const file of await parquetFiles(lake)) assert.ok(isWholeParquet(join(lake, bucketNames(LOCAL_ENVIRONMENT).curated, 'tables', 'transactions', file)), file);

    const lines: string[] = [];
    const resumed = await runBackfillCommand(
      { report: 'transactions', from: '2026-11-01', to: '2026-11-05', concurrency: 1, lake, gatewayUrl: simulator.url, secretFile, tty: false },
      (l) => lines.push(l),
    );
    assert.deepEqual([resumed.skipped, resumed.done, resumed.failed.length], [2, 2, 0], lines.join('\n'));
    assert.equal((await parquetFiles(lake)).length, 4);
  });

  it('run: what is done and the command that carries on, exit 130', async () => {
    const lake = join(dir, 'run-lake');
    const args = ['run', '--from', '2026-11-01', '--to', '2026-11-04', '--lake', lake, '--gateway-url', hangingUrl, '--secret-file', secretFile];
    const { code, output } = await interrupt(args, requestArrived());
    assert.equal(code, 130, output);
    assert.match(output, /Interrupted: 3 window\(s\) asked: 0 loaded, 0 failed, 1 stopped in flight \(2026-11-01\), 2 not tried\./);
    assert.ok(
      output.includes(`Re-run to resume where it stopped (a re-run overwrites, never duplicates): npm start -- --report transactions --from 2026-11-01 --to 2026-11-04 --gateway-url ${hangingUrl} --secret-file ${secretFile} --lake `),
      output,
    );
    assert.doesNotMatch(output, /Saved queries|Done:/);
    assert.doesNotMatch(output, /Error:|\n\s+at /, 'no stack trace');
  });

  it('run over two reports on two connections: both windows in flight named, one command resumes both with each connection\'s flags', async () => {
    // Last: the catalog and environments it points at stay for the rest of this process.
    await useConnectionFixtures(join(dir, 'two'), [{ id: 'alpha', connection: 'default' }, { id: 'beta', connection: 'provider-b' }], {
      integration: [{ name: 'default' }, { name: 'provider-b' }],
    });
    const lake = join(dir, 'two-lake');
    const args = ['run', '--from', '2026-11-01', '--to', '2026-11-03', '--lake', lake];
    args.push('--gateway-url', hangingUrl, '--secret-file', secretFile, '--gateway-url', `provider-b=${hangingUrl}`, '--secret-file', `provider-b=${secretFile}`);
    // The first window of each connection goes alone: two requests, one per connection, then nothing more.
    let seen = 0;
    const both = new Promise<void>((resolve) => {
      arrived = () => {
        if (++seen === 2) resolve();
      };
    });
    const { code, output } = await interrupt(args, both);
    assert.equal(code, 130, output);
    assert.match(output, /Interrupted: 4 window\(s\) asked: 0 loaded, 0 failed, 2 stopped in flight \(alpha 2026-11-01, beta 2026-11-01\), 2 not tried\./);
    assert.ok(
      output.includes(
        `Re-run to resume where it stopped (a re-run overwrites, never duplicates): npm start -- --report alpha --report beta --from 2026-11-01 --to 2026-11-03 ` +
          `--gateway-url ${hangingUrl} --secret-file ${secretFile} --gateway-url provider-b=${hangingUrl} --secret-file provider-b=${secretFile} --lake `,
      ),
      output,
    );
    assert.doesNotMatch(output, /Error:|\n\s+at /, 'no stack trace');
  });
});
