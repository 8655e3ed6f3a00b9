import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigurationError } from '../../functions/core/errors.js';
import {
  addDays,
  addSeconds,
  formatLocalDateTime,
  instantAt,
  formatWithPattern,
  lastCompleteWindow,
  parseLocalDateTime,
  parseWindowSize,
  wallClockIn,
  windowsBetween,
  windowsStartingIn,
  windowStamp,
  withLookback,
  type ReportWindow,
  type WindowSize,
} from '../../functions/core/time/window.js';

const DAY: WindowSize = { unit: 'day', count: 1 };
const HOUR: WindowSize = { unit: 'hour', count: 1 };

/** A window as "start/end" in ISO wall-clock form, for readable assertions. */
const show = (w: ReportWindow) => `${formatLocalDateTime(w.start)}/${formatLocalDateTime(w.end)}`;

describe('parseWindowSize', () => {
  it('reads days and hours that divide a day', () => {
    assert.deepEqual(parseWindowSize('P1D'), DAY);
    assert.deepEqual(parseWindowSize('P7D'), { unit: 'day', count: 7 });
    assert.deepEqual(parseWindowSize('PT1H'), HOUR);
    assert.deepEqual(parseWindowSize('PT6H'), { unit: 'hour', count: 6 });
  });

  it('refuses zero, hours not dividing 24 and other shapes', () => {
    for (const bad of ['P0D', 'PT0H', 'PT5H', 'PT7H', 'P1W', '1D', 'P1DT1H', '']) {
      assert.throws(() => parseWindowSize(bad), ConfigurationError, bad);
    }
  });
});

describe('lastCompleteWindow', () => {
  it('is yesterday, wall-clock midnight to midnight, for a daily report in Europe/Moscow', () => {
    // The shipped schedule fires at 03:15 Moscow time (UTC+3): 00:15 UTC.
    assert.equal(show(lastCompleteWindow(new Date('2026-11-21T00:15:00Z'), 'Europe/Moscow', DAY)), '2026-11-20T00:00:00/2026-11-21T00:00:00');
    // 22:30 UTC on the 20th is already 01:30 on the 21st in Moscow.
    assert.equal(show(lastCompleteWindow(new Date('2026-11-20T22:30:00Z'), 'Europe/Moscow', DAY)), '2026-11-20T00:00:00/2026-11-21T00:00:00');
    // ...but in UTC it is still the 20th, so the last complete day is the 19th: the zone decides.
    assert.equal(show(lastCompleteWindow(new Date('2026-11-20T22:30:00Z'), 'UTC', DAY)), '2026-11-19T00:00:00/2026-11-20T00:00:00');
  });

  it('fired exactly at midnight, takes the day that just ended', () => {
    assert.equal(show(lastCompleteWindow(new Date('2026-11-20T21:00:00Z'), 'Europe/Moscow', DAY)), '2026-11-20T00:00:00/2026-11-21T00:00:00');
  });

  it('stays midnight to midnight across the DST changes in Europe/Berlin', () => {
    // 2026-03-29: clocks go 02:00 CET -> 03:00 CEST (a 23-hour day).
    assert.equal(show(lastCompleteWindow(new Date('2026-03-30T01:15:00Z'), 'Europe/Berlin', DAY)), '2026-03-29T00:00:00/2026-03-30T00:00:00');
    // Fired at 03:15 CEST on the change day itself: the day before.
    assert.equal(show(lastCompleteWindow(new Date('2026-03-29T01:15:00Z'), 'Europe/Berlin', DAY)), '2026-03-28T00:00:00/2026-03-29T00:00:00');
    // 2026-10-25: clocks go 03:00 CEST -> 02:00 CET (a 25-hour day); 03:15 CET is 02:15 UTC.
    assert.equal(show(lastCompleteWindow(new Date('2026-10-26T02:15:00Z'), 'Europe/Berlin', DAY)), '2026-10-25T00:00:00/2026-10-26T00:00:00');
    // Fired at 03:15 CET on the change day itself (clocks went back at 01:00 UTC): the day before.
    assert.equal(show(lastCompleteWindow(new Date('2026-10-25T02:15:00Z'), 'Europe/Berlin', DAY)), '2026-10-24T00:00:00/2026-10-25T00:00:00');
  });

  it('gives the previous hour for hourly windows, across midnight too', () => {
    assert.equal(show(lastCompleteWindow(new Date('2026-11-20T10:05:00Z'), 'UTC', HOUR)), '2026-11-20T09:00:00/2026-11-20T10:00:00');
    assert.equal(show(lastCompleteWindow(new Date('2026-11-20T21:10:00Z'), 'Europe/Moscow', HOUR)), '2026-11-20T23:00:00/2026-11-21T00:00:00');
    assert.equal(
      show(lastCompleteWindow(new Date('2026-11-20T13:00:00Z'), 'UTC', { unit: 'hour', count: 6 })),
      '2026-11-20T06:00:00/2026-11-20T12:00:00',
    );
  });

  it('keeps hourly windows on the wall clock across a DST change', () => {
    // 03:30 CEST on 2026-03-29: the wall clock skipped 02:00-03:00, so that window is empty at the
    // gateway (its Created_date is wall-clock too) but still the "last complete" one.
    assert.equal(show(lastCompleteWindow(new Date('2026-03-29T01:30:00Z'), 'Europe/Berlin', HOUR)), '2026-03-29T02:00:00/2026-03-29T03:00:00');
  });

  it('refuses a zone that is not IANA', () => {
    assert.throws(() => lastCompleteWindow(new Date(), 'Mars/Olympus', DAY), ConfigurationError);
    assert.throws(() => wallClockIn(new Date(), 'MSK+3'), /not an IANA time zone/);
  });

  it('for any instant and zone: a whole day ending at the wall-clock midnight of the firing day', () => {
    const zones = ['UTC', 'Europe/Moscow', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham'];
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }), fc.constantFrom(...zones), (ms, zone) => {
        const fired = new Date(ms);
        const w = lastCompleteWindow(fired, zone, DAY);
        const today = wallClockIn(fired, zone);
        assert.deepEqual(w.end, { ...today, hour: 0, minute: 0, second: 0 });
        assert.deepEqual([w.start.hour, w.start.minute, w.start.second], [0, 0, 0]);
        assert.equal(Date.UTC(w.end.year, w.end.month - 1, w.end.day) - Date.UTC(w.start.year, w.start.month - 1, w.start.day), 86_400_000);
      }),
    );
  });
});

