import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { projectPath } from '../../lib/bundling/project.js';
import type { SavedQueryText } from '../../lib/saved-queries/saved-query-grammar.js';

/**
 * The saved-query check of the commands (`reports run`, `reports query --file`): lib/saved-queries/saved-query-grammar.ts,
 * except that a text which passed before, with the same parser version and the same check, is not parsed
 * again. Parsing costs a process ~0.6 s of CPU and ~30 MB resident, mostly ANTLR building its prediction
 * tables for the first queries it reads: every `npm start` would pay it for the same unchanged files.
 * Only passes are kept (a refused file is parsed, and refused, every time), in node_modules/.cache beside
 * the compiled command; a cache that cannot be read or written only means parsing again.
 */

const CACHE_FILE = projectPath('node_modules/.cache/paynet-reports-pipeline/saved-queries-trino.json');
/** Passes kept: the newest, far more than a catalog's saved queries. */
const KEPT = 1000;

/** Refuses, as lib/saved-queries/saved-query-grammar.ts does, the queries Athena (Trino) cannot parse; the parser is loaded only for texts not seen to pass. */
export async function refuseSavedQueriesTrinoCannotParse(queries: readonly SavedQueryText[]): Promise<void> {
  const check = checkIdentity();
  const keyOf = (text: string) => createHash('sha256').update(check).update('\0').update(text).digest('hex');
  const passed = readPasses();
  const unchecked = queries.filter((q) => !passed.includes(keyOf(q.text)));
  if (unchecked.length === 0) return;
  const { refuseWhatTrinoCannotParse } = await import('../../lib/saved-queries/saved-query-grammar.js');
  refuseWhatTrinoCannotParse(unchecked);
  writePasses([...passed, ...unchecked.map((q) => keyOf(q.text))].slice(-KEPT));
}

/** What a verdict depends on besides the text: the parser's version and the check's own source. */
function checkIdentity(): string {
  const parser = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('dt-sql-parser/package.json'), 'utf8')) as { version: string };
  return `${parser.version}\0${readFileSync(projectPath('lib/saved-queries/saved-query-grammar.ts'), 'utf8')}`;
}

function readPasses(): string[] {
  try {
    const passes: unknown = JSON.parse(readFileSync(CACHE_FILE, 'utf8'));
    return Array.isArray(passes) ? passes.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

function writePasses(passes: string[]): void {
  try {
    mkdirSync(dirname(CACHE_FILE), { recursive: true });
    // Written aside and renamed: a command reading meanwhile sees the old list or the new one.
    const partial = `${CACHE_FILE}.${process.pid}`;
    writeFileSync(partial, JSON.stringify(passes));
    renameSync(partial, CACHE_FILE);
  } catch {
    // Read-only node_modules: the next command parses again.
  }
}
