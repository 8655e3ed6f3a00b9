import type { ColumnDefinition, ColumnKind } from '../definitions/report-definition.js';
import {
  NEEDS_BIGINT,
  compileBooleanTokens,
  compilePattern,
  failureReason,
  parseBoolean,
  parseDate,
  parseDecimal,
  parseInt64,
  parseSafeDecimal,
  parseSafeInteger,
  parseTimestamp,
  type BooleanTokens,
  type CompiledPattern,
} from '../csv/value-parsers.js';

/**
 * Typed rows, collected in small batches on the parsing thread and handed to the Parquet encoder,
 * which appends each batch to the row group's column buffers as it comes (encoder.ts).
 *
 * Why this shape (measured on the 1M-row benchmark, see bench/):
 * - Numbers go straight into typed arrays (BigInt64Array for bigint, decimal and timestamp;
 *   Int32Array for date): 8 or 4 bytes a value, no garbage, reused from batch to batch. A value that fits a double exactly (the common case) is written as two
 *   32-bit halves through views of the same memory, so no BigInt is created; only values beyond 2^53
 *   take the BigInt path.
 * - A string column's values are written as UTF-8 bytes into one reused buffer as the row types (a JS
 *   loop over the characters, no call into C++), with an Int32Array of byte lengths. csv-parse's strings
 *   then die with their row: holding them for the batch (joined at the end, as before) kept ~60 MB per
 *   million rows alive across young-generation collections, promoted into the old generation, which V8
 *   then marked and swept ~30 times per million rows on its helper threads (~1 s of CPU on the
 *   benchmark, docs/benchmarks.md). Handing an array of 4,096 strings to a worker would also cost
 *   ~200 ns a string in structured clone; bytes cost a memcpy, and they are what Parquet stores.
 * - A string column with few distinct values (currency, type, merchant) crosses as a small dictionary
 *   and an Int32Array of codes instead: no copying of values, and the encoder merges the batch's few
 *   values into the chunk's dictionary once per batch. A column that shows more than DICT_LIMIT distinct
 *   values in a batch turns into UTF-8 text for the rest of the run.
 * - Batches are small (BATCH_ROWS, or ~1 MiB of text), so memory on this side stays flat whatever the
 *   row-group size.
 * - Batches cross to the worker by copy (structured clone, a memcpy per array), never by transfer.
 *   Transferring detaches the ArrayBuffers, and the first detach in an isolate invalidates V8's
 *   "array buffer detaching" protector: from then on every optimized typed-array access in that
 *   isolate checks for detachment, csv-parse's byte-by-byte reading of its input Buffer included. On
 *   the benchmark transferring cost ~0.8 s of main-thread CPU (about 20% of the parse); copying ~0.1 s.
 *   The worker posts its Parquet bytes back by copy for the same reason (hyparquet-writer is all
 *   typed arrays). Since the copy is made at once, take(true) hands out views of the reused buffers.
 */

export type WireColumn =
  /**
   * The non-null values as a PLAIN page holds them (each a 4-byte little-endian length, then its UTF-8),
   * and each row's length in bytes, -1 for null.
   */
  | { kind: 'utf8'; bytes: Uint8Array; lengths: Int32Array }
  | { kind: 'dict'; values: string[]; codes: Int32Array }
  | { kind: 'int64'; values: BigInt64Array; nulls?: Uint8Array }
  | { kind: 'int32'; values: Int32Array; nulls?: Uint8Array }
  /** One byte a row: 1 true, 0 false (or null, per `nulls`). */
  | { kind: 'bool'; values: Uint8Array; nulls?: Uint8Array };

/** A batch of typed rows: what crosses to the encoder (structured-clone safe; copied, not transferred). */
export interface RowBatch {
  rows: number;
  columns: WireColumn[];
}

/** A value that did not type: which column (index in the definition) and why. */
export interface RowProblem {
  column: number;
  reason: string;
}

const STRING = 0;
const BIGINT = 1;
const DECIMAL = 2;
const TIMESTAMP = 3;
const DATE = 4;
const BOOLEAN = 5;

/**
 * Per kind: its code in the typing loop, and the bytes a value adds to a row group's estimate (fixed width;
 * a string adds its length + Parquet's 4-byte length prefix as it comes; a boolean one byte, rounding its bit up).
 */