describe('withLookback', () => {
  const w = lastCompleteWindow(new Date('2026-11-21T00:15:00Z'), 'Europe/Moscow', DAY);

  it('adds the windows before, oldest first', () => {
    assert.deepEqual(withLookback(w, DAY, 2).map(show), [
      '2026-11-18T00:00:00/2026-11-19T00:00:00',
      '2026-11-19T00:00:00/2026-11-20T00:00:00',
      '2026-11-20T00:00:00/2026-11-21T00:00:00',
    ]);
  });

  it('is the window alone with no lookback', () => {
    assert.deepEqual(withLookback(w, DAY, 0), [w]);
  });

  it('crosses a month end, a leap day and hours', () => {
    const march1 = { start: parseLocalDateTime('2028-03-01'), end: parseLocalDateTime('2028-03-02') };
    assert.deepEqual(withLookback(march1, DAY, 2).map((x) => formatLocalDateTime(x.start)), [
      '2028-02-28T00:00:00', '2028-02-29T00:00:00', '2028-03-01T00:00:00',
    ]);
    const h = { start: parseLocalDateTime('2026-11-21T00:00'), end: parseLocalDateTime('2026-11-21T01:00') };
    assert.deepEqual(withLookback(h, HOUR, 1).map(show), ['2026-11-20T23:00:00/2026-11-21T00:00:00', '2026-11-21T00:00:00/2026-11-21T01:00:00']);
  });
});

describe('windowsBetween', () => {
  it('covers from inclusive to exclusive', () => {
    assert.deepEqual(windowsBetween(parseLocalDateTime('2026-11-18'), parseLocalDateTime('2026-11-21'), DAY).map(show), [
      '2026-11-18T00:00:00/2026-11-19T00:00:00',
      '2026-11-19T00:00:00/2026-11-20T00:00:00',
      '2026-11-20T00:00:00/2026-11-21T00:00:00',
    ]);
  });

  it('is empty when from equals to, and starts at the window holding a mid-window from', () => {
    assert.deepEqual(windowsBetween(parseLocalDateTime('2026-11-20'), parseLocalDateTime('2026-11-20'), DAY), []);
    assert.deepEqual(windowsBetween(parseLocalDateTime('2026-11-20T15:00'), parseLocalDateTime('2026-11-21'), DAY).map(show), [
      '2026-11-20T00:00:00/2026-11-21T00:00:00',
    ]);
  });

  it('steps hours across midnight', () => {
    assert.deepEqual(
      windowsBetween(parseLocalDateTime('2026-12-31T22:00'), parseLocalDateTime('2027-01-01T02:00'), HOUR).map((w) => formatLocalDateTime(w.start)),
      ['2026-12-31T22:00:00', '2026-12-31T23:00:00', '2027-01-01T00:00:00', '2027-01-01T01:00:00'],
    );
  });

  it('gives contiguous windows for any range', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 60 }), (offsetDays, lengthDays) => {
        const from = new Date(Date.UTC(2020, 0, 1) + offsetDays * 86_400_000).toISOString().slice(0, 10);
        const to = new Date(Date.UTC(2020, 0, 1) + (offsetDays + lengthDays) * 86_400_000).toISOString().slice(0, 10);
        const ws = windowsBetween(parseLocalDateTime(from), parseLocalDateTime(to), DAY);
        assert.equal(ws.length, lengthDays);
        ws.slice(1).forEach((w, i) => assert.deepEqual(w.start, ws[i]!.end));
      }),
    );
  });
});

