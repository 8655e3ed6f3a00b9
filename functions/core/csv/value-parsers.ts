import { ConfigurationError } from '../errors.js';

/**
 * Typing of CSV text, exact and strict. These run once per value of a report (millions per run), so
 * they read char codes and return plain numbers: no regex, no substring, no allocation on success.
 *
 * Convention: a parser returns a number, or NaN when the text is not a value of its type; then
 * `failureReason()` says why (the message goes into the rejects file). Integer parsers return
 * `NEEDS_BIGINT` when the text is valid-looking but has more digits than a double holds exactly
 * (over 15): the caller then takes the BigInt path (parseInt64 / parseDecimal), which is exact for
 * every int64. Money never goes through parseFloat.
 */

/** Returned by the fast integer parsers for values that may exceed 2^53: use the BigInt parser. */
export const NEEDS_BIGINT = Infinity;

// Stryker disable next-line StringLiteral: read only after a parser returned NaN, which sets it first
let reason = '';

/** Why the last parser call that returned NaN (or undefined) failed. */
export const failureReason = (): string => reason;

function fail(why: string): number {
  reason = why;
  return NaN;
}

const show = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);

const ZERO = 48;
const PLUS = 43;
const MINUS = 45;
const DOT = 46;

/** Up to 15 digits always fit a double exactly (2^53 ≈ 9.007e15). */
const SAFE_DIGITS = 15;

/**
 * A whole number with an optional leading sign. Returns it as a number when it has at most 15
 * digits (leading zeros not counted), NEEDS_BIGINT when it has more, NaN when it is not an integer.
 */
export function parseSafeInteger(text: string): number {
  const n = text.length;
  let i = 0;
  let negative = false;
  const c = text.charCodeAt(0); // NaN for "", which is neither sign
  if (c === MINUS || c === PLUS) {
    negative = c === MINUS;
    i = 1;
  }
  if (i >= n) return fail(n === 0 ? 'empty' : `not an integer: ${show(text)}`);
  // Leading zeros do not count as digits; "000" leaves none, which reads as 0. Past the end charCodeAt is NaN.
  while (text.charCodeAt(i) === ZERO) i++;
  if (n - i > SAFE_DIGITS) return integerDigitsOnly(text, i) ? NEEDS_BIGINT : fail(`not an integer: ${show(text)}`);
  let value = 0;
  for (; i < n; i++) {
    const d = text.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return fail(`not an integer: ${show(text)}`);
    value = value * 10 + d;
  }
  return negative ? (value === 0 ? 0 : -value) : value;
}

function integerDigitsOnly(text: string, from: number): boolean {
  // Stryker disable next-line EqualityOperator: one step past the end reads NaN, which neither comparison refuses
  for (let i = from; i < text.length; i++) {
    const d = text.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return false;
  }
  return true;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Any int64, exactly. Returns undefined (and sets failureReason) when the text is not one. */
export function parseInt64(text: string): bigint | undefined {
  const fast = parseSafeInteger(text);
  if (Number.isNaN(fast)) return undefined;
  // Stryker disable next-line ConditionalExpression: BigInt(text) gives the same value for any sign + digits; this only saves reading them twice
  if (fast !== NEEDS_BIGINT) return BigInt(fast);
  // Validated above as sign + digits, so BigInt() sees nothing it would read leniently (hex, spaces, "").
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) {
    reason = `integer out of the bigint (int64) range: ${show(text)}`;
    return undefined;
  }
  return value;
}

/**
 * A decimal as its unscaled integer at `scale`: "-1234.5" at scale 3 is -1234500. Accepts an optional
 * sign, digits, an optional point and fraction (".5" and "5." too); rejects exponents, spaces, group
 * separators, a decimal comma, more fractional digits than `scale` unless they are zeros, and more
 * integer digits than precision - scale allows. Returns the value when its unscaled form has at most
 * 15 digits, NEEDS_BIGINT when it has more, NaN when invalid.
 */