const KINDS = {
  string: { code: STRING, bytes: 0 },
  bigint: { code: BIGINT, bytes: 8 },
  decimal: { code: DECIMAL, bytes: 8 },
  timestamp: { code: TIMESTAMP, bytes: 8 },
  date: { code: DATE, bytes: 4 },
  boolean: { code: BOOLEAN, bytes: 1 },
} as const satisfies Record<ColumnKind, { code: number; bytes: number }>;
type KindCode = (typeof KINDS)[ColumnKind]['code'];

export const BATCH_ROWS = 4096;
/** Distinct values a string column may show in one batch and still cross as a dictionary. */
const DICT_LIMIT = 256;
/** A batch also closes at this many bytes of text, so 1 MB fields do not pile up 4,096 to a batch. */
const BATCH_TEXT = 1 << 20;

const TWO_32 = 4294967296;
/** The two-halves trick writes little-endian words; on a big-endian machine fall back to BigInt. */
// Stryker disable next-line ConditionalExpression,EqualityOperator,ArrayDeclaration: false only takes the BigInt path, which writes the same values
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const EMPTY_I64 = new BigInt64Array(0);
const EMPTY_I32 = new Int32Array(0);
const EMPTY_U32 = new Uint32Array(0);
const EMPTY_U8 = new Uint8Array(0);
const EMPTY_I16 = new Int16Array(0);
/**
 * A text column's first buffer: a batch of 4,096 values of up to ~60 bytes without growing. Growing is
 * rare code, and its first run deoptimized add(), into which V8 had compiled it.
 */
const UTF8_START = 1 << 18;

/**
 * An empty array of strings that has held one: `[]` starts with the elements kind of small integers, and
 * each batch's new dictionary array then showed add() a second array map, which deoptimized it.
 */
function stringArray(): string[] {
  // Stryker disable next-line ArrayDeclaration,StringLiteral: emptied on the next line; the element only sets the array's elements kind (speed)
  const a = [''];
  a.length = 0;
  return a;
}

/** Slots of a batch dictionary's table: twice DICT_LIMIT, so probes stay short. */
const DICT_MASK = 511;

export class RowBatchBuilder {
  /** Rows in the current batch. */
  rows = 0;
  /** Text (UTF-8 bytes) in the current batch. */
  private text = 0;

  private readonly n: number;
  private readonly kinds: Int8Array;
  private readonly nullable: Uint8Array;
  private readonly precision: Int32Array;
  private readonly scale: Int32Array;
  private readonly patterns: Array<CompiledPattern | null>;
  private readonly booleans: Array<BooleanTokens | null>;
  /** Columns typed in the first pass (everything but strings) and appended in the second (strings). */
  private readonly typedCols: Int32Array;
  private readonly stringCols: Int32Array;
  /** Estimated Parquet bytes of a row's fixed-width values. */
  readonly fixedRowBytes: number;

  // One-entry caches: reports repeat a date on every row and a second on many, and a string compare is
  // cheaper than parsing again.
  private readonly lastText: string[];
  private readonly lastValue: Float64Array;
  /**
   * Per column, the bigint or decimal value of the row add() typed last, as the safe integer it stores (a
   * decimal in units of its scale); NaN when it needed a BigInt. Read by the data checks' tally
   * (row-tally.ts), which would otherwise parse the key and the sum column a second time. Not set for nulls.
   */
  readonly safeValues: Float64Array;

  // Per column, indexed by column number; unused slots hold empty arrays so every array stays monomorphic.
  /** Per text column: the batch's values as UTF-8, and how many bytes are used. */
  private utf8: Uint8Array[] = [];
  private utf8Used: Int32Array;
  /** Per string column: still sent as a dictionary? (1) Each batch's dictionary, value -> code. */
  private dictMode: Uint8Array;
  /** Per string column: the batch's dictionary as an open-addressing table of codes (-1: empty). */
  private dictSlots: Int16Array[] = [];
  private dictValues: string[][] = [];
  private lengths: Int32Array[] = [];
  private i64: BigInt64Array[] = [];
  private lo: Uint32Array[] = [];
  private hi: Int32Array[] = [];
  private i32: Int32Array[] = [];
  private u8: Uint8Array[] = [];
  private nulls: Uint8Array[] = [];

