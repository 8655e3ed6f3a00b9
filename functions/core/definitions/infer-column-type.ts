import { COLUMN_KINDS, type ColumnKind } from './report-definition.js';
import { BOOLEAN_TOKENS, compilePattern, parseDate, parseTimestamp, PATTERN_HELP } from '../csv/value-parsers.js';

/**
 * Guessing a column's type from sample values. The rule throughout: when in doubt, string. A string
 * column never rejects a row, while a wrong bigint, decimal or date rejects every later row that does
 * not fit, so a type is proposed only when every non-empty sample value fits it.
 */

export interface InferredType {
  type: string;
  pattern?: string;
  nullable: boolean;
  /** Reasons worth showing to the person reviewing the proposal. */
  notes: string[];
}

/**
 * Tried in this order; the first that fits every value wins (patterns are fixed width, so at most one of a
 * family fits). MM/dd variants only when dd/MM does not fit. yyyyMMdd is tried on integer columns only.
 */
export const TIMESTAMP_PATTERNS = [
  'yyyy-MM-dd HH:mm:ss', 'yyyy-MM-dd HH:mm:ss.SSS', 'yyyy-MM-dd HH:mm',
  'dd.MM.yyyy HH:mm:ss', 'dd.MM.yyyy HH:mm:ss.SSS', 'dd.MM.yyyy HH:mm',
  'yyyy-MM-ddTHH:mm:ss', 'yyyy-MM-ddTHH:mm:ss.SSS', 'yyyy-MM-ddTHH:mm',
  'dd/MM/yyyy HH:mm:ss', 'dd/MM/yyyy HH:mm:ss.SSS', 'dd/MM/yyyy HH:mm',
] as const;
export const DATE_PATTERNS = ['yyyy-MM-dd', 'dd.MM.yyyy', 'dd/MM/yyyy'] as const;
/** Eight-digit dates: integers too, so proposed only when every value is a real date of these years. */
const COMPACT_DATE = 'yyyyMMdd';
const COMPACT_YEARS = [1900, 2199] as const;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Precision of every proposed decimal: the most an INT64-backed Parquet decimal holds (docs/architecture.md, "Parquet"). */
const DECIMAL_PRECISION = 18;
/**
 * The smallest proposed scale. A sample of amounts may happen to hold only "10" and "10.5"; money has
 * cents, and a scale too small rejects the first "10.25" while a larger one costs nothing.
 */
const MIN_DECIMAL_SCALE = 2;

const INTEGER = /^[+-]?\d+$/;
const PLAIN_DECIMAL = /^[+-]?(\d+)(?:\.(\d+))?$/;
/** "00123" is a code (terminal, branch, postal): as a number it would lose its zeros. "0" and "0.5" are numbers. */
const LEADING_ZERO = /^[+-]?0\d/;
const DECIMAL_COMMA = /^[+-]?\d+,\d+$/;
/** Looks like a date or time, so a miss deserves a note rather than a silent string. */
const DATE_LIKE = /^\d{1,4}[-./]\d{1,2}[-./]\d{1,4}/;

const example = (v: string) => JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);

/** A matcher for one pattern: the parser the converter uses, so a proposal never refuses its own sample. */
function patternMatcher(pattern: string): (value: string) => boolean {
  const kind = /H/.test(pattern) ? 'timestamp' : 'date';
  const compiled = compilePattern(pattern, kind);
  return kind === 'timestamp'
    ? (value) => !Number.isNaN(parseTimestamp(value, compiled))
    : (value) => !Number.isNaN(parseDate(value, compiled));
}

const fitsAll = (values: readonly string[], pattern: string) => values.every(patternMatcher(pattern));

/** A day-first pattern as month-first: the US reading of the same slashes. */
const monthFirst = (pattern: string) => pattern.replace('dd/MM', 'MM/dd');

