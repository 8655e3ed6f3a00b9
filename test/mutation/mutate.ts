import { Stryker } from '@stryker-mutator/core';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allTargets, concurrencyOf, runnerFile, targetNamed, type MutationTarget } from './targets.js';
import { meetsFloor, readScores, scoreTable, type FileScore } from './summary.js';

/**
 * `npm run mutate [-- <folder or file>] [--force]`: mutation testing of the core (docs/maintaining.md "Mutation
 * testing"). Each domain folder of functions/core/ is one Stryker run against the unit tests that import it, so a
 * parser is held by its own tests, not by the integration suite passing through it. Re-runs are incremental:
 * `--force` re-tests every mutant. Environment: MUTATE_CONCURRENCY (test processes at once, default concurrencyOf's), MUTATE_TIMEOUT_MS (see timeoutMS).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Git-ignored: the HTML and JSON reports and the incremental files, one folder per run. */
const OUT = '.mutation';

const args = process.argv.slice(2);
const force = args.includes('--force');
const named = args.filter((arg) => arg !== '--force');

function chooseTargets(): MutationTarget[] {
  if (named.length === 0) return allTargets(ROOT);
  return named.map((argument) => {
    const target = targetNamed(ROOT, argument);
    if (target === undefined) {
      console.error(`"${argument}" is neither a folder of functions/core/ (gateway, csv, ...), "core", nor a source file in it.`);
      process.exit(2);
    }
    return target;
  });
}

const slug = (name: string) => name.replace(/^functions\/core\//, '').replace(/\.ts$/, '').replaceAll('/', '-');

async function runTarget(target: MutationTarget): Promise<FileScore[]> {
  const dir = `${OUT}/${slug(target.name)}`;
  console.log(`\n== ${target.name}: ${target.mutate.length} file(s) against ${target.tests.length} unit test file(s)`);
  console.log(target.tests.map((test) => `   ${test}`).join('\n') || '   (no unit test imports it)');
  const options = {
    mutate: target.mutate,
    testRunner: 'tap',
    plugins: ['@stryker-mutator/tap-runner'],
    // The sandbox is compiled to JavaScript once (compile.ts), then Node's test runner starts one test file per
    // process; the hook records which mutants each file reaches. The loader brings tsx to a file still in TypeScript.
    buildCommand: 'node --import tsx test/mutation/compile.ts',
    tap: {
      testFiles: target.tests.map(runnerFile),
      nodeArgs: ['--import', './test/mutation/typescript-loader.mjs', '--test-reporter=tap', '-r', '{{hookFile}}', '{{testFile}}'],
      forceBail: true,
    },
    coverageAnalysis: 'perTest',
    concurrency: concurrencyOf(target, process.env.MUTATE_CONCURRENCY),
    incremental: true,
    incrementalFile: `${dir}/incremental.json`,
    force,
    reporters: ['html', 'json', 'progress'],
    htmlReporter: { fileName: `${dir}/mutation.html` },
    jsonReporter: { fileName: `${dir}/mutation.json` },
    tempDirName: `${OUT}/sandbox`,
    // The sandbox copies the project: leave out what no unit test reads.
    ignorePatterns: [OUT, 'bench/data', '.lake', 'cdk.out', 'dist', '.simulator'],
    // Past the covering tests' own time (times 1.5), how long a mutant may run before it counts as a hang. About
    // 300 mutants in a full run stop a worker answering or loop for ever, and each holds a test process for the
    // whole wait: at Stryker's 5 s they cost about 5 minutes of a run. At 2 s the parquet encoder's thread took
    // 65 s instead of 98 s with every mutant's status unchanged (docs/maintaining.md). On a busy shared machine a
    // slow run is not a hang, and MUTATE_TIMEOUT_MS raises the wait.
    timeoutMS: Number(process.env.MUTATE_TIMEOUT_MS ?? 2_000),
    logLevel: 'warn',
  };
  // Stryker types its log level as a const enum, which isolated modules cannot import: its string value is what it reads.
  const stryker = new Stryker(options as unknown as ConstructorParameters<typeof Stryker>[0]);
  if (target.tests.length > 0) await stryker.runMutationTest();
  else console.log('   nothing guards these files: every mutant would survive.');
  return target.tests.length > 0 ? readScores(ROOT, join(ROOT, dir, 'mutation.json')) : [];
}

/** Wall time, for the figures in docs/maintaining.md: the CPU time of the test processes is `time`'s to give. */
const took = (since: number) => {
  const seconds = Math.round((performance.now() - since) / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
};

const started = performance.now();
const scores: FileScore[] = [];
for (const target of chooseTargets()) {
  const targetStarted = performance.now();
  const found = await runTarget(target);
  console.log(`\n${scoreTable(found)}\n(${target.name}: ${took(targetStarted)})`);
  scores.push(...found);
}
const survivors = scores.flatMap((score) => score.survivors);
if (survivors.length > 0) console.log(`\nSurvivors (a change no test notices; see the HTML report for the diff):\n${survivors.join('\n')}`);
console.log(`\nAll runs (${took(started)}):\n${scoreTable(scores)}`);
const below = scores.filter((score) => !meetsFloor(score));
console.log(below.length === 0 ? '\nEvery module is at or above its floor.' : `\n${below.length} module(s) below their floor.`);
process.exitCode = below.length === 0 ? 0 : 1;
