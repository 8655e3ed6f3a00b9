import { ConfigurationError } from '../errors.js';

/**
 * Report windows. A window is a half-open range [start, end) of wall-clock times in the report's
 * time zone, because that is how the gateway's report inputs and its Created_date column read.
 * Wall-clock values are plain records: no Date object ever carries an implied zone here.
 */
export interface LocalDateTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export interface ReportWindow {
  start: LocalDateTime;
  end: LocalDateTime;
}

/** "P1D", "P7D", "PT1H", "PT6H": a window length of whole days or whole hours that divides a day. */
export type WindowSize = { unit: 'day'; count: number } | { unit: 'hour'; count: number };

export function parseWindowSize(text: string): WindowSize {
  // A zero-length window would make windowsBetween loop forever: the count starts at 1.
  const days = /^P([1-9]\d*)D$/.exec(text);
  if (days) return { unit: 'day', count: Number(days[1]) };
  const hours = /^PT([1-9]\d*)H$/.exec(text);
  if (hours && 24 % Number(hours[1]) === 0) return { unit: 'hour', count: Number(hours[1]) };
  throw new ConfigurationError(`window "${text}" must be "P<n>D" (days) or "PT<n>H" (hours dividing 24).`);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Days and times as UTC epoch arithmetic on wall-clock fields: no zone involved. */
const toEpoch = (t: LocalDateTime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
const fromEpoch = (ms: number): LocalDateTime => {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
};

/** A wall-clock time moved by whole seconds (negative to go back). */
export const addSeconds = (t: LocalDateTime, seconds: number): LocalDateTime => fromEpoch(toEpoch(t) + seconds * 1000);

export const formatLocalDate = (t: LocalDateTime) => `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}`;
export const formatLocalDateTime = (t: LocalDateTime) =>
  `${formatLocalDate(t)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`;

/** Parses "YYYY-MM-DD" or "YYYY-MM-DDTHH:mm[:ss]" as a wall-clock time. */
export function parseLocalDateTime(text: string): LocalDateTime {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(text.trim());
  // Said as every command's --help says it (bin/program.ts); seconds are accepted but never needed.
  if (!m) throw new ConfigurationError(`"${text}" is not a date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:mm).`);
  const t: LocalDateTime = {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
  };
  if (formatLocalDateTime(fromEpoch(toEpoch(t))) !== formatLocalDateTime(t)) {
    throw new ConfigurationError(`"${text}" is not a real calendar date.`);
  }
  return t;
}

const stepMs = (size: WindowSize) => size.count * (size.unit === 'day' ? 86_400_000 : 3_600_000);

/** The wall-clock time of an instant in an IANA zone. */
export function wallClockIn(instant: Date, timeZone: string): LocalDateTime {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }).formatToParts(instant);
  } catch {
    throw new ConfigurationError(`"${timeZone}" is not an IANA time zone (for example "Europe/Moscow" or "UTC").`);
  }
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute'), second: get('second') };
}

/** Floors a wall-clock time to the start of its window (days align to midnight, hours to multiples of the size). */
export function windowStartOf(t: LocalDateTime, size: WindowSize): LocalDateTime {
  if (size.unit === 'day') return { ...t, hour: 0, minute: 0, second: 0 };
  return { ...t, hour: t.hour - (t.hour % size.count), minute: 0, second: 0 };
}

export function windowAt(start: LocalDateTime, size: WindowSize): ReportWindow {
  return { start, end: fromEpoch(toEpoch(start) + stepMs(size)) };
}

/**
 * The last complete window before a scheduled firing, in the report's zone. Pure in (time, zone, size),
 * so every retry of one firing computes the same window.
 */
export function lastCompleteWindow(scheduledTime: Date, timeZone: string, size: WindowSize): ReportWindow {
  const currentStart = windowStartOf(wallClockIn(scheduledTime, timeZone), size);
  return windowAt(fromEpoch(toEpoch(currentStart) - stepMs(size)), size);
}

/** The window and the `lookback` windows before it, oldest first. */
export function withLookback(window: ReportWindow, size: WindowSize, lookback: number): ReportWindow[] {
  const out: ReportWindow[] = [];
  for (let i = lookback; i >= 1; i--) out.push(windowAt(fromEpoch(toEpoch(window.start) - i * stepMs(size)), size));
  out.push(window);
  return out;
}

/** Every window starting in [from, to): `from` inclusive, `to` exclusive. The arithmetic of windowsStartingIn. */
export function windowsBetween(from: LocalDateTime, to: LocalDateTime, size: WindowSize): ReportWindow[] {
  const out: ReportWindow[] = [];
  for (let t = toEpoch(windowStartOf(from, size)); t < toEpoch(to); t += stepMs(size)) {
    out.push(windowAt(fromEpoch(t), size));
  }
  return out;
}

