import type { ReportDefinition } from '../definitions/report-definition.js';
import { formatScaled, type RowTallyResult } from './row-tally.js';
import { judgeVolume, skippedDateOf, type BandSettings, type HistoryValue } from './volume-band.js';
import { formatLocalDateTime, parseWindowSize, windowRealHours, type ReportWindow } from '../time/window.js';

/**
 * The data checks of one loaded window, as the load manifest records them (docs/operations.md, "Data
 * checks"): the rows written and the sum column against the same slot of earlier weeks (volume-band.ts), and
 * keys repeated within the window (row-tally.ts). Pure: the parse step reads the history manifests and
 * passes what they said.
 *
 * A finding never fails the load: the data is the provider's, kept as sent. It is recorded, counted in a
 * metric whose alarm fires, and printed by the local commands.
 */

/** Every check, once: the manifest, the metric, the messages and the docs follow this list. */
export type QualityCheckName = 'volume-rows' | 'volume-sum' | 'duplicate-keys';

/** pass: within the band; anomaly: a finding; skipped: not judged, and `message` says why. */
export type CheckOutcome = 'pass' | 'anomaly' | 'skipped';

export interface QualityCheck {
  check: QualityCheckName;
  outcome: CheckOutcome;
  /** Rows, or repeated keys, as a number; a sum as an exact decimal string ("-1234.500"). */
  observed: number | string;
  /** The band a value had to fall in (both ends inclusive), and the median it came from. Absent when skipped. */
  expected?: { low: number | string; high: number | string; median?: number | string };
  /** The history windows the band came from, each with its value (before scaling to this window's length). */
  history?: Array<{ window: string; value: number | string }>;
  /** One line for people: what was off, what was fine, or why it was not judged. */
  message: string;
}

/** What one history window's manifest said, for the check to use. Absent values: no loaded manifest. */
export interface HistoryLoad {
  window: ReportWindow;
  /** Rows written, when the manifest says the window loaded. */
  rows?: number;
  /** The sum column's total, when the manifest recorded it for the same column. */
  sum?: string;
}

export interface QualityInput {
  report: ReportDefinition;
  window: ReportWindow;
  rowsWritten: number;
  tally?: RowTallyResult;
  /** Every history window asked for (volume-band.ts historyWindows), newest first. */
  history: readonly HistoryLoad[];
  /** Set when the history could not be read: the volume checks are then skipped, saying why. */
  historyProblem?: string;
}

const WEEKDAYS = ['Sundays', 'Mondays', 'Tuesdays', 'Wednesdays', 'Thursdays', 'Fridays', 'Saturdays'];
const pad = (n: number) => String(n).padStart(2, '0');

/** "Mondays" for a day window, "Mondays 06:00" for a sub-daily one: what the window is compared with. */
export function slotName(window: ReportWindow, report: Pick<ReportDefinition, 'window'>): string {
  const weekday = WEEKDAYS[new Date(Date.UTC(window.start.year, window.start.month - 1, window.start.day)).getUTCDay()]!;
  return parseWindowSize(report.window).unit === 'hour' ? `${weekday} ${pad(window.start.hour)}:00` : weekday;
}

/** Digits with thousands separators, whatever the machine's locale: "1234567" -> "1,234,567"; a sign before them stays. */
const grouped = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

const showCount = (n: number) => grouped(String(n));

/** A decimal string with separators in its integer part, the first run of digits: "-1234567.500" -> "-1,234,567.500". */
const showDecimal = (text: string) => text.replace(/\d+/, grouped);

/** A decimal string as an integer count of its last digit at `scale` ("12.5" at scale 3: 12500). */
function scaledNumber(text: string, scale: number): number {
  // A sign stays in front of the integer part: "-12.5" at scale 3 reads "-12500".
  const [int, frac = ''] = text.split('.');
  return Number(`${int}${frac.padEnd(scale, '0').slice(0, scale)}`);
}

/** How each value is read, shown and rounded: row counts are whole numbers, sums decimals of the column's scale. */
interface Measure {
  check: 'volume-rows' | 'volume-sum';
  /** "volume" or "sum of amount". */
  what: string;
  observed: number;
  shown: (units: number) => string;
  stored: (units: number) => number | string;
  unit: string;
  history: (h: HistoryLoad) => number | undefined;
  minDifference: number;
}

export function qualityChecks(input: QualityInput): QualityCheck[] {
  const { report } = input;
  const checks: QualityCheck[] = [];
  const volume = report.volume;
  if (volume.enabled) {
    checks.push(volumeCheck(input, rowsMeasure(input)));
    const sum = sumMeasure(input);
    if (sum) checks.push(volumeCheck(input, sum));
  }
  if (report.keys?.length) {
    const repeated = input.tally?.duplicateKeys ?? 0;
    const key = report.keys.join(', ');
    checks.push({
      check: 'duplicate-keys',
      outcome: repeated > 0 ? 'anomaly' : 'pass',
      observed: repeated,
      expected: { low: 0, high: 0 },
      message:
        repeated > 0
          ? `duplicate keys: ${showCount(repeated)} row(s) repeat a ${key} seen earlier in the window (all rows were kept as sent)`
          : `no repeated ${key}`,
    });
  }
  return checks;
}