export function parseSafeDecimal(text: string, precision: number, scale: number): number {
  const n = text.length;
  let i = 0;
  let negative = false;
  const c = text.charCodeAt(0); // NaN for "", which is neither sign
  if (c === MINUS || c === PLUS) {
    negative = c === MINUS;
    i = 1;
  }
  let value = 0;
  let digits = 0; // significant digits taken into `value`
  let intDigits = 0;
  let sawDigit = false;
  // integer part
  for (; i < n; i++) {
    const d = text.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) break;
    sawDigit = true;
    if (digits === 0 && d === 0) continue; // leading zero
    value = value * 10 + d;
    digits++;
    intDigits++;
  }
  if (intDigits > precision - scale) {
    return Number.isNaN(decimalShape(text, i, false)) ? NaN : fail(`more than ${precision - scale} integer digits for decimal(${precision},${scale}): ${show(text)}`);
  }
  let fracDigits = 0;
  if (text.charCodeAt(i) === DOT) {
    i++;
    for (; i < n; i++) {
      const d = text.charCodeAt(i) - ZERO;
      if (d < 0 || d > 9) break;
      sawDigit = true;
      if (fracDigits < scale) {
        value = value * 10 + d;
        if (digits > 0 || d !== 0) digits++;
        fracDigits++;
      } else if (d !== 0) {
        return Number.isNaN(decimalShape(text, i, true)) ? NaN : fail(`more than ${scale} fractional digits for decimal(${precision},${scale}): ${show(text)}`);
      }
    }
  }
  if (i !== n || !sawDigit) return fail(n === 0 ? 'empty' : `not a decimal: ${show(text)}`);
  for (; fracDigits < scale; fracDigits++) {
    value *= 10;
    if (digits > 0) digits++;
  }
  if (digits > SAFE_DIGITS) return NEEDS_BIGINT;
  return negative ? (value === 0 ? 0 : -value) : value;
}

/** Checks the rest of a decimal's text for garbage, so "12a.5" says "not a decimal", not "too many digits". */
function decimalShape(text: string, from: number, sawDot: boolean): number {
  // Stryker disable next-line EqualityOperator: one step past the end reads NaN, which is neither a dot nor refused
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === DOT && !sawDot) sawDot = true;
    else if (c < ZERO || c > ZERO + 9) return fail(`not a decimal: ${show(text)}`);
  }
  return 0;
}

/** A decimal's unscaled value as an exact bigint (any precision ≤ 18). undefined + failureReason when invalid. */
export function parseDecimal(text: string, precision: number, scale: number): bigint | undefined {
  const fast = parseSafeDecimal(text, precision, scale);
  if (Number.isNaN(fast)) return undefined;
  if (fast !== NEEDS_BIGINT) return BigInt(fast);
  // parseSafeDecimal validated the shape and the digit counts; only the arithmetic needs BigInt. The sign stays on
  // the integer part, which BigInt reads ("-12" + "500" is -12500n, "" + "500" is 500n). Only a value of 16 digits
  // or more comes here, so never a sign alone ("-.0" at scale 0), which BigInt would refuse.
  const dot = text.indexOf('.');
  const intPart = dot === -1 ? text : text.slice(0, dot);
  const fracPart = dot === -1 ? '' : text.slice(dot + 1, dot + 1 + scale);
  return BigInt(intPart + fracPart.padEnd(scale, '0'));
}

/* ---------------------------------------------------------------- dates and times */

const TOKENS = ['yyyy', 'SSS', 'MM', 'dd', 'HH', 'mm', 'ss'] as const;
type Token = (typeof TOKENS)[number];
const WIDTH: Readonly<Record<Token, number>> = { yyyy: 4, SSS: 3, MM: 2, dd: 2, HH: 2, mm: 2, ss: 2 };

/** A boolean column's tokens without `values` in its definition: compared without regard to case. */
export const BOOLEAN_TOKENS: Readonly<{ true: readonly string[]; false: readonly string[] }> = {
  true: ['true', '1', 'yes'],
  false: ['false', '0', 'no'],
};

/** A boolean column's tokens, ready to look up: each token as written and in lower case, to 1 (true) or 0 (false). */
export type BooleanTokens = ReadonlyMap<string, number>;

export function compileBooleanTokens(values: { true: readonly string[]; false: readonly string[] } = BOOLEAN_TOKENS): BooleanTokens {
  const tokens = new Map<string, number>();
  for (const [list, v] of [[values.true, 1], [values.false, 0]] as const) {
    for (const t of list) {
      tokens.set(t, v);
      tokens.set(t.toLowerCase(), v);
    }
  }
  return tokens;
}

/**
 * A boolean: 1 or 0, or NaN when the text is none of the column's tokens. The text as it comes is looked up
 * first ("true", "Y"), so only a value in another case pays for a lower-case copy.
 */
export function parseBoolean(text: string, tokens: BooleanTokens): number {
  const v = tokens.get(text) ?? tokens.get(text.toLowerCase());
  if (v !== undefined) return v;
  const written = [...new Set([...tokens.keys()].map((t) => t.toLowerCase()))];
  return fail(`not a boolean: ${show(text)} (the column reads ${written.map((t) => JSON.stringify(t)).join(', ')}, in any case)`);
}

