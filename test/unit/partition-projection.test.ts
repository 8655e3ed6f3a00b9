import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_PROJECTION_START,
  DT_FORMAT,
  isProjectionDate,
  lastProjectedDate,
  projectionRange,
  refuseUnprojectedWindows,
} from '../../functions/core/lake/partition-projection.js';
import { tableKey, tableLocationTemplate } from '../../functions/core/lake/s3-keys.js';
import { parseLocalDateTime, parseWindowSize, windowAt, type ReportWindow } from '../../functions/core/time/window.js';
import { dateProjection } from '../helpers/athena-projection.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * Which dt partitions Athena shows (functions/core/lake/partition-projection.ts): the Glue parameters read by an
 * emulation of Athena's date projection written from its documentation (test/helpers/athena-projection.ts), and the
 * refusal of windows outside them, with dates and messages written out by hand.
 */

const day = (d: string): ReportWindow => windowAt(parseLocalDateTime(d), parseWindowSize('P1D'));
const sixHours = (t: string): ReportWindow => windowAt(parseLocalDateTime(t), parseWindowSize('PT6H'));
const SETTING = { start: '2026-01-01', source: 'athena.projectionStart of environment "production" (config/environments/production.json)' };
const NOW = new Date('2026-11-27T10:00:00Z');
const refusal = (windows: ReportWindow[], now = NOW) => {
  try {
    refuseUnprojectedWindows('transactions', windows, SETTING, now);
  } catch (e) {
    assert.equal((e as Error).name, 'ConfigurationError');
    return (e as Error).message;
  }
  return undefined;
};

describe('the dt projection of the Glue tables', () => {
  it('as Athena reads it: from the documented default 2020-01-01 to tomorrow in UTC, at the keys the parse writes', () => {
    const projection = dateProjection(
      { 'projection.enabled': 'true', 'projection.dt.type': 'date', 'projection.dt.format': DT_FORMAT, 'projection.dt.range': projectionRange(DEFAULT_PROJECTION_START) },
      'dt',
      `s3://curated/${tableLocationTemplate('transactions')}`,
    );
    const values = projection.values(NOW);
    assert.deepEqual([values[0], values[1], values.at(-2), values.at(-1)], ['2020-01-01', '2020-01-02', '2026-11-27', '2026-11-28']);
    assert.equal(values.length, 2524, '2020-01-01 to 2026-11-28: 366 + 365 * 3 + 366 + 365 + 332 days');
    assert.equal(projectionRange('2024-02-29'), '2024-02-29,NOW+1DAYS');
    assert.ok(`s3://curated/${tableKey(feedKey('transactions'), day('2026-11-28'))}`.startsWith(projection.location('2026-11-28').replace('${connection}', 'default')));
  });

  it('ends today in UTC plus one day, whatever the hour', () => {
    assert.equal(lastProjectedDate(new Date('2026-11-27T00:00:00Z')), '2026-11-28');
    assert.equal(lastProjectedDate(new Date('2026-11-27T23:59:59Z')), '2026-11-28');
    assert.equal(lastProjectedDate(new Date('2026-12-31T12:00:00Z')), '2027-01-01');
    assert.equal(lastProjectedDate(new Date('2028-02-28T01:00:00Z')), '2028-02-29');
  });

  it('takes as a start only a real date written YYYY-MM-DD', () => {
    assert.deepEqual(
      ['2020-01-01', '2024-02-29', '2026-02-29', '2026-13-01', '2026-1-01', '2026-01-1', '20260-01-01', ' 2026-01-01', '2026-01-01 ', '2026-01-01T00:00', '2026/01/01', ''].map(isProjectionDate),
      [true, true, false, false, false, false, false, false, false, false, false, false],
    );
  });
});

describe('refusing windows Athena would not show', () => {
  it('lets through windows from the start date to the last projected date, both included', () => {
    assert.equal(refusal([day('2026-01-01'), day('2026-11-28'), sixHours('2026-11-28T18:00')]), undefined);
    assert.equal(refusal([]), undefined);
  });

  it('one window before the start: named with the setting, what it would do, and both ways out', () => {
    assert.equal(
      refusal([day('2025-12-31')]),
      'The window 2025-12-31 of report "transactions" is before 2026-01-01, the first date Athena\'s partition projection shows ' +
        '(athena.projectionStart of environment "production" (config/environments/production.json)): the rows would load and never appear in a query. ' +
        'Start the range at 2026-01-01, or set that start earlier and deploy.',
    );
  });

  it('several windows before the start, listed newest first: counted, and the earliest named', () => {
    assert.equal(
      refusal([day('2026-01-02'), day('2026-01-01'), day('2025-12-31'), day('2025-12-30'), day('2025-12-29')]),
      '3 windows, from 2025-12-29, of report "transactions" are before 2026-01-01, the first date Athena\'s partition projection shows ' +
        '(athena.projectionStart of environment "production" (config/environments/production.json)): the rows would load and never appear in a query. ' +
        'Start the range at 2026-01-01, or set that start earlier and deploy.',
    );
  });

  it('one window after tomorrow in UTC: named with its start time and what to do', () => {
    assert.equal(
      refusal([day('2026-11-28'), day('2026-11-29')]),
      'The window 2026-11-29T00:00:00 of report "transactions" starts after 2026-11-28, the last date Athena\'s partition projection shows now ' +
        '(today in UTC plus 1 day): the rows would stay invisible until then. End the range (--to) before it; a window in the future has nothing to report yet.',
    );
  });

  it('several windows after it, listed newest first: counted, and the earliest named to the hour', () => {
    assert.equal(
      refusal([sixHours('2026-11-30T06:00'), sixHours('2026-11-29T18:00'), sixHours('2026-11-29T06:00'), sixHours('2026-11-28T18:00')]),
      '3 windows, from 2026-11-29T06:00:00, of report "transactions" start after 2026-11-28, the last date Athena\'s partition projection shows now ' +
        '(today in UTC plus 1 day): the rows would stay invisible until then. End the range (--to) before it; a window in the future has nothing to report yet.',
    );
  });

  it('windows before the start are named first, when a range is wrong at both ends', () => {
    assert.match(refusal([day('2026-11-30'), day('2025-12-31')]) ?? '', /^The window 2025-12-31 of report "transactions" is before 2026-01-01/);
  });
});
