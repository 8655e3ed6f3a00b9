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

  it('without raw-file knowledge (a deployment), the one command over the range, as before', () => {
    assert.equal(reparseAdvice('transactions', [day('01'), day('05')]), 'npm run reports -- reparse --report transactions --from 2026-10-01 --to 2026-10-06');
  });
});
