import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { readFileSync } from 'node:fs';
import { FINDING_LOG_MESSAGE, findingsOf, qualityChecks, slotName, type HistoryLoad } from '../../functions/core/quality/checks.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { RowBatchBuilder } from '../../functions/core/parquet/row-group-buffer.js';
import { formatScaled, RowTally, SafeIntegerSet } from '../../functions/core/quality/row-tally.js';
import { historyWindows } from '../../functions/core/quality/volume-band.js';
import { parseLocalDateTime, parseWindowSize, windowAt, type ReportWindow } from '../../functions/core/time/window.js';

/**
 * The data checks of one window as the manifest records them (functions/core/quality/checks.ts), and the
 * row tally that feeds them from the converter's row loop (functions/core/quality/row-tally.ts).
 */

const base = loadCatalog().get('transactions');
/** The fixture report with other check settings, validated as a file would be. */
function variant(edit: Partial<Record<'keys' | 'volume' | 'window' | 'schedule', unknown>>, nullable: string[] = []): ReportDefinition {
  const { columns, ...rest } = base;
  const written = columns.map(({ kind: _k, precision: _p, scale: _s, ...c }) => (nullable.includes(c.name) ? { ...c, nullable: true } : c));
  return parseReportDefinition({ ...rest, columns: written, ...edit }, 'variant.json');
}
const day = (d: string, report: ReportDefinition = base) => windowAt(parseLocalDateTime(d), parseWindowSize(report.window));
/** History of the window with these row counts (undefined: that week has no loaded manifest), and sums. */
const historyOf = (report: ReportDefinition, window: ReportWindow, rows: Array<number | undefined>, sums: string[] = []): HistoryLoad[] =>
  historyWindows(window, report.volume).map((w, i) => ({ window: w, ...(rows[i] === undefined ? {} : { rows: rows[i] }), ...(sums[i] ? { sum: sums[i] } : {}) }));

