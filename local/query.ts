import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { ConfigurationError } from '../functions/core/errors.js';
import { openLakeDatabase, QueryFailed } from './lake-query.js';
import { formatTable, jsonLines } from './result-table.js';

/**
 * `reports query` (`npm run query -- "SQL"`): SQL over the local lake, one view per report, printed as
 * an aligned table or as JSON lines. Results go to stdout; notes (empty views) and errors to stderr,
 * so `--json` output pipes cleanly into jq.
 */

export interface QueryCommandOptions {
  lake: string;
  json?: boolean;
  list?: boolean;
  /** Read the SQL from this file (e.g. queries/transactions/daily_totals.sql) instead of the argument. */
  file?: string;
  environment?: string;
}

export interface QueryOutput {
  out: (line: string) => void;
  err: (line: string) => void;
}

const stdio: QueryOutput = { out: (l) => console.log(l), err: (l) => console.error(l) };

/** Runs the command; returns the exit code (1 when DuckDB refused the SQL) instead of exiting, for tests. */
export async function runQueryCommand(sqlArg: string | undefined, opts: QueryCommandOptions, io: QueryOutput = stdio): Promise<number> {
  if (sqlArg && opts.file) throw new ConfigurationError('Give the SQL either as an argument or with --file, not both.');
  const sql = opts.file ? await readFile(opts.file, 'utf8') : sqlArg;
  if (!sql?.trim() && !opts.list) {
    throw new ConfigurationError('No SQL: pass it as an argument (npm run query -- "SELECT …"), with --file, or use --list.');
  }
  if (!existsSync(opts.lake)) {
    io.err(`note: there is no lake at ${opts.lake} yet (npm start creates it): every view is empty.`);
  }

  const db = await openLakeDatabase({ lakeDir: opts.lake, environment: opts.environment });
  try {
    if (opts.list) {
      for (const view of db.views) {
        const described = await db.query(`DESCRIBE ${JSON.stringify(view.name)}`);
        const columns = described.rows.map((r) => `${String(r[0])} ${String(r[1])}`);
        io.out(`${view.name} (${view.files} file${view.files === 1 ? '' : 's'}): ${columns.join(', ')}`);
      }
      if (!sql?.trim()) return 0;
    }
    for (const view of db.views.filter((v) => v.files === 0 && existsSync(opts.lake))) {
      io.err(`note: view "${view.name}" is empty: no Parquet under ${relative(process.cwd(), view.glob) || view.glob}.`);
    }
    let result;
    try {
      result = await db.query(sql!);
    } catch (e) {
      if (!(e instanceof QueryFailed)) throw e;
      io.err(`The query failed: ${e.message}`);
      io.err(`Views: ${db.views.map((v) => v.name).join(', ')} (see their columns with --list).`);
      return 1;
    }
    if (opts.json) for (const line of jsonLines(result)) io.out(line);
    // Every row and every value whole: the saved-query summary of `npm start` is where tables get cut short.
    else io.out(formatTable(result, Infinity, Infinity));
    return 0;
  } finally {
    db.close();
  }
}
