import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { bucketNames } from '../../functions/core/naming.js';
import { ENCODER_WORKER_MIN_BYTES } from '../../functions/parse-report/parse-object.js';
import { QUERIES_DIR_VARIABLE } from '../../lib/saved-queries/saved-queries.js';
import { cliCacheDir } from '../../bin/cli-cache.mjs';

/**
 * `npm start` runs bin/reports.mjs: the command compiled by esbuild into node_modules/.cache, run by plain
 * node. It must behave as `node --import tsx bin/reports.ts` does (the other tests run that).
 */
const run = (args: string[]) => promisify(execFile)(process.execPath, ['bin/reports.mjs', ...args], { maxBuffer: 16 * 1024 * 1024 });
const cacheDir = cliCacheDir(process.cwd());
const currentFile = join(cacheDir, 'current.json');
const current = () => JSON.parse(readFileSync(currentFile, 'utf8')) as { dir: string; builtAt: number; inputs: string[] };

describe('bin/reports.mjs (npm start)', () => {
  let lake: string;
  before(async () => {
    lake = await mkdtemp(join(tmpdir(), 'compiled-cli-'));
  });
  after(async () => rm(lake, { recursive: true, force: true }));

  it('runs the whole pipeline: a large window encoded on the encoder thread, a small one inline, and the saved queries', async () => {
    // Thursday 2025-11-20 at 320 times the simulator's 250 rows (~11 MB, past ENCODER_WORKER_MIN_BYTES); Wednesday as usual.
    const volume = ['--weekday-volume', '1,1,1,320,1,1,1'];
    const { stdout } = await run(['run', '--report', 'transactions', '--from', '2025-11-19', '--to', '2025-11-21', ...volume, '--lake', lake]);
    assert.match(stdout, /Done: 2 window\(s\) asked: 2 loaded, 0 failed/);
    assert.match(stdout, /Saved queries of "transactions"/);
    const manifests = join(lake, bucketNames('local').curated, 'manifests');
    const files = readdirSync(manifests, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json._S3rver_object'));
    type Read = { outcome: string; window: { start: string }; source: { bytes: number }; conversion?: { encoder: string } };
    const read = files.map((f) => JSON.parse(readFileSync(join(manifests, f), 'utf8')) as Read);
    const encoders = Object.fromEntries(read.map((m) => [m.window.start.slice(0, 10), [m.outcome, m.conversion?.encoder]]));
    // Paths each module derives from its own import.meta.url still point at the sources: the encoder found
    // parquet-worker.ts beside encoder-thread.ts (else the large window too would have run inline).
    assert.deepEqual(encoders, { '2025-11-19': ['loaded', 'inline'], '2025-11-20': ['loaded', 'worker'] }, JSON.stringify(read.map((m) => m.source)));
    assert.ok(read.every((m) => (m.conversion?.encoder === 'worker') === m.source.bytes >= ENCODER_WORKER_MIN_BYTES));
  });

  it("loads the saved-query parser (dt-sql-parser, bundled into a lazy chunk: plain node cannot load its modules) to refuse what Athena cannot parse", async () => {
    const queries = join(lake, 'queries');
    mkdirSync(join(queries, 'transactions'), { recursive: true });
    const saved = join(queries, 'transactions', 'but_description.sql');
    // A refusal is never remembered (local/cli/saved-query-check.ts): the parser runs every time.
    writeFileSync(saved, '-- Everything but the description.\nSELECT * EXCLUDE (order_description) FROM transactions\n');
    const failed = await promisify(execFile)(process.execPath, ['bin/reports.mjs', 'query', '--lake', lake, '--file', saved], {
      env: { ...process.env, [QUERIES_DIR_VARIABLE]: queries },
    }).then(
      () => assert.fail('exit code 0'),
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /^ConfigurationError: .*but_description\.sql:2:10: Athena \(Trino\) cannot parse this saved query: 'EXCLUDE' is not valid/);
    const chunks = readdirSync(join(cacheDir, current().dir));
    assert.ok(chunks.some((f) => /^saved-query-grammar-.*\.mjs$/.test(f)), `the parser is a chunk of its own, loaded on demand: ${chunks.join(', ')}`);
  });

  it('compiles again when a source is newer than the build, and not otherwise', async () => {
    await run(['--help']);
    const built = current();
    assert.ok(built.inputs.some((f) => f.endsWith(join('local', 'pipeline', 'pipeline.ts'))), 'the build lists the sources it came from');
    await run(['--help']);
    assert.equal(current().dir, built.dir, 'nothing changed: the same build is used');
    // As if every source had been edited after the build.
    writeFileSync(currentFile, JSON.stringify({ ...built, builtAt: 0 }));
    const { stdout } = await run(['--help']);
    assert.match(stdout, /Usage: reports/);
    assert.notEqual(current().dir, built.dir);
    assert.ok(current().builtAt > built.builtAt);
  });

  it('keeps the build of each checkout apart when checkouts share node_modules (a linked worktree, a symlinked node_modules)', async () => {
    // A second checkout: the sources copied, node_modules a link to this one's, its command's description edited.
    const other = join(lake, 'other-checkout');
    for (const part of ['bin', 'functions', 'local', 'lib', 'config', 'queries', 'package.json', 'tsconfig.json']) cpSync(part, join(other, part), { recursive: true });
    symlinkSync(resolve('node_modules'), join(other, 'node_modules'), 'dir');
    const marker = 'Built from the other checkout.';
    const entry = join(other, 'bin', 'program.ts');
    writeFileSync(entry, readFileSync(entry, 'utf8').replace(".description('Pull transaction reports", `.description('${marker} Pull transaction reports`));
    const help = async (checkout: string) => (await promisify(execFile)(process.execPath, [join(checkout, 'bin', 'reports.mjs'), '--help'])).stdout;

    assert.doesNotMatch(await help('.'), new RegExp(marker), 'this checkout runs its own build');
    assert.match(await help(other), new RegExp(marker), "the other checkout builds and runs its own, though this one's build is current");
    assert.doesNotMatch(await help('.'), new RegExp(marker), "and this one still runs its own, not the other's newer build");
    const otherCache = cliCacheDir(other);
    assert.notEqual(otherCache, cacheDir);
    assert.ok(existsSync(join(otherCache, 'current.json')), `the other checkout's build is under ${otherCache}`);
    // Both in the one shared node_modules, side by side.
    assert.equal(realpathSync(dirname(otherCache)), realpathSync(dirname(cacheDir)));
  });
});
