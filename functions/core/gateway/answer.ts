import { STATUS_CODES } from 'node:http';
import iconv from 'iconv-lite';
import { AuthenticationRefused, UnexpectedAnswer } from '../errors.js';
import type { ReportDefinition } from '../definitions/report-definition.js';
import { SIGNING, type SignatureMethod } from './signature-methods.js';

/**
 * Telling a report from everything else on the status and the first bytes, before anything is saved.
 * The rule (docs/architecture.md "Decisions", docs/gateway.md): a report is recognised by its bytes, not by its
 * label; a refusal by its words. The success answer's content type is not documented, so a CSV may come
 * as text/plain, application/octet-stream or with no type at all; and the gateway signals a refused
 * signature with HTTP 200 and a text/plain sentence (docs/gateway.md "How an answer is recognised"), so a 200 proves nothing.
 */

export type ReportKind = 'csv' | 'pdf';

/**
 * The client reads at least PEEK_MIN_BYTES (or the whole body when shorter) and then until the first
 * line ends, at most PEEK_MAX_BYTES, before deciding; the body is then replayed whole. The minimum lets
 * a short refusal be seen whole; the maximum bounds memory for a header row that never ends.
 */
export const PEEK_MIN_BYTES = 1024;
export const PEEK_MAX_BYTES = 64 * 1024;
/** A refusal is a sentence, not a file: only a body this short, seen whole, is read for refusal words. */
export const REFUSAL_MAX_BYTES = PEEK_MIN_BYTES;
/** How much of a wrong answer is quoted in the error, in characters (about as many bytes for the usual ASCII). */
export const QUOTE_BYTES = 200;

/** Loose on purpose: the provider's exact sentence is not documented and may change wording or spelling. */
const NOT_AUTHORISED = /not\s+authori[sz]ed|unauthori[sz]ed|not\s+allowed/i;

/** Status codes that mean "try again later": any 5xx and 429. Decided on the headers alone. */
export const isRetryableStatus = (status: number): boolean => status === 429 || (status >= 500 && status <= 599);

/** "text/CSV; charset=UTF-8" -> "text/csv". */
export const mediaTypeOf = (contentType: string): string => contentType.split(';')[0]!.trim().toLowerCase();

const utf8 = (bytes: Buffer): string =>
  // UTF-8, invalid bytes as U+FFFD (the defaults); stream: true holds back a multi-byte character cut in half by
  // the quote limit instead of showing U+FFFD.
  new TextDecoder().decode(bytes, { stream: true });

/**
 * Escapes what must not reach a log or a terminal raw: C0 controls other than tab, CR and LF
 * (which JSON quoting in the error message already shows as \t \r \n), DEL and C1 controls.
 */
