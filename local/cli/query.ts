import { existsSync, statSync } from 'node:fs';
import { LOADS_TABLE } from '../../functions/core/lake/loads-table.js';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ConfigurationError } from '../../functions/core/errors.js';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { openLakeDatabase, QueryFailed } from '../duckdb/duckdb.js';
import { selectReports } from '../args/report-selection.js';
import { readUserFile } from '../args/user-file.js';
import { streamJsonLines, streamTable } from '../duckdb/result-table.js';
import { refuseSavedQueriesTrinoCannotParse } from './saved-query-check.js';

/**
 * `reports query` (`npm run query -- "SQL"`): SQL over the local lake, one view per report (each `--report`'s, or every
 * report's), printed as
 * an aligned table or as JSON lines. Results go to stdout; notes (empty views) and errors to stderr,
 * so `--json` output pipes cleanly into jq. The result is streamed, DuckDB chunk by chunk, with the
 * terminal's or pipe's backpressure: memory stays flat whatever the number of rows.
 */

export interface QueryCommandOptions {
  lake: string;
  json?: boolean;
  list?: boolean;
  /** Read the SQL from this file (e.g. queries/transactions/daily_totals.sql) instead of the argument. */
  file?: string;
  environment?: string;
  /** The reports whose views are made (`--report`, repeatable); default: every report of the catalog. */
  report?: string | string[];
}

export interface QueryOutput {
  /** One or more whole lines (joined by "\n", no trailing newline); may return a promise to slow the query down. */
  out: (text: string) => void | Promise<void>;
  err: (line: string) => void;
  /** True once the reader went away (`| head`): the query stops. */
  closed?: () => boolean;
}

/** stdout with backpressure; a closed pipe (EPIPE: `npm run query … | head`) ends the output quietly. */
function stdio(): QueryOutput {
  let closed = false;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    closed = true;
  });
  // A full pipe or slow terminal: wait for 'drain' (or the end of the stream) before DuckDB's next chunk.
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        process.stdout.off('drain', done);
        process.stdout.off('close', done);
        resolve();
      };
      process.stdout.on('drain', done);
      process.stdout.on('close', done);
    });
  return {
    out: async (text) => {
      if (!closed && !process.stdout.write(`${text}\n`)) await drained();
    },
    err: (l) => console.error(l),
    closed: () => closed,
  };
}

/**
 * A file under the saved queries' root (queries/<report>/*.sql) is published to Athena: one its engine (Trino)
 * cannot parse is refused as the synthesis refuses it (lib/constructs/catalog.ts), before DuckDB runs it. Other files and
 * SQL given as an argument are this machine's business and may use DuckDB's own syntax.
 */
async function refuseSavedQueryAthenaCannotParse(file: string, text: string): Promise<void> {
  const { queriesRoot } = await import('../../lib/saved-queries/saved-queries.js');
  const below = relative(resolve(queriesRoot()), resolve(file));
  if (below.split(sep)[0] === '..' || isAbsolute(below)) return;
  await refuseSavedQueriesTrinoCannotParse([{ file, text }]);
}

/** Runs the command; returns the exit code (1 when DuckDB refused the SQL) instead of exiting, for tests. */
export async function runQueryCommand(sqlArg: string | undefined, opts: QueryCommandOptions, io: QueryOutput = stdio()): Promise<number> {
  if (sqlArg && opts.file) throw new ConfigurationError('Give the SQL either as an argument or with --file, not both.');
  const sql = opts.file ? await readUserFile(opts.file, '--file') : sqlArg;
  if (!sql?.trim() && !opts.list) {
    throw new ConfigurationError('No SQL: pass it as an argument (npm run query -- "SELECT …"), with --file, or use --list.');
  }
  if (opts.file && sql?.trim()) await refuseSavedQueryAthenaCannotParse(opts.file, sql);
  if (existsSync(opts.lake) && !statSync(opts.lake).isDirectory()) {
    throw new ConfigurationError(`--lake ${opts.lake}: is a file, not a directory. Pass the lake directory given to npm start (default ./.lake).`);
  }
  if (!existsSync(opts.lake)) {
    io.err(`note: there is no lake at ${opts.lake} yet (npm start creates it): every view is empty.`);
  }

  const reports = selectReports(loadCatalog(), opts.report);
  const db = await openLakeDatabase({ lakeDir: opts.lake, environment: opts.environment, reports });
  try {
    // Windows written under another definition (stale-notice.ts): said before any result, on stderr like the notes.
    for (const line of db.notices) io.err(line);
    if (opts.list) {
      for (const view of db.views) {
        const described = await db.query(`DESCRIBE ${JSON.stringify(view.name)}`);
        const columns = described.rows.map((r) => `${String(r[0])} ${String(r[1])}`);
        await io.out(`${view.name} (${view.files} file${view.files === 1 ? '' : 's'}): ${columns.join(', ')}`);
      }
      if (!sql?.trim()) return 0;
    }
    for (const view of db.views.filter((v) => v.files === 0 && existsSync(opts.lake))) {
      const what = view.name === LOADS_TABLE ? 'load manifest' : 'Parquet';
      io.err(`note: view "${view.name}" is empty: no ${what} under ${relative(process.cwd(), view.glob) || view.glob}.`);
    }
    try {
      const result = await db.stream(sql!);
      if (io.closed) {
        const batches = result.batches;
        // Stop reading DuckDB's chunks once nobody reads ours.
        result.batches = (async function* () {
          for await (const batch of batches) {
            if (io.closed!()) return;
            yield batch;
          }
        })();
      }
      // Every row and every value whole: the saved-query summary of `npm start` is where tables get cut short.
      if (opts.json) await streamJsonLines(result, io.out);
      else await streamTable(result, io.out);
    } catch (e) {
      if (!(e instanceof QueryFailed)) throw e;
      io.err(`The query failed: ${e.message}`);
      io.err(`Views: ${db.views.map((v) => v.name).join(', ')} (see their columns with --list).`);
      return 1;
    }
    return 0;
  } finally {
    db.close();
  }
}
