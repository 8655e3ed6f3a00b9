import * as jsonc from 'jsonc-parser';
import type { ParseError, ParseErrorCode } from 'jsonc-parser';
import { ConfigurationError } from './errors.js';
import { parseReportDefinition, type ReportDefinition } from './report-definition.js';

/** One definition file: its path (as the user knows it, e.g. config/reports/payouts.json) and its text or parsed JSON. */
export interface ReportSource {
  readonly file: string;
  /** The file's text; JSON.parse runs here so a syntax error can name its line and column. */
  readonly text?: string;
  /** Already parsed JSON (a bundled catalog, a test's definition). */
  readonly raw?: unknown;
}

/**
 * A definition file's JSON; a syntax error as one line: file, line and column of the first error.
 * JSON.parse does the parsing; jsonc-parser (strict: no comments, no trailing commas) only locates an error,
 * because Node 20's messages often carry no position at all.
 */
export function parseDefinitionText(text: string, file: string): unknown {
  // A byte-order mark is what some Windows editors save; JSON.parse would call it an unexpected token.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (e) {
    const errors: ParseError[] = [];
    jsonc.parse(body, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    const offset = first?.offset ?? 0;
    const before = body.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    const what = first ? describeError(first.error) : (e as Error).message;
    throw new ConfigurationError(`${file}:${line}:${column}: not valid JSON: ${what}. Fix the file (or move it out of config/reports/).`);
  }
}

/** jsonc-parser's error codes in words ("CommaExpected" -> "comma expected"). */
const describeError = (code: ParseErrorCode): string =>
  jsonc.printParseErrorCode(code).replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** The validated set of report definitions, looked up by id. */
export class ReportCatalog {
  private readonly byId: Map<string, ReportDefinition>;

  constructor(readonly reports: ReportDefinition[]) {
    this.byId = new Map();
    for (const r of reports) {
      if (this.byId.has(r.id)) throw new ConfigurationError(`Two report definitions share the id "${r.id}".`);
      this.byId.set(r.id, r);
    }
  }

  /**
   * Every source validated, and every problem of every file reported at once (a broken file names itself,
   * whatever report the command was asked for). Ids must be unique: each names a Glue table and the S3
   * prefixes, so two files with one id would write into each other's table.
   */
  static fromSources(sources: readonly ReportSource[]): ReportCatalog {
    const problems: string[] = [];
    const reports: ReportDefinition[] = [];
    const fileOf = new Map<string, string>();
    for (const s of sources) {
      try {
        const raw = s.text === undefined ? s.raw : parseDefinitionText(s.text, s.file);
        const r = parseReportDefinition(raw, s.file);
        const other = fileOf.get(r.id);
        if (other) {
          problems.push(
            `${s.file}: report "${r.id}" has the id of ${other}: ids name the Glue table and the S3 prefixes, so each report needs its own (rename one)`,
          );
          continue;
        }
        fileOf.set(r.id, s.file);
        reports.push(r);
      } catch (e) {
        if (!(e instanceof ConfigurationError)) throw e;
        problems.push(e.message);
      }
    }
    if (problems.length) {
      const n = problems.length;
      throw new ConfigurationError(`${n} report definition problem${n === 1 ? '' : 's'} (every config/reports/*.json must load):\n${problems.join('\n')}`);
    }
    return new ReportCatalog(reports);
  }

  get(id: string): ReportDefinition {
    const r = this.byId.get(id);
    if (!r) {
      throw new ConfigurationError(
        `There is no report "${id}"; known reports: ${[...this.byId.keys()].join(', ') || 'none'}. ` +
          `A report is a file config/reports/${id}.json (see docs/add-a-report.md).`,
      );
    }
    return r;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }
}