describe('the data checks of a window', () => {
  const monday = day('2026-11-23');

  it('a tenth of the usual rows: a volume finding that names the band and the weekday; the manifest record has the band and history', () => {
    const checks = qualityChecks({ report: base, window: monday, rowsWritten: 400, tally: { duplicateKeys: 0 }, history: historyOf(base, monday, [4000, 4200, 3800, 4100]) });
    assert.deepEqual(checks.map((c) => [c.check, c.outcome]), [['volume-rows', 'anomaly'], ['duplicate-keys', 'pass']]);
    assert.deepEqual(checks[0], {
      check: 'volume-rows',
      outcome: 'anomaly',
      observed: 400,
      expected: { low: 2025, high: 8100, median: 4050 },
      history: [
        { window: '2026-11-16T00:00:00', value: 4000 },
        { window: '2026-11-09T00:00:00', value: 4200 },
        { window: '2026-11-02T00:00:00', value: 3800 },
        { window: '2026-10-26T00:00:00', value: 4100 },
      ],
      message: 'volume low: 400 rows, expected 2,025-8,100 from the last 4 Mondays',
    });
    assert.deepEqual(findingsOf(checks), ['volume low: 400 rows, expected 2,025-8,100 from the last 4 Mondays']);
  });

  it('a normal day passes; a header-only one and a doubled one are findings; a missing week is said', () => {
    const h = historyOf(base, monday, [4000, undefined, 3800, 4100]);
    const ok = qualityChecks({ report: base, window: monday, rowsWritten: 3900, history: h });
    assert.equal(ok[0]!.message, 'volume ok: 3,900 rows, within 2,000-8,000 from 3 of the last 4 Mondays');
    assert.deepEqual(findingsOf(qualityChecks({ report: base, window: monday, rowsWritten: 0, history: h })), ['header only: 0 rows, expected 2,000-8,000 from 3 of the last 4 Mondays']);
    assert.deepEqual(findingsOf(qualityChecks({ report: base, window: monday, rowsWritten: 9000, history: h })), ['volume high: 9,000 rows, expected 2,000-8,000 from 3 of the last 4 Mondays']);
  });

  it('too little history, a skipped date, history that could not be read: not judged, and the message says why', () => {
    const few = qualityChecks({ report: base, window: monday, rowsWritten: 1, history: historyOf(base, monday, [4000, undefined, undefined, 4100]) });
    assert.deepEqual([few[0]!.outcome, few[0]!.message], ['skipped', 'volume not judged: too little history: 2 of the last 4 Mondays loaded, 3 needed']);
    assert.equal(few[0]!.expected, undefined);
    const holiday = variant({ volume: { skipDates: ['2026-11-23'] } });
    const skipped = qualityChecks({ report: holiday, window: monday, rowsWritten: 1, history: historyOf(holiday, monday, [4000, 4000, 4000, 4000]) });
    assert.equal(skipped[0]!.message, 'volume not judged: 2026-11-23 is in volume.skipDates');
    const unread = qualityChecks({ report: base, window: monday, rowsWritten: 1, history: [], historyProblem: 'AccessDenied: Access Denied' });
    assert.equal(unread[0]!.message, 'volume not judged: the history could not be read (AccessDenied: Access Denied)');
    assert.deepEqual(findingsOf([...few, ...skipped, ...unread]), []);
    assert.deepEqual(findingsOf(undefined), [], 'a manifest without checks (a failed load, or one written before them) has no findings');
  });

  it('a sub-daily window names the hour of the week it is compared with', () => {
    const sixHours = variant({ window: 'PT6H' });
    const w = windowAt(parseLocalDateTime('2026-11-23T06:00'), parseWindowSize('PT6H'));
    const [check] = qualityChecks({ report: sixHours, window: w, rowsWritten: 10, history: historyOf(sixHours, w, [1000, 1000, 1000, 1000]) });
    assert.equal(check!.message, 'volume low: 10 rows, expected 500-2,000 from the last 4 Mondays 06:00');
    assert.deepEqual(check!.history!.map((h) => h.window), ['2026-11-16T06:00:00', '2026-11-09T06:00:00', '2026-11-02T06:00:00', '2026-10-26T06:00:00']);
  });

  it('the sum column: judged like the rows, exact decimals in the record, not judged when its usual value is not above zero', () => {
    const withSum = variant({ volume: { sumColumn: 'amount' } });
    const sums = ['1000000.000', '1100000.500', '900000.250', '1000000.000'];
    const checks = qualityChecks({
      report: withSum,
      window: monday,
      rowsWritten: 4000,
      tally: { duplicateKeys: 0, sum: '-12.345' },
      history: historyOf(withSum, monday, [4000, 4000, 4000, 4000], sums),
    });
    const sum = checks.find((c) => c.check === 'volume-sum')!;
    assert.deepEqual(sum, {
      check: 'volume-sum',
      outcome: 'anomaly',
      observed: '-12.345',
      expected: { low: '500000.000', high: '2000000.000', median: '1000000.000' },
      history: sums.map((value, i) => ({ window: ['2026-11-16', '2026-11-09', '2026-11-02', '2026-10-26'][i] + 'T00:00:00', value })),
      message: 'sum of amount low: -12.345, expected 500,000.000-2,000,000.000 from the last 4 Mondays',
    });
    const refunds = qualityChecks({ report: withSum, window: monday, rowsWritten: 4000, tally: { sum: '-5.000' }, history: historyOf(withSum, monday, [1, 1, 1, 1], ['-5.000', '-6.000', '-4.000', '-5.000']) });
    assert.equal(refunds.find((c) => c.check === 'volume-sum')!.message, 'sum of amount not judged: its usual value on Mondays is not above zero, so a ratio means nothing');
    // A week loaded before the sum column was set has no sum: too little history for the sum, the rows still judged.
    const older = qualityChecks({ report: withSum, window: monday, rowsWritten: 4000, tally: { sum: '1.000' }, history: historyOf(withSum, monday, [4000, 4000, 4000, 4000]) });
    assert.deepEqual(older.map((c) => c.outcome), ['pass', 'skipped', 'pass']);
    assert.match(older[1]!.message, /too little history: 0 of the last 4 Mondays loaded with this sum, 3 needed/);
  });

  it('repeated keys are a finding; no keys declared, no such check; volume off, no volume checks', () => {
    const dup = qualityChecks({ report: base, window: monday, rowsWritten: 10, tally: { duplicateKeys: 3 }, history: [] });
    assert.deepEqual(dup.find((c) => c.check === 'duplicate-keys'), {
      check: 'duplicate-keys',
      outcome: 'anomaly',
      observed: 3,
      expected: { low: 0, high: 0 },
      message: 'duplicate keys: 3 row(s) repeat a transaction_id seen earlier in the window (all rows were kept as sent)',
    });
    const { keys: _keys, ...noKeys } = base;
    assert.deepEqual(qualityChecks({ report: noKeys as ReportDefinition, window: monday, rowsWritten: 10, history: [] }).map((c) => c.check), ['volume-rows']);
    assert.deepEqual(qualityChecks({ report: variant({ volume: { enabled: false } }), window: monday, rowsWritten: 10, tally: { duplicateKeys: 0 }, history: [] }).map((c) => c.check), ['duplicate-keys']);
  });

});

