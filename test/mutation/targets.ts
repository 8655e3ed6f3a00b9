import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** What one Stryker run mutates and which unit tests guard it. */
export interface MutationTarget {
  /** A name for the run: the core folder (`gateway`), `core` for the files at the top, or a file's path. */
  name: string;
  /** Source files to mutate, relative to the project root. */
  mutate: string[];
  /** Unit test files near the mutated files (NEAR_TESTS, else those importing them), relative to the project root. */
  tests: string[];
}

export const CORE = 'functions/core';
const UNIT_TESTS = 'test/unit';

/**
 * Money-and-trust modules: a wrong amount, date, signature or verdict reaches a finance team's books, so their
 * tests must kill at least 95% of mutants; every other module of the core 85% (issue 36).
 */
export const STRICT_FLOOR = 95;
export const FLOOR = 85;
const STRICT_MODULES = new Set(
  [
    'gateway/oauth.ts', 'gateway/percent-encode.ts', 'gateway/signature-methods.ts', 'gateway/secret.ts',
    'csv/value-parsers.ts', 'time/window.ts', 'gateway/answer.ts', 'quality/checks.ts', 'quality/volume-band.ts',
    'lake/s3-keys.ts', 'gateway/body-template.ts', 'definitions/change.ts',
  ].map((file) => `${CORE}/${file}`),
);

export function floorOf(file: string): number {
  return STRICT_MODULES.has(file) ? STRICT_FLOOR : FLOOR;
}

const isSource = (name: string) => name.endsWith('.ts') && !name.endsWith('.d.ts');

/** Relative `.js` import specifiers of a TypeScript file, resolved to the `.ts` files they name. */
function importsOf(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)\.js['"]/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(root, resolve(root, dirname(file), `${specifier}.ts`)));
}

/**
 * Where the tests that import a module are broader than the tests about it: window.ts is imported by a dozen
 * handler tests that only build windows, and running each of them per mutant would triple the run for no
 * guard the module's own tests lack. The same holds for the converter (status and table-schema tests build
 * their lakes with it), the connections (the fetch handler's tests and a `cdk synth` read one name from them)
 * and the files at the core's top, which 36 test files import. Every other module is held by the unit tests
 * that import it.
 */
const NEAR_TESTS: Record<string, string[]> = {
  [`${CORE}/time/window.ts`]: ['window', 'interrupt-and-windows', 'run-resume', 's3-keys'],
  [`${CORE}/connections/connection.ts`]: ['connection'],
  [`${CORE}/connections/connection-problems.ts`]: ['connection-problems'],
  [`${CORE}/connections/run-credentials.ts`]: ['run-credentials'],
  [`${CORE}/convert/csv-to-parquet.ts`]: ['csv-to-parquet'],
  [`${CORE}/convert/csv-split.ts`]: ['csv-split'],
  [`${CORE}/convert/part-worker.ts`]: ['part-worker'],
  [`${CORE}/convert/row-loop.ts`]: ['row-loop'],
  [`${CORE}/build-info.ts`]: ['build-info', 'parquet-footer'],
  [`${CORE}/byte-sink.ts`]: ['byte-sink'],
  [`${CORE}/concurrency.ts`]: ['concurrency', 'backfill'],
  [`${CORE}/errors.ts`]: ['errors', 'run-credentials'],
  [`${CORE}/naming.ts`]: ['naming'],
  [`${CORE}/retry.ts`]: ['retry'],
  [`${CORE}/shown-path.ts`]: ['shown-path'],
};

/**
 * Unit tests that import the core without guarding it, left out of every target: csv-parse-patch holds the patched
 * csv-parse to the stock one on the same options (a mutant in those options changes both sides alike) and takes
 * seconds per run; import-direction names core files only inside the code samples it lints.
 */
const NOT_GUARDS = new Set(['csv-parse-patch', 'import-direction'].map((name) => `${UNIT_TESTS}/${name}.test.ts`));

/**
 * Test files that run through tsx under mutation, not compiled (test/mutation/compile.ts): status's CLI loads
 * dt-sql-parser, whose ESM build imports without file extensions, which only tsx's resolver accepts.
 */
const RUN_AS_TYPESCRIPT = new Set(['status'].map((name) => `${UNIT_TESTS}/${name}.test.ts`));

/** The file Stryker's runner starts for a unit test: its compiled `.js` beside it, unless it must run as TypeScript. */
export function runnerFile(test: string): string {
  return RUN_AS_TYPESCRIPT.has(test) ? test : test.replace(/\.ts$/, '.js');
}

/**
 * Folders whose files are held only by the tests about the folder, of those importing each file: every handler,
 * status and connection test loads the catalog (definitions/) as its setup, and ran before the definition's own
 * tests for each of its mutants (Stryker estimated hours for report-definition.ts alone); the fetch handler's
 * queue test (a simulator and s3rver, seconds a run) reads one secret from gateway/ and ran for every mutant of
 * answer.ts.
 */
