import { isUtf8 } from 'node:buffer';
import { Parser, type Options } from 'csv-parse';
import iconv from 'iconv-lite';
import { MalformedReport } from '../errors.js';

/**
 * Bytes in, CSV records out, each with the physical line it starts on.
 *
 * - Decoding: UTF-8 bytes go to the parser as they are (checked to be UTF-8: a wrong encoding must fail
 *   loudly, not turn into U+FFFD); other encodings are decoded with iconv-lite. A BOM is dropped.
 * - Parsing: csv-parse, RFC 4180, rows as arrays. It is driven through its synchronous core
 *   (`parser.api.parse`), not its Transform stream: that skips an object-mode stream hop per record
 *   (~10% of the parse) and, at each record, gives us the parser's line counter without `info: true`,
 *   which costs ~60% more (a copied info object per record). csv-parse is pinned (7.0.3); the shape of
 *   `api` is checked at construction so an upgrade that changes it fails at once, not silently.
 * - Line numbers: csv-parse counts CR and LF inside quoted values separately (a CRLF inside a value
 *   is two of its lines), so its counter drifts from what an editor shows. Lines are derived from its
 *   counter plus the line breaks in the record, which are only scanned when the counter says there
 *   are some (rare), so the common row costs nothing.
 */

/** The csv-parse options of every report, shared with the benchmark's csv-parse-alone floor. */
export function csvParseOptions(delimiter: string): Options {
  return {
    delimiter,
    quote: '"',
    escape: '"',
    // RFC 4180 says CRLF; accepting LF and CR between records too changes no value, and a bare LF in an
    // unquoted field would otherwise silently become part of the value.
    record_delimiter: ['\r\n', '\n', '\r'],
    // A record with the wrong number of fields is a rejected row with its line number, not a dead file.
    relax_column_count: true,
    // Blank lines carry no row; they are counted in the manifest (emptyLines), not rejected.
    skip_empty_lines: true,
    // An unclosed quote would otherwise read the rest of the file into one field.
    max_record_size: MAX_RECORD_CHARS,
    bom: false, // dropped here for every encoding
  };
}

/**
 * Records are handed over a slice of input at a time, not from inside csv-parse's loop as each ends: the
 * parser's byte loop then runs alone, as in the benchmark's floor, and the typing code after it in a loop
 * of its own. One at a time, V8 compiled the converter's code into csv-parse's hot loop (or beside it in the
 * same pass over memory), and both got slower: the converter's CPU on the 1M-row benchmark went from 2.75 s
 * to 2.46 s (alternated runs; csv-parse's own functions back to what they cost alone, the typing ~40%
 * cheaper; docs/benchmarks.md). Small slices: a slice's records are alive at a young-generation collection,
 * and with 64 KiB slices (~450 records) so many survived that V8 grew the young generation to its largest,
 * +17 MB of peak RSS on 4M rows; with 16 KiB the CPU is the same and the peak RSS what it was with one
 * record at a time (121-122 MB).
 */
const HOLD_BYTES = 16 * 1024;

/** No gateway record comes near this; a runaway quoted field does. */
export const MAX_RECORD_CHARS = 64 * 1024 * 1024;

interface CsvParseCore {
  parse(buf: Buffer | undefined, end: boolean, push: (record: string[]) => void, close: () => void): Error | undefined;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const LF = 10;
const CR = 13;

export const isUtf8Name = (encoding: string) => /^utf-?8$/i.test(encoding.trim());

export class CsvRecordReader {
  /** Blank lines skipped so far (the line break that ends the file is not one). */
  get emptyLines(): number {
    return this.parser.info.empty_lines - this.finalBreak;
  }

  private readonly parser: Parser;
  private readonly core: CsvParseCore;
  private readonly push: (record: string[]) => void;
  private readonly onRecord: (record: string[], line: number) => void;
  /** The records (and their lines) of the slice being parsed: see HOLD_BYTES. */
  private held: string[][] = [];
  private heldLines: number[] = [];
  private readonly utf8: boolean;
  private readonly decoder: { write(b: Buffer): string; end(): string | undefined } | undefined;
  private atStart: boolean;
  private head: Buffer | undefined; // the first bytes, until there are enough to look for a BOM
  private partial: Buffer | undefined; // an incomplete UTF-8 sequence at the end of the last chunk
  private offset = 0; // bytes checked so far, for error messages
  private finalBreak = 0; // csv-parse counts the line break at the end of the file as an empty line
  private lastByte = 0; // the last byte given to csv-parse (0 before any): does the file end with a line break?

  // line tracking: see the comment at the top
  private prevCounter = 0;
  private prevEmpty = 0;
  private prevEnd = 0;

  constructor(
    private readonly reportId: string,
    delimiter: string,
    encoding: string,
    onRecord: (record: string[], line: number) => void,
    /** The bytes start inside the file (a later part of a split file): no BOM to look for. */
    midFile = false,
  ) {
    this.atStart = !midFile;
    this.parser = new Parser(csvParseOptions(delimiter));
    const core = (this.parser as unknown as { api?: CsvParseCore }).api;
    if (!core || typeof core.parse !== 'function') {
      throw new Error('csv-parse no longer exposes parser.api.parse: check functions/core/csv/records.ts against the installed csv-parse');
    }
    this.core = core;
    this.utf8 = isUtf8Name(encoding);
    this.decoder = this.utf8 ? undefined : iconv.getDecoder(encoding); // which drops a BOM (UTF-16's)
    const info = this.parser.info;
    this.push = (record) => {
      const counter = info.lines;
      const empty = info.empty_lines;
      const skipped = empty - this.prevEmpty;
      let breaks = 0;
      // csv-parse's counter moved by exactly 1 + skipped blank lines unless the record has line breaks.
      // Stryker disable next-line ConditionalExpression,ArithmeticOperator: a record without breaks has none to find; the test only saves the scan
      if (counter - this.prevCounter !== 1 + skipped) breaks = physicalBreaks(record);
      const end = this.prevEnd + 1 + skipped + breaks;
      this.prevCounter = counter;
      this.prevEmpty = empty;
      this.prevEnd = end;
      this.held.push(record);
      this.heldLines.push(end - breaks);
    };
    this.onRecord = onRecord;
  }