describe('the data checks at their edges', () => {
  const monday = day('2026-11-23');
  const rows = (observed: number, history: number[], report = base) =>
    qualityChecks({ report, window: monday, rowsWritten: observed, history: historyOf(report, monday, history) })[0]!;

  it('both ends of the band are inside it: 2,000 and 8,000 pass around a median of 4,000; one row past either is a finding', () => {
    const usual = [4000, 4000, 4000, 4000];
    assert.deepEqual([1999, 2000, 8000, 8001].map((n) => [rows(n, usual).outcome, rows(n, usual).message]), [
      ['anomaly', 'volume low: 1,999 rows, expected 2,000-8,000 from the last 4 Mondays'],
      ['pass', 'volume ok: 2,000 rows, within 2,000-8,000 from the last 4 Mondays'],
      ['pass', 'volume ok: 8,000 rows, within 2,000-8,000 from the last 4 Mondays'],
      ['anomaly', 'volume high: 8,001 rows, expected 2,000-8,000 from the last 4 Mondays'],
    ]);
  });

  it('a fractional band is rounded inward to whole rows: median 100.5 gives 51-201, median 3.5 gives 0-13', () => {
    const wide = [101, 101, 100, 100];
    assert.deepEqual(rows(51, wide).expected, { low: 51, high: 201, median: 100.5 });
    assert.equal(rows(50, wide).outcome, 'anomaly');
    assert.equal(rows(51, wide).outcome, 'pass');
    assert.equal(rows(201, wide).outcome, 'pass');
    assert.equal(rows(202, wide).outcome, 'anomaly');
    const tiny = [3, 3, 4, 4];
    assert.deepEqual(rows(13, tiny).expected, { low: 0, high: 13, median: 3.5 });
    assert.equal(rows(13, tiny).outcome, 'pass');
    assert.equal(rows(14, tiny).message, 'volume high: 14 rows, expected 0-13 from the last 4 Mondays');
  });

  it('a median of exactly 0: rows are judged against 0-10; a sum is not judged', () => {
    assert.equal(rows(0, [0, 0, 0, 0]).message, 'volume ok: 0 rows, within 0-10 from the last 4 Mondays');
    assert.equal(rows(10, [0, 0, 0, 0]).outcome, 'pass');
    assert.equal(rows(11, [0, 0, 0, 0]).message, 'volume high: 11 rows, expected 0-10 from the last 4 Mondays');
    const withSum = variant({ volume: { sumColumn: 'amount' } });
    const sum = qualityChecks({ report: withSum, window: monday, rowsWritten: 5, tally: { sum: '1.000' }, history: historyOf(withSum, monday, [5, 5, 5, 5], ['0.000', '0.000', '0.000', '0.000']) })[1]!;
    assert.deepEqual([sum.outcome, sum.message], ['skipped', 'sum of amount not judged: its usual value on Mondays is not above zero, so a ratio means nothing']);
  });

  it('skip dates on other weekdays leave a window and its history alone', () => {
    const tuesdays = variant({ volume: { skipDates: ['2026-11-17', '2026-11-24', '2026-11-10'] } });
    const check = rows(3900, [4000, 4200, 3800, 4100], tuesdays);
    assert.equal(check.message, 'volume ok: 3,900 rows, within 2,025-8,100 from the last 4 Mondays');
    assert.deepEqual(check.history!.map((h) => h.window), ['2026-11-16T00:00:00', '2026-11-09T00:00:00', '2026-11-02T00:00:00', '2026-10-26T00:00:00']);
  });

  it('a day the clocks shorten is judged against history scaled to its 23 hours; an hour they skip is not judged', () => {
    const berlin = variant({ schedule: { cron: 'cron(15 3 * * ? *)', timeZone: 'Europe/Berlin' } });
    const sunday = day('2026-03-29', berlin);
    const short = qualityChecks({ report: berlin, window: sunday, rowsWritten: 1149, history: historyOf(berlin, sunday, [2400, 2400, 2400, 2400]) })[0]!;
    // 2,400 rows in 24 hours is 2,300 in 23: band 1,150-4,600; the history keeps what each week loaded.
    assert.equal(short.message, 'volume low: 1,149 rows, expected 1,150-4,600 from the last 4 Sundays');
    assert.deepEqual([short.expected, short.history![0]], [{ low: 1150, high: 4600, median: 2300 }, { window: '2026-03-22T00:00:00', value: 2400 }]);
    const hourly = variant({ window: 'PT1H', schedule: { cron: 'cron(5 * * * ? *)', timeZone: 'Europe/Berlin' } });
    const skipped = windowAt(parseLocalDateTime('2026-03-29T02:00'), parseWindowSize('PT1H'));
    const [check] = qualityChecks({ report: hourly, window: skipped, rowsWritten: 0, history: historyOf(hourly, skipped, [100, 100, 100, 100]) });
    assert.deepEqual([check!.outcome, check!.message], ['skipped', 'volume not judged: the window does not happen in Europe/Berlin (the clocks skip it)']);
  });

  it('a sum of 0 is low like any other sum, never "header only", which is said of rows', () => {
    const withSum = variant({ volume: { sumColumn: 'amount' } });
    const checks = qualityChecks({ report: withSum, window: monday, rowsWritten: 0, tally: { sum: '0.000' }, history: historyOf(withSum, monday, [4000, 4000, 4000, 4000], ['1000', '1000', '1000', '1000.0004']) });
    assert.deepEqual(findingsOf(checks), [
      'header only: 0 rows, expected 2,000-8,000 from the last 4 Mondays',
      'sum of amount low: 0.000, expected 500.000-2,000.000 from the last 4 Mondays',
    ]);
    // A recorded sum with more decimals than the column's scale is read at that scale.
    assert.deepEqual(checks[1]!.history!.map((h) => h.value), ['1000.000', '1000.000', '1000.000', '1000.000']);
  });

  it('the finding\'s log line is the one docs/operations.md tells operators to look for', () => {
    const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    assert.ok(operations.includes(`the parse log line \`${FINDING_LOG_MESSAGE}\` (fields \`report\`, \`window\`, \`finding\`)`));
  });

  it('a sum column of scale 0 (a bigint) shows whole numbers, no point', () => {
    const ids = variant({ volume: { sumColumn: 'transaction_id' } });
    const sum = qualityChecks({
      report: ids, window: monday, rowsWritten: 4000, tally: { sum: '2001' },
      history: historyOf(ids, monday, [4000, 4000, 4000, 4000], ['1000', '1200', '800', '1000']),
    }).find((c) => c.check === 'volume-sum')!;
    assert.deepEqual(sum, {
      check: 'volume-sum',
      outcome: 'anomaly',
      observed: '2001',
      expected: { low: '500', high: '2000', median: '1000' },
      history: [
        { window: '2026-11-16T00:00:00', value: '1000' },
        { window: '2026-11-09T00:00:00', value: '1200' },
        { window: '2026-11-02T00:00:00', value: '800' },
        { window: '2026-10-26T00:00:00', value: '1000' },
      ],
      message: 'sum of transaction_id high: 2,001, expected 500-2,000 from the last 4 Mondays',
    });
  });
});