  constructor(columns: readonly ColumnDefinition[]) {
    this.n = columns.length;
    this.kinds = Int8Array.from(columns, (c) => KINDS[c.kind].code);
    this.nullable = Uint8Array.from(columns, (c) => (c.nullable ? 1 : 0));
    this.precision = Int32Array.from(columns, (c) => c.precision ?? 0);
    this.scale = Int32Array.from(columns, (c) => c.scale ?? 0);
    // Stryker disable next-line StringLiteral: a timestamp or date column always has a pattern (the definition's schema requires one)
    this.patterns = columns.map((c) => (c.kind === 'timestamp' || c.kind === 'date' ? compilePattern(c.pattern ?? '', c.kind) : null));
    // Stryker disable next-line ConditionalExpression: tokens compiled for every column are read for boolean columns only
    this.booleans = columns.map((c) => (c.kind === 'boolean' ? compileBooleanTokens(c.values) : null));
    this.typedCols = Int32Array.from(columns.flatMap((c, i) => (c.kind === 'string' ? [] : [i])));
    this.stringCols = Int32Array.from(columns.flatMap((c, i) => (c.kind === 'string' ? [i] : [])));
    this.fixedRowBytes = columns.reduce((sum, c) => sum + KINDS[c.kind].bytes, 0);
    // Stryker disable next-line StringLiteral,ArrowFunction: an empty text is a null and never reaches the cache, so any start that no value has is the same
    this.lastText = columns.map(() => '');
    this.lastValue = new Float64Array(columns.length);
    this.safeValues = new Float64Array(columns.length);
    // Stryker disable next-line ConditionalExpression: the mode is read for string columns only
    this.dictMode = Uint8Array.from(columns, (c) => (c.kind === 'string' ? 1 : 0));
    this.utf8Used = new Int32Array(columns.length);
    this.allocate();
  }

  /** Whether the batch should be handed over now. */
  get full(): boolean {
    return this.rows >= BATCH_ROWS || this.text >= BATCH_TEXT;
  }

  /**
   * Types one record (exactly as many fields as columns: the caller checks the count). On success
   * returns the row's estimated Parquet bytes; on the first value that does not type, returns the
   * problem and leaves the batch as it was (a half-written typed slot is overwritten by the next row;
   * strings are only appended once the whole row has typed).
   */
  add(record: readonly string[]): number | RowProblem {
    const row = this.rows;
    const problem = this.typeFixedWidth(record, row);
    if (problem !== undefined) return problem;
    const bytes = this.appendStrings(record, row);
    if (typeof bytes === 'number') this.rows = row + 1;
    return bytes;
  }

  /**
   * Types the row's non-string values into their slots, or returns the first that does not type. Slots are
   * written in place: a row that fails later is overwritten by the next one, as `rows` has not moved.
   */
  private typeFixedWidth(record: readonly string[], row: number): RowProblem | undefined {
    const typed = this.typedCols;
    for (let k = 0; k < typed.length; k++) {
      const c = typed[k]!;
      const text = record[c]!;
      if (text.length === 0) {
        if (this.nullable[c] === 0) return { column: c, reason: 'empty, and the column is not nullable' };
        this.nulls[c]![row] = 1;
        continue;
      }
      const code = this.kinds[c] as KindCode;
      switch (code) {
        case BIGINT: {
          const v = parseSafeInteger(text);
          // Stryker disable next-line ConditionalExpression: true only takes the exact BigInt path for every value, to the same int64
          if (v === NEEDS_BIGINT) {
            const big = parseInt64(text);
            if (big === undefined) return { column: c, reason: failureReason() };
            this.i64[c]![row] = big;
          } else if (v !== v) {
            return { column: c, reason: failureReason() };
          } else {
            this.setInt64(c, row, v);
          }
          this.safeValues[c] = v === NEEDS_BIGINT ? NaN : v;
          break;
        }
        case DECIMAL: {
          const v = parseSafeDecimal(text, this.precision[c]!, this.scale[c]!);
          // Stryker disable next-line ConditionalExpression: true only takes the exact BigInt path for every value, to the same int64
          if (v === NEEDS_BIGINT) {
            const big = parseDecimal(text, this.precision[c]!, this.scale[c]!);
            // Stryker disable next-line ConditionalExpression,ObjectLiteral: unreachable while parseDecimal repeats parseSafeDecimal's checks (it did, so only the arithmetic is left); kept in case it stops
            if (big === undefined) return { column: c, reason: failureReason() };
            this.i64[c]![row] = big;
          } else if (v !== v) {
            return { column: c, reason: failureReason() };
          } else {
            this.setInt64(c, row, v);
          }
          this.safeValues[c] = v === NEEDS_BIGINT ? NaN : v;
          break;
        }
        case TIMESTAMP: {
          let v: number;
          // Stryker disable next-line ConditionalExpression: false only parses again, to the same value (the cache saves time)
          if (text === this.lastText[c]) v = this.lastValue[c]!;
          else {
            v = parseTimestamp(text, this.patterns[c]!);
            if (v !== v) return { column: c, reason: failureReason() };
            this.lastText[c] = text;
            this.lastValue[c] = v;
          }
          this.setInt64(c, row, v);
          break;
        }
        case DATE: {
          let v: number;
          // Stryker disable next-line ConditionalExpression: false only parses again, to the same value (the cache saves time)
          if (text === this.lastText[c]) v = this.lastValue[c]!;
          else {
            v = parseDate(text, this.patterns[c]!);
            if (v !== v) return { column: c, reason: failureReason() };
            this.lastText[c] = text;
            this.lastValue[c] = v;
          }
          this.i32[c]![row] = v;
          break;
        }
        case BOOLEAN: {
          const v = parseBoolean(text, this.booleans[c]!);
          if (v !== v) return { column: c, reason: failureReason() };
          this.u8[c]![row] = v;
          break;
        }
        // Stryker disable next-line ConditionalExpression: typedCols holds no string column, so this case is never reached
        case STRING:
          break; // not in typedCols: appended below
        // Stryker disable next-line ConditionalExpression,BlockStatement: unreachable, every kind has its case (the never below checks it)
        default: {
          const unhandled: never = code;
          // Stryker disable next-line StringLiteral: unreachable (above)
          throw new Error(`no typing for kind code ${String(unhandled)}`);
        }
      }
      // Stryker disable next-line ConditionalExpression: a required column's nulls array is empty, and a write past its end does nothing
      if (this.nullable[c] === 1) this.nulls[c]![row] = 0;
    }
    return undefined;
  }

