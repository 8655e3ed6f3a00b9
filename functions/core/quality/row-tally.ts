import type { ReportDefinition } from '../definitions/report-definition.js';
import { parseDecimal, parseInt64 } from '../csv/value-parsers.js';

/**
 * What the data checks need from the rows of one file, gathered as the converter writes them: how many rows
 * repeat a key already seen in the file (the definition's `keys`), and the exact sum of one number column
 * (`volume.sumColumn`). Nothing is kept when the definition declares neither, and the converter then never
 * calls in here: the row loop is the pipeline's hot path (bench/convert.bench.ts).
 *
 * A bigint key and the sum column are taken as the converter typed them (RowBatchBuilder.safeValues), not
 * parsed again from the record's text: with rising ids the set insert is an append, and the second parse
 * was most of the tally's cost. Values beyond 2^53 come from the text.
 */

export interface RowTallyResult {
  /** Rows whose key an earlier row of the same file already had (two identical rows: 1). */
  duplicateKeys?: number;
  /** The sum column's total over the rows written, as a decimal string with the column's scale ("-12.500"). */
  sum?: string;
}

/** A tally's keys and sum, as they cross between threads. */
export interface RowTallyState {
  ints: Float64Array;
  texts: string[];
  duplicates: number;
  small: number;
  big: string;
}

const TWO_32 = 4294967296;
const EMPTY = NaN;

/**
 * A set of safe integers, made for ids that mostly rise (a gateway's transaction ids, in the order it sends
 * them, with the odd late one). A value above the last rising one cannot be a repeat: it is appended to a
 * sorted array, with nothing to look up, and 1M ids take 8 MiB. A value that does not rise is looked for in
 * that array (a binary search) and kept in a hash table of the late values only (one Float64Array, open
 * addressing), so a few late ids cost a few lookups. A rising value cannot repeat a late one: every late
 * value is below the last rising value of its time, and that only grows. Ids in no order at all end up
 * nearly all in the hash table: 16 MiB for 1M distinct keys (24 MiB while it doubles), against ~35 MiB and 5x
 * the time for a Set of numbers (each a heap number above 2^31).
 *
 * Before, the first late value moved every value into the hash table: the simulator's report (804 late ids
 * in 1M) then paid ~0.25 s of cache misses per million rows, where rising ids take ~20 ms.
 */
export class SafeIntegerSet {
  /** The rising values, sorted: [0, risingCount). */
  private rising = new Float64Array(1 << 12);
  private risingCount = 0;
  /** The late values: an open-addressing table, EMPTY where free. */
  private late = new Float64Array(0);
  private lateCount = 0;

  get size(): number {
    return this.risingCount + this.lateCount;
  }

  /** Adds v; false when it was already there. */
  add(v: number): boolean {
    const n = this.risingCount;
    if (n === 0 || v > this.rising[n - 1]!) {
      if (n === this.rising.length) {
        const grown = new Float64Array(n * 2);
        grown.set(this.rising);
        this.rising = grown;
      }
      this.rising[n] = v;
      this.risingCount = n + 1;
      return true;
    }
    return !this.inRising(v) && this.lateAdd(v);
  }

