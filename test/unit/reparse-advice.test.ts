import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reparseAdvice, type RecordedWindow } from '../../functions/core/lake/stale-windows.js';
import { parseWindowSize } from '../../functions/core/time/window.js';

/** The reparse advice over windows with and without raw files (stale-windows.ts reparseAdvice); dates written out by hand. */

const day = (d: string): RecordedWindow => ({ start: `2026-10-${d}T00:00:00`, end: `2026-10-${String(Number(d) + 1).padStart(2, '0')}T00:00:00` });
const raw = (...days: string[]) => ({ starts: new Set(days.map((d) => day(d).start)), size: parseWindowSize('P1D') });

describe('the advised reparse', () => {
  it('is one command when every window of the range has a raw file, stale or not', () => {
    assert.equal(
      reparseAdvice('transactions', [day('01'), day('03')], [], raw('01', '02', '03')),
      'npm run reports -- reparse --report transactions --from 2026-10-01 --to 2026-10-04',
    );
  });

  it('is one command per stretch with raw files, up to three, and says how many windows lack one', () => {
    assert.equal(
      reparseAdvice('transactions', [day('01'), day('02'), day('05')], ['--lake x'], raw('01', '02', '05')),
      'npm run reports -- reparse --report transactions --from 2026-10-01 --to 2026-10-03 --lake x and ' +
        'npm run reports -- reparse --report transactions --from 2026-10-05 --to 2026-10-06 --lake x ' +
        '(2 of the 5 windows from 2026-10-01 to 2026-10-06 have no raw file, never fetched: nothing to rebuild there, load them with npm start or backfill)',
    );
  });

  it('past three stretches, one command over the range that says the reparse skips the windows without a raw file', () => {
    const stale = ['01', '03', '05', '07'].map(day);
    assert.equal(
      reparseAdvice('transactions', stale, [], raw('01', '03', '05', '07')),
      'npm run reports -- reparse --report transactions --from 2026-10-01 --to 2026-10-08 (the reparse skips the windows without a raw file: ' +
        '3 of the 7 windows from 2026-10-01 to 2026-10-08 have no raw file, never fetched: nothing to rebuild there, load them with npm start or backfill)',
    );
  });

  const lacking = (n: number, of: number, from: string, to: string) =>
    `${n} of the ${of} windows from 2026-10-${from} to 2026-10-${to} have no raw file, never fetched: nothing to rebuild there, load them with npm start or backfill`;

  it('three stretches are still three commands, each ending with the last stale window of its stretch', () => {
    assert.equal(
      reparseAdvice('transactions', [day('05'), day('03'), day('01')], [], raw('01', '03', '05')),
      'npm run reports -- reparse --report transactions --from 2026-10-01 --to 2026-10-02 and ' +
        'npm run reports -- reparse --report transactions --from 2026-10-03 --to 2026-10-04 and ' +
        `npm run reports -- reparse --report transactions --from 2026-10-05 --to 2026-10-06 (${lacking(2, 5, '01', '06')})`,
    );
    // 03 has a raw file but is not stale: the first stretch stops at 02, the last stale window in it.
    assert.equal(
      reparseAdvice('transactions', [day('02'), day('05')], [], raw('01', '02', '03', '05')),
      'npm run reports -- reparse --report transactions --from 2026-10-02 --to 2026-10-03 and ' +
        `npm run reports -- reparse --report transactions --from 2026-10-05 --to 2026-10-06 (${lacking(1, 4, '02', '06')})`,
    );
  });

  it('when no stale window has a raw file, the one command over the range, saying the reparse skips them', () => {
    assert.equal(
      reparseAdvice('transactions', [day('02')], ['--lake x'], raw('01', '03')),
      `npm run reports -- reparse --report transactions --from 2026-10-02 --to 2026-10-03 --lake x (the reparse skips the windows without a raw file: ${lacking(1, 1, '02', '03')})`,
    );
  });

  it('without raw-file knowledge (a deployment), the one command over the range, as before', () => {
    assert.equal(reparseAdvice('transactions', [day('01'), day('05')]), 'npm run reports -- reparse --report transactions --from 2026-10-01 --to 2026-10-06');
  });
});