  /**
   * Appends the row's strings once every other value has typed, or refuses an empty value of a column that is not
   * nullable before any is appended (appended bytes cannot be taken back). Returns the row's estimated bytes.
   */
  private appendStrings(record: readonly string[], row: number): number | RowProblem {
    const strings = this.stringCols;
    for (let k = 0; k < strings.length; k++) {
      const c = strings[k]!;
      if (record[c]!.length === 0 && this.nullable[c] === 0) return { column: c, reason: 'empty, and the column is not nullable' };
    }
    let bytes = this.fixedRowBytes;
    for (let k = 0; k < strings.length; k++) {
      const c = strings[k]!;
      const text = record[c]!;
      if (text.length === 0) {
        this.lengths[c]![row] = -1; // null (code or length): the check above let only nullable columns through
        continue;
      }
      bytes += text.length + 4;
      if (this.dictMode[c] === 1) {
        let code = this.dictCode(c, text);
        if (code < 0) {
          code = this.dictValues[c]!.length;
          if (code < DICT_LIMIT) {
            this.dictInsert(c, text, code);
          } else {
            this.toText(c, row);
          }
        }
        if (this.dictMode[c] === 1) {
          this.lengths[c]![row] = code;
          continue;
        }
      }
      const size = this.appendUtf8(c, text);
      this.lengths[c]![row] = size;
      this.text += size;
    }
    return bytes;
  }

  /**
   * The batch's code of a value of dictionary column c, or -1. An open-addressing table of codes hashed on the
   * length and three characters, each candidate compared with ===: a Map would hash every character of every
   * value (csv-parse's strings are new, their hash not yet computed) before comparing the same characters.
   */
  private dictCode(c: number, text: string): number {
    const slots = this.dictSlots[c]!;
    const values = this.dictValues[c]!;
    const n = text.length;
    let h = (Math.imul(n, 0x9e3779b1) ^ Math.imul(text.charCodeAt(0), 0x85ebca6b) ^ Math.imul(text.charCodeAt(n - 1), 0xc2b2ae35) ^ text.charCodeAt(n >> 1)) & DICT_MASK;
    for (;;) {
      const code = slots[h]!;
      if (code < 0 || values[code] === text) return code;
      h = (h + 1) & DICT_MASK;
    }
  }

  private dictInsert(c: number, text: string, code: number): void {
    const slots = this.dictSlots[c]!;
    const n = text.length;
    let h = (Math.imul(n, 0x9e3779b1) ^ Math.imul(text.charCodeAt(0), 0x85ebca6b) ^ Math.imul(text.charCodeAt(n - 1), 0xc2b2ae35) ^ text.charCodeAt(n >> 1)) & DICT_MASK;
    while (slots[h]! >= 0) h = (h + 1) & DICT_MASK;
    slots[h] = code;
    this.dictValues[c]!.push(text);
  }