  private inRising(v: number): boolean {
    const a = this.rising;
    let lo = 0;
    let hi = this.risingCount - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const m = a[mid]!;
      if (m === v) return true;
      // Stryker disable next-line EqualityOperator: m === v returned on the line above, so m <= v is m < v here
      if (m < v) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  private lateAdd(v: number): boolean {
    // Stryker disable next-line EqualityOperator: growing at exactly half full, one value sooner, changes when the table doubles, never what it holds
    if ((this.lateCount + 1) * 2 > this.late.length) this.growLate();
    const slots = this.late;
    const mask = slots.length - 1;
    // Both 32-bit halves mixed: ids often differ only in their low digits, or only above 2^32.
    // Stryker disable next-line ArithmeticOperator: the hash only picks the slot probing starts from; another mix of v's bits finds the same values, more slowly
    let h = Math.imul((v >>> 0) ^ Math.imul(Math.floor(v / TWO_32) | 0, 0x9e3779b1), 0x85ebca6b) & mask;
    for (;;) {
      const s = slots[h]!;
      if (s !== s) break; // EMPTY (NaN): v is new
      if (s === v) return false;
      // Stryker disable next-line ArithmeticOperator: probing down the table instead of up visits every slot all the same
      h = (h + 1) & mask;
    }
    slots[h] = v;
    this.lateCount++;
    return true;
  }

  /** Doubles the late table before it is half full, so probes stay short. */
  private growLate(): void {
    const old = this.late;
    this.late = new Float64Array(Math.max(1 << 10, old.length * 2)).fill(EMPTY);
    this.lateCount = 0;
    for (let i = 0; i < old.length; i++) {
      const v = old[i]!;
      if (v === v) this.lateAdd(v);
    }
  }

  /** Every value: the rising ones in order, then the late ones. */
  values(): Float64Array {
    const out = new Float64Array(this.size);
    out.set(this.rising.subarray(0, this.risingCount));
    let n = this.risingCount;
    for (const v of this.late) if (v === v) out[n++] = v;
    return out;
  }
}

/** "-12.500" from -12500 at scale 3: exact, never through a float. */
export function formatScaled(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${text}` : text;
}

export class RowTally {
  private readonly keyColumns: number[];
  /** A single bigint key: its safe values in a SafeIntegerSet, the few beyond 2^53 as text. */
  private readonly intKey: boolean;
  private readonly ints = new SafeIntegerSet();
  private readonly texts = new Set<string>();
  private duplicates = 0;

  private readonly sumColumn: number;
  private readonly sumScale: number;
  private readonly sumPrecision: number;
  private readonly sumIsDecimal: boolean;
  /** The sum as a safe double plus an exact BigInt spill-over: no BigInt per row while |sum| < 2^53. */
  private small = 0;
  private big = 0n;

  private constructor(report: ReportDefinition) {
    const index = (name: string | undefined) => report.columns.findIndex((c) => c.name === name);
    this.keyColumns = (report.keys ?? []).map(index);
    this.intKey = this.keyColumns.length === 1 && report.columns[this.keyColumns[0]!]!.kind === 'bigint';
    // -1 without a sum column: no column's name is undefined.
    this.sumColumn = index(report.volume.sumColumn);
    const sum = report.columns[this.sumColumn];
    this.sumScale = sum?.scale ?? 0;
    // Stryker disable next-line LogicalOperator: a row reaches the tally only once it typed at the column's precision (at most 18), so reading it again at 18 gives the same value
    this.sumPrecision = sum?.precision ?? 18;
    this.sumIsDecimal = sum?.kind === 'decimal';
  }

  /** A tally for the report, or undefined when it declares neither keys nor a sum column (the converter then skips it). */
  static for(report: ReportDefinition): RowTally | undefined {
    const wanted = Boolean(report.keys?.length) || (report.volume.enabled && report.volume.sumColumn !== undefined);
    return wanted ? new RowTally(report) : undefined;
  }

  /**
   * One row that typed and was written; `typed` holds its bigint and decimal values as the converter typed
   * them (RowBatchBuilder.safeValues: NaN beyond 2^53).
   */
  add(record: readonly string[], typed: Float64Array): void {
    const keys = this.keyColumns;
    if (keys.length) {
      let fresh: boolean;
      if (this.intKey) {
        const v = typed[keys[0]!]!;
        // Beyond 2^53 the canonical text stands for the value (the row typed, so it is a valid int64).
        fresh = v === v ? this.ints.add(v) : addNew(this.texts, String(parseInt64(record[keys[0]!]!)));
      } else {
        // One string per row; \u0000 cannot occur inside a CSV value the gateway sends for a key.
        let key = record[keys[0]!]!;
        for (let k = 1; k < keys.length; k++) key += `\u0000${record[keys[k]!]!}`;
        fresh = addNew(this.texts, key);
      }
      if (!fresh) this.duplicates++;
    }
    if (this.sumColumn >= 0) {
      const text = record[this.sumColumn]!;
      if (text.length === 0) return; // null: adds nothing
      const v = typed[this.sumColumn]!;
      if (v !== v) {
        this.big += (this.sumIsDecimal ? parseDecimal(text, this.sumPrecision, this.sumScale) : parseInt64(text))!;
        return;
      }
      const next = this.small + v;
      // Both terms are safe integers; once their sum may not be, it moves to the BigInt exactly.
      // Stryker disable next-line ConditionalExpression: moving every row's value to the BigInt is exact too, only slower
      if (!Number.isSafeInteger(next)) {
        this.big += BigInt(this.small) + BigInt(v);
        this.small = 0;
      } else {
        this.small = next;
      }
    }
  }

  /** What this tally holds, to be merged into another part's (split files: csv-to-parquet.ts). */
  state(): RowTallyState {
    return { ints: this.ints.values(), texts: [...this.texts], duplicates: this.duplicates, small: this.small, big: this.big.toString() };
  }

  /** Adds the rows of a later part of the same file: its keys are counted again against this part's. */
  merge(other: RowTallyState): void {
    let duplicates = other.duplicates;
    for (const v of other.ints) if (!this.ints.add(v)) duplicates++;
    for (const t of other.texts) if (!addNew(this.texts, t)) duplicates++;
    this.duplicates += duplicates;
    this.big += BigInt(other.big) + BigInt(other.small);
  }

  result(): RowTallyResult {
    return {
      ...(this.keyColumns.length ? { duplicateKeys: this.duplicates } : {}),
      ...(this.sumColumn >= 0 ? { sum: formatScaled(this.big + BigInt(this.small), this.sumScale) } : {}),
    };
  }
}

function addNew(set: Set<string>, key: string): boolean {
  if (set.has(key)) return false;
  set.add(key);
  return true;
}