describe('windowsStartingIn (every caller lists windows through it)', () => {
  // 2026-11-22T16:30Z is 2026-11-23 01:30 in Tokyo: the 22nd is the last complete day there.
  const now = new Date('2026-11-22T16:30:00Z');
  const daily = { window: 'P1D', schedule: { cron: 'cron(0 3 * * ? *)', timeZone: 'Asia/Tokyo' } };
  const range = (from?: string, to?: string) => ({ ...(from ? { from: parseLocalDateTime(from) } : {}), ...(to ? { to: parseLocalDateTime(to) } : {}) });

  it('without bounds: the last complete window in the report\'s zone, as a scheduled run fetches it', () => {
    assert.deepEqual(windowsStartingIn(daily, {}, now).map(show), ['2026-11-22T00:00:00/2026-11-23T00:00:00']);
    assert.deepEqual(windowsStartingIn(daily, {}, now), [{
      start: { year: 2026, month: 11, day: 22, hour: 0, minute: 0, second: 0 },
      end: { year: 2026, month: 11, day: 23, hour: 0, minute: 0, second: 0 },
    }]);
  });

  it('a missing from starts at the last complete window; a missing to ends where the current window starts', () => {
    assert.deepEqual(windowsStartingIn(daily, range(undefined, '2026-11-25'), now).map((w) => formatLocalDateTime(w.start)), ['2026-11-22T00:00:00', '2026-11-23T00:00:00', '2026-11-24T00:00:00']);
    assert.deepEqual(windowsStartingIn(daily, range('2026-11-20'), now).map((w) => formatLocalDateTime(w.start)), ['2026-11-20T00:00:00', '2026-11-21T00:00:00', '2026-11-22T00:00:00']);
  });

  it('with both bounds: exactly windowsBetween, no schedule needed, empty for an empty range', () => {
    const both = range('2026-11-01T05:00', '2026-11-04');
    // From is floored to its window's start: 05:00 on the 1st asks for the 1st's window.
    const days = windowsStartingIn({ window: 'P1D' }, { from: both.from!, to: both.to! });
    assert.deepEqual(days.map((w) => `${formatLocalDateTime(w.start)}/${formatLocalDateTime(w.end)}`), [
      '2026-11-01T00:00:00/2026-11-02T00:00:00',
      '2026-11-02T00:00:00/2026-11-03T00:00:00',
      '2026-11-03T00:00:00/2026-11-04T00:00:00',
    ]);
    assert.deepEqual(windowsStartingIn({ window: 'PT6H' }, { from: parseLocalDateTime('2026-11-04'), to: parseLocalDateTime('2026-11-04') }), []);
  });
});

describe('parseLocalDateTime', () => {
  it('reads dates and date-times', () => {
    assert.deepEqual(parseLocalDateTime('2026-11-20'), { year: 2026, month: 11, day: 20, hour: 0, minute: 0, second: 0 });
    assert.deepEqual(parseLocalDateTime('2026-11-20T10:15'), { year: 2026, month: 11, day: 20, hour: 10, minute: 15, second: 0 });
    assert.deepEqual(parseLocalDateTime('2026-11-20 10:15:30'), { year: 2026, month: 11, day: 20, hour: 10, minute: 15, second: 30 });
    assert.equal(formatLocalDateTime(parseLocalDateTime('2028-02-29')), '2028-02-29T00:00:00');
  });

  it('refuses dates that are not on the calendar, and other shapes', () => {
    for (const bad of ['2026-02-30', '2026-02-29', '2026-13-01', '2026-11-20T24:00:00', '2026-11-20T10:60', '20.11.2026', '2026-11-20Z', 'today']) {
      assert.throws(() => parseLocalDateTime(bad), ConfigurationError, bad);
    }
  });
});

