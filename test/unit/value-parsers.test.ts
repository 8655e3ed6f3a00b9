import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigurationError } from '../../functions/core/errors.js';
import {
  NEEDS_BIGINT,
  compilePattern,
  formatWithCompiledPattern,
  epochDay,
  failureReason,
  parseDate,
  parseDecimal,
  parseInt64,
  parseSafeDecimal,
  parseSafeInteger,
  parseTimestamp,
  compileBooleanTokens,
  parseBoolean,
  patternProblem,
} from '../../functions/core/csv/value-parsers.js';

/** A rejection, and its whole reason: it goes into the rejects file as is, where a user reads it. */
const rejects = (value: bigint | number | undefined, why: string) => {
  assert.ok(value === undefined || Number.isNaN(value), `expected a rejection, got ${String(value)}`);
  assert.equal(failureReason(), why);
};
/** The reason a non-empty text is refused with: the kind, then the text as JSON. */
const refusedAs = (kind: string, text: string) => (text === '' ? 'empty' : `${kind}: ${JSON.stringify(text)}`);

describe('bigint', () => {
  it('reads ids above 2^53 exactly', () => {
    assert.equal(parseInt64('9007199254740993'), 9007199254740993n);
    assert.equal(parseInt64('9223372036854775807'), 2n ** 63n - 1n);
    assert.equal(parseInt64('-9223372036854775808'), -(2n ** 63n));
    assert.equal(parseInt64('+0042'), 42n);
    assert.equal(parseInt64('-0'), 0n);
  });

  it('takes the fast path up to 15 digits and says when it cannot', () => {
    assert.equal(parseSafeInteger('999999999999999'), 999999999999999);
    assert.equal(parseSafeInteger('000000000000000000001'), 1);
    assert.equal(parseSafeInteger('9007199254740993'), NEEDS_BIGINT);
  });

  it('rejects what is not an int64, saying why', () => {
    for (const text of ['', '+', '-', '1.0', '1e3', ' 1', '1 ', '0x10', '1_000', '١٢']) rejects(parseInt64(text), refusedAs('not an integer', text));
    rejects(parseInt64('9223372036854775808'), 'integer out of the bigint (int64) range: "9223372036854775808"');
    rejects(parseInt64('-9223372036854775809'), 'integer out of the bigint (int64) range: "-9223372036854775809"');
  });

  it('round-trips every int64, with signs and leading zeros', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom('', '+', '00'), (n, prefix) => {
        const text = n < 0n ? `-${prefix === '+' ? '' : prefix}${-n}` : `${prefix}${n}`;
        assert.equal(parseInt64(text), n);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('decimal (exact, through integers)', () => {
  it('scales the text into an unscaled integer', () => {
    assert.equal(parseDecimal('-1234.5', 18, 3), -1234500n);
    assert.equal(parseDecimal('1234.567', 18, 3), 1234567n);
    assert.equal(parseDecimal('+0.001', 18, 3), 1n);
    assert.equal(parseDecimal('-0.000', 18, 3), 0n);
    assert.equal(parseDecimal('.5', 18, 3), 500n);
    assert.equal(parseDecimal('5.', 18, 3), 5000n);
    assert.equal(parseDecimal('1.2500', 18, 3), 1250n, 'extra fractional zeros are fine');
    assert.equal(parseDecimal('007', 18, 3), 7000n);
    assert.equal(parseDecimal('999999999999999.999', 18, 3), 999999999999999999n);
    assert.equal(parseDecimal('-999999999999999.999', 18, 3), -999999999999999999n);
    assert.equal(parseDecimal('12', 2, 0), 12n);
  });

  it('never rounds: 0.1 + 0.2 style values stay exact', () => {
    assert.equal(parseDecimal('0.3', 18, 3), 300n);
    assert.equal(parseDecimal('1000000000000.001', 18, 3), 1000000000000001n); // beyond a double's 15.9 digits
  });

  it('rejects garbage, exponents, separators and too many digits, saying why', () => {
    for (const text of ['', '-', '.', '+.', '1e5', '1E5', '1,5', '1 000', ' 1', '1.2.3', '--1', 'NaN', 'Infinity', '0x1A', '12a.5']) {
      rejects(parseDecimal(text, 18, 3), refusedAs('not a decimal', text));
    }
    rejects(parseDecimal('1.2345', 18, 3), 'more than 3 fractional digits for decimal(18,3): "1.2345"');
    rejects(parseDecimal('1234567890123456', 18, 3), 'more than 15 integer digits for decimal(18,3): "1234567890123456"');
    rejects(parseDecimal('123', 4, 2), 'more than 2 integer digits for decimal(4,2): "123"');
    rejects(parseDecimal('1.2345.6', 18, 3), 'not a decimal: "1.2345.6"');
  });

  it('round-trips every decimal(18,3) and agrees with the fast path', () => {
    const max = 10n ** 18n - 1n;
    fc.assert(
      fc.property(fc.bigInt({ min: -max, max }), fc.integer({ min: 0, max: 3 }), (unscaled, frac) => {
        // print with `frac` fractional digits when the value allows it, padding with zeros otherwise
        const abs = unscaled < 0n ? -unscaled : unscaled;
        const intPart = abs / 1000n;
        const fracDigits = String(abs % 1000n).padStart(3, '0');
        const shown = fracDigits.slice(0, frac);
        if (fracDigits.slice(frac) !== '0'.repeat(3 - frac)) return; // would need more digits than `frac`
        const text = `${unscaled < 0n ? '-' : ''}${intPart}${frac ? `.${shown}` : ''}`;
        assert.equal(parseDecimal(text, 18, 3), unscaled);
        const fast = parseSafeDecimal(text, 18, 3);
        if (fast !== NEEDS_BIGINT) assert.equal(BigInt(fast), unscaled);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('timestamp and date patterns', () => {
  const ts = compilePattern('yyyy-MM-dd HH:mm:ss', 'timestamp');
  const day = compilePattern('dd.MM.yyyy', 'date');

  it('reads wall-clock times as UTC arithmetic, no zone applied', () => {
    assert.equal(parseTimestamp('2026-11-20 23:59:59', ts), Date.UTC(2026, 10, 20, 23, 59, 59));
    assert.equal(parseTimestamp('1970-01-01 00:00:00', ts), 0);
    assert.equal(parseTimestamp('1969-12-31 23:59:59', ts), -1000);
    assert.equal(parseDate('21.11.2026', day), Date.UTC(2026, 10, 21) / 86_400_000);
    assert.equal(parseDate('29.02.2024', day), Date.UTC(2024, 1, 29) / 86_400_000);
    assert.equal(parseDate('01.01.0050', day), epochDay(50, 1, 1), 'years below 100 stay themselves');
  });

  it('validates ranges and shapes, saying why', () => {
    rejects(parseTimestamp('2026-13-01 00:00:00', ts), 'month 13 out of range: "2026-13-01 00:00:00"');
    rejects(parseTimestamp('2026-00-01 00:00:00', ts), 'month 0 out of range: "2026-00-01 00:00:00"');
    rejects(parseTimestamp('2026-04-31 00:00:00', ts), 'day 31 does not exist in 2026-04: "2026-04-31 00:00:00"');
    rejects(parseDate('29.02.2025', day), 'day 29 does not exist in 2025-02: "29.02.2025"');
    rejects(parseDate('29.02.1900', day), 'day 29 does not exist in 1900-02: "29.02.1900"');
    rejects(parseTimestamp('2026-11-20 24:00:00', ts), 'hour 24 out of range: "2026-11-20 24:00:00"');
    rejects(parseTimestamp('2026-11-20 23:60:00', ts), 'minute 60 out of range: "2026-11-20 23:60:00"');
    rejects(parseTimestamp('2026-11-20 23:59:60', ts), 'second 60 out of range: "2026-11-20 23:59:60"');
    for (const text of ['', '2026-11-20', '2026-11-20T23:59:59', '2026/11/20 23:59:59', '2026-1-20 23:59:59', '2026-11-20 23:59:5x', ' 2026-11-20 23:59:59']) {
      rejects(parseTimestamp(text, ts), refusedAs('does not match the pattern "yyyy-MM-dd HH:mm:ss"', text));
    }
    rejects(parseDate('2026-11-21', day), 'does not match the pattern "dd.MM.yyyy": "2026-11-21"');
  });

  it('agrees with Date.UTC on every day of years 100-9999', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(Date.UTC(100, 0, 1)), max: new Date(Date.UTC(9999, 11, 31, 23, 59, 59)), noInvalidDate: true }), (d) => {
        const wall = new Date(Math.floor(d.getTime() / 1000) * 1000);
        const p = (n: number, w = 2) => String(n).padStart(w, '0');
        const text = `${p(wall.getUTCFullYear(), 4)}-${p(wall.getUTCMonth() + 1)}-${p(wall.getUTCDate())} ${p(wall.getUTCHours())}:${p(wall.getUTCMinutes())}:${p(wall.getUTCSeconds())}`;
        assert.equal(parseTimestamp(text, ts), wall.getTime());
        assert.equal(epochDay(wall.getUTCFullYear(), wall.getUTCMonth() + 1, wall.getUTCDate()), Math.floor(wall.getTime() / 86_400_000));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the patterns users meet: minutes, milliseconds, the ISO T, slashes both ways, no separators', () => {
    const cases: Array<[string, 'timestamp' | 'date', string, number]> = [
      ['dd.MM.yyyy HH:mm', 'timestamp', '21.11.2026 07:05', Date.UTC(2026, 10, 21, 7, 5)],
      ['yyyy-MM-dd HH:mm:ss.SSS', 'timestamp', '2026-11-21 07:05:09.047', Date.UTC(2026, 10, 21, 7, 5, 9, 47)],
      ["yyyy-MM-dd'T'HH:mm:ss", 'timestamp', '2026-11-21T23:59:59', Date.UTC(2026, 10, 21, 23, 59, 59)],
      ['yyyy-MM-ddTHH:mm:ss.SSS', 'timestamp', '2026-11-21T00:00:00.999', Date.UTC(2026, 10, 21, 0, 0, 0, 999)],
      ['dd/MM/yyyy', 'date', '02/11/2026', Date.UTC(2026, 10, 2) / 86_400_000],
      ['MM/dd/yyyy', 'date', '11/02/2026', Date.UTC(2026, 10, 2) / 86_400_000],
      ['yyyyMMdd', 'date', '20261102', Date.UTC(2026, 10, 2) / 86_400_000],
    ];
    for (const [pattern, kind, text, expected] of cases) {
      const p = compilePattern(pattern, kind);
      assert.equal(kind === 'date' ? parseDate(text, p) : parseTimestamp(text, p), expected, `${pattern} on ${text}`);
      // Formatting is the inverse, to the millisecond (the simulator writes values with it).
      assert.equal(formatWithCompiledPattern(kind === 'date' ? expected * 86_400_000 : expected, p), text, `format ${pattern}`);
    }
    const iso = compilePattern("yyyy-MM-dd'T'HH:mm:ss", 'timestamp');
    rejects(parseTimestamp('2026-11-21 23:59:59', iso), `does not match the pattern "yyyy-MM-dd'T'HH:mm:ss": "2026-11-21 23:59:59"`);
    rejects(parseTimestamp('2026-11-21 07:05:09.04x', compilePattern('yyyy-MM-dd HH:mm:ss.SSS', 'timestamp')), 'does not match the pattern "yyyy-MM-dd HH:mm:ss.SSS": "2026-11-21 07:05:09.04x"');
    rejects(parseDate('13/02/2026', compilePattern('MM/dd/yyyy', 'date')), 'month 13 out of range: "13/02/2026"');
  });

  it('refuses patterns it cannot read exactly, listing the supported tokens', () => {
    assert.throws(() => compilePattern('yy-MM-dd', 'date'), /"y", which is not a supported token.*supported tokens: yyyy/);
    assert.throws(() => compilePattern('yyyy-MM-dd hh:mm', 'timestamp'), /"h", which is not a supported token/);
    assert.throws(() => compilePattern('yyyy-MM-dd HH:mm:ss.S', 'timestamp'), /"S", which is not a supported token/);
    assert.throws(() => compilePattern('yyyy-MM-dd HH:mm.SSS', 'timestamp'), /SSS without ss/);
    assert.throws(() => compilePattern('yyyy-MM-dd HH:mm', 'date'), /time tokens/);
    assert.throws(() => compilePattern('yyyy-MM-dd', 'timestamp'), /lacks HH, mm for a timestamp/);
    assert.throws(() => compilePattern('yyyy-MM-dd-dd', 'date'), /twice/);
    assert.throws(() => compilePattern("yyyy-MM-dd'T", 'date'), /unclosed quote/);
    assert.throws(() => compilePattern('yy-MM-dd', 'date'), ConfigurationError);
  });

  it('reads booleans: true/false, 1/0, yes/no in any case by default, or the column\'s own tokens', () => {
    const defaults = compileBooleanTokens();
    for (const t of ['true', 'TRUE', 'True', '1', 'yes', 'YES', 'Yes', 'yEs']) assert.equal(parseBoolean(t, defaults), 1, t);
    for (const t of ['false', 'FALSE', 'False', '0', 'no', 'NO', 'No']) assert.equal(parseBoolean(t, defaults), 0, t);
    for (const t of ['t', 'f', 'y', 'n', '2', ' true', 'true ', 'on', '-1']) {
      rejects(parseBoolean(t, defaults), `not a boolean: ${JSON.stringify(t)} (the column reads "true", "1", "yes", "false", "0", "no", in any case)`);
    }
    const own = compileBooleanTokens({ true: ['Y'], false: ['N'] });
    assert.equal(parseBoolean('Y', own), 1);
    assert.equal(parseBoolean('n', own), 0);
    rejects(parseBoolean('true', own), 'not a boolean: "true" (the column reads "y", "n", in any case)');
  });
});

/**
 * The edges issue 36 found unguarded. Epoch days and milliseconds are literals worked out with Python's datetime
 * (`(date(2000, 2, 29) - date(1970, 1, 1)).days` is 11016), not with the parsers.
 */
describe('value edges', () => {
  const ts = compilePattern('yyyy-MM-dd HH:mm:ss', 'timestamp');
  const day = compilePattern('dd.MM.yyyy', 'date');

  it('29 February 2000 exists (the 400-year rule); 1900 and 2100 have none', () => {
    assert.equal(parseDate('29.02.2000', day), 11016);
    rejects(parseDate('29.02.1900', day), 'day 29 does not exist in 1900-02: "29.02.1900"');
    rejects(parseDate('29.02.2100', day), 'day 29 does not exist in 2100-02: "29.02.2100"');
    assert.equal(parseDate('28.02.2100', day), 47540);
  });

  it('a non-digit in any field, day 00 and text after the seconds are refused', () => {
    const shape = (text: string) => `does not match the pattern "yyyy-MM-dd HH:mm:ss": ${JSON.stringify(text)}`;
    for (const text of ['2x26-11-20 13:05:09', '202x-11-20 13:05:09', '2026-1x-20 13:05:09', '2026-11-2x 13:05:09', '2026-11-20 1x:05:09', '2026-11-20 13:0x:09', '2026-11-20 13:05:09x', '2026-11-20 13:05:09 ']) {
      rejects(parseTimestamp(text, ts), shape(text));
    }
    rejects(parseTimestamp('2026-11-00 13:05:09', ts), 'day 0 does not exist in 2026-11: "2026-11-00 13:05:09"');
    rejects(parseDate('00.11.2026', day), 'day 0 does not exist in 2026-11: "00.11.2026"');
    assert.equal(parseTimestamp('2026-11-20 13:05:09', ts), 1795179909000);
    assert.equal(parseTimestamp('2026-11-30 23:59:59', ts), 1796083199000);
  });

  it('an int64 is decimal digits only: hexadecimal, octal and binary text are refused on the BigInt path too', () => {
    for (const text of ['0x10000000000000000', '0o7777777777777777777', '0b11111111111111111111', '0x7FFFFFFFFFFFFFFF']) {
      rejects(parseInt64(text), refusedAs('not an integer', text));
    }
    assert.equal(parseSafeInteger('-0000000000000000000012'), -12, 'leading zeros are not digits');
    assert.equal(parseSafeInteger('1000000000000000'), NEEDS_BIGINT);
    assert.equal(parseInt64('1000000000000000'), 1000000000000000n);
    assert.equal(parseSafeInteger('-0'), 0);
    assert.ok(Object.is(parseSafeInteger('-0'), 0), 'never a negative zero');
  });

  it('decimal(18,3): whole amounts on both paths, zeros that do not count, a non-digit in the fraction', () => {
    assert.equal(parseDecimal('123456789012345', 18, 3), 123456789012345000n, 'BigInt path, no point');
    assert.equal(parseDecimal('-123456789012345', 18, 3), -123456789012345000n);
    assert.equal(parseDecimal('+123456789012345.5', 18, 3), 123456789012345500n);
    assert.equal(parseDecimal('12', 18, 3), 12000n, 'fast path, no point');
    assert.equal(parseDecimal('12.', 18, 3), 12000n);
    assert.equal(parseDecimal('.5', 18, 3), 500n);
    assert.equal(parseDecimal('-0.000', 18, 3), 0n);
    assert.equal(parseDecimal('1.2000000', 18, 3), 1200n, 'trailing zeros past the scale are not digits');
    assert.equal(parseDecimal('000000000000000000012.5', 18, 3), 12500n, 'leading zeros do not count toward the 15 integer digits');
    assert.equal(parseDecimal('999999999999999.999', 18, 3), 999999999999999999n);
    assert.equal(parseSafeDecimal('99999999999.9999', 15, 4), 999999999999999, '15 digits stay on the fast path');
    assert.equal(parseSafeDecimal('999999999999.9999', 16, 4), NEEDS_BIGINT);
    rejects(parseDecimal('1.2x', 18, 3), 'not a decimal: "1.2x"');
    rejects(parseDecimal('1.0005x', 18, 3), 'not a decimal: "1.0005x"');
    rejects(parseDecimal('12x345678901234567', 18, 3), 'not a decimal: "12x345678901234567"');
    rejects(parseDecimal('1234567890123456', 18, 3), 'more than 15 integer digits for decimal(18,3): "1234567890123456"');
    rejects(parseDecimal('1.2345', 18, 3), 'more than 3 fractional digits for decimal(18,3): "1.2345"');
    assert.equal(parseDecimal('7', 10, 0), 7n, 'scale 0');
    rejects(parseDecimal('7.5', 10, 0), 'more than 0 fractional digits for decimal(10,0): "7.5"');
  });

  it('a date pattern needs yyyy, MM and dd; a timestamp HH and mm besides', () => {
    const lacks = (pattern: string, kind: 'date' | 'timestamp', missing: string) =>
      assert.throws(() => compilePattern(pattern, kind), (e: unknown) => e instanceof ConfigurationError && e.message.startsWith(`pattern "${pattern}" lacks ${missing} for a ${kind}; supported tokens:`));
    lacks('MM-dd', 'date', 'yyyy');
    lacks('yyyy-dd', 'date', 'MM');
    lacks('yyyy-MM', 'date', 'dd');
    lacks('yyyy-MM-dd mm', 'timestamp', 'HH');
    lacks('yyyy-MM-dd HH', 'timestamp', 'mm');
    assert.throws(() => compilePattern('yyyy-MM-dd ss', 'date'), /is a date pattern with time tokens/);
    assert.throws(() => compilePattern('yyyy-MM-dd SSS', 'date'), /is a date pattern with time tokens/);
    const quoted = compilePattern("yyyy''MM''dd", 'date');
    assert.equal(parseDate("2026'11'20", quoted), 20777, "'' is a quote character");
  });
});

/**
 * Cases mutation testing found unguarded (issue 36): each one fails on a small wrong change to the parsers. Epoch
 * days are literals from DuckDB (`date_diff('day', DATE '1970-01-01', DATE '0000-01-01')` is -719528).
 */
describe('value edges mutation testing found', () => {
  it('a value in a reason is shown whole up to 40 characters, cut with an ellipsis after', () => {
    rejects(parseSafeInteger(`${'9'.repeat(39)}x`), `not an integer: "${'9'.repeat(39)}x"`);
    rejects(parseSafeInteger(`${'9'.repeat(40)}x`), `not an integer: "${'9'.repeat(40)}…"`);
  });

  it('an int64 past 15 digits is digits only: a space, a point or a sign inside is refused, not left to BigInt', () => {
    // BigInt() itself reads "12345678901234567 " as 12345678901234567n and throws on "1234567890123456.0".
    for (const text of ['12345678901234567 ', ' 12345678901234567', '1234567890123456.0', '12345678-901234567', '1234567890123456:']) {
      rejects(parseInt64(text), refusedAs('not an integer', text));
    }
  });

  it('too many integer digits is said only of a decimal that is otherwise well formed', () => {
    const tooLong = (text: string) => `more than 15 integer digits for decimal(18,3): ${JSON.stringify(text)}`;
    rejects(parseDecimal('1234567890123456.5', 18, 3), tooLong('1234567890123456.5'));
    rejects(parseDecimal('1234567890123456.90', 18, 3), tooLong('1234567890123456.90'));
    for (const text of ['1234567890123456x', '1234567890123456.5.5', '1234567890123456.5/', '1234567890123456:']) {
      rejects(parseDecimal(text, 18, 3), refusedAs('not a decimal', text));
    }
    rejects(parseDecimal('1.00090', 18, 3), 'more than 3 fractional digits for decimal(18,3): "1.00090"');
    rejects(parseDecimal('1.0009x', 18, 3), 'not a decimal: "1.0009x"');
  });

  it('decimal(18,16): zeros after the point before the first digit do not count toward the 15 a double holds', () => {
    assert.equal(parseSafeDecimal('0.0000000000000001', 18, 16), 1);
    assert.equal(parseSafeDecimal('-0.0000000000000001', 18, 16), -1);
    assert.equal(parseSafeDecimal('0.1000000000000001', 18, 16), NEEDS_BIGINT, '16 digits');
    assert.equal(parseDecimal('0.9999999999999999', 18, 16), 9999999999999999n, 'one more than a double holds exactly');
    assert.equal(parseSafeDecimal('0', 18, 16), 0, 'zero at any scale stays on the fast path');
    assert.equal(parseSafeDecimal('5', 18, 14), 500000000000000);
    assert.equal(parseSafeDecimal('5', 18, 15), NEEDS_BIGINT, '5 followed by 15 zeros is 16 digits');
    assert.ok(Object.is(parseSafeDecimal('-0.000', 18, 3), 0), 'never a negative zero');
    assert.ok(Object.is(parseSafeDecimal('-0', 10, 0), 0), 'never a negative zero');
  });

  it('a sign and a point around no digit kept at scale 0 read as zero', () => {
    assert.equal(parseDecimal('-.0', 10, 0), 0n);
    assert.equal(parseDecimal('+.0', 10, 0), 0n);
    assert.equal(parseDecimal('-5.', 10, 0), -5n);
  });

  it('every digit of every field refuses the characters just below "0" and just above "9"', () => {
    const p = compilePattern('yyyy-MM-dd HH:mm:ss.SSS', 'timestamp');
    // A first millisecond digit above 0: "9x7" must not read as 9 * 100 - 1.
    const good = '2026-11-20 13:05:09.947';
    assert.equal(parseTimestamp(good, p), 1795179909947);
    const digitsAt = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];
    for (const at of digitsAt) {
      for (const c of ['/', ':']) {
        const text = `${good.slice(0, at)}${c}${good.slice(at + 1)}`;
        rejects(parseTimestamp(text, p), `does not match the pattern "yyyy-MM-dd HH:mm:ss.SSS": ${JSON.stringify(text)}`);
      }
    }
  });

  it('year 0000 is a year (1 BC, a leap year in the proleptic calendar)', () => {
    const day = compilePattern('yyyy-MM-dd', 'date');
    assert.equal(parseDate('0000-01-01', day), -719528);
    assert.equal(parseDate('0000-02-29', day), -719469);
    assert.equal(parseDate('9999-12-31', day), 2932896);
  });

  it('a refused pattern says which tokens it may hold, how literals are written, and gives examples', () => {
    for (const [pattern, kind] of [['yy-MM-dd', 'date'], ['MM-dd HH:mm', 'timestamp']] as const) {
      const message = patternProblem(pattern, kind) ?? '';
      assert.ok(message.startsWith(`pattern "${pattern}" `), message);
      for (const part of [
        'supported tokens: yyyy (year), MM (month), dd (day), HH (hour 00-23), mm (minute), ss (second), SSS (millisecond, after ss); ',
        "every token zero-padded; other characters are literal, letters in single quotes ('T') except a bare T; ",
        'for example "yyyy-MM-dd HH:mm:ss", "dd.MM.yyyy HH:mm"',
      ]) {
        assert.ok(message.includes(part), `${message} lacks ${part}`);
      }
    }
    assert.equal(patternProblem('dd.MM.yyyy', 'date'), null);
    assert.equal(patternProblem('dd.MM.yyyy HH:mm', 'timestamp'), null);
  });

  it('a timestamp pattern needs yyyy, MM and dd too; a date pattern has no HH and no mm', () => {
    const lacks = (pattern: string, missing: string) => assert.equal(patternProblem(pattern, 'timestamp')?.split(';')[0], `pattern "${pattern}" lacks ${missing} for a timestamp`);
    lacks('MM-dd HH:mm', 'yyyy');
    lacks('yyyy-dd HH:mm', 'MM');
    lacks('yyyy-MM HH:mm', 'dd');
    lacks('dd HH:mm', 'yyyy, MM');
    for (const pattern of ['yyyy-MM-dd HH', 'yyyy-MM-dd mm']) {
      assert.equal(patternProblem(pattern, 'date')?.split(';')[0], `pattern "${pattern}" is a date pattern with time tokens: make the column a timestamp, or the time would be dropped`);
    }
  });

  it('literal text between tokens is kept as one part each, quoted or not', () => {
    const p = compilePattern("dd.MM.yyyy 'um' HH:mm' Uhr'", 'timestamp');
    assert.deepEqual(p.parts, [
      { token: 'dd' }, { text: '.' }, { token: 'MM' }, { text: '.' }, { token: 'yyyy' }, { text: ' um ' },
      { token: 'HH' }, { text: ':' }, { token: 'mm' }, { text: ' Uhr' },
    ]);
    assert.equal(p.length, 23);
    assert.equal(parseTimestamp('20.11.2026 um 13:05 Uhr', p), 1795179900000);
  });

  it('a character outside the basic plane is a literal like any other, quoted or bare', () => {
    // It was refused by a check that could never fire, and a quoted one shifted every later field by one.
    for (const pattern of ["yyyy'😀'MM'😀'dd", 'yyyy😀MM😀dd']) {
      const p = compilePattern(pattern, 'date');
      assert.equal(p.length, 12, pattern);
      assert.equal(parseDate('2026😀11😀20', p), 20777, pattern);
      assert.equal(formatWithCompiledPattern(20777 * 86_400_000, p), '2026😀11😀20', pattern);
      rejects(parseDate('2026😃11😀20', p), `does not match the pattern "${pattern}": "2026😃11😀20"`);
    }
  });
});