/** Bounds of a range of window starts, wall-clock in the report's zone: `from` inclusive, `to` exclusive. */
export interface WindowRange {
  from?: LocalDateTime;
  to?: LocalDateTime;
}

/**
 * What of a report its windows depend on: the window size ("P1D", "PT1H"). Declared here, not picked from the report
 * definition, so time/ imports nothing of definitions/ (which imports time/): a report definition is one of these.
 */
export interface WindowedReport {
  readonly window: string;
}

/** A report with its schedule: its zone places the default bounds (the last complete window). */
export interface ScheduledReport extends WindowedReport {
  readonly schedule: { readonly timeZone: string };
}

/**
 * A report's windows starting in [from, to), oldest first: the one way windows are listed (`npm start`, `backfill`,
 * `reparse`, the fetch function's backfill requests). A missing bound takes its default at `now` in the report's
 * zone: `from` the start of the last complete window, `to` the start of the current one (not complete yet), so
 * with neither it is the last complete window alone; a report without its schedule must give both. An empty range
 * gives no window: each caller says what was wrong in its own terms (flags, or fields of an event).
 */
export function windowsStartingIn(report: WindowedReport, range: Required<WindowRange>): ReportWindow[];
export function windowsStartingIn(report: ScheduledReport, range: WindowRange, now?: Date): ReportWindow[];
export function windowsStartingIn(report: WindowedReport & Partial<ScheduledReport>, range: WindowRange, now: Date = new Date()): ReportWindow[] {
  const size = parseWindowSize(report.window);
  const zone = () => report.schedule!.timeZone; // only reached through the second signature, which has the schedule
  const from = range.from ?? lastCompleteWindow(now, zone(), size).start;
  const to = range.to ?? windowStartOf(wallClockIn(now, zone()), size);
  return windowsBetween(from, to, size);
}

/** The tokens of a date pattern, each with how it writes a wall-clock time; the pattern's regex is made from them. */
const PATTERN_TOKENS = {
  yyyy: (t) => pad(t.year, 4),
  MM: (t) => pad(t.month),
  dd: (t) => pad(t.day),
  HH: (t) => pad(t.hour),
  mm: (t) => pad(t.minute),
  ss: (t) => pad(t.second),
} satisfies Record<string, (t: LocalDateTime) => string>;
type PatternToken = keyof typeof PATTERN_TOKENS;
const PATTERN_TOKEN = new RegExp(Object.keys(PATTERN_TOKENS).join('|'), 'g');

/**
 * Formats a wall-clock time with a pattern of yyyy, MM, dd, HH, mm, ss (the tokens a report template and
 * a column's input pattern use); other characters are copied.
 */
export function formatWithPattern(t: LocalDateTime, pattern: string): string {
  return pattern.replace(PATTERN_TOKEN, (tok) => PATTERN_TOKENS[tok as PatternToken](t));
}

/** "2026-11-20T00-00-00": a window start safe in S3 keys and file names. */
export const windowStamp = (t: LocalDateTime) => formatWithPattern(t, 'yyyy-MM-ddTHH-mm-ss');

/**
 * The instant (Unix ms) at which the wall clock in `timeZone` reads `t`. Clocks moved back make some
 * times happen twice: the first is taken. Clocks moved forward make some never happen: the instant of
 * the jump is taken (exact for the whole hours windows start on), so a window inside the gap lasts 0 h.
 */
export function instantAt(t: LocalDateTime, timeZone: string): number {
  const wall = toEpoch(t);
  const offsetAt = (ms: number) => toEpoch(wallClockIn(new Date(ms), timeZone)) - ms;
  // Offsets a day either side: zones change offset at most twice a year, so at most one change lies between.
  const candidates = [...new Set([wall - offsetAt(wall - 86_400_000), wall - offsetAt(wall + 86_400_000)])].sort((a, b) => a - b);
  const valid = candidates.filter((ms) => toEpoch(wallClockIn(new Date(ms), timeZone)) === wall);
  return valid.length ? valid[0]! : candidates.at(-1)!;
}

/** How many hours a wall-clock window really lasts in its zone: 24 for most days, 23 or 25 across a DST change, 0 for an hour the clocks skip. */
export const windowRealHours = (window: ReportWindow, timeZone: string): number =>
  (instantAt(window.end, timeZone) - instantAt(window.start, timeZone)) / 3_600_000;

/** A wall-clock time moved by whole days (negative to go back): the same wall-clock time, DST or not. */
export const addDays = (t: LocalDateTime, days: number): LocalDateTime => fromEpoch(toEpoch(t) + days * 86_400_000);