describe('the data checks: names, keys and sums', () => {
  const monday = day('2026-11-23');

  it('names every weekday, and the hour for a sub-daily window', () => {
    const names = ['22', '23', '24', '25', '26', '27', '28'].map((d) => slotName(day(`2026-11-${d}`), base));
    assert.deepEqual(names, ['Sundays', 'Mondays', 'Tuesdays', 'Wednesdays', 'Thursdays', 'Fridays', 'Saturdays']);
    assert.equal(slotName(windowAt(parseLocalDateTime('2026-11-28T18:00'), parseWindowSize('PT6H')), { window: 'PT6H' }), 'Saturdays 18:00');
  });

  it('repeated keys of a two-column key are counted with separators; none, or no tally, pass', () => {
    const two = variant({ keys: ['transaction_id', 'merchant_oid'] });
    const dup = (tally?: { duplicateKeys: number }) => qualityChecks({ report: two, window: monday, rowsWritten: 10, tally, history: [] }).find((c) => c.check === 'duplicate-keys')!;
    assert.equal(dup({ duplicateKeys: 1234 }).message, 'duplicate keys: 1,234 row(s) repeat a transaction_id, merchant_oid seen earlier in the window (all rows were kept as sent)');
    assert.deepEqual(dup({ duplicateKeys: 0 }), { check: 'duplicate-keys', outcome: 'pass', observed: 0, expected: { low: 0, high: 0 }, message: 'no repeated transaction_id, merchant_oid' });
    assert.deepEqual([dup().outcome, dup().observed], ['pass', 0]);
  });

  it('a sum is judged only with both a sum column and a tallied sum, and only from weeks that loaded rows and a sum', () => {
    const withSum = variant({ volume: { sumColumn: 'amount' } });
    const checks = (report: ReportDefinition, tally: { duplicateKeys: number; sum?: string }, history = historyOf(report, monday, [4, 4, 4, 4], ['1.000', '1.000', '1.000', '1.000'])) =>
      qualityChecks({ report, window: monday, rowsWritten: 4, tally, history }).map((c) => c.check);
    assert.deepEqual(checks(withSum, { duplicateKeys: 0 }), ['volume-rows', 'duplicate-keys']);
    assert.deepEqual(checks(base, { duplicateKeys: 0, sum: '1.000' }), ['volume-rows', 'duplicate-keys']);
    const sumsWithoutRows = historyOf(withSum, monday, [undefined, undefined, undefined, 4], ['1.000', '1.000', '1.000', '1.000']);
    const sum = qualityChecks({ report: withSum, window: monday, rowsWritten: 4, tally: { duplicateKeys: 0, sum: '1.000' }, history: sumsWithoutRows })[1]!;
    assert.equal(sum.message, 'sum of amount not judged: too little history: 1 of the last 4 Mondays loaded with this sum, 3 needed');
  });

  it('sums: negative amounts and short fractions shown exactly, with separators; minSumDifference in the column\'s units', () => {
    const withSum = variant({ volume: { sumColumn: 'amount' } });
    const judged = (report: ReportDefinition, sum: string, sums: string[]) =>
      qualityChecks({ report, window: monday, rowsWritten: 4, tally: { duplicateKeys: 0, sum }, history: historyOf(report, monday, [4, 4, 4, 4], sums) })[1]!;
    const low = judged(withSum, '-1234567.5', ['1000.5', '1000.5', '1000.5', '1000.5']);
    assert.deepEqual([low.observed, low.expected, low.message], [
      '-1234567.500',
      { low: '500.250', high: '2001.000', median: '1000.500' },
      'sum of amount low: -1,234,567.500, expected 500.250-2,001.000 from the last 4 Mondays',
    ]);
    const wide = variant({ volume: { sumColumn: 'amount', minSumDifference: 1000 } });
    assert.equal(judged(wide, '5', ['1.000', '1.000', '1.000', '1.000']).message, 'sum of amount ok: 5.000, within 0.000-1,001.000 from the last 4 Mondays');
  });
});