  /** A column with too many distinct values: rewrite this batch's codes as text and send text from now on. */
  private toText(c: number, row: number): void {
    this.dictMode[c] = 0;
    const values = this.dictValues[c]!;
    const lengths = this.lengths[c]!;
    for (let r = 0; r < row; r++) {
      const code = lengths[r]!;
      if (code < 0) continue;
      const size = this.appendUtf8(c, values[code]!);
      lengths[r] = size;
      this.text += size;
    }
    this.dictValues[c] = stringArray();
  }

  /**
   * Appends text to column c's buffer as Parquet's PLAIN encoding stores a string: a 4-byte little-endian
   * length, then the UTF-8 bytes. Returns the length in bytes (without the prefix).
   */
  private appendUtf8(c: number, text: string): number {
    const at = this.utf8Used[c]!;
    let buf = this.utf8[c]!;
    // Stryker disable next-line EqualityOperator: growing when the worst case fits exactly only grows sooner
    if (at + 4 + text.length * 3 > buf.length) {
      // Stryker disable next-line ArithmeticOperator: with half the length instead of double, max() still gives the room needed
      const grown = new Uint8Array(Math.max(buf.length * 2, at + 4 + text.length * 3));
      grown.set(buf.subarray(0, at));
      this.utf8[c] = buf = grown;
    }
    const end = writeUtf8(text, buf, at + 4);
    const size = end - at - 4;
    buf[at] = size;
    buf[at + 1] = size >>> 8;
    buf[at + 2] = size >>> 16;
    buf[at + 3] = size >>> 24;
    this.utf8Used[c] = end;
    return size;
  }

  /** Writes a safe integer as int64 without creating a BigInt: low and high 32-bit words. */
  private setInt64(c: number, row: number, v: number): void {
    // Stryker disable next-line BooleanLiteral,ConditionalExpression,BlockStatement: on a little-endian machine (the tests') the BigInt path writes the same value
    if (!LITTLE_ENDIAN) {
      this.i64[c]![row] = BigInt(v);
      return;
    }
    this.lo[c]![row * 2] = v >>> 0; // ToUint32 is v mod 2^32: exact for |v| < 2^53, two's complement for negatives
    this.hi[c]![row * 2 + 1] = Math.floor(v / TWO_32);
  }

  /**
   * Hands over the current batch and starts a new one. With `copiedNow` the caller copies the batch
   * before the next add() (postMessage's structured clone does, and so does the encoder's add(), into its
   * column buffers: the converter's case), so its typed arrays may be views of the builder's reused
   * buffers; otherwise they are copies that the batch owns.
   */
  take(copiedNow = false): RowBatch {
    const rows = this.rows;
    const cut = copiedNow ? <T extends Int32Array | BigInt64Array | Uint8Array>(a: T) => a.subarray(0, rows) as T : <T extends Int32Array | BigInt64Array | Uint8Array>(a: T) => a.slice(0, rows) as T;
    const columns: WireColumn[] = [];
    for (let c = 0; c < this.n; c++) {
      const kind = this.kinds[c];
      // Stryker disable next-line ConditionalExpression: a string column's nulls (an empty array) are never read: its lengths carry them
      const nulls = this.nullable[c] && kind !== STRING ? cut(this.nulls[c]!) : undefined;
      const code = kind as KindCode;
      switch (code) {
        case STRING:
          if (this.dictMode[c] === 1) columns.push({ kind: 'dict', values: this.dictValues[c]!, codes: cut(this.lengths[c]!) });
          else {
            const used = this.utf8Used[c]!;
            const bytes = copiedNow ? this.utf8[c]!.subarray(0, used) : this.utf8[c]!.slice(0, used);
            columns.push({ kind: 'utf8', bytes, lengths: cut(this.lengths[c]!) });
          }
          break;
        case DATE:
          columns.push({ kind: 'int32', values: cut(this.i32[c]!), ...(nulls ? { nulls } : {}) });
          break;
        case BOOLEAN:
          columns.push({ kind: 'bool', values: cut(this.u8[c]!), ...(nulls ? { nulls } : {}) });
          break;
        case BIGINT:
        case DECIMAL:
        case TIMESTAMP:
          columns.push({ kind: 'int64', values: cut(this.i64[c]!), ...(nulls ? { nulls } : {}) });
          break;
        // Stryker disable next-line ConditionalExpression,BlockStatement: unreachable, every kind has its case (the never below checks it)
        default: {
          const unhandled: never = code;
          // Stryker disable next-line StringLiteral: unreachable (above)
          throw new Error(`no wire form for kind code ${String(unhandled)}`);
        }
      }
    }
    this.rows = 0;
    this.text = 0;
    for (const c of this.stringCols) {
      this.utf8Used[c] = 0;
      this.dictSlots[c]!.fill(-1);
      this.dictValues[c] = stringArray();
    }
    return { rows, columns };
  }

