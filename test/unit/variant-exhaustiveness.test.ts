import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import ts from 'typescript';

/**
 * Each variant (a signature method, a content coding, a fault mode, a body-signing rule, an alarm channel kind) is named in one list
 * and handled by tables keyed by that list (`satisfies Record<Kind, …>`) and switches that end in `never`.
 * This proves it the way a maintainer meets it: the list with one member more and nothing else changed must
 * not type-check, and the errors must name the tables and switches to fill in. The type checker runs in
 * process on the edited text (the files on disk are untouched), over the modules that hold or read the lists.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The modules that declare a variant list or look its members up; whatever they import is checked too. */
const ROOTS = [
  'functions/core/gateway/signature-methods.ts',
  'functions/core/gateway/secret.ts',
  'functions/core/gateway/oauth.ts',
  'functions/core/gateway/answer.ts',
  'functions/core/gateway/content-coding.ts',
  'local/simulator/test-accounts.ts',
  'local/simulator/faults.ts',
  'local/simulator/server.ts',
  'local/cli/check.ts',
  'functions/core/definitions/report-definition.ts',
  'functions/core/parquet/row-group-buffer.ts',
  'functions/core/parquet/encoder.ts',
  'functions/core/definitions/table-schema.ts',
  'functions/core/definitions/infer-column-type.ts',
  'local/simulator/definition-rows.ts',
];

/**
 * The alarm channel kinds' modules: a program of their own, as their stack table brings aws-cdk-lib's declarations
 * in, which the other variants' programs need not check each time.
 */
const CHANNEL_ROOTS = ['lib/environment/alarm-channels.ts', 'lib/constructs/alarm-channels/alarm-channels.ts', 'local/alarms/subscription-names.ts'];

/**
 * Text inserted right after a marker (after the opening of a list, so the edit holds whatever the list holds),
 * or text taken out (one member's entry of a table).
 */
type Edit = { file: string; after: string; insert: string } | { file: string; remove: string };

interface Found {
  /** "functions/core/gateway/signature-methods.ts(78,3)" */
  where: string;
  code: number;
  /** The source line the error points at, trimmed. */
  line: string;
  /** The top-level declaration holding the error: the table, for a `satisfies` not met. */
  within?: string;
  message: string;
}

const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
})!;
// Ambient declarations of the project (local/lake/s3rver.d.ts) are not imported by anything: give them as roots too.
const rootsOf = (files: readonly string[]) => [...files.map((f) => join(ROOT, f)), ...parsed.fileNames.filter((f) => f.endsWith('.d.ts'))];

/** Parsed files shared by every program: only the edited file differs between them. */
const sourceFiles = new Map<string, ts.SourceFile>();

/** The project's type errors (packages aside) with `edits` applied to the text the checker sees. */
function typeErrors(edits: readonly Edit[] = [], roots: readonly string[] = ROOTS): Found[] {
  const edited = new Map<string, string>();
  for (const e of edits) {
    const file = join(ROOT, e.file);
    const text = edited.get(file) ?? readFileSync(file, 'utf8');
    const marker = 'remove' in e ? e.remove : e.after;
    assert.ok(text.split(marker).length === 2, `${e.file} does not hold ${JSON.stringify(marker)} exactly once: update this test's edit`);
    edited.set(file, 'remove' in e ? text.replace(e.remove, '') : text.replace(e.after, `${e.after}${e.insert}`));
  }
  const host = ts.createCompilerHost(parsed.options, true);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError, create) => {
    const text = edited.get(resolve(fileName));
    if (text !== undefined) return ts.createSourceFile(fileName, text, language, true);
    let file = sourceFiles.get(fileName);
    if (!file) {
      file = read(fileName, language, onError, create);
      if (file) sourceFiles.set(fileName, file);
    }
    return file;
  };
  const program = ts.createProgram(rootsOf(roots), parsed.options, host);
  return program
    .getSourceFiles()
    .filter((f) => !f.fileName.includes('/node_modules/'))
    .flatMap((f) => program.getSemanticDiagnostics(f))
    .map((d) => {
      const file = d.file!;
      const { line, character } = file.getLineAndCharacterOfPosition(d.start!);
      return {
        where: `${relative(ROOT, file.fileName)}(${line + 1},${character + 1})`,
        code: d.code,
        line: file.text.split('\n')[line]!.trim(),
        within: topLevelName(file, d.start!),
        message: ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]!,
      };
    });
}

/** The name of the top-level declaration holding `position` (a table is a top-level constant). */
function topLevelName(file: ts.SourceFile, position: number): string | undefined {
  const statement = file.statements.find((s) => s.pos <= position && position < s.end);
  if (statement && ts.isVariableStatement(statement)) return statement.declarationList.declarations[0]?.name.getText(file);
  return statement && (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) ? statement.name?.text : undefined;
}

const shown = (errors: readonly Found[]) => errors.map((e) => `${e.where}: TS${e.code}: ${e.message.slice(0, 160)}`).join('\n');