describe('formatWithPattern', () => {
  const t = parseLocalDateTime('2026-01-02T03:04:05');
  it('fills the tokens and copies the rest', () => {
    assert.equal(formatWithPattern(t, 'yyyy-MM-dd HH:mm:ss'), '2026-01-02 03:04:05');
    assert.equal(formatWithPattern(t, 'dd.MM.yyyy'), '02.01.2026');
    assert.equal(formatWithPattern(t, 'yyyy-MM-ddTHH:mm:ss'), '2026-01-02T03:04:05');
    assert.equal(windowStamp(t), '2026-01-02T03-04-05');
  });
});

describe('window sizes, whole', () => {
  it('reads PT12H, PT24H and P7D; refuses hours that do not divide a day, zero, and anything around the text', () => {
    assert.deepEqual(parseWindowSize('PT12H'), { unit: 'hour', count: 12 });
    assert.deepEqual(parseWindowSize('PT24H'), { unit: 'hour', count: 24 });
    assert.deepEqual(parseWindowSize('PT1H'), { unit: 'hour', count: 1 });
    assert.deepEqual(parseWindowSize('P7D'), { unit: 'day', count: 7 });
    assert.deepEqual(parseWindowSize('P10D'), { unit: 'day', count: 10 });
    for (const text of ['xP1D', 'P1Dx', 'xPT1H', 'PT1Hx', 'PT5H', 'PT0H', 'P0D', 'PT01H', 'P1', 'PT1.5H', 'P1DT1H', 'PT48H', '']) {
      assert.throws(
        () => parseWindowSize(text),
        (e: unknown) => e instanceof ConfigurationError && e.message === `window "${text}" must be "P<n>D" (days) or "PT<n>H" (hours dividing 24).`,
        text,
      );
    }
  });

  it('PT12H windows start at midnight and noon; from is floored to its window, to is exclusive', () => {
    const halves = windowsBetween(parseLocalDateTime('2026-11-20T06:00'), parseLocalDateTime('2026-11-21T13:00'), parseWindowSize('PT12H'));
    assert.deepEqual(halves.map((w) => `${formatLocalDateTime(w.start)}/${formatLocalDateTime(w.end)}`), [
      '2026-11-20T00:00:00/2026-11-20T12:00:00',
      '2026-11-20T12:00:00/2026-11-21T00:00:00',
      '2026-11-21T00:00:00/2026-11-21T12:00:00',
      '2026-11-21T12:00:00/2026-11-22T00:00:00',
    ]);
  });
});

describe('wall-clock arithmetic', () => {
  it('moves by whole seconds and days across month and leap-day ends', () => {
    assert.equal(formatLocalDateTime(addSeconds(parseLocalDateTime('2028-02-28T23:59:30'), 45)), '2028-02-29T00:00:15');
    assert.equal(formatLocalDateTime(addSeconds(parseLocalDateTime('2026-01-01'), -1)), '2025-12-31T23:59:59');
    assert.equal(formatLocalDateTime(addDays(parseLocalDateTime('2026-02-28T07:00'), 1)), '2026-03-01T07:00:00');
  });

  it('parses surrounding spaces away, and names the text it refuses', () => {
    assert.equal(formatLocalDateTime(parseLocalDateTime(' 2026-11-20T10:15 ')), '2026-11-20T10:15:00');
    for (const text of ['2026-11-20x', 'x2026-11-20', '2026-11-20T10', '2026-11-20T10:15:30:00', '26-11-20']) {
      assert.throws(() => parseLocalDateTime(text), (e: unknown) => e instanceof ConfigurationError && e.message === `"${text}" is not a date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:mm).`, text);
    }
  });

  it('a wall time the clocks pass twice is its first instant; one they skip, the instant an hour on (as java.time reads them)', () => {
    // Europe/Berlin: 02:30 on 25 Oct 2026 happens at 00:30Z (CEST) and 01:30Z (CET); 02:30 on 29 Mar 2026 never happens.
    assert.equal(instantAt(parseLocalDateTime('2026-10-25T02:30'), 'Europe/Berlin'), 1792888200000);
    assert.equal(instantAt(parseLocalDateTime('2026-03-29T02:30'), 'Europe/Berlin'), 1774747800000);
    assert.deepEqual(wallClockIn(new Date(1792888200000), 'Europe/Berlin'), { year: 2026, month: 10, day: 25, hour: 2, minute: 30, second: 0 });
  });
});
