import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { projectPath } from '../../lib/bundling/project.js';

/**
 * Every file a comment, a doc or a shipped schema names exists in the repository: a maintainer who clones the
 * project can open each one. Names are read as the text writes them: a repository path (`functions/core/lake/s3-keys.ts`),
 * a Markdown link relative to its page (`[x](operations.md#alarms)`), or a bare design-document name.
 */

const ROOTS = ['bin', 'bench', 'config', 'docs', 'functions', 'lib', 'local', 'queries', 'test', 'patches', '.ci'];
const ENDINGS = 'md|ts|mjs|json|sql|patch|csv';
/** A repository path in prose or code: one of the top folders, then segments, then a known ending. */
const REPO_PATH = new RegExp(`(?<![\\w./-])((?:${ROOTS.map((r) => r.replace('.', '\\.')).join('|')})/[\\w./-]+?\\.(?:${ENDINGS}))(?![\\w/-])`, 'g');
/** A relative Markdown link target. */
const MD_LINK = /\]\(((?!https?:|#|mailto:)[^)\s#]+)(?:#[^)]*)?\)/g;
/** Design documents named without a folder: they must be the repository's own (docs/…), or exist at the root. */
const BARE_DOC = /(?<![\w/.-])([A-Z][A-Z_-]*\.md)\b/g;

/**
 * What git tracks and a maintainer reads: not the tests (their strings are test data, such as a definition file a
 * test pretends to load) nor the lockfile.
 */
function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: projectPath('.'), encoding: 'utf8' })
    .split('\n')
    .filter((f) => /\.(ts|mjs|md|json|sql)$/.test(f) && !f.startsWith('test/') && f !== 'package-lock.json');
}

/**
 * Where a user adds files of their own (a report, an environment, its saved queries) and the benchmarks generate
 * theirs: the docs show examples there that no checkout has.
 */
const USER_SPACE = /^(config\/reports\/|config\/environments\/|queries\/|bench\/data\/)/;

export function missingReferences(files: readonly string[], read: (f: string) => string, exists: (f: string) => boolean): string[] {
  const missing: string[] = [];
  for (const file of files) {
    const text = read(file);
    for (const [, ref] of text.matchAll(REPO_PATH)) if (!exists(ref!) && !USER_SPACE.test(ref!)) missing.push(`${file}: ${ref}`);
    if (file.endsWith('.md')) {
      for (const [, ref] of text.matchAll(MD_LINK)) {
        const target = normalize(join(dirname(file), ref!));
        if (!exists(target)) missing.push(`${file}: ${ref} (${target})`);
      }
    }
    for (const [, doc] of text.matchAll(BARE_DOC)) {
      if (!exists(doc!) && !exists(`docs/${doc!.toLowerCase()}`)) missing.push(`${file}: ${doc}`);
    }
  }
  return missing;
}

describe('referenced paths', () => {
  it('every file a comment, a doc or a schema names is in the repository', () => {
    const files = trackedFiles();
    assert.ok(files.length > 100);
    const root = (f: string) => join(projectPath('.'), f);
    assert.deepEqual(missingReferences(files, (f) => readFileSync(root(f), 'utf8'), (f) => existsSync(root(f))), []);
  });

  it('finds a path that is not there, in code, in a Markdown link and as a bare design document', () => {
    // Built from parts, so that tools scanning this file for path names (as this test does) do not take them as references.
    const p = (...parts: string[]) => parts.join('/');
    const [gone, design, nowhere] = [p('functions', 'core', 'gone.ts'), ['DESIGN', 'md'].join('.'), ['nowhere', 'md'].join('.')];
    const texts: Record<string, string> = {
      [p('lib', 'x.ts')]: `// see ${p('functions', 'core', 's3-keys.ts')} and ${gone}; a user adds ${p('config', 'reports', 'payouts.json')}`,
      [p('docs', 'a.md')]: `[ok](operations.md#alarms) and [gone](${nowhere})`,
      [p('functions', 'core', 'y.ts')]: `/** The layout of ${design} "S3 layout". */`,
    };
    const present = new Set([p('functions', 'core', 's3-keys.ts'), p('docs', 'operations.md')]);
    assert.deepEqual(missingReferences(Object.keys(texts), (f) => texts[f]!, (f) => present.has(f)), [
      `${p('lib', 'x.ts')}: ${gone}`,
      `${p('docs', 'a.md')}: ${nowhere} (${p('docs', nowhere)})`,
      `${p('functions', 'core', 'y.ts')}: ${design}`,
    ]);
  });
});