export function escapeControls(text: string): string {
  // Every character matched is below U+00A0, so two hex digits always suffice.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point here
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * The start of the body as text, safe to quote: at most QUOTE_BYTES characters, control characters
 * escaped. `redact` runs on the whole head first, so a secret cut in half by the limit cannot slip through.
 */
export function quoteStart(head: Buffer, redact: (text: string) => string = (t) => t): string {
  const text = redact(utf8(head));
  return escapeControls(Array.from(text).slice(0, QUOTE_BYTES).join(''));
}

/** The start of the gateway's sentence, on one line, for AuthenticationRefused. */
const firstPart = (head: Buffer, redact: (text: string) => string): string =>
  quoteStart(head, redact).replace(/\s+/g, ' ').trim();

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** Space, tab, CR, LF; past the end of the head, `head[from]` is undefined, which is none of them. */
const BLANK: readonly (number | undefined)[] = [0x20, 0x09, 0x0d, 0x0a];

/** The head without a UTF-8 byte order mark and leading ASCII white space. */
function meaningfulStart(head: Buffer): Buffer {
  let from = head.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;
  while (BLANK.includes(head[from])) from++;
  return head.subarray(from);
}

/** Whether the bytes begin with `text`, an ASCII literal (one byte a character). */
const startsWith = (bytes: Buffer, text: string): boolean => bytes.subarray(0, text.length).equals(Buffer.from(text));

/** What a report of some definition looks like on the wire. */
export interface ReportExpectation {
  format: 'CSV' | 'PDF';
  /** One character. */
  delimiter: string;
  /** Any encoding iconv-lite knows. */
  encoding: string;
  /** The header row's names, in order. */
  header: readonly string[];
}

export const expectationOf = (report: ReportDefinition): ReportExpectation => ({
  format: report.format,
  delimiter: report.delimiter,
  encoding: report.encoding,
  header: report.columns.map((c) => c.header),
});

/** Without a definition (tests, ad-hoc calls): the catalog's usual delimiters, UTF-8, no known header. */
const ANY_DELIMITER = [',', ';', '\t', '|'];

/** The first CSV record of a text, RFC 4180 (quoted fields, "" inside them, CRLF / LF / CR line ends). */
export type FirstRecord =
  | { ok: true; fields: string[]; quoted: boolean[]; ended: boolean; line: string }
  | { ok: false; problem: string };

/**
 * Reads the first record with `delimiter`. `ended` is false when the text stops before the record's line
 * end (the caller knows whether the body ended there too). Not a record: a quote inside an unquoted field,
 * anything but a delimiter or a line end after a closing quote, or a control character (other than tab)
 * outside quotes, which is what a report in another encoding (UTF-16, say) looks like.
 */
export function readFirstRecord(text: string, delimiter: string): FirstRecord {
  const fields: string[] = [];
  const quoted: boolean[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q === -1) return { ok: true, fields: [...fields, value + text.slice(j)], quoted: [...quoted, true], ended: false, line: text };
        value += text.slice(j, q);
        if (text[q + 1] === '"') {
          value += '"';
          j = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      fields.push(value);
      quoted.push(true);
      const next = text[i];
      if (next !== undefined && next !== delimiter && next !== '\r' && next !== '\n') {
        return { ok: false, problem: `a character after a closing quote at position ${i}` };
      }
    } else {
      let j = i;
      // Stryker disable next-line EqualityOperator: at j === text.length, text[j] is undefined: the loop takes one more step that adds no character, and the slice and the i >= text.length check below give the same record
      while (j < text.length && text[j] !== delimiter && text[j] !== '\r' && text[j] !== '\n') {
        const c = text.charCodeAt(j);
        if (text[j] === '"') return { ok: false, problem: `a quote inside an unquoted field at position ${j}` };
        if ((c < 0x20 && c !== 0x09) || c === 0x7f) return { ok: false, problem: `a control character (U+${c.toString(16).padStart(4, '0')}) at position ${j}` };
        j++;
      }
      fields.push(text.slice(i, j));
      quoted.push(false);
      i = j;
    }
    if (i >= text.length) return { ok: true, fields, quoted, ended: false, line: text };
    if (text[i] === delimiter) {
      i++;
      continue;
    }
    return { ok: true, fields, quoted, ended: true, line: text.slice(0, i) };
  }
}

/** The head as text in the report's encoding, without a leading byte order mark. */
function decodeHead(head: Buffer, encoding: string): string {
  // iconv-lite drops a BOM (stripBOM defaults to true); a multi-byte character cut at the end of the head
  // only affects text after the first line, which the caller stops at.
  return iconv.decode(head, iconv.encodingExists(encoding) ? encoding : 'utf-8');
}

/** The header row written as the gateway's sample writes it: every name quoted. */
export function headerLine(header: readonly string[], delimiter: string): string {
  return header.map((h) => `"${h.replace(/"/g, '""')}"`).join(delimiter);
}

export interface CsvHead {
  /** The first record read as CSV: at least two fields, or one quoted, or the definition's header. */
  isRecord: boolean;
  fields: string[];
  /** Every field quoted, as in the provider's sample: a sentence never looks like that. */
  allQuoted: boolean;
  /** The first line as text (at most QUOTE_BYTES characters). */
  line: string;
  delimiter: string;
  /** Why it is not a record, when it is not. */
  problem?: string;
}

