import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { projectPath } from '../../lib/bundling/project.js';

/**
 * The house rules of docs/architecture.md "Folders", held to the code: a folder is one idea a newcomer can read
 * whole, and a function reads in one screen. A file added to a full folder, or a function grown past a screen,
 * fails here with its name, so the next change splits it instead of growing it.
 */

/** The code's own folders (tests, benchmarks and configuration data are not held to these rules). */
const CODE_ROOTS = ['functions', 'lib', 'local', 'bin'] as const;
const SOURCE = /\.(ts|mts|mjs|js)$/;
/** Source files directly in any folder of the code. */
const MAX_FILES_PER_FOLDER = 15;
/** The core keeps only what every domain shares (errors, retry, names) at its top; each domain folder stays small. */
const MAX_FILES_IN_CORE = 10;
const MAX_FILES_PER_CORE_DOMAIN = 12;
const MAX_FUNCTION_LINES = 100;

/** Files git tracks or would track (new ones not yet added count too), under the code's folders. */
function sourceFiles(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', ...CODE_ROOTS], { cwd: projectPath('.'), encoding: 'utf8' })
    .split('\n')
    .filter((f) => SOURCE.test(f));
}

/** Folders holding more source files directly than their limit allows, as "folder: n files (limit m)". */
export function crowdedFolders(files: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const f of files) counts.set(posix.dirname(f), (counts.get(posix.dirname(f)) ?? 0) + 1);
  const limit = (dir: string) =>
    dir === 'functions/core' ? MAX_FILES_IN_CORE : dir.startsWith('functions/core/') ? MAX_FILES_PER_CORE_DOMAIN : MAX_FILES_PER_FOLDER;
  return [...counts]
    .filter(([dir, n]) => n > limit(dir))
    .map(([dir, n]) => `${dir}: ${n} files (limit ${limit(dir)})`)
    .sort();
}

/** A function's name as a reader finds it: its own, else the variable, property or class member holding it. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return `${(node.parent as ts.ClassLikeDeclaration).name?.getText() ?? '<class>'} constructor`;
  const holder = node.parent;
  if (ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder) || ts.isPropertyDeclaration(holder)) return holder.name.getText();
  return '<anonymous>';
}

/** Every function of `text` longer than `limit` lines, as "file:line name (n lines)", nested ones included. */
export function longFunctions(file: string, text: string, limit = MAX_FUNCTION_LINES): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const lines = source.getLineAndCharacterOfPosition(node.end).line - first + 1;
      if (lines > limit) found.push(`${file}:${first + 1} ${nameOf(node as ts.FunctionLikeDeclaration)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('code layout (docs/architecture.md "Folders")', () => {
  it(`no folder of ${CODE_ROOTS.join(', ')} holds too many files directly`, () => {
    const files = sourceFiles();
    assert.ok(files.some((f) => f.startsWith('functions/core/')), 'the core was found');
    assert.deepEqual(crowdedFolders(files), []);
  });

  it(`no function is longer than ${MAX_FUNCTION_LINES} lines`, () => {
    const files = sourceFiles().filter((f) => !f.endsWith('.d.ts'));
    assert.deepEqual(
      files.flatMap((f) => longFunctions(f, readFileSync(projectPath(f), 'utf8'))),
      [],
    );
  });

  it('names a crowded folder by its own limit', () => {
    const many = (dir: string, n: number) => Array.from({ length: n }, (_, i) => `${dir}/f${i}.ts`);
    assert.deepEqual(crowdedFolders([...many('functions/core', 11), ...many('functions/core/csv', 12), ...many('lib/constructs', 16), ...many('local/cli', 15)]), [
      'functions/core: 11 files (limit 10)',
      'lib/constructs: 16 files (limit 15)',
    ]);
    assert.deepEqual(crowdedFolders(many('functions/core/gateway', 13)), ['functions/core/gateway: 13 files (limit 12)']);
  });

  it('finds a long function wherever it is declared, and names it', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  step(${i});`).join('\n');
    const text = [
      `export function short() {\n${body(98)}\n}`,
      `export function long() {\n${body(99)}\n}`,
      `export const arrow = async () => {\n${body(99)}\n};`,
      `class Stack {\n  constructor() {\n${body(99)}\n  }\n  method() {\n    const inner = () => {\n${body(99)}\n    };\n  }\n}`,
    ].join('\n');
    assert.deepEqual(
      longFunctions('sample.ts', text).map((f) => f.replace(/:\d+ /, ' ')),
      ['sample.ts long (101 lines)', 'sample.ts arrow (101 lines)', 'sample.ts Stack constructor (101 lines)', 'sample.ts method (103 lines)', 'sample.ts inner (101 lines)'],
    );
  });
});