/** What a column's pattern may hold; the message of every refused pattern ends with it. */
export const PATTERN_HELP =
  'supported tokens: yyyy (year), MM (month), dd (day), HH (hour 00-23), mm (minute), ss (second), SSS (millisecond, after ss); ' +
  "every token zero-padded; other characters are literal, letters in single quotes ('T') except a bare T; " +
  'for example "yyyy-MM-dd HH:mm:ss", "dd.MM.yyyy HH:mm", "yyyy-MM-dd\'T\'HH:mm:ss.SSS", "dd/MM/yyyy", "MM/dd/yyyy", "yyyyMMdd"';

/** A compiled input pattern such as "yyyy-MM-dd HH:mm:ss" or "dd.MM.yyyy": fixed width, every token zero-padded. */
export interface CompiledPattern {
  readonly pattern: string;
  /** Length of every value the pattern matches. */
  readonly length: number;
  /** [position, char code] of every literal character, positions in the value (not in the pattern). */
  readonly literals: ReadonlyArray<readonly [number, number]>;
  /** Start position of each token in the value, -1 when absent. */
  readonly at: Readonly<Record<Token, number>>;
  /** The value's parts in order: a token, or literal text (for formatting). */
  readonly parts: ReadonlyArray<{ token: Token } | { text: string }>;
}

const bad = (pattern: string, why: string) => new ConfigurationError(`pattern "${pattern}" ${why}; ${PATTERN_HELP}`);

export function compilePattern(pattern: string, kind: 'timestamp' | 'date'): CompiledPattern {
  const at: Record<Token, number> = { yyyy: -1, SSS: -1, MM: -1, dd: -1, HH: -1, mm: -1, ss: -1 };
  const literals: Array<[number, number]> = [];
  const parts: Array<{ token: Token } | { text: string }> = [];
  const literal = (text: string) => {
    // By UTF-16 code unit, as values are read: a character outside the basic plane is two of them.
    for (let k = 0; k < text.length; k++) literals.push([pos++, text.charCodeAt(k)]);
    const last = parts[parts.length - 1];
    if (last && 'text' in last) parts[parts.length - 1] = { text: last.text + text };
    else parts.push({ text });
  };
  let pos = 0; // position in the value
  let i = 0; // position in the pattern
  while (i < pattern.length) {
    const token = TOKENS.find((t) => pattern.startsWith(t, i));
    const ch = pattern[i]!;
    if (token) {
      if (at[token] !== -1) throw bad(pattern, `has ${token} twice`);
      at[token] = pos;
      parts.push({ token });
      pos += WIDTH[token];
      i += token.length;
    } else if (ch === "'") {
      const close = pattern.indexOf("'", i + 1);
      if (close === -1) throw bad(pattern, 'has an unclosed quote');
      // '' is a quote character, as in Java's patterns.
      literal(close === i + 1 ? "'" : pattern.slice(i + 1, close));
      i = close + 1;
    } else if (/[A-Za-z]/.test(ch) && ch !== 'T') {
      // An unknown letter is most likely a token we do not support (e.g. yy, hh, a, S): say so, never guess.
      throw bad(pattern, `has "${ch}", which is not a supported token (quote literal letters: '${ch}')`);
    } else {
      literal(ch);
      i++;
    }
  }
  const needed: readonly Token[] = kind === 'timestamp' ? ['yyyy', 'MM', 'dd', 'HH', 'mm'] : ['yyyy', 'MM', 'dd'];
  const missing = needed.filter((t) => at[t] === -1);
  if (missing.length) throw bad(pattern, `lacks ${missing.join(', ')} for a ${kind}`);
  if (kind === 'date' && (at.HH !== -1 || at.mm !== -1 || at.ss !== -1 || at.SSS !== -1)) {
    throw bad(pattern, 'is a date pattern with time tokens: make the column a timestamp, or the time would be dropped');
  }
  if (at.SSS !== -1 && at.ss === -1) throw bad(pattern, 'has SSS without ss');
  return { pattern, length: pos, literals, at, parts };
}