const FOLDER_TESTS: Record<string, string[]> = {
  [`${CORE}/definitions`]: ['catalog-bundle', 'definition-change', 'infer-schema', 'report-catalog', 'report-definition', 'refusal-wording', 'report-period', 'table-schema'],
  // The handler tests that build keys with s3-keys.ts for their setup (the freshness check, the deployed reparse,
  // interrupted runs) change both sides alike under its mutants; the parse handler's stays for the load log lines.
  [`${CORE}/lake`]: ['definition-change', 'infer-schema', 'parse-handler', 'partition-projection', 'reparse-advice', 's3-keys'],
  [`${CORE}/gateway`]: [
    'attempt-watch', 'body-template', 'content-coding', 'gateway-answer', 'gateway-client', 'gateway-request', 'gateway-transport-errors',
    'oauth', 'oauth-independent', 'peek-stream', 'secret', 'signature-methods', 'signing-edges',
  ],
};

/**
 * Tests that reach many modules as they load and guard few of them: the parse handler's (a lake on s3rver, the
 * slowest unit test at ~2 s of CPU) and the bundled catalog's (an esbuild build of the catalog's modules). Stryker
 * runs the tests covering a mutant in the order given and stops at the first that fails, so these go last: they
 * run for the mutants the module's own tests let through, not ahead of those tests for every mutant they load.
 */
const RUN_LAST = new Set(['parse-handler', 'catalog-bundle'].map((name) => `${UNIT_TESTS}/${name}.test.ts`));

/** Name order, RUN_LAST after the rest. */
const runOrder = (a: string, b: string) => Number(RUN_LAST.has(a)) - Number(RUN_LAST.has(b)) || (a < b ? -1 : a > b ? 1 : 0);

/** The unit tests near `files`: their NEAR_TESTS entry, else the unit tests that import them (within FOLDER_TESTS). */
function testsNear(root: string, files: string[]): string[] {
  const tests = readdirSync(join(root, UNIT_TESTS))
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `${UNIT_TESTS}/${name}`)
    .filter((test) => !NOT_GUARDS.has(test));
  const near = new Set<string>();
  const testFile = (name: string) => `${UNIT_TESTS}/${name}.test.ts`;
  for (const file of files) {
    const named = NEAR_TESTS[file];
    if (named !== undefined) {
      named.forEach((name) => near.add(testFile(name)));
      continue;
    }
    const within = FOLDER_TESTS[dirname(file)]?.map(testFile);
    const guards = (test: string) => importsOf(root, test).includes(file) && (within === undefined || within.includes(test));
    tests.filter(guards).forEach((test) => near.add(test));
  }
  return [...near].sort(runOrder);
}

function sourcesIn(root: string, folder: string): string[] {
  return readdirSync(join(root, folder))
    .filter((name) => isSource(name) && statSync(join(root, folder, name)).isFile())
    .map((name) => `${folder}/${name}`)
    .sort();
}

/** One target per domain folder of the core, and one for the files at its top. */
export function allTargets(root: string): MutationTarget[] {
  const folders = readdirSync(join(root, CORE)).filter((name) => statSync(join(root, CORE, name)).isDirectory()).sort();
  const targets = folders.map((name) => target(root, name, sourcesIn(root, `${CORE}/${name}`)));
  return [...targets, target(root, 'core', sourcesIn(root, CORE))];
}

/**
 * The target an argument names: a core folder (`gateway`, `functions/core/gateway`), `core` for the files at the
 * top, or one source file. Undefined when it names none of them.
 */
export function targetNamed(root: string, argument: string): MutationTarget | undefined {
  const path = argument.replace(/\/+$/, '');
  if (path === 'core' || path === CORE) return target(root, 'core', sourcesIn(root, CORE));
  const folder = path.startsWith(`${CORE}/`) ? path : `${CORE}/${path}`;
  const exists = (candidate: string) => statSync(join(root, candidate), { throwIfNoEntry: false });
  if (exists(folder)?.isDirectory()) return target(root, folder.slice(CORE.length + 1), sourcesIn(root, folder));
  for (const file of [path, folder, `${folder}.ts`]) {
    // A file is held by the tests of its whole folder: signature-methods.ts is reached through oauth.ts's tests.
    if (isSource(file) && file.startsWith(`${CORE}/`) && exists(file)?.isFile()) return target(root, file, [file], sourcesIn(root, dirname(file)));
  }
  return undefined;
}

function target(root: string, name: string, mutate: string[], near: string[] = mutate): MutationTarget {
  return { name, mutate, tests: testsNear(root, near) };
}

const CONCURRENCY = 3;
const WAITING_CONCURRENCY = 5;

/**
 * Test processes at once: MUTATE_CONCURRENCY when set, else three on two cores, five for the gateway folder. Much of
 * a run waits (a hung mutant on its time-out), which a third process fills; the gateway's tests wait on real
 * time-outs and back-offs, and with three processes the machine's load stayed near 1.3 through that folder.
 */
export function concurrencyOf(target: MutationTarget, asked: string | undefined): number {
  if (asked !== undefined && asked !== '') return Number(asked);
  return target.name === 'gateway' ? WAITING_CONCURRENCY : CONCURRENCY;
}