/**
 * The first pattern fitting every value. Slashed dates read day first (the gateway and its merchants are
 * European); month first only when the values prove it (a "second field" above 12).
 */
function matchPattern(values: readonly string[], patterns: readonly string[]): { pattern: string; note?: string } | undefined {
  for (const p of patterns) {
    if (!fitsAll(values, p)) {
      if (p.includes('dd/MM') && fitsAll(values, monthFirst(p))) return { pattern: monthFirst(p) };
      continue;
    }
    if (p.includes('dd/MM') && fitsAll(values, monthFirst(p))) {
      return { pattern: p, note: `every value reads both as ${p} and ${monthFirst(p)}: chose ${p}; check it` };
    }
    return { pattern: p };
  }
  return undefined;
}

/** bigint, decimal, or string for numbers that must not be numbers; undefined when the values are not numeric. */
function numericType(values: readonly string[]): { type: string; notes: string[] } | undefined {
  const coded = values.find((v) => LEADING_ZERO.test(v) && PLAIN_DECIMAL.test(v));
  if (values.every((v) => INTEGER.test(v))) {
    if (coded) return { type: 'string', notes: [`values with leading zeros such as ${example(coded)}: kept as string (codes lose their zeros as numbers)`] };
    const big = values.find((v) => BigInt(v) < INT64_MIN || BigInt(v) > INT64_MAX);
    if (big) return { type: 'string', notes: [`integers beyond 64 bits such as ${example(big)}: kept as string`] };
    return { type: 'bigint', notes: [] };
  }
  if (!values.every((v) => PLAIN_DECIMAL.test(v))) return undefined;
  if (coded) return { type: 'string', notes: [`values with leading zeros such as ${example(coded)}: kept as string (codes lose their zeros as numbers)`] };
  let intDigits = 0;
  let fracDigits = 0;
  for (const v of values) {
    const m = PLAIN_DECIMAL.exec(v)!;
    // No leading zeros to strip: a value with them returned as a code above, so m[1] is "0" or starts with 1-9.
    intDigits = Math.max(intDigits, m[1]!.length);
    fracDigits = Math.max(fracDigits, m[2]?.length ?? 0);
  }
  const scale = Math.max(fracDigits, MIN_DECIMAL_SCALE);
  if (intDigits + scale > DECIMAL_PRECISION) {
    return { type: 'string', notes: [`decimals with ${intDigits} integer and ${fracDigits} fractional digits exceed decimal(18,s): kept as string`] };
  }
  const notes = fracDigits < MIN_DECIMAL_SCALE ? [`at most ${fracDigits} fractional digit(s) seen: scale ${MIN_DECIMAL_SCALE} so cents fit`] : [];
  return { type: `decimal(${DECIMAL_PRECISION},${scale})`, notes };
}

/** yyyyMMdd when every value is an eight-digit real date of a plausible year. */
function compactDate(values: readonly string[]): boolean {
  return values.every((v) => /^\d{8}$/.test(v) && Number(v.slice(0, 4)) >= COMPACT_YEARS[0] && Number(v.slice(0, 4)) <= COMPACT_YEARS[1]) && fitsAll(values, COMPACT_DATE);
}

/** The words among the boolean tokens: a column of only 0 and 1 is a number until a word says otherwise. */
const BOOLEAN_WORDS = new Set([...BOOLEAN_TOKENS.true, ...BOOLEAN_TOKENS.false].filter((t) => !/^\d+$/.test(t)));
const BOOLEAN_ANY = new Set([...BOOLEAN_TOKENS.true, ...BOOLEAN_TOKENS.false]);

/**
 * boolean when every value is one of the default tokens (true/false, 1/0, yes/no, in any case) and at least one
 * is a word: "true", "No". A column of only 0 and 1 is not proposed boolean (an id or a count may hold only
 * those in a sample); it stays bigint, with a note.
 */