/** The tables an error says are incomplete: `satisfies Record<Kind, …>` not met (TS1360), as "file: constant". */
const incompleteTables = (errors: readonly Found[]) =>
  [...new Set(errors.filter((e) => e.code === 1360).map((e) => `${e.where.replace(/\(.*$/, '')}: ${e.within}`))].sort();

/** The files with any error. */
const filesOf = (errors: readonly Found[]) => [...new Set(errors.map((e) => e.where.replace(/\(.*$/, '')))].sort();

describe('a variant named in its list without its entries does not compile', { timeout: 60_000 }, () => {
  before(() => {
    // The sources as they are type-check: every error below comes from the edit.
    const errors = [...typeErrors(), ...typeErrors([], CHANNEL_ROOTS)];
    assert.equal(errors.length, 0, shown(errors));
  });

  it('a third signature method: the signing registry, the simulator test accounts, and every lookup by method', () => {
    const errors = typeErrors([
      { file: 'functions/core/gateway/signature-methods.ts', after: 'export const SIGNATURE_METHODS = [', insert: "'HMAC-SHA256', " },
    ]);
    assert.deepEqual(incompleteTables(errors), ['functions/core/gateway/signature-methods.ts: SIGNING', 'local/simulator/test-accounts.ts: TEST_ACCOUNTS'], shown(errors));
    // Each of these looks an entry up by a method: the secret's schema and messages, the refusal's advice, `reports check`.
    for (const file of ['functions/core/gateway/secret.ts', 'functions/core/gateway/answer.ts', 'local/cli/check.ts']) {
      assert.ok(filesOf(errors).includes(file), `${file} is named:\n${shown(errors)}`);
    }
    assert.ok(errors.every((e) => /HMAC-SHA256|cannot be used to index|does not satisfy|NameOf|is not assignable/.test(e.message)), shown(errors));
  });

  it('a fourth content coding: its codec (decode for the client, encode for the simulator)', () => {
    const errors = typeErrors([{ file: 'functions/core/gateway/content-coding.ts', after: 'export const DECODABLE_CODINGS = [', insert: "'zstd', " }]);
    assert.deepEqual(incompleteTables(errors), ['functions/core/gateway/content-coding.ts: CODECS'], shown(errors));
  });

  it('a fault mode: its entry (stage, help); once it has one, its answer in the simulator', () => {
    const listOnly = typeErrors([{ file: 'local/simulator/faults.ts', after: 'export const FAULT_MODES = [', insert: "'resetBeforeHeaders', " }]);
    assert.deepEqual(incompleteTables(listOnly), ['local/simulator/faults.ts: FAULTS'], shown(listOnly));

    const beforeAuth = typeErrors([
      { file: 'local/simulator/faults.ts', after: 'export const FAULT_MODES = [', insert: "'resetBeforeHeaders', " },
      { file: 'local/simulator/faults.ts', after: 'export const FAULTS = {', insert: "\n  resetBeforeHeaders: { stage: 'before-auth', does: 'x' }," },
    ]);
    // The switch over the modes that strike before authentication ends in `never`.
    assert.deepEqual(beforeAuth.map((e) => [e.where.replace(/\(.*$/, ''), e.line]), [['local/simulator/server.ts', 'const unanswered: never = early.mode;']], shown(beforeAuth));

    const onReport = typeErrors([
      { file: 'local/simulator/faults.ts', after: 'export const FAULT_MODES = [', insert: "'truncatedRow', " },
      { file: 'local/simulator/faults.ts', after: 'export const FAULTS = {', insert: "\n  truncatedRow: { stage: 'on-report', does: 'x' }," },
    ]);
    assert.deepEqual(incompleteTables(onReport), ['local/simulator/server.ts: REPORT_FAULTS'], shown(onReport));
  });

  it('a body-signing rule: its entry (meaning, the parameters it signs)', () => {
    const errors = typeErrors([{ file: 'functions/core/gateway/oauth.ts', after: 'export const BODY_SIGNING_RULES = [', insert: "'bodyHash', " }]);
    assert.deepEqual(incompleteTables(errors), ['functions/core/gateway/oauth.ts: BODY_SIGNING'], shown(errors));
  });

  it('a column kind: its spelling, typing, buffer, three types, aggregate, inference and simulated values', () => {
    const errors = typeErrors([{ file: 'functions/core/definitions/report-definition.ts', after: 'export const COLUMN_KINDS = [', insert: "'money', " }]);
    assert.deepEqual(
      incompleteTables(errors),
      [
        'functions/core/definitions/infer-column-type.ts: PROPOSALS',
        'functions/core/definitions/report-definition.ts: COLUMN_SYNTAX',
        'functions/core/definitions/table-schema.ts: COLUMN_TYPES',
        'functions/core/definitions/table-schema.ts: VALUE_AGGREGATES',
        'functions/core/parquet/encoder.ts: BUFFERS',
        'functions/core/parquet/row-group-buffer.ts: KINDS',
        'local/simulator/definition-rows.ts: PLANS',
      ],
      shown(errors),
    );
    // Beside the tables, only lookups by kind in the same files (an entry the table lacks, indexed).
    assert.deepEqual(filesOf(errors), [...new Set(incompleteTables(errors).map((t) => t.replace(/: .*$/, '')))].sort(), shown(errors));
    assert.ok(errors.every((e) => e.code === 1360 || /money|cannot be used to index|is not assignable to type 'never'/.test(e.message)), shown(errors));
  });

  it('a sixth alarm channel kind: its fields and naming, its resources in the stack, how status shows its subscription', () => {
    const errors = typeErrors([{ file: 'lib/environment/alarm-channels.ts', after: 'export const CHANNEL_KINDS = [', insert: "'webhook', " }], CHANNEL_ROOTS);
    assert.deepEqual(
      incompleteTables(errors),
      [
        'lib/constructs/alarm-channels/channel-resources.ts: CHANNEL_RESOURCES',
        'lib/environment/alarm-channels.ts: CHANNELS',
        'local/alarms/subscription-names.ts: SUBSCRIPTION_NAMES',
      ],
      shown(errors),
    );
    // Beside the three tables, only lookups of an entry by kind: in the kinds' own file, and the stack's dispatch.
    const tableFiles = incompleteTables(errors).map((t) => t.replace(/: .*$/, ''));
    assert.deepEqual(filesOf(errors), [...new Set([...tableFiles, 'lib/constructs/alarm-channels/alarm-channels.ts'])].sort(), shown(errors));
    assert.ok(errors.every((e) => e.code === 1360 || /webhook|cannot be used to index|does not satisfy|is not assignable/.test(e.message)), shown(errors));
  });

  /** One entry of each table the pagerduty kind needed (CHANNELS aside: its entry spans lines): without it, that table alone fails. */
  const PAGERDUTY_ENTRIES = [
    ['lib/constructs/alarm-channels/channel-resources.ts', '  pagerduty: (scope, channel) => integrationSubscription(scope, channel),\n', 'CHANNEL_RESOURCES'],
    ['local/alarms/subscription-names.ts', '  pagerduty: integration(PAGERDUTY),\n', 'SUBSCRIPTION_NAMES'],
  ] as const;
  for (const [file, remove, table] of PAGERDUTY_ENTRIES) {
    it(`pagerduty without its ${table} entry (${file}) does not compile there`, () => {
      const errors = typeErrors([{ file, remove }], CHANNEL_ROOTS);
      assert.deepEqual(incompleteTables(errors), [`${file}: ${table}`], shown(errors));
    });
  }

  /** One line of each table the boolean kind needed: without it, that table alone fails. */
  const BOOLEAN_ENTRIES = [
    ['functions/core/definitions/report-definition.ts', "  boolean: { spelling: /^boolean$/, written: 'boolean', examples: ['boolean'], pattern: false, values: true },\n", 'COLUMN_SYNTAX'],
    ['functions/core/parquet/row-group-buffer.ts', '  boolean: { code: BOOLEAN, bytes: 1 },\n', 'KINDS'],
    ['functions/core/parquet/encoder.ts', '  boolean: (c) => new BoolBuffer(c.nullable),\n', 'BUFFERS'],
    ['functions/core/definitions/table-schema.ts', "  boolean: { athena: () => 'boolean', duckdb: () => 'BOOLEAN', parquet: () => ({ type: 'BOOLEAN' }) },\n", 'COLUMN_TYPES'],
    ['functions/core/definitions/table-schema.ts', "  boolean: (c) => [{ kind: 'trues', sql: `count_if(${c})` }],\n", 'VALUE_AGGREGATES'],
    ['functions/core/definitions/infer-column-type.ts', '  boolean: { rank: 0, propose: booleanGuess },\n', 'PROPOSALS'],
    ['local/simulator/definition-rows.ts', '  boolean: (column) => booleanPlan(column),\n', 'PLANS'],
  ] as const;
  for (const [file, remove, table] of BOOLEAN_ENTRIES) {
    it(`boolean without its ${table} entry (${file}) does not compile there`, () => {
      const errors = typeErrors([{ file, remove }]);
      assert.deepEqual(incompleteTables(errors), [`${file}: ${table}`], shown(errors));
    });
  }

  it('the typing switch over kind codes: a code without its case reaches the never check', () => {
    const errors = typeErrors([
      {
        file: 'functions/core/parquet/row-group-buffer.ts',
        remove: `        case BOOLEAN: {
          const v = parseBoolean(text, this.booleans[c]!);
          if (v !== v) return { column: c, reason: failureReason() };
          this.u8[c]![row] = v;
          break;
        }
`,
      },
    ]);
    assert.deepEqual(errors.map((e) => [e.where.replace(/\(.*$/, ''), e.line]), [['functions/core/parquet/row-group-buffer.ts', 'const unhandled: never = code;']], shown(errors));
  });
});