  /** Buffers are sized once for BATCH_ROWS and reused: take() copies out exactly the rows it hands over. */
  private allocate(): void {
    const cap = BATCH_ROWS;
    // Stryker disable next-line EqualityOperator: one more column's buffers, never read
    for (let c = 0; c < this.n; c++) {
      const kind = this.kinds[c];
      // Stryker disable next-line ConditionalExpression,EqualityOperator: a text buffer for every column only costs memory, and a text column given none grows one at its first value
      this.utf8.push(kind === STRING ? new Uint8Array(UTF8_START) : EMPTY_U8);
      // Stryker disable next-line ConditionalExpression: slots for every column only cost memory (true); false loops forever, which the tests time out on
      this.dictSlots.push(kind === STRING ? new Int16Array(DICT_MASK + 1).fill(-1) : EMPTY_I16);
      this.dictValues.push(stringArray());
      // Stryker disable next-line ConditionalExpression: lengths for every column only cost memory (true); false loses the strings, which the tests catch
      this.lengths.push(kind === STRING ? new Int32Array(cap) : EMPTY_I32);
      // Stryker disable next-line ConditionalExpression: an array for every column only costs memory (true); false loses the values, which the tests catch
      const i64 = kind === BIGINT || kind === DECIMAL || kind === TIMESTAMP ? new BigInt64Array(cap) : EMPTY_I64;
      this.i64.push(i64);
      this.lo.push(i64.length ? new Uint32Array(i64.buffer) : EMPTY_U32);
      this.hi.push(i64.length ? new Int32Array(i64.buffer) : EMPTY_I32);
      // Stryker disable next-line ConditionalExpression: an array for every column only costs memory (true); false loses the values, which the tests catch
      this.i32.push(kind === DATE ? new Int32Array(cap) : EMPTY_I32);
      // Stryker disable next-line ConditionalExpression: an array for every column only costs memory (true); false loses the values, which the tests catch
      this.u8.push(kind === BOOLEAN ? new Uint8Array(cap) : EMPTY_U8);
      // Stryker disable next-line ConditionalExpression,LogicalOperator: a nulls array for every column only costs memory (true, ||); false loses the nulls, which the tests catch
      this.nulls.push(this.nullable[c] && kind !== STRING ? new Uint8Array(cap) : EMPTY_U8);
    }
  }
}


/**
 * Writes text as UTF-8 at out[at] (room for 3 bytes a UTF-16 unit must be there); returns the end. The
 * bytes Buffer.from(text, 'utf8') would give: a lone surrogate becomes U+FFFD.
 */
export function writeUtf8(text: string, out: Uint8Array, at: number): number {
  let p = at;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      out[p++] = c;
      continue;
    }
    if (c < 0x800) {
      out[p++] = 0xc0 | (c >> 6);
      out[p++] = 0x80 | (c & 0x3f);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = text.charCodeAt(i + 1); // NaN past the end, and NaN & 0xfc00 is 0: not a low surrogate
      if (c <= 0xdbff && (next & 0xfc00) === 0xdc00) {
        // Stryker disable next-line ArithmeticOperator: c + 0xd800 adds 0x1b000, which << 10 puts only in bits the bytes below mask off
        const high = (c - 0xd800) << 10;
        const cp = 0x10000 + high + (next - 0xdc00);
        out[p++] = 0xf0 | (cp >> 18);
        out[p++] = 0x80 | ((cp >> 12) & 0x3f);
        out[p++] = 0x80 | ((cp >> 6) & 0x3f);
        out[p++] = 0x80 | (cp & 0x3f);
        i++;
        continue;
      }
      c = 0xfffd;
    }
    out[p++] = 0xe0 | (c >> 12);
    out[p++] = 0x80 | ((c >> 6) & 0x3f);
    out[p++] = 0x80 | (c & 0x3f);
  }
  return p;
}