describe('the row tally', () => {
  const row = (id: string, amount: string) => ['M', id, 'OID', '2026-11-20 10:00:00', amount, 'RUB', 'SALE', '', '20.11.2026'];
  /** A tally fed as the converter feeds it: each record typed by a real RowBatchBuilder first, whose values it reads. */
  const tallied = (report: ReportDefinition) => {
    const tally = RowTally.for(report)!;
    const builder = new RowBatchBuilder(report.columns);
    const add = (record: string[]) => {
      const typed = builder.add(record);
      assert.equal(typeof typed, 'number', `the row types: ${JSON.stringify(typed)}`);
      tally.add(record, builder.safeValues);
    };
    return { tally, add };
  };

  it('counts rows whose key was seen before in the file, by value for a bigint key, beyond 2^53 too', () => {
    const { tally, add } = tallied(base);
    for (const id of ['4294967296001', '4294967296002', '4294967296001', '9007199254740993', '9007199254740993', '4294967296001', '9007199254740992']) add(row(id, '1.000'));
    assert.deepEqual(tally.result(), { duplicateKeys: 3 });
  });

  it('composite keys compare all their columns', () => {
    const { tally, add } = tallied(variant({ keys: ['transaction_id', 'currency'] }));
    add(row('1', '1.000'));
    add([...row('1', '1.000').slice(0, 5), 'USD', ...row('1', '1.000').slice(6)]);
    add(row('1', '2.000'));
    assert.deepEqual(tally.result(), { duplicateKeys: 1 });
  });

  it('sums a decimal column exactly, past 2^53 in its units, and skips nulls', () => {
    const { tally, add } = tallied(variant({ keys: undefined, volume: { sumColumn: 'amount' } }));
    const big = '999999999999999.999'; // 10^18 - 1 thousandths: past 2^53 by itself, typed as a BigInt
    for (let i = 0; i < 20; i++) add(row(String(i), big));
    add(row('21', '-0.001'));
    assert.deepEqual(tally.result(), { sum: '19999999999999999.979' });
    // Safe values (15 significant digits; 16 take the BigInt path by themselves) whose running total passes 2^53 at the
    // tenth row: moved to the BigInt there, exact.
    const spill = tallied(variant({ keys: undefined, volume: { sumColumn: 'amount' } }, ['amount']));
    for (let i = 0; i < 10; i++) spill.add(row(String(i), '999999999999.999'));
    assert.deepEqual([spill.tally.state().small, spill.tally.state().big], [0, '9999999999999990']);
    spill.add(row('98', '0.001'));
    spill.add(row('99', ''));
    assert.deepEqual(spill.tally.result(), { sum: '9999999999999.991' });
    assert.equal(RowTally.for(variant({ keys: undefined, volume: { enabled: true } })), undefined, 'nothing declared: no tally, no per-row work');
  });

  it('a single text key is compared as text; a composite key keeps its parts apart, as state() hands them on', () => {
    const { tally, add } = tallied(variant({ keys: ['merchant_oid'] }));
    for (const oid of ['A-1', 'A-2', 'A-1', '1', '01', 'A-1']) add([...row('7', '1.000').slice(0, 2), oid, ...row('7', '1.000').slice(3)]);
    assert.deepEqual(tally.result(), { duplicateKeys: 2 });
    assert.deepEqual(tally.state(), { ints: new Float64Array(0), texts: ['A-1', 'A-2', '1', '01'], duplicates: 2, small: 0, big: '0' });
    const pair = tallied(variant({ keys: ['transaction_id', 'currency'] }));
    // Side by side, ("1", "2RUB") and ("12", "RUB") would be the same key.
    pair.add([...row('1', '1.000').slice(0, 5), '2RUB', ...row('1', '1.000').slice(6)]);
    pair.add([...row('12', '1.000').slice(0, 5), 'RUB', ...row('1', '1.000').slice(6)]);
    assert.deepEqual(pair.tally.state().texts, ['1\u00002RUB', '12\u0000RUB']);
    assert.deepEqual(pair.tally.result(), { duplicateKeys: 0 });
  });

  it('a tally with only a sum column keeps no keys and reports no key count', () => {
    const { tally, add } = tallied(variant({ keys: undefined, volume: { sumColumn: 'amount' } }));
    add(row('1', '2.500'));
    add(row('1', '2.500'));
    assert.deepEqual(tally.state(), { ints: new Float64Array(0), texts: [], duplicates: 0, small: 5000, big: '0' });
    assert.deepEqual(tally.result(), { sum: '5.000' });
  });

  it('a later part of a split file: its state merged in counts its keys again against the first part, and adds its sum', () => {
    const report = variant({ volume: { sumColumn: 'amount' } });
    const first = tallied(report);
    for (const [id, amount] of [['1', '1.500'], ['2', '2.000'], ['3', '-0.250'], ['9007199254740993', '10.000']]) first.add(row(id!, amount!));
    const second = tallied(report);
    const rows = [['3', '999999999999999.999'], ['4', '0.001'], ['4', '3.000'], ['5', '0.000'], ['9007199254740993', '5.000'], ['9007199254740995', '0.000']];
    for (const [id, amount] of rows) second.add(row(id!, amount!));
    const state = second.tally.state();
    assert.deepEqual(state, { ints: new Float64Array([3, 4, 5]), texts: ['9007199254740993', '9007199254740995'], duplicates: 1, small: 8001, big: '999999999999999999' });
    first.tally.merge(state);
    // 1 repeat inside the second part, then 3 and 9007199254740993 seen in the first (not 4, 5, 9007199254740995); 13250 + 8001 + 999999999999999999 thousandths.
    assert.deepEqual(first.tally.result(), { duplicateKeys: 3, sum: '1000000000000021.250' });
  });

  it('sums a bigint column beyond 10^18 as int64, and a decimal(17,2) that is the first column, past 2^53', () => {
    const ids = tallied(variant({ keys: undefined, volume: { sumColumn: 'transaction_id' } }));
    for (const id of ['9223372036854775807', '-9223372036854775808', '5']) ids.add(row(id, '1.000'));
    assert.deepEqual(ids.tally.result(), { sum: '4' });
    const { columns, ...rest } = base;
    const written = columns.map(({ kind: _k, precision: _p, scale: _s, ...c }) => (c.name === 'amount' ? { ...c, type: 'decimal(17,2)' } : c));
    const amountFirst = parseReportDefinition({ ...rest, keys: undefined, volume: { sumColumn: 'amount' }, columns: [written[4]!, ...written.slice(0, 4), ...written.slice(5)] }, 'amount-first.json');
    const { tally, add } = tallied(amountFirst);
    const record = (amount: string) => { const r = row('1', amount); return [r[4]!, ...r.slice(0, 4), ...r.slice(5)]; };
    add(record('999999999999999.99'));
    add(record('-0.91'));
    add(record('12.34'));
    assert.deepEqual(tally.result(), { sum: '1000000000000011.42' });
  });

  it('no tally without keys or an enabled volume check with a sum column', () => {
    assert.equal(RowTally.for(variant({ keys: undefined, volume: { enabled: false, sumColumn: 'amount' } })), undefined);
    assert.equal(RowTally.for(variant({ keys: undefined, volume: { enabled: true } })), undefined);
    assert.ok(RowTally.for(variant({ keys: undefined, volume: { enabled: true, sumColumn: 'amount' } })));
    assert.ok(RowTally.for(variant({ keys: ['transaction_id'], volume: { enabled: false } })));
  });

  it('formats scaled integers and keeps a set of safe integers through growth', () => {
    assert.deepEqual([formatScaled(-12500n, 3), formatScaled(5n, 3), formatScaled(0n, 0), formatScaled(-7n, 2)], ['-12.500', '0.005', '0', '-0.07']);
    const set = new SafeIntegerSet();
    for (let i = 0; i < 100_000; i++) assert.equal(set.add(2 ** 32 + i * 1000), true);
    for (const v of [2 ** 32, 2 ** 32 + 99_999_000, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0, -1]) set.add(v);
    assert.deepEqual([set.add(2 ** 32 + 5000), set.add(Number.MAX_SAFE_INTEGER), set.add(-1), set.add(1)], [false, false, false, true]);
    const small = new SafeIntegerSet();
    for (const v of [10, 20, 30, 40, 50, 60, 70, 5]) small.add(v);
    assert.deepEqual([...small.values()], [10, 20, 30, 40, 50, 60, 70, 5], 'the rising values in order, then the late ones');
    assert.equal(set.size, 100_005);
  });
});
