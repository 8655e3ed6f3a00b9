import { addDays, addSeconds, formatLocalDate, type ReportWindow } from '../time/window.js';

/**
 * The arithmetic of the volume check, pure: which earlier windows a window is compared with, and the band
 * of values they make expected. docs/add-a-report.md ("volume") says why these rules and defaults.
 *
 * - History: the same slot of earlier weeks, i.e. the window starting exactly 7, 14, … days earlier on the
 *   wall clock: the same weekday for daily windows, the same hour of the week for sub-daily ones. Windows
 *   are wall-clock times in the report's zone, so across a DST change 06:00 is still compared with 06:00.
 *   Windows longer than a week step back by whole multiples of a week, so history never overlaps.
 * - The window itself is never its own history, and a window touching a skipped date is neither judged nor
 *   used as history; the walk goes back further for each skipped one, so skipping a holiday keeps the
 *   number of weeks asked.
 * - Expected: the median of the history (robust: one odd week among four moves it little), each value first
 *   scaled to the window's real length, so the 23-hour day of a DST change is not "low" and the hour the
 *   clocks skip is not judged at all.
 * - Band: [median x lowRatio, median x highRatio], widened to at least median ± minDifference, so that
 *   tiny counts (a median of 6 rows) never cry wolf while 40 rows where 4,000 are usual always does.
 */

export interface BandSettings {
  /** Fewest history values needed to judge. */
  minHistory: number;
  lowRatio: number;
  highRatio: number;
  /** The band is at least median ± this (in the value's own units). */
  minDifference: number;
}

/** One earlier window's value, and how long that window really lasted. */
export interface HistoryValue {
  window: ReportWindow;
  value: number;
  hours: number;
}

export interface Band {
  median: number;
  low: number;
  high: number;
}

export type VolumeVerdict =
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'pass' | 'anomaly'; direction?: 'low' | 'high'; band: Band; used: HistoryValue[] };

/** Days between one history window and the next: a week, or whole weeks for windows longer than one. */
export function historyStepDays(window: ReportWindow): number {
  const days = (Date.UTC(window.end.year, window.end.month - 1, window.end.day) - Date.UTC(window.start.year, window.start.month - 1, window.start.day)) / 86_400_000;
  return 7 * Math.max(1, Math.ceil(days / 7));
}

/** The dates (YYYY-MM-DD) a window touches: its start's date through the date of its last second. */
export function windowDates(window: ReportWindow): string[] {
  const last = formatLocalDate(addSeconds(window.end, -1));
  const dates: string[] = [];
  for (let d = window.start; ; d = addDays(d, 1)) {
    const date = formatLocalDate(d);
    dates.push(date);
    if (date >= last) return dates;
  }
}

/** The first skipped date a window touches, if any. */
export const skippedDateOf = (window: ReportWindow, skipDates: readonly string[]): string | undefined =>
  windowDates(window).find((d) => skipDates.includes(d));

/**
 * The `weeks` windows of the same slot before `window`, newest first, not counting windows that touch a
 * skipped date (the walk goes that much further back). Never the window itself.
 */
export function historyWindows(window: ReportWindow, settings: { historyWeeks: number; skipDates: readonly string[] }): ReportWindow[] {
  const step = historyStepDays(window);
  const out: ReportWindow[] = [];
  // Bounded: each skipped date can push the walk back at most once per date it covers.
  for (let k = 1; out.length < settings.historyWeeks && k <= settings.historyWeeks + settings.skipDates.length; k++) {
    const earlier = { start: addDays(window.start, -step * k), end: addDays(window.end, -step * k) };
    if (!skippedDateOf(earlier, settings.skipDates)) out.push(earlier);
  }
  return out;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The band the values make expected (values already scaled to the judged window's length). */
export function expectedBand(values: readonly number[], settings: Pick<BandSettings, 'lowRatio' | 'highRatio' | 'minDifference'>): Band {
  const m = median(values);
  return {
    median: m,
    low: Math.max(0, Math.min(m * settings.lowRatio, m - settings.minDifference)),
    high: Math.max(m * settings.highRatio, m + settings.minDifference),
  };
}

/**
 * Judges one value of a window against the history found for it (windows without a loaded value are simply
 * absent from `history`). `hours` is the window's real length (windowRealHours).
 */
export function judgeVolume(observed: number, hours: number, history: readonly HistoryValue[], settings: BandSettings): VolumeVerdict {
  if (hours <= 0) return { outcome: 'skipped', reason: 'the window does not happen (the clocks skip it)' };
  // A history window the clocks skipped says nothing about a rate.
  const used = history.filter((h) => h.hours > 0);
  if (used.length < settings.minHistory) return { outcome: 'skipped', reason: `too little history: ${used.length} of ${settings.minHistory} needed` };
  const band = expectedBand(
    used.map((h) => (h.value * hours) / h.hours),
    settings,
  );
  if (observed < band.low) return { outcome: 'anomaly', direction: 'low', band, used };
  if (observed > band.high) return { outcome: 'anomaly', direction: 'high', band, used };
  return { outcome: 'pass', band, used };
}