  /** Physical lines read so far, up to the end of the last record (or of blank lines skipped after it). */
  get linesRead(): number {
    return this.prevEnd;
  }

  /** Feeds raw bytes. Records come out through onRecord, synchronously. */
  write(chunk: Buffer): void {
    this.process(chunk);
  }

  /** After the last chunk: the last record (without a final line break) comes out here. */
  end(): void {
    if (this.head) this.feed(this.head);
    this.head = undefined;
    if (this.partial) throw this.malformed(`the file ends inside a UTF-8 character (byte ${this.offset})`);
    if (this.decoder) {
      const rest = this.decoder.end();
      if (rest) this.run(Buffer.from(rest, 'utf8'));
    }
    this.parse(undefined, true);
    // Not the empty lines counted during this last call: csv-parse holds the last bytes of a chunk back until it
    // sees what follows, so blank lines just before the end ("1\n\n") are counted here too.
    this.finalBreak = this.lastByte === LF || this.lastByte === CR ? 1 : 0;
  }

  private process(chunk: Buffer): void {
    if (this.atStart && this.utf8) {
      // Wait for three bytes to decide on the BOM (a first chunk can be tiny).
      const joined: Buffer = this.head ? Buffer.concat([this.head, chunk]) : chunk;
      // Stryker disable next-line MethodExpression,ConditionalExpression: holding other short chunks back too only feeds them later, unchanged
      if (joined.length < UTF8_BOM.length && UTF8_BOM.slice(0, joined.length).every((b, i) => joined[i] === b)) {
        this.head = joined;
        return;
      }
      this.head = undefined;
      this.atStart = false;
      this.feed(UTF8_BOM.every((b, i) => joined[i] === b) ? joined.subarray(UTF8_BOM.length) : joined);
      return;
    }
    this.atStart = false;
    this.feed(chunk);
  }

  private feed(chunk: Buffer): void {
    if (this.decoder) {
      this.run(Buffer.from(this.decoder.write(chunk))); // UTF-8
      return;
    }
    let bytes = chunk;
    if (this.partial) {
      bytes = Buffer.concat([this.partial, chunk]);
      this.partial = undefined;
    }
    const complete = completeUtf8Length(bytes);
    // Stryker disable next-line ConditionalExpression: subarray(0, length) is the same bytes; this only skips a view
    const body = complete === bytes.length ? bytes : bytes.subarray(0, complete);
    if (!isUtf8(body)) throw this.malformed(`bytes that are not UTF-8 between byte ${this.offset} and ${this.offset + body.length}`);
    this.offset += body.length;
    if (complete !== bytes.length) this.partial = Buffer.from(bytes.subarray(complete));
    // csv-parse takes a multi-byte character split across chunks in its stride; only validation needs whole ones.
    this.run(body);
  }

  /** Parses UTF-8 bytes a slice of HOLD_BYTES at a time (none when there are none). */
  private run(buf: Buffer): void {
    for (let at = 0; at < buf.length; at += HOLD_BYTES) this.parse(buf.subarray(at, at + HOLD_BYTES), false);
  }

  /** One slice (never empty), or the end of the input. */
  private parse(buf: Buffer | undefined, end: boolean): void {
    if (buf) this.lastByte = buf[buf.length - 1]!;
    const err = this.core.parse(buf, end, this.push, () => {});
    this.release();
    if (err) {
      throw this.malformed(`${err.message} (csv-parse counts CR and LF inside values as separate lines; the last good record ended on line ${this.prevEnd})`, err);
    }
  }

  /** Hands the slice's records over, in order: those before a parse error too, as one at a time would. */
  private release(): void {
    const held = this.held;
    const lines = this.heldLines;
    const n = held.length;
    // Stryker disable next-line ConditionalExpression: with none held, the rest hands nothing over either
    if (n === 0) return;
    this.held = [];
    this.heldLines = [];
    for (let i = 0; i < n; i++) this.onRecord(held[i]!, lines[i]!);
  }

  private malformed(problem: string, cause?: unknown): MalformedReport {
    return new MalformedReport(this.reportId, problem, cause === undefined ? undefined : { cause });
  }
}

/** Line breaks inside a record's values, as an editor counts them: CR, LF and CRLF are one each. */
export function physicalBreaks(record: readonly string[]): number {
  let breaks = 0;
  for (const field of record) {
    // Stryker disable next-line EqualityOperator: one step past the end reads NaN, which is no break
    for (let i = 0; i < field.length; i++) {
      const c = field.charCodeAt(i);
      if (c === 10) breaks++;
      else if (c === 13) {
        breaks++;
        if (field.charCodeAt(i + 1) === 10) i++;
      }
    }
  }
  return breaks;
}

/** The length of the longest prefix that does not end inside a UTF-8 sequence. */
function completeUtf8Length(b: Buffer): number {
  const n = b.length;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,LogicalOperator: a lead byte 4 back heads a whole character, and before the start b[-1] is undefined, read as a 1-byte one: n either way
  for (let back = 1; back <= 4 && back <= n; back++) {
    const byte = b[n - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n; // more than three continuation bytes: invalid anyway, isUtf8 will say so
}