/** Why a pattern is refused for a column of this kind, or null when it compiles. */
export function patternProblem(pattern: string, kind: 'timestamp' | 'date'): string | null {
  try {
    compilePattern(pattern, kind);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** A wall-clock time (epoch milliseconds of the same wall clock, as parseTimestamp returns) in a pattern. */
export function formatWithCompiledPattern(wallClockMs: number, p: CompiledPattern): string {
  const d = new Date(wallClockMs);
  const field: Record<Token, number> = {
    yyyy: d.getUTCFullYear(), MM: d.getUTCMonth() + 1, dd: d.getUTCDate(), HH: d.getUTCHours(),
    mm: d.getUTCMinutes(), ss: d.getUTCSeconds(), SSS: d.getUTCMilliseconds(),
  };
  return p.parts.map((part) => ('text' in part ? part.text : String(field[part.token]).padStart(WIDTH[part.token], '0'))).join('');
}

/*
 * Two, three or four digits at `pos`, or a negative number: the callers refuse any value below zero. Only the
 * digits after the first need a test of their own: a first character below "0" is a negative leading digit, which
 * makes the whole negative (-1 * 10 + 9 < 0), and so does a -1 from the digits after it.
 */
function digits2(text: string, pos: number): number {
  const a = text.charCodeAt(pos) - ZERO;
  const b = text.charCodeAt(pos + 1) - ZERO;
  return a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}
function digits3(text: string, pos: number): number {
  const a = text.charCodeAt(pos) - ZERO;
  const rest = digits2(text, pos + 1);
  return a <= 9 && rest >= 0 ? a * 100 + rest : -1;
}
function digits4(text: string, pos: number): number {
  const lo = digits2(text, pos + 2);
  return lo < 0 ? -1 : digits2(text, pos) * 100 + lo;
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export const daysInMonth = (y: number, m: number) => (m === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[m - 1]!);

/**
 * Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). Equal to
 * Date.UTC(y, m - 1, d) / 86400000 for every year Date.UTC reads as itself, and right for years 0-99
 * too, which Date.UTC would move to the 1900s. Pure arithmetic: no Date object, no time zone.
 */
export function epochDay(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function matchLiterals(text: string, p: CompiledPattern): boolean {
  if (text.length !== p.length) return false;
  for (const [pos, code] of p.literals) if (text.charCodeAt(pos) !== code) return false;
  return true;
}

/** The date part of a value per its pattern, as epoch days; NaN with a reason when invalid. */
function parseDatePart(text: string, p: CompiledPattern): number {
  if (!matchLiterals(text, p)) return fail(text.length === 0 ? 'empty' : `does not match the pattern "${p.pattern}": ${show(text)}`);
  const y = digits4(text, p.at.yyyy);
  const m = digits2(text, p.at.MM);
  const d = digits2(text, p.at.dd);
  if (y < 0 || m < 0 || d < 0) return fail(`does not match the pattern "${p.pattern}": ${show(text)}`);
  if (m < 1 || m > 12) return fail(`month ${m} out of range: ${show(text)}`);
  if (d < 1 || d > daysInMonth(y, m)) return fail(`day ${d} does not exist in ${y}-${String(m).padStart(2, '0')}: ${show(text)}`);
  return epochDay(y, m, d);
}

/** A date as days since 1970-01-01 (Parquet DATE); NaN with failureReason when invalid. */
export function parseDate(text: string, p: CompiledPattern): number {
  return parseDatePart(text, p);
}

/**
 * A wall-clock timestamp as milliseconds since 1970-01-01T00:00:00 of the same wall clock (Parquet
 * TIMESTAMP(MILLIS, isAdjustedToUTC=false)): no zone is applied, the gateway's clock is kept as is.
 */
export function parseTimestamp(text: string, p: CompiledPattern): number {
  const day = parseDatePart(text, p);
  if (Number.isNaN(day)) return day;
  const h = digits2(text, p.at.HH);
  const mi = digits2(text, p.at.mm);
  // Seconds and milliseconds are optional in a pattern ("HH:mm", "HH:mm:ss.SSS"); absent, they are zero.
  const s = p.at.ss === -1 ? 0 : digits2(text, p.at.ss);
  const ms = p.at.SSS === -1 ? 0 : digits3(text, p.at.SSS);
  if (h < 0 || mi < 0 || s < 0 || ms < 0) return fail(`does not match the pattern "${p.pattern}": ${show(text)}`);
  if (h > 23) return fail(`hour ${h} out of range: ${show(text)}`);
  if (mi > 59) return fail(`minute ${mi} out of range: ${show(text)}`);
  if (s > 59) return fail(`second ${s} out of range: ${show(text)}`);
  return day * 86_400_000 + (h * 3600 + mi * 60 + s) * 1000 + ms;
}