function booleanGuess(values: readonly string[]): Proposal | undefined {
  const lower = values.map((v) => v.toLowerCase());
  if (!lower.every((v) => BOOLEAN_ANY.has(v)) || !lower.some((v) => BOOLEAN_WORDS.has(v))) return undefined;
  return { type: 'boolean', notes: [`every value is a boolean token such as ${example(values[0]!)}: proposed boolean (true/1/yes, false/0/no, any case)`] };
}

/** What one kind proposes for a column's non-empty sample values, or undefined when they do not fit it. */
type Proposal = { type: string; pattern?: string; notes: string[] };

/**
 * Per kind, whether and how `reports infer-schema` proposes it; tried by `rank`, the first that fits wins.
 * bigint's entry reads numbers (numericType): it proposes bigint, a decimal, or string for numbers that must
 * not be numbers (leading zeros, beyond 64 bits), so decimal has no reading of its own. string takes
 * whatever nothing else did.
 */
const PROPOSALS = {
  boolean: { rank: 0, propose: booleanGuess },
  date: {
    rank: 1,
    propose: (present) => {
      if (compactDate(present)) {
        return { type: 'date', pattern: COMPACT_DATE, notes: [`every value is an eight-digit date such as ${example(present[0]!)}: proposed date ${COMPACT_DATE}; make it bigint if it is a number`] };
      }
      const match = matchPattern(present, DATE_PATTERNS);
      return match && { type: 'date', pattern: match.pattern, notes: match.note ? [match.note] : [] };
    },
  },
  bigint: {
    rank: 2,
    propose: (present) => {
      const numeric = numericType(present);
      if (numeric?.type === 'bigint' && present.every((v) => v === '0' || v === '1')) {
        numeric.notes.push('only 0 and 1 seen: if it is a flag, make it boolean');
      }
      return numeric;
    },
  },
  decimal: { rank: 2, propose: () => undefined },
  timestamp: {
    rank: 3,
    propose: (present) => {
      const match = matchPattern(present, TIMESTAMP_PATTERNS);
      return match && { type: 'timestamp', pattern: match.pattern, notes: match.note ? [match.note] : [] };
    },
  },
  string: { rank: 4, propose: (present) => ({ type: 'string', notes: stringNotes(present) }) },
} satisfies Record<ColumnKind, { rank: number; propose: (present: readonly string[]) => Proposal | undefined }>;

const BY_RANK = [...COLUMN_KINDS].sort((a, b) => PROPOSALS[a].rank - PROPOSALS[b].rank);

/** Why values that fit nothing else are text, when it may surprise. */
function stringNotes(present: readonly string[]): string[] {
  const sample = present[0]!;
  if (present.every((v) => DECIMAL_COMMA.test(v))) {
    return [`values such as ${example(sample)} use a decimal comma: kept as string (a decimal column reads a decimal point)`];
  }
  if (present.every((v) => DATE_LIKE.test(v))) {
    return [`values such as ${example(sample)} look like dates but fit no supported pattern (or not all of them do): kept as string; if they are dates, set type and pattern by hand (${PATTERN_HELP})`];
  }
  return [];
}

/** The type of one column from its sample values; an empty value makes it nullable. */
export function inferColumnType(values: readonly string[]): InferredType {
  const present = values.filter((v) => v !== '');
  const empty = values.length - present.length;
  const nullable = empty > 0;
  const notes = nullable ? [`${empty} empty value(s) of ${values.length}: made nullable`] : [];
  if (present.length === 0) {
    return { type: 'string', nullable: true, notes: ['no values in the sample: typed string and nullable; set the type when data shows it'] };
  }
  for (const kind of BY_RANK) {
    const proposal: Proposal | undefined = PROPOSALS[kind].propose(present);
    if (proposal) return { type: proposal.type, ...(proposal.pattern === undefined ? {} : { pattern: proposal.pattern }), nullable, notes: [...notes, ...proposal.notes] };
  }
  return { type: 'string', nullable, notes };
}
