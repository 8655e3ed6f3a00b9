import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { parseDropDates, parseStandaloneArgs, parseWeekdayVolume, rowCount, rowsPerDayFor } from '../../local/simulator/index.js';

/** The simulator's volume shape (local/simulator/volume.ts): a weekly rhythm and dropped dates, from the flags. */

const day = (d: string) => windowAt(parseLocalDateTime(d), parseWindowSize('P1D'));

describe('simulator volume', () => {
  const shape = { weekday: parseWeekdayVolume('1,1,1,1,1.2,0.6,0.4'), drops: parseDropDates(['2026-10-27', '2026-10-28=0']) };

  it('scales rows by the weekday of the window start, Monday first, and drops the given dates', () => {
    const rows = (d: string) => rowCount(day(d), rowsPerDayFor(day(d), 250, shape));
    // 2026-10-19 is a Monday.
    assert.deepEqual(['2026-10-19', '2026-10-23', '2026-10-24', '2026-10-25'].map(rows), [250, 300, 150, 100]);
    assert.deepEqual([rows('2026-10-27'), rows('2026-10-28')], [25, 0], 'a tenth by default; 0 is header only');
    assert.equal(rowsPerDayFor(day('2026-10-27'), 250, undefined), 250);
    const sixHours = windowAt(parseLocalDateTime('2026-10-24T06:00'), parseWindowSize('PT6H'));
    assert.equal(rowCount(sixHours, rowsPerDayFor(sixHours, 240, shape)), 36, 'a Saturday quarter-day');
  });

  it('reads the flags, and names the flag when a value is wrong', () => {
    assert.deepEqual(parseStandaloneArgs(['--weekday-volume', '1,1,1,1,1,0.5,0.5', '--drop-date', '2026-10-27=0.2', '--drop-date', '2026-11-03']).volume, {
      weekday: [1, 1, 1, 1, 1, 0.5, 0.5],
      drops: { '2026-10-27': 0.2, '2026-11-03': 0.1 },
    });
    assert.equal(parseStandaloneArgs([]).volume, undefined);
    assert.throws(() => parseWeekdayVolume('1,1,1,1,1,1'), /--weekday-volume 1,1,1,1,1,1: expected seven factors/);
    assert.throws(() => parseWeekdayVolume('1,1,1,1,1,1,-1'), /expected seven factors of at least 0/);
    for (const bad of ['27.10.2026', '2026-10-27=', '2026-10-27=1.5', '2026-13-01']) assert.throws(() => parseDropDates([bad]), new RegExp(`--drop-date ${bad.replace(/\./g, '\\.')}: expected`));
  });
});