/** Reads the first line of the head as a CSV record of the expectation (or of any usual delimiter). */
export function readCsvHead(head: Buffer, complete: boolean, expect?: ReportExpectation): CsvHead {
  // Stryker disable next-line StringLiteral: '' is no encoding iconv-lite knows, and decodeHead reads an unknown one as UTF-8
  const text = decodeHead(head, expect?.encoding ?? 'utf-8');
  const delimiters = expect ? [expect.delimiter] : ANY_DELIMITER;
  let first: CsvHead | undefined;
  for (const delimiter of delimiters) {
    const r = readFirstRecord(text, delimiter);
    const line = Array.from(r.ok ? r.line : text.split(/\r\n|\r|\n/)[0]!).slice(0, QUOTE_BYTES).join('');
    if (!r.ok) {
      first ??= { isRecord: false, fields: [], allQuoted: false, line, delimiter, problem: r.problem };
      continue;
    }
    // A line that never ends within PEEK_MAX_BYTES of a body that goes on is no header row.
    const ended = r.ended || complete;
    // One field is a record only when quoted (a sentence never is) or when it is the definition's header.
    const isRecord =
      ended && (r.fields.length >= 2 || r.quoted[0] === true || headerEquals(r.fields, expect?.header));
    const result: CsvHead = {
      isRecord,
      fields: r.fields,
      allQuoted: r.quoted.every(Boolean),
      line,
      delimiter,
      problem: isRecord ? undefined : !ended ? 'its first line does not end within the first bytes' : 'its first line has one field only',
    };
    if (isRecord) return result;
    first ??= result;
  }
  return first!;
}

/** The first line's names equal the definition's header, in order (the parse's own rule, checkHeader). */
export const headerEquals = (fields: readonly string[], header: readonly string[] | undefined): boolean =>
  header !== undefined && fields.length === header.length && fields.every((f, i) => f === header[i]);

/** What the first bytes are, as far as the client cares. */
export type Sniffed = 'pdf' | 'markup' | 'json' | 'csv-like' | 'unknown';

/** The first bytes' shape, before any CSV reading: PDF, markup (HTML, XML), JSON, or something else. */
/** What the first bytes are by their shape alone; undefined when only reading them as CSV can tell. */
function shapeOf(head: Buffer, complete: boolean): Exclude<Sniffed, 'csv-like'> | undefined {
  const start = meaningfulStart(head);
  if (startsWith(start, '%PDF-')) return 'pdf';
  if (startsWith(start, '<')) return 'markup';
  if (startsWith(start, '{')) return 'json';
  if (start.length === 0) return 'unknown';
  if (startsWith(start, '[') && complete) {
    try {
      JSON.parse(start.toString());
      return 'json';
    } catch {
      // A header such as [id],[name] is CSV.
    }
  }
  return undefined;
}

export function sniff(head: Buffer, complete = true, expect?: ReportExpectation): Sniffed {
  return shapeOf(head, complete) ?? (readCsvHead(head, complete, expect).isRecord ? 'csv-like' : 'unknown');
}

export interface AnswerHead {
  status: number;
  /** The raw Content-Type header, '' when absent. */
  contentType: string;
  /** The first bytes of the decoded body (content coding removed). */
  head: Buffer;
  /** The body ended within `head`. */
  complete: boolean;
  /** The Location header of a redirect, if any. */
  location?: string;
}

export interface Caller {
  login: string;
  signatureMethod: SignatureMethod;
  /** Removes anything of this request the server might echo back (its signature) from quoted text. */
  redact: (text: string) => string;
}

export interface Classified {
  kind: ReportKind;
  /** CSV: the first line as received (at most QUOTE_BYTES characters). */
  firstLine?: string;
  /** CSV with a known definition: whether the first line is exactly the definition's header. */
  headerMatches?: boolean;
}

const isTextType = (media: string) => media.startsWith('text/') || media === 'application/xhtml+xml';

