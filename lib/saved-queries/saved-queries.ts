import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { projectPath } from '../bundling/project.js';
import { COVERAGE_QUERY, coverageQuery } from './coverage-query.js';

/**
 * The saved queries (queries/<report>/*.sql): read by the stack (lib/constructs/catalog.ts publishes them as Athena
 * named queries) and by `npm start`, which runs them on DuckDB. Kept apart from the construct so `npm start`
 * does not load aws-cdk-lib to read a few SQL files (~50 MB resident and ~0.8 s of CPU).
 */

export interface NamedQuerySource {
  readonly name: string;
  readonly description: string;
  /** The file's text, trimmed: what DuckDB runs and what Athena saves. */
  readonly sql: string;
  /** The file it was read from (DIR/<name>.sql). */
  readonly file: string;
  /** The file's text as it is: the grammar check (saved-query-grammar.ts) parses this, so a line and column it names are the file's. */
  readonly text: string;
}

/**
 * Another root of saved queries instead of queries/ (the test suite points it at test/fixtures/queries/,
 * as it points PAYNET_REPORTS_DIR at its fixture definitions).
 */
export const QUERIES_DIR_VARIABLE = 'PAYNET_QUERIES_DIR';

/** Where saved queries live: queries/<report>/*.sql under this folder. */
export const queriesRoot = (): string => process.env[QUERIES_DIR_VARIABLE] || projectPath('queries');

/**
 * A report's saved queries: queries/<report>/*.sql, run on its table by `npm start` and published as Athena
 * named queries, and the built-in coverage query (coverage-query.ts). A report may have no folder. A folder whose report is not in the catalog is not
 * published: the queries would name a table that does not exist.
 */
export function readReportQueries(report: { id: string; connections: readonly string[] }, root: string = queriesRoot()): NamedQuerySource[] {
  const dir = join(root, report.id);
  const files = existsSync(dir) ? readNamedQueries(dir) : [];
  // The coverage query is every report's (coverage-query.ts); a file of that name replaces it.
  return files.some((q) => q.name === COVERAGE_QUERY) ? files : [...files, coverageQuery(report)];
}

/** Reads DIR/*.sql: the name is the file name, the description its leading `--` comment lines. */
export function readNamedQueries(dir: string): NamedQuerySource[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      const sql = text.trim();
      const comment = sql
        .split('\n')
        .filter((l) => l.startsWith('--'))
        .map((l) => l.replace(/^--\s?/, ''))
        .join(' ');
      const description = (comment || basename(file, '.sql')).slice(0, 1024);
      return { name: basename(file, '.sql'), description, sql, file: join(dir, file), text };
    });
}
