import { createRequire } from 'node:module';
import type { ParseError, ParseErrorCode } from 'jsonc-parser';
import { ConfigurationError } from '../errors.js';

/**
 * jsonc-parser, loaded only when a file is not JSON: its module has top-level statements, so a static
 * import would put it in the Lambda bundles, which never parse definition text (lib/bundling/bundling.ts).
 */
const jsoncParser = (): typeof import('jsonc-parser') => createRequire(import.meta.url)('jsonc-parser');

/**
 * A definition file's JSON (a report's or an environment's); a syntax error as one line: file, line and column of the first error.
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
    const jsonc = jsoncParser();
    jsonc.parse(body, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    const offset = first?.offset ?? 0;
    const before = body.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    const what = first ? describeError(first.error) : (e as Error).message;
    // The folder is the catalog the file belongs to (config/reports/, config/environments/): out of it, nothing loads it.
    const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/') + 1) : '../';
    throw new ConfigurationError(`${file}:${line}:${column}: not valid JSON: ${what}. Fix the file (or move it out of ${folder}).`);
  }
}

/** jsonc-parser's error codes in words ("CommaExpected" -> "comma expected"). */
const describeError = (code: ParseErrorCode): string =>
  jsoncParser().printParseErrorCode(code).replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
