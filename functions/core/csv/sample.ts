import { CsvError, parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { ConfigurationError } from '../errors.js';
import { readsAsWindows1251 } from './sample-encoding.js';

/**
 * Reading a sample CSV for schema inference: bytes in, header and rows as text out. The encoding is a
 * choice (the gateway says nothing in the file), the BOM and the delimiter are detected.
 */

/** A Buffer, or any byte stream (a Node Readable is one). */
export type CsvInput = Uint8Array | AsyncIterable<Uint8Array | string>;

export interface CsvSampleOptions {
  /** Character encoding of the sample; default UTF-8. A UTF-8 byte-order mark wins over this. */
  encoding?: string;
  /** Field delimiter; detected from the header line when not given. */
  delimiter?: string;
  /** Read at most this many bytes; the rows after the last complete record are left out. Default 16 MiB. */
  maxBytes?: number;
}

export interface CsvSample {
  header: string[];
  rows: string[][];
  /** The encoding the sample was read with, as the report definition should name it. */
  encoding: string;
  delimiter: string;
  /** The file started with a UTF-8 byte-order mark (the reader of real reports must strip it too). */
  bom: boolean;
  /** The file was longer than maxBytes and only its first records were read. */
  truncated: boolean;
  notes: string[];
}

/** Candidates in order of preference: a tie on the header line goes to the earlier one. */
export const DELIMITER_CANDIDATES = [',', ';', '\t', '|'] as const;

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

async function readBytes(input: CsvInput, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (input instanceof Uint8Array) {
    const all = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    return all.length > maxBytes ? { bytes: all.subarray(0, maxBytes), truncated: true } : { bytes: all, truncated: false };
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of input) {
    // A Readable with setEncoding() yields strings: count their bytes, not their characters.
    const bytes = Buffer.from(chunk);
    chunks.push(bytes);
    total += bytes.length;
    // Leaving the loop returns the iterator, which destroys a Readable: the rest is never read.
    if (total > maxBytes) return { bytes: Buffer.concat(chunks).subarray(0, maxBytes), truncated: true };
  }
  return { bytes: Buffer.concat(chunks), truncated: false };
}

/** iconv-lite's own normalisation, so "utf8", "UTF-8" and "utf-8" are one encoding. */
const isUtf8 = (encoding: string) => encoding.toLowerCase().replace(/[^a-z0-9]/g, '') === 'utf8';

const utf8 = (bytes: Buffer, truncated: boolean): string | undefined => {
  try {
    // Fatal, because a windows-1251 file read as UTF-8 gives U+FFFD names instead of an error;
    // `stream` keeps a character cut in half by maxBytes from counting as invalid.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: truncated });
  } catch {
    return undefined;
  }
};

/**
 * The sample as text, and the encoding it was read with. Given none, UTF-8, or windows-1251 when the bytes are not
 * UTF-8 and read as Cyrillic there (sample-encoding.ts); anything else is refused naming the flag to pass.
 */
function decode(bytes: Buffer, given: string | undefined, truncated: boolean, notes: string[]): { text: string; encoding: string } {
  if (given !== undefined && !isUtf8(given)) return { text: iconv.decode(bytes, given, { stripBOM: false }), encoding: given };
  const text = utf8(bytes, truncated);
  if (text !== undefined) return { text, encoding: given ?? 'UTF-8' };
  const cyrillic = readsAsWindows1251(bytes);
  if (given === undefined && cyrillic) {
    notes.push('The sample is not UTF-8 and reads as Cyrillic in windows-1251: the definition says windows-1251 (--encoding overrides it).');
    return { text: iconv.decode(bytes, 'windows-1251', { stripBOM: false }), encoding: 'windows-1251' };
  }
  throw new ConfigurationError(
    cyrillic
      ? `The sample is not valid UTF-8, and reads as Cyrillic in windows-1251: pass --encoding windows-1251.`
      : 'The sample is not valid UTF-8, nor Cyrillic in windows-1251: pass its encoding, e.g. --encoding windows-1252 (any name iconv-lite knows).',
  );
}

/** Indexes of the line breaks that end a record: a break inside double quotes is part of a value (RFC 4180). */
function recordEnds(text: string, stopAtFirst: boolean): number[] {
  const ends: number[] = [];
  let quoted = false;
  // Stryker disable next-line EqualityOperator: text[text.length] is undefined, which is neither a quote nor a break
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted; // a doubled "" toggles twice: still right
    else if (!quoted && (c === '\n' || c === '\r')) {
      ends.push(i);
      // Stryker disable next-line ConditionalExpression: the caller that stops at the first takes ends[0], the first either way
      if (stopAtFirst) break;
    }
  }
  return ends;
}

