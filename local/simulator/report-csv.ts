import { stringify } from 'csv-stringify/sync';
import iconv from 'iconv-lite';

/**
 * The report as the spec's sample CSV: every header and value in double quotes, RFC 4180 escaping (a quote
 * is doubled), CRLF after every record including the last, no byte-order mark, in the requested encoding.
 * CR, LF and CRLF inside a value are kept as they are, inside the quotes.
 */

export interface CsvOptions {
  /** One character; the sample uses a comma. */
  delimiter: string;
  /** Any name iconv-lite knows: UTF-8, windows-1251, cp1251, ... */
  encoding: string;
}

/** Rows per csv-stringify call when streaming: large enough to be cheap, small enough to stay flat in memory. */
const ROWS_PER_CHUNK = 1000;

const stringifyOptions = (delimiter: string) =>
  ({ quoted: true, quoted_empty: true, record_delimiter: '\r\n', delimiter, eof: true }) as const;

/** Whether iconv-lite can encode to this name; also keeps odd characters out of the Content-Type header. */
export function isSupportedEncoding(name: string): boolean {
  return /^[A-Za-z0-9._:-]{1,40}$/.test(name) && iconv.encodingExists(name);
}

/**
 * Why a delimiter is unusable, or null when it is fine: one character (code point), not a quote or line
 * break (they would make the file ambiguous), and representable in the encoding.
 */
export function delimiterProblem(delimiter: string, encoding: string): string | null {
  if ([...delimiter].length !== 1) return 'must be exactly one character';
  if (delimiter === '"' || delimiter === '\r' || delimiter === '\n') return 'must not be a double quote, CR or LF';
  if (iconv.decode(iconv.encode(delimiter, encoding), encoding) !== delimiter) {
    return `cannot be written in ${encoding}`;
  }
  return null;
}

/** Encoded CSV in chunks of rows: the server streams these, so large reports never become one string. */
export function* reportCsvChunks(header: readonly string[], rows: Iterable<string[]>, opts: CsvOptions): Generator<Buffer> {
  const options = stringifyOptions(opts.delimiter);
  let batch: string[][] = [[...header]];
  for (const row of rows) {
    batch.push(row);
    if (batch.length >= ROWS_PER_CHUNK) {
      yield iconv.encode(stringify(batch, options), opts.encoding);
      batch = [];
    }
  }
  if (batch.length) yield iconv.encode(stringify(batch, options), opts.encoding);
}

/** The whole CSV file as bytes: for tests and property tests. */
export function writeReportCsv(header: readonly string[], rows: Iterable<string[]>, opts: CsvOptions): Buffer {
  return Buffer.concat([...reportCsvChunks(header, rows, opts)]);
}