/**
 * Accepts the answer as a report of some kind, or throws AuthenticationRefused / UnexpectedAnswer.
 * Retryable statuses (5xx, 429) never get here: see isRetryableStatus. The content type only matters for
 * refusals (a text type); for everything else the bytes decide.
 */
export function classifyAnswer(answer: AnswerHead, caller: Caller, expect?: ReportExpectation): Classified {
  const { status, contentType, head, complete } = answer;
  const media = mediaTypeOf(contentType);
  const expectedStart =
    expect && expect.format === 'CSV' && expect.header.length
      ? Array.from(headerLine(expect.header, expect.delimiter)).slice(0, QUOTE_BYTES).join('')
      : expect?.format === 'PDF'
        ? '%PDF-'
        : undefined;
  const unexpected = (reason: string) =>
    new UnexpectedAnswer(status, contentType, quoteStart(head, caller.redact), reason, expectedStart);

  // The head is decoded and read as CSV once, only when its shape does not already say what it is.
  const shape = shapeOf(head, complete);
  const probe = shape === undefined ? readCsvHead(head, complete, expect) : undefined;
  const sniffed: Sniffed = shape ?? (probe!.isRecord ? 'csv-like' : 'unknown');
  // Stryker disable next-line ConditionalExpression: a probe that is not a record is incomplete (no refusal is read) or one unquoted field that is not the header (no match, no quoted line): nothing below tells it from undefined
  const csv = sniffed === 'csv-like' ? probe : undefined;
  const matches = csv ? headerEquals(csv.fields, expect?.header) : false;

  // 200 is the documented channel; 401 and 403 say the same thing with the status a gateway might use one day.
  // A refusal is a short text seen whole; a first line that is the definition's header, or a record of
  // quoted names, is a report even if a name happens to hold one of the words.
  const mayBeRefusal = (status >= 200 && status <= 299) || status === 401 || status === 403;
  const looksLikeReport = matches || (csv?.isRecord === true && csv.allQuoted);
  if (
    mayBeRefusal &&
    isTextType(media) &&
    complete &&
    head.length <= REFUSAL_MAX_BYTES &&
    !looksLikeReport &&
    // A body whose first line reads as a record is judged by that line only: a short report's data rows may
    // hold a decline reason such as "Card not authorized", and must not turn it into a refused login.
    NOT_AUTHORISED.test(csv?.isRecord ? csv.line : utf8(head))
  ) {
    throw new AuthenticationRefused(caller.login, caller.signatureMethod, firstPart(head, caller.redact), SIGNING[caller.signatureMethod].whenRefused);
  }
  if (status >= 300 && status <= 399) {
    const to = answer.location ? ` to ${JSON.stringify(escapeControls(answer.location.slice(0, QUOTE_BYTES)))}` : '';
    throw unexpected(`a redirect${to}, which is not followed (a signed POST is not re-sent elsewhere): the endpoint URL is probably outdated`);
  }
  if (status < 200 || status > 299) throw unexpected(`HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim());
  if (head.length === 0) throw unexpected('an empty body');

  switch (sniffed) {
    case 'pdf':
      return { kind: 'pdf' };
    case 'markup':
      return fail(unexpected('a web page instead of a report'));
    case 'json':
      return fail(unexpected('a JSON document instead of a report'));
    case 'csv-like':
      return { kind: 'csv', firstLine: csv!.line, ...(expect ? { headerMatches: matches } : {}) };
    case 'unknown': {
      const d = expect ? `"${escapeControls(expect.delimiter)}"` : 'a usual delimiter';
      const encodingHint = head.includes(0)
        ? `; NUL bytes usually mean another encoding than the definition's ${expect?.encoding ?? 'UTF-8'} (UTF-16?)`
        : '';
      return fail(
        unexpected(`neither a PDF nor a CSV report: read in ${expect?.encoding ?? 'UTF-8'} with ${d}, ${probe?.problem ?? 'its first line is not a CSV record'}${encodingHint}`),
      );
    }
  }
}

const fail = (e: Error): never => {
  throw e;
};