/** The candidate seen most often outside quotes on the header line; ',' when none is (one column). */
export function detectDelimiter(text: string): string | undefined {
  // Stryker disable next-line BooleanLiteral: ends[0] is the first end whether the scan stops there or not
  const headerEnd = recordEnds(text, true)[0] ?? text.length;
  const counts = new Map<string, number>();
  let quoted = false;
  for (const c of text.slice(0, headerEnd)) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (DELIMITER_CANDIDATES as readonly string[]).includes(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let best: string | undefined;
  for (const d of DELIMITER_CANDIDATES) if ((counts.get(d) ?? 0) > (best ? counts.get(best)! : 0)) best = d;
  return best;
}

export async function readCsvSample(input: CsvInput, options: CsvSampleOptions = {}): Promise<CsvSample> {
  const notes: string[] = [];
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const read = await readBytes(input, maxBytes);
  let bytes = read.bytes;
  const { truncated } = read;

  let encoding = options.encoding;
  if (encoding !== undefined && !iconv.encodingExists(encoding)) {
    throw new ConfigurationError(`"${encoding}" is not an encoding this pipeline can decode; use for example "UTF-8" or "windows-1251".`);
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) throw new ConfigurationError('The sample is UTF-16 (it starts with a UTF-16 byte-order mark); the pipeline reads UTF-8 or single-byte encodings.');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) throw new ConfigurationError('The sample is UTF-16 (it starts with a UTF-16 byte-order mark); the pipeline reads UTF-8 or single-byte encodings.');
  const bom = UTF8_BOM.every((b, i) => bytes[i] === b);
  if (bom) {
    bytes = bytes.subarray(3);
    if (encoding !== undefined && !isUtf8(encoding)) notes.push(`The sample starts with a UTF-8 byte-order mark: read as UTF-8, not ${encoding}.`);
    encoding = 'UTF-8';
  }

  const decoded = decode(bytes, encoding, truncated, notes);
  let text = decoded.text;
  encoding = decoded.encoding;
  if (truncated) {
    const ends = recordEnds(text, false);
    const last = ends.at(-1);
    if (last === undefined) throw new ConfigurationError(`The first ${maxBytes} bytes of the sample hold no complete line; raise maxBytes.`);
    text = text.slice(0, last + 1);
  }
  if (text.trim() === '') throw new ConfigurationError('The sample is empty: it needs at least its header row.');

  let delimiter = options.delimiter;
  if (delimiter === undefined) {
    delimiter = detectDelimiter(text);
    if (delimiter === undefined) {
      delimiter = ',';
      notes.push('The header line holds none of , ; tab |: read as a single column with delimiter ",".');
    }
  } else if (delimiter.length !== 1) {
    throw new ConfigurationError(`The delimiter must be one character; got ${JSON.stringify(delimiter)}.`);
  }

  let records: string[][];
  try {
    records = parse(text, { delimiter, skip_empty_lines: true, bom: false }) as string[][];
  } catch (e) {
    if (!(e instanceof CsvError)) throw e;
    throw new ConfigurationError(
      `The sample is not a CSV with delimiter ${JSON.stringify(delimiter)}: ${e.message}. Check the delimiter and the encoding.`,
      { cause: e },
    );
  }
  const [header, ...rows] = records;
  if (!header) throw new ConfigurationError('The sample is empty: it needs at least its header row.');
  if (truncated) notes.push(`Only the first ${maxBytes} bytes of the sample were read (${rows.length} rows).`);
  return { header, rows, encoding, delimiter, bom, truncated, notes };
}
