import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { meetsFloor, readScores, scoreTable } from '../mutation/summary.js';
import { allTargets, concurrencyOf, floorOf, runnerFile, targetNamed } from '../mutation/targets.js';

/**
 * `npm run mutate` (test/mutation/): a wrong score or a wrong test list would hide the survivors it exists to
 * show, so its arithmetic and its choice of tests are held here.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('mutation targets: which files, against which tests', () => {
  it('mutates every source file of a folder against the unit tests importing them', () => {
    const gateway = targetNamed(ROOT, 'gateway')!;
    assert.equal(gateway.name, 'gateway');
    assert.ok(gateway.mutate.includes('functions/core/gateway/oauth.ts'));
    assert.ok(gateway.mutate.includes('functions/core/gateway/answer.ts'));
    assert.ok(gateway.mutate.every((file) => file.startsWith('functions/core/gateway/') && !file.endsWith('.d.ts')));
    assert.ok(gateway.tests.includes('test/unit/oauth.test.ts'));
    assert.ok(gateway.tests.includes('test/unit/gateway-answer.test.ts'));
    assert.ok(gateway.tests.every((test) => test.startsWith('test/unit/')), 'never the integration suite');
  });

  it('names the same folder by its path, and one file with its folder\'s tests', () => {
    assert.deepEqual(targetNamed(ROOT, 'functions/core/gateway/'), targetNamed(ROOT, 'gateway'));
    const file = targetNamed(ROOT, 'functions/core/gateway/signature-methods.ts')!;
    assert.deepEqual(file.mutate, ['functions/core/gateway/signature-methods.ts']);
    assert.deepEqual(file.tests, targetNamed(ROOT, 'gateway')!.tests);
    assert.equal(targetNamed(ROOT, 'no-such-folder'), undefined);
    assert.equal(targetNamed(ROOT, 'test/unit/oauth.test.ts'), undefined, 'only core files are mutated');
  });

  it('leaves out the tests that import the core without guarding it', () => {
    const tests = allTargets(ROOT).flatMap((target) => target.tests);
    assert.ok(!tests.includes('test/unit/csv-parse-patch.test.ts'));
    assert.ok(!tests.includes('test/unit/import-direction.test.ts'));
    assert.ok(targetNamed(ROOT, 'csv')!.tests.includes('test/unit/csv-records.test.ts'));
  });

  it('has one target per core folder and one for the files at its top', () => {
    const names = allTargets(ROOT).map((target) => target.name);
    assert.ok(['gateway', 'csv', 'parquet', 'time', 'definitions'].every((name) => names.includes(name)));
    assert.equal(names.at(-1), 'core');
    const core = allTargets(ROOT).at(-1)!;
    assert.ok(core.mutate.includes('functions/core/retry.ts'));
    assert.ok(core.mutate.every((file) => file.split('/').length === 3), 'only the files directly in functions/core/');
  });

  it('names only test and source files that exist, so a renamed test cannot stop a run', () => {
    for (const target of allTargets(ROOT)) {
      for (const file of [...target.mutate, ...target.tests]) assert.ok(existsSync(join(ROOT, file)), `${target.name}: ${file}`);
      assert.ok(target.tests.length > 0, `${target.name}: no unit test guards it`);
    }
  });

  it('narrows a widely imported module to the tests about it', () => {
    assert.deepEqual(targetNamed(ROOT, 'connections')!.tests, ['test/unit/connection-problems.test.ts', 'test/unit/connection.test.ts', 'test/unit/feed.test.ts', 'test/unit/run-credentials.test.ts']);
    assert.ok(!targetNamed(ROOT, 'core')!.tests.includes('test/unit/fetch-handler.test.ts'));
    // Within definitions/, only the tests about the folder, and of those only the ones importing the file.
    assert.deepEqual(targetNamed(ROOT, 'functions/core/definitions/change.ts')!.tests, targetNamed(ROOT, 'definitions')!.tests);
    assert.ok(!targetNamed(ROOT, 'definitions')!.tests.includes('test/unit/status.test.ts'));
    assert.ok(targetNamed(ROOT, 'definitions')!.tests.includes('test/unit/report-period.test.ts'));
  });

  it('puts the tests that load much and guard little after the module\'s own', () => {
    assert.deepEqual(targetNamed(ROOT, 'quality')!.tests, [
      'test/unit/parquet-pages.test.ts', 'test/unit/quality-checks.test.ts', 'test/unit/row-loop.test.ts', 'test/unit/volume-band.test.ts', 'test/unit/parse-handler.test.ts',
    ]);
    assert.deepEqual(targetNamed(ROOT, 'definitions')!.tests.slice(-1), ['test/unit/catalog-bundle.test.ts']);
  });

  it('runs three test processes, five for the gateway folder whose tests wait on timers; MUTATE_CONCURRENCY wins', () => {
    assert.equal(concurrencyOf(targetNamed(ROOT, 'csv')!, undefined), 3);
    assert.equal(concurrencyOf(targetNamed(ROOT, 'gateway')!, undefined), 5);
    assert.equal(concurrencyOf(targetNamed(ROOT, 'gateway')!, ''), 5);
    assert.equal(concurrencyOf(targetNamed(ROOT, 'gateway')!, '1'), 1);
  });

  it('runs compiled tests, except those that must run through tsx', () => {
    assert.equal(runnerFile('test/unit/oauth.test.ts'), 'test/unit/oauth.test.js');
    assert.equal(runnerFile('test/unit/status.test.ts'), 'test/unit/status.test.ts');
  });

  it('holds the money-and-trust modules to 95% and the rest of the core to 85%', () => {
    for (const strict of ['gateway/oauth.ts', 'csv/value-parsers.ts', 'lake/s3-keys.ts', 'definitions/change.ts']) {
      assert.equal(floorOf(`functions/core/${strict}`), 95, strict);
    }
    for (const other of ['retry.ts', 'parquet/encoder.ts', 'gateway/client.ts']) assert.equal(floorOf(`functions/core/${other}`), 85, other);
  });
});

describe('mutation summary: the score per file', () => {
  const mutant = (status: string, line: number, mutatorName = 'EqualityOperator', replacement = 'a <= b') =>
    ({ status, mutatorName, replacement, location: { start: { line, column: 3 } } });
  const report = (files: Record<string, ReturnType<typeof mutant>[]>) => {
    const file = join(mkdtempSync(join(tmpdir(), 'mutation-report-')), 'mutation.json');
    writeFileSync(file, JSON.stringify({ files: Object.fromEntries(Object.entries(files).map(([name, mutants]) => [name, { mutants }])) }));
    return file;
  };

  it('counts a timeout as detected, a survivor and an unreached mutant against it, and ignores the rest', () => {
    const file = report({
      [join(ROOT, 'functions/core/retry.ts')]: [
        mutant('Killed', 1), mutant('Killed', 2), mutant('Timeout', 3), mutant('Survived', 4, 'StringLiteral', '""'),
        mutant('NoCoverage', 5, 'BlockStatement', '{\n  }'), mutant('CompileError', 6), mutant('Ignored', 7),
      ],
    });
    const [score] = readScores(ROOT, file);
    assert.equal(score!.file, 'functions/core/retry.ts', 'relative to the project');
    assert.deepEqual([score!.mutants, score!.killed, score!.survived, score!.noCoverage], [7, 3, 1, 1]);
    assert.equal(score!.score, 60);
    assert.deepEqual(score!.survivors, [
      'functions/core/retry.ts:4:3 StringLiteral: ""',
      'functions/core/retry.ts:5:3 BlockStatement (no test reaches it): { }',
    ]);
  });

  it('passes a file at its floor exactly, fails it just below, and passes a file with nothing to score', () => {
    const at = readScores(ROOT, report({ 'functions/core/gateway/oauth.ts': [...Array(19).fill(0).map((_, i) => mutant('Killed', i)), mutant('Survived', 20)] }))[0]!;
    assert.equal(at.score, 95);
    assert.ok(meetsFloor(at));
    const below = readScores(ROOT, report({ 'functions/core/gateway/oauth.ts': [...Array(18).fill(0).map((_, i) => mutant('Killed', i)), mutant('Survived', 19)] }))[0]!;
    assert.ok(below.score! < 95 && below.score! > 94.7);
    assert.ok(!meetsFloor(below));
    assert.match(scoreTable([below]), /oauth\.ts\s+19\s+18\s+1\s+0\s+94\.7%\s+95%\s+BELOW FLOOR/);
    const empty = readScores(ROOT, report({ 'functions/core/naming.ts': [mutant('Ignored', 1)] }))[0]!;
    assert.equal(empty.score, null);
    assert.ok(meetsFloor(empty));
    assert.match(scoreTable([empty]), /naming\.ts\s+1\s+0\s+0\s+0\s+-\s+85%$/);
  });
});
