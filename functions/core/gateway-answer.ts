import { STATUS_CODES } from 'node:http';
import { AuthenticationRefused, UnexpectedAnswer } from './errors.js';
import type { SignatureMethod } from './secret.js';

/**
 * Telling a report from everything else, on the status, the content type and the first bytes only,
 * before anything is saved. The gateway signals a refused signature with HTTP 200 and a text/plain
 * sentence (gateway-spec.md "Errors"), so a 200 alone proves nothing.
 */

export type ReportKind = 'csv' | 'pdf';

/** How many bytes the client looks at before deciding (the body is then replayed whole). */
export const PEEK_BYTES = 1024;
/** How much of a wrong answer is quoted in the error, in characters (about as many bytes for the usual ASCII). */
export const QUOTE_BYTES = 200;

/** Loose on purpose: the provider's exact sentence is not documented and may change wording or spelling. */
const NOT_AUTHORISED = /not\s+authori[sz]ed|unauthori[sz]ed|not\s+allowed/i;

const CSV_TYPES = new Set([
  'text/csv',
  'application/csv',
  'text/comma-separated-values',
  'application/vnd.ms-excel',
  // Unregistered spellings some servers still use.
  'text/x-csv',
  'application/x-csv',
]);
const PDF_TYPES = new Set(['application/pdf', 'application/x-pdf']);
/** Types that say nothing about the content: the bytes decide. A missing header counts as one (RFC 9110 §8.3). */
const OPAQUE_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', '']);

/** Status codes that mean "try again later": any 5xx and 429. Decided on the headers alone. */
export const isRetryableStatus = (status: number): boolean => status === 429 || (status >= 500 && status <= 599);

/** "text/CSV; charset=UTF-8" -> "text/csv". */
export const mediaTypeOf = (contentType: string): string => (contentType.split(';')[0] ?? '').trim().toLowerCase();

const utf8 = (bytes: Buffer): string =>
  // stream: true holds back a multi-byte character cut in half by the quote limit instead of showing U+FFFD.
  new TextDecoder('utf-8', { fatal: false }).decode(bytes, { stream: true });

/**
 * Escapes what must not reach a log or a terminal raw: C0 controls other than tab, CR and LF
 * (which JSON quoting in the error message already shows as \t \r \n), DEL and C1 controls.
 */
export function escapeControls(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point here
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
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

/** The head without a UTF-8 byte order mark and leading ASCII white space. */
function meaningfulStart(head: Buffer): Buffer {
  let from = head.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;
  while (from < head.length && [0x20, 0x09, 0x0d, 0x0a].includes(head[from]!)) from++;
  return head.subarray(from);
}

const startsWith = (bytes: Buffer, text: string): boolean => bytes.subarray(0, text.length).toString('latin1') === text;

/** What the first bytes are, as far as the client cares. */
export type Sniffed = 'pdf' | 'markup' | 'json' | 'csv-like' | 'unknown';

/**
 * PDF: "%PDF-" at the start. Markup: "<" (HTML, XML, "<!DOCTYPE"). JSON: "{" (an error object; a CSV
 * header never starts with a brace). CSV-like: no control bytes but tab/CR/LF in the head, and a
 * delimiter (, ; tab |) on the first line, which is what a report's header row always has.
 */
export function sniff(head: Buffer): Sniffed {
  const start = meaningfulStart(head);
  if (startsWith(start, '%PDF-')) return 'pdf';
  if (startsWith(start, '<')) return 'markup';
  if (startsWith(start, '{')) return 'json';
  if (start.length === 0) return 'unknown';
  const hasControls = start.some((b) => (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) || b === 0x7f);
  if (hasControls) return 'unknown';
  const lineEnd = start.findIndex((b) => b === 0x0a || b === 0x0d);
  const firstLine = start.subarray(0, lineEnd === -1 ? start.length : lineEnd);
  return firstLine.some((b) => b === 0x2c || b === 0x3b || b === 0x09 || b === 0x7c) ? 'csv-like' : 'unknown';
}

export interface AnswerHead {
  status: number;
  /** The raw Content-Type header, '' when absent. */
  contentType: string;
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

/**
 * Accepts the answer as a report of some kind, or throws AuthenticationRefused / UnexpectedAnswer.
 * Retryable statuses (5xx, 429) never get here: see isRetryableStatus.
 */
export function classifyAnswer(answer: AnswerHead, caller: Caller): { kind: ReportKind } {
  const { status, contentType, head } = answer;
  const media = mediaTypeOf(contentType);
  const unexpected = (reason: string) =>
    new UnexpectedAnswer(status, contentType, quoteStart(head, caller.redact), reason);

  // 200 is the documented channel; 401 and 403 say the same thing with the status a gateway might use one day.
  const mayBeRefusal = (status >= 200 && status <= 299) || status === 401 || status === 403;
  if (mayBeRefusal && media === 'text/plain' && NOT_AUTHORISED.test(utf8(head))) {
    throw new AuthenticationRefused(caller.login, caller.signatureMethod, firstPart(head, caller.redact));
  }
  if (status >= 300 && status <= 399) {
    const to = answer.location ? ` to ${JSON.stringify(escapeControls(answer.location.slice(0, QUOTE_BYTES)))}` : '';
    throw unexpected(`a redirect${to}, which is not followed (a signed POST is not re-sent elsewhere): the endpoint URL is probably outdated`);
  }
  if (status < 200 || status > 299) throw unexpected(`HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim());
  if (head.length === 0) throw unexpected('an empty body');

  const sniffed = sniff(head);
  const contradiction = (what: string) => unexpected(`the body looks like ${what}, not what its content type says`);
  if (media === 'text/plain') throw unexpected('a text message instead of a report');
  if (media === 'text/html' || media === 'application/xhtml+xml') throw unexpected('a web page instead of a report');
  if (CSV_TYPES.has(media)) {
    if (sniffed === 'markup') throw contradiction('HTML or XML');
    if (sniffed === 'json') throw contradiction('JSON');
    if (sniffed === 'pdf') throw contradiction('a PDF');
    return { kind: 'csv' };
  }
  if (PDF_TYPES.has(media)) {
    if (sniffed !== 'pdf') throw unexpected('a PDF content type whose body does not start with "%PDF-"');
    return { kind: 'pdf' };
  }
  if (OPAQUE_TYPES.has(media)) {
    if (sniffed === 'pdf') return { kind: 'pdf' };
    if (sniffed === 'csv-like') return { kind: 'csv' };
    throw unexpected('a body that is neither CSV nor PDF under a generic content type');
  }
  throw unexpected('a content type that is not a report (expected CSV or PDF)');
}
