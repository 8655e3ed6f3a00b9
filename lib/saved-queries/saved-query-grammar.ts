// Only the Trino parser, not the package's index: that loads all eight dialects (~0.7 s and ~160 MB more).
import { TrinoSQL } from 'dt-sql-parser/dist/parser/trino/index.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { showPath } from '../../functions/core/shown-path.js';

/**
 * The saved queries (queries/<report>/*.sql) run on DuckDB locally and on Athena engine v3, which is Trino.
 * A DuckDB-only construct (`amount::varchar`, `SELECT * EXCLUDE (x)`, `QUALIFY`) passes every local run
 * and fails for the analyst; Trino's grammar (dt-sql-parser's TrinoSQL, generated from Trino's own ANTLR
 * grammar) catches it before the query is published (lib/constructs/catalog.ts, at synth) or run (`reports run`,
 * `reports query --file`). Syntax only: a misspelt column or function parses and still fails on Athena.
 *
 * The parser is ~2 MB of generated code: the stack imports this module, the commands load it (with
 * `await import`) only when they check queries, and the Lambda bundles never import it.
 */

/**
 * TrinoSQL whose own parsers print nothing: to word a message ("expecting a keyword") it parses parts of
 * the text again with ANTLR's default listener, which writes every syntax error to stderr a second time.
 */
class QuietTrinoSQL extends TrinoSQL {
  override createLexer(...[input, errorListener]: Parameters<TrinoSQL['createLexer']>): ReturnType<TrinoSQL['createLexer']> {
    const lexer = super.createLexer(input, errorListener);
    if (!errorListener) lexer.removeErrorListeners();
    return lexer;
  }

  override createParser(...[input, errorListener]: Parameters<TrinoSQL['createParser']>): ReturnType<TrinoSQL['createParser']> {
    const parser = super.createParser(input, errorListener);
    if (!errorListener) parser.removeErrorListeners();
    return parser;
  }
}

/** A saved query's file, as a path, and its text as it is in the file (lines and columns named are the file's). */
export interface SavedQueryText {
  readonly file: string;
  readonly text: string;
}

/**
 * Refuses the queries Athena (Trino) cannot parse: one ConfigurationError naming every such file with the
 * line, column and message of its first syntax error (later ones are mostly that error's echo).
 */
export function refuseWhatTrinoCannotParse(queries: readonly SavedQueryText[]): void {
  const parser = new QuietTrinoSQL();
  const problems = queries.flatMap(({ file, text }) => {
    // A byte-order mark is no column of the first line, for the parser as for an editor.
    const [first] = parser.validate(text.replace(/^\uFEFF/, ''));
    return first ? [`${showPath(file)}:${first.startLine}:${first.startColumn}: Athena (Trino) cannot parse this saved query: ${first.message}.`] : [];
  });
  if (problems.length === 0) return;
  const advice = 'in SQL both DuckDB and Trino accept (for example CAST(x AS varchar) instead of x::varchar).';
  throw new ConfigurationError(
    problems.length === 1
      ? `${problems[0]} Write it ${advice}`
      : `${problems.length} saved queries Athena (Trino) cannot parse:\n${problems.join('\n')}\nWrite each ${advice}`,
  );
}