function rowsMeasure(input: QualityInput): Measure {
  return {
    check: 'volume-rows',
    what: 'volume',
    observed: input.rowsWritten,
    shown: (n) => showCount(n),
    stored: (n) => n,
    unit: ' rows',
    history: (h) => h.rows,
    minDifference: input.report.volume.minRowsDifference,
  };
}

function sumMeasure(input: QualityInput): Measure | undefined {
  const column = input.report.volume.sumColumn;
  const total = input.tally?.sum;
  if (column === undefined || total === undefined) return undefined;
  // The definition's validation holds sumColumn to one of its decimal or bigint columns; a bigint has no scale.
  const scale = input.report.columns.find((c) => c.name === column)!.scale ?? 0;
  const text = (units: number) => formatScaled(BigInt(Math.round(units)), scale);
  return {
    check: 'volume-sum',
    what: `sum of ${column}`,
    observed: scaledNumber(total, scale),
    shown: (units) => showDecimal(text(units)),
    stored: text,
    unit: '',
    history: (h) => (h.rows === undefined || h.sum === undefined ? undefined : scaledNumber(h.sum, scale)),
    minDifference: input.report.volume.minSumDifference * 10 ** scale,
  };
}

function volumeCheck(input: QualityInput, m: Measure): QualityCheck {
  const { report, window } = input;
  const volume = report.volume;
  const observedText = m.shown(m.observed);
  const observed = m.stored(m.observed);
  const skipped = (why: string): QualityCheck => ({ check: m.check, outcome: 'skipped', observed, message: `${m.what} not judged: ${why}` });

  const skippedDate = skippedDateOf(window, volume.skipDates);
  if (skippedDate) return skipped(`${skippedDate} is in volume.skipDates`);
  if (input.historyProblem) return skipped(`the history could not be read (${input.historyProblem})`);

  const slot = slotName(window, report);
  const asked = input.history.length;
  const values: HistoryValue[] = [];
  for (const h of input.history) {
    const value = m.history(h);
    if (value !== undefined) values.push({ window: h.window, value, hours: windowRealHours(h.window, report.schedule.timeZone) });
  }
  const hours = windowRealHours(window, report.schedule.timeZone);
  const settings: BandSettings = { minHistory: volume.minHistory, lowRatio: volume.lowRatio, highRatio: volume.highRatio, minDifference: m.minDifference };
  const verdict = judgeVolume(m.observed, hours, values, settings);
  if (verdict.outcome === 'skipped') {
    if (hours <= 0) return skipped(`the window does not happen in ${report.schedule.timeZone} (the clocks skip it)`);
    return skipped(`too little history: ${values.length} of the last ${asked} ${slot} loaded${m.check === 'volume-sum' ? ' with this sum' : ''}, ${volume.minHistory} needed`);
  }
  if (m.check === 'volume-sum' && verdict.band.median <= 0) return skipped(`its usual value on ${slot} is not above zero, so a ratio means nothing`);

  // Whole units at the band's ends: for values counted in those units, inside the rounded band is inside the band.
  const low = Math.ceil(verdict.band.low);
  const high = Math.floor(verdict.band.high);
  const source = verdict.used.length === asked ? `the last ${asked} ${slot}` : `${verdict.used.length} of the last ${asked} ${slot}`;
  const band = `${m.shown(low)}-${m.shown(high)}`;
  const headerOnly = m.check === 'volume-rows' && m.observed === 0;
  const message =
    verdict.outcome === 'pass'
      ? `${m.what} ok: ${observedText}${m.unit}, within ${band} from ${source}`
      : `${headerOnly ? 'header only' : `${m.what} ${verdict.direction}`}: ${observedText}${m.unit}, expected ${band} from ${source}`;
  return {
    check: m.check,
    outcome: verdict.outcome,
    observed,
    expected: { low: m.stored(low), high: m.stored(high), median: m.stored(verdict.band.median) },
    history: verdict.used.map((h) => ({ window: formatLocalDateTime(h.window.start), value: m.stored(h.value) })),
    message,
  };
}

/**
 * The message of the parse log line written for each flagged window, with the keys `report`, `window` and
 * `finding`: the dashboard's table of flagged windows queries exactly this (lib/constructs/dashboard.ts).
 */
export const FINDING_LOG_MESSAGE = 'Data quality finding';

/** The findings of a load's checks: the messages of those that found something. */
export const findingsOf = (checks: readonly QualityCheck[] | undefined): string[] =>
  checks === undefined ? [] : checks.filter((c) => c.outcome === 'anomaly').map((c) => c.message);
