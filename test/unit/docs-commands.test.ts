import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommanderError, type Command } from 'commander';
import { buildProgram } from '../../bin/program.js';
import { docCommands, PLACEHOLDER, type DocCommand } from '../helpers/doc-commands.js';

/**
 * Every command line README.md and docs/*.md give (`npm start …`, `npm run reports -- …`, `npm run query -- …`,
 * `npm run simulator -- …`) names a real command and real flags: each goes through the command line's own parser
 * (bin/program.ts) with every action replaced by a no-op, so a renamed or removed flag fails here, naming the doc
 * and its line. Values the reader supplies (`<id>`, `…`, `$URL`) pass for any value.
 */

/** The program with no command doing anything: parsing only, mistakes thrown as CommanderError, nothing printed. */
function parserOnly(): { program: Command; ran: () => string | undefined } {
  const program = buildProgram();
  let ran: string | undefined;
  const quiet = (c: Command) => {
    c.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined });
    c.action(() => void (ran = c.name()));
    // Subcommands too (`alarms test`): a documented line must never run one.
    for (const sub of c.commands) quiet(sub);
  };
  quiet(program);
  return { program, ran: () => ran };
}

/** A bare `…` that stands for "more flags" (not a flag's value) is dropped; one after a flag that takes a value is that value. */
function withoutEllipses(program: Command, argv: string[]): string[] {
  const command = program.commands.find((c) => c.name() === argv[0]) ?? program.commands.find((c) => c.name() === 'run')!;
  const takesValue = (arg: string | undefined) => command.options.find((o) => o.long === arg?.split('=')[0])?.isBoolean() === false;
  return argv.filter((arg, i) => !((arg === '…' || arg === '...') && !takesValue(argv[i - 1])));
}

/** Why the documented line does not parse, or undefined when it does. */
async function problemOf(doc: DocCommand): Promise<string | undefined> {
  if (!doc.argv) return 'npm takes arguments written without `--` for itself: write `npm start -- …` / `npm run reports -- …`';
  // `npm run reports -- <command>`: any command.
  if (doc.argv[0]?.includes(PLACEHOLDER)) return undefined;
  const { program, ran } = parserOnly();
  const argv = withoutEllipses(program, doc.argv);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help') return undefined;
    // `npm run reports -- backfill …`: the ellipsis holds the rest of the flags, the required ones too.
    if (e.code === 'commander.missingMandatoryOptionValue' && argv.length < doc.argv.length) return undefined;
    // A placeholder where the flag takes one of a list (`--fault MODE`) is the reader's to fill.
    if (e.code === 'commander.invalidArgument' && [...doc.placeholders].some((p) => e.message.includes(`'${p}'`))) return undefined;
    return e.message.split('\n')[0];
  }
  return ran() ? undefined : 'no command ran';
}

describe('the command lines of the docs', () => {
  const docs = docCommands('.');

  it('are found in README.md and docs/*.md (a change that hides them from this test fails it)', () => {
    assert.ok(docs.length >= 80, `only ${docs.length} command lines found`);
    for (const file of ['README.md', 'docs/add-a-report.md', 'docs/cli.md', 'docs/gateway.md', 'docs/operations.md', 'docs/deploy.md']) {
      assert.ok(docs.some((d) => d.where.startsWith(`${file}:`)), `no command line found in ${file}`);
    }
    const named = new Set(docs.map((d) => d.argv?.[0]));
    for (const command of ['run', 'query', 'simulator', 'check', 'infer-schema', 'backfill', 'reparse', 'status', 'json-schema']) {
      assert.ok(named.has(command), `no documented command line runs ${command}`);
    }
  });

  it('name real commands and flags, each through the command line\'s own parser', async () => {
    const problems: string[] = [];
    for (const doc of docs) {
      const problem = await problemOf(doc);
      if (problem) problems.push(`${doc.where}: ${doc.text}\n    ${problem}`);
    }
    assert.deepEqual(problems, []);
  });

  it('pipe or redirect only output that is nothing else: npm run -s (npm prints its banner to stdout otherwise)', () => {
    const redirected = docs.filter((d) => d.redirected);
    assert.ok(redirected.length >= 2, 'the docs show at least the -s forms of infer-schema and query --json');
    assert.deepEqual(redirected.filter((d) => !d.silent).map((d) => `${d.where}: ${d.text}`), []);
  });

  it('a renamed flag, a removed command and npm arguments without -- are each caught', async () => {
    const written = (text: string, argv: string[] | undefined): DocCommand => ({ where: 'x.md:1', text, argv, placeholders: new Set(), redirected: false, silent: false });
    assert.match((await problemOf(written('npm start -- --lake-dir x', ['run', '--lake-dir', 'x'])))!, /unknown option '--lake-dir'/);
    assert.match((await problemOf(written('npm run reports -- infer-schema s.csv --output d.json', ['infer-schema', 's.csv', '--output', 'd.json'])))!, /unknown option '--output'/);
    assert.match((await problemOf(written('npm run reports -- reparse --report t', ['reparse', '--report', 't'])))!, /required option '--from <date>' not specified/);
    assert.match((await problemOf(written('npm run reports -- refetch', ['refetch'])))!, /too many arguments|unknown command/);
    assert.match((await problemOf(written('npm start --report t', undefined)))!, /without `--`/);
    assert.equal(await problemOf(written('npm run reports -- backfill --help', ['backfill', '--help'])), undefined);
  });
});
