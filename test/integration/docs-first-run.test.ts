import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { parse } from 'shell-quote';

/**
 * The first commands a newcomer runs, run for real as the docs write them, through npm (the compiled command, the
 * shipped catalog, the embedded simulator), each on a lake of its own (`--lake`, appended). Only these few: the
 * rest of the documented lines are checked against the parser (test/unit/docs-commands.test.ts).
 */

const readme = readFileSync('README.md', 'utf8');
const cliDoc = readFileSync(join('docs', 'cli.md'), 'utf8');

/** The line as the doc writes it, found by its start; fails if the doc no longer has it. */
function documented(text: string, starts: RegExp): string {
  const m = starts.exec(text);
  assert.ok(m, `the doc no longer has a line matching ${starts}`);
  return m[0].trim();
}

/** Runs an `npm …` line (no shell: its words as the shell would split them) with more arguments after it. */
async function npm(line: string, more: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const words = parse(line).filter((w): w is string => typeof w === 'string');
  assert.equal(words[0], 'npm');
  const args = [...words.slice(1), ...(words.includes('--') ? [] : ['--']), ...more];
  return promisify(execFile)('npm', args, { maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe("the README's first commands, run as written", () => {
  let lake: string;
  before(async () => (lake = join(await mkdtemp(join(tmpdir(), 'docs-first-run-')), 'lake')));
  after(async () => rm(join(lake, '..'), { recursive: true, force: true }));

  it('npm start: every shipped report loads its latest window from the simulator', async () => {
    const line = documented(readme, /^npm ci && (npm start)(?=\s)/m).replace(/^npm ci && /, '');
    const { code, stdout, stderr } = await npm(line, ['--lake', lake]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Done: (\d+) window\(s\)(?: of \d+ reports)? asked: \1 loaded, 0 failed/m);
  });

  it("then the README's saved query, every row", async () => {
    const line = documented(readme, /npm run query -- --file queries\/transactions\/daily_totals\.sql/);
    const { code, stdout, stderr } = await npm(line, ['--lake', lake]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^dt\s+currency\s+transaction_type\s+transactions\s+total_amount$/m);
  });

  it('npm run -s query -- --json piped prints the JSON lines alone (no npm banner)', async () => {
    const line = documented(cliDoc, /npm run -s query -- --json "SELECT 1 AS x"/);
    const { code, stdout } = await npm(line, ['--lake', lake]);
    assert.equal(code, 0);
    assert.equal(stdout, '{"x":1}\n');
  });
});
