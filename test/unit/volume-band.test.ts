import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectedBand, historyWindows, judgeVolume, median, windowDates, type HistoryValue } from '../../functions/core/quality/volume-band.js';
import { formatLocalDateTime, parseLocalDateTime, parseWindowSize, windowAt, windowRealHours, type ReportWindow } from '../../functions/core/time/window.js';

/** The volume check's arithmetic (functions/core/quality/volume-band.ts): which windows, which band, which verdict. */

const day = (d: string) => windowAt(parseLocalDateTime(d), parseWindowSize('P1D'));
const hours = (t: string, n: number) => windowAt(parseLocalDateTime(t), parseWindowSize(`PT${n}H`));
const starts = (ws: ReportWindow[]) => ws.map((w) => formatLocalDateTime(w.start));
const SETTINGS = { minHistory: 3, lowRatio: 0.5, highRatio: 2, minDifference: 10 };
const history = (window: ReportWindow, values: number[], h = 24): HistoryValue[] =>
  historyWindows(window, { historyWeeks: values.length, skipDates: [] }).map((w, i) => ({ window: w, value: values[i]!, hours: h }));

describe('history windows: the same slot of earlier weeks', () => {
  it('a daily window: the same weekday of the last weeks, newest first, never itself', () => {
    const tuesday = day('2026-11-24');
    assert.deepEqual(starts(historyWindows(tuesday, { historyWeeks: 4, skipDates: [] })), [
      '2026-11-17T00:00:00', '2026-11-10T00:00:00', '2026-11-03T00:00:00', '2026-10-27T00:00:00',
    ]);
  });

  it('a sub-daily window: the same hour of the week', () => {
    const ws = historyWindows(hours('2026-11-24T06:00', 6), { historyWeeks: 2, skipDates: [] });
    assert.deepEqual(ws.map((w) => [formatLocalDateTime(w.start), formatLocalDateTime(w.end)]), [
      ['2026-11-17T06:00:00', '2026-11-17T12:00:00'],
      ['2026-11-10T06:00:00', '2026-11-10T12:00:00'],
    ]);
  });

  it('across a DST change the same wall-clock hour, however long the week really was', () => {
    // Europe/Berlin moves to summer time on 2026-03-29 at 02:00: a week from Wednesday 06:00 to Wednesday 06:00 lasts 167 h.
    const ws = historyWindows(hours('2026-04-01T06:00', 1), { historyWeeks: 2, skipDates: [] });
    assert.deepEqual(starts(ws), ['2026-03-25T06:00:00', '2026-03-18T06:00:00']);
    assert.deepEqual(ws.map((w) => windowRealHours(w, 'Europe/Berlin')), [1, 1]);
  });

  it('skipped dates are neither history nor counted: the walk goes that much further back', () => {
    const ws = historyWindows(day('2026-01-06'), { historyWeeks: 3, skipDates: ['2025-12-30', '2025-12-23'] });
    assert.deepEqual(starts(ws), ['2025-12-16T00:00:00', '2025-12-09T00:00:00', '2025-12-02T00:00:00']);
  });

  it('windows longer than a week step back by whole weeks, so history never overlaps the window', () => {
    const ten = windowAt(parseLocalDateTime('2026-11-01'), parseWindowSize('P10D'));
    assert.deepEqual(starts(historyWindows(ten, { historyWeeks: 2, skipDates: [] })), ['2026-10-18T00:00:00', '2026-10-04T00:00:00']);
    assert.deepEqual(windowDates(hours('2026-11-24T18:00', 6)), ['2026-11-24']);
    assert.deepEqual(windowDates(windowAt(parseLocalDateTime('2026-11-30'), parseWindowSize('P2D'))), ['2026-11-30', '2026-12-01']);
  });
});

describe('the band', () => {
  it('is the median times the ratios: one odd week among four moves it little', () => {
    assert.equal(median([4000, 4100, 3900, 40]), 3950);
    assert.deepEqual(expectedBand([4000, 4100, 3900, 40], SETTINGS), { median: 3950, low: 1975, high: 7900 });
  });

  it('is at least the median ± minDifference, so tiny counts do not cry wolf', () => {
    assert.deepEqual(expectedBand([6, 5, 7], SETTINGS), { median: 6, low: 0, high: 16 });
    assert.deepEqual(expectedBand([0, 0, 0], SETTINGS), { median: 0, low: 0, high: 10 });
  });
});

describe('the verdict', () => {
  const monday = day('2026-11-23');
  const mondays = history(monday, [4000, 4200, 3800, 4100]);

  it('a day with a tenth of its usual rows is low; a normal one passes; twice and more is high', () => {
    const low = judgeVolume(400, 24, mondays, SETTINGS);
    assert.equal(low.outcome, 'anomaly');
    assert.deepEqual(low.outcome === 'anomaly' && [low.direction, low.band], ['low', { median: 4050, low: 2025, high: 8100 }]);
    assert.equal(judgeVolume(3600, 24, mondays, SETTINGS).outcome, 'pass');
    const high = judgeVolume(9000, 24, mondays, SETTINGS);
    assert.equal(high.outcome === 'anomaly' && high.direction, 'high');
  });

  it('a header-only window where history expects rows is an anomaly; where it expects a handful, it is not', () => {
    assert.equal(judgeVolume(0, 24, mondays, SETTINGS).outcome, 'anomaly');
    assert.equal(judgeVolume(0, 24, history(monday, [6, 5, 7]), SETTINGS).outcome, 'pass');
    assert.equal(judgeVolume(0, 24, history(monday, [30, 25, 35]), SETTINGS).outcome, 'anomaly');
  });

  it('seasonality: a weekend judged against its own weekday passes, against weekdays it would not', () => {
    const sunday = day('2026-11-22');
    const sundays = history(sunday, [1000, 1100, 950, 1050]);
    assert.equal(judgeVolume(1020, 24, sundays, SETTINGS).outcome, 'pass');
    assert.equal(judgeVolume(1020, 24, mondays, SETTINGS).outcome, 'anomaly', 'what comparing with the previous days would say');
  });

  it('too little history: nothing is flagged, and the verdict says why', () => {
    const two = history(monday, [4000, 4200]);
    assert.deepEqual(judgeVolume(10, 24, two, SETTINGS), { outcome: 'skipped', reason: 'too little history: 2 of 3 needed' });
    assert.equal(judgeVolume(10, 24, [], SETTINGS).outcome, 'skipped');
  });

  it('a DST week: the 23-hour day expects 23/24 of the usual, the hour the clocks skip is not judged, the doubled hour expects twice', () => {
    const tz = 'Europe/Berlin';
    const spring = day('2026-03-29');
    assert.equal(windowRealHours(spring, tz), 23);
    const sundays = history(spring, [2400, 2400, 2400]);
    const shortDay = judgeVolume(2300, windowRealHours(spring, tz), sundays, { ...SETTINGS, lowRatio: 0.99, highRatio: 1.01, minDifference: 0 });
    assert.equal(shortDay.outcome, 'pass', JSON.stringify(shortDay));
    assert.equal(shortDay.outcome === 'pass' && shortDay.band.median, 2300);

    const skipped = hours('2026-03-29T02:00', 1);
    assert.equal(windowRealHours(skipped, tz), 0);
    assert.deepEqual(judgeVolume(0, 0, history(skipped, [100, 100, 100], 1), SETTINGS), { outcome: 'skipped', reason: 'the window does not happen (the clocks skip it)' });

    const doubled = hours('2026-10-25T02:00', 1);
    assert.equal(windowRealHours(doubled, tz), 2);
    const twice = judgeVolume(200, 2, history(doubled, [100, 100, 100], 1), { ...SETTINGS, lowRatio: 0.9, highRatio: 1.1, minDifference: 0 });
    assert.equal(twice.outcome === 'pass' && twice.band.median, 200);

    // The hour after the skipped one, a week later, compared with its same wall-clock hour: 03:00 with 03:00.
    const after = hours('2026-04-05T03:00', 1);
    const h = historyWindows(after, { historyWeeks: 1, skipDates: [] });
    assert.deepEqual(starts(h), ['2026-03-29T03:00:00']);
    assert.equal(windowRealHours(h[0]!, tz), 1);
    // A history window the clocks skipped says nothing: it is left out, and two others are too few.
    const withGap = [{ window: skipped, value: 0, hours: 0 }, ...history(day('2026-04-05'), [100, 100], 1)];
    assert.equal(judgeVolume(100, 1, withGap, SETTINGS).outcome, 'skipped');
  });
});
