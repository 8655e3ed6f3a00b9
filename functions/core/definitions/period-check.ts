import { addSeconds, formatLocalDateTime, formatWithPattern, parseWindowSize, windowAt, type LocalDateTime, type ReportWindow } from '../time/window.js';

/**
 * Whether a body template asks for a period that holds its window. The provider's specification does not say how
 * it reads a period's "to", so the definition says (`periodTo`, PERIOD_TO_READINGS), the simulator serves each
 * definition that way, and docs/add-a-report.md ("The period a body asks for") shows both readings:
 *
 * - `instant` (the default): each bound is the instant it writes, a bound without a time is that day's 00:00, a
 *   bound without seconds is that minute's :00; `{{window.end}}` stands for an exclusive "to", `{{window.last}}`
 *   for an inclusive one. `{{window.start:dd.MM.yyyy}}` with `{{window.last:dd.MM.yyyy}}` then asks for one
 *   instant of each day: every answer is empty, and nothing else would say so before weeks of history exist.
 * - `whole-day`: a "to" written without a time includes that whole day. `{{window.last:dd.MM.yyyy}}` asks for the
 *   window's day; `{{window.end:dd.MM.yyyy}}` asks for two days, so every row would load in two windows.
 *
 * The catalog refuses at load a template whose period is empty, inverted, or (whole-day) longer than its window.
 */

/** How a provider reads a period's "to" written without a time: the definition's `periodTo`, and the simulator's. */
export const PERIOD_TO_READINGS = {
  instant: 'each bound is the instant it writes (a date alone is its 00:00); {{window.end}} is an exclusive "to", {{window.last}} an inclusive one',
  'whole-day': 'a "to" written without a time includes that whole day',
} as const;
export type PeriodToReading = keyof typeof PERIOD_TO_READINGS;
export const PERIOD_TO_NAMES = Object.keys(PERIOD_TO_READINGS) as [PeriodToReading, ...PeriodToReading[]];
export const DEFAULT_PERIOD_TO: PeriodToReading = 'instant';

const PLACEHOLDER = /\{\{\s*window\.(start|end|last)\s*:\s*([^}]*?)\s*\}\}/g;

type Bound = 'start' | 'end' | 'last';

interface Placeholder {
  bound: Bound;
  pattern: string;
  /** The placeholder as written in the template. */
  text: string;
  path: Array<string | number>;
}

function placeholders(v: unknown, path: Array<string | number> = []): Placeholder[] {
  if (typeof v === 'string') {
    return [...v.matchAll(PLACEHOLDER)].map((m) => ({ bound: m[1] as Bound, pattern: m[2]!, text: m[0], path }));
  }
  if (Array.isArray(v)) return v.flatMap((x, i) => placeholders(x, [...path, i]));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => placeholders(x, [...path, k]));
  return [];
}

/** Fields finest first; a bound written in several fields (a date field and a time field) has the finest any of them writes. */
const FIELDS = [
  ['ss', 'second'],
  ['mm', 'minute'],
  ['HH', 'hour'],
  ['dd', 'day'],
  ['MM', 'month'],
] as const;

function truncate(t: LocalDateTime, patterns: readonly string[]): LocalDateTime {
  const finest = FIELDS.findIndex(([token]) => patterns.some((p) => p.includes(token)));
  const keep = finest < 0 ? FIELDS.length : finest;
  const cut = (i: number) => i < keep;
  return {
    year: t.year,
    month: cut(4) ? 1 : t.month,
    day: cut(3) ? 1 : t.day,
    hour: cut(2) ? 0 : t.hour,
    minute: cut(1) ? 0 : t.minute,
    second: cut(0) ? 0 : t.second,
  };
}

const epoch = (t: LocalDateTime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);

export interface PeriodProblem {
  /** Where the "to" placeholder sits in the template. */
  path: Array<string | number>;
  message: string;
}

/** The window the check renders: any will do for whole days; for hours, the first of a day shows a date-only bound at once. */
export const SAMPLE_WINDOW_START: LocalDateTime = { year: 2026, month: 1, day: 15, hour: 0, minute: 0, second: 0 };

/** Whether every pattern of a bound writes a date alone (no hour, minute or second). */
const dateOnly = (ps: readonly Placeholder[]) => !ps.some((p) => /HH|mm|ss/.test(p.pattern));

const nextDay = (t: LocalDateTime): LocalDateTime => {
  const d = new Date(epoch(t) + 86_400_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: 0, minute: 0, second: 0 };
};

/**
 * The period a template asks for in one window, read as `periodTo` says: [from, to) for window.end, [from, to] for
 * window.last; under `whole-day` a date-only "to" reaches the end of its day (`wholeDayEnd`, exclusive).
 */
export function renderedPeriod(template: unknown, window: ReportWindow, periodTo: PeriodToReading = DEFAULT_PERIOD_TO) {
  const all = placeholders(template);
  const starts = all.filter((p) => p.bound === 'start');
  const tos = all.filter((p) => p.bound === 'end').length ? all.filter((p) => p.bound === 'end') : all.filter((p) => p.bound === 'last');
  if (!starts.length || !tos.length) return undefined;
  const toBound = tos[0]!.bound;
  const from = truncate(window.start, starts.map((p) => p.pattern));
  const toInstant = toBound === 'end' ? window.end : addSeconds(window.end, -1);
  const to = truncate(toInstant, tos.map((p) => p.pattern));
  const wholeDayEnd = periodTo === 'whole-day' && dateOnly(tos) ? nextDay(to) : undefined;
  return { starts, tos, toBound, toInstant, from, to, wholeDayEnd };
}

type Period = NonNullable<ReturnType<typeof renderedPeriod>>;

function fixFor(period: Period, hourly: boolean): string {
  const to = period.tos[0]!;
  const timed = (p: Placeholder) => (/HH/.test(p.pattern) ? p.pattern : `${p.pattern} HH:mm:ss`);
  if (epoch(period.to) < epoch(period.from)) {
    return `"to" falls before "from": put {{window.start:…}} in the period's "from" and {{window.end:…}} or {{window.last:…}} in its "to"`;
  }
  if (hourly) {
    return `a window shorter than a day needs the time in both bounds: {{window.start:${timed(period.starts[0]!)}}} and {{window.${to.bound}:${timed(to)}}}`;
  }
  if (period.wholeDayEnd) return `this provider reads a date-only "to" as its whole day: write {{window.last:${to.pattern}}} (the window's own day)`;
  const wholeDay = /dd/.test(to.pattern) ? `; if it reads a date-only "to" as the whole day, say "periodTo": "whole-day" and write {{window.last:${to.pattern}}}` : '';
  return (
    `if the provider's "to" is exclusive, write {{window.end:${to.pattern}}} (the next day); ` +
    `if it is inclusive, give it the time: {{window.last:${timed(to)}}}${wholeDay}`
  );
}

const show = (ps: Placeholder[], t: LocalDateTime) => ps.map((p) => `${p.text} writes ${JSON.stringify(formatWithPattern(t, p.pattern))}`).join(', ');

/** How the period reads, for the message: `2026-01-15T00:00:00 to 2026-01-15T00:00:00 (inclusive)`. */
function readAs(period: Period): string {
  if (period.wholeDayEnd) return `${formatLocalDateTime(period.from)} to ${formatLocalDateTime(period.wholeDayEnd)} (exclusive: "periodTo" is "whole-day")`;
  return `${formatLocalDateTime(period.from)} to ${formatLocalDateTime(period.to)} ${period.toBound === 'end' ? '(exclusive)' : '(inclusive)'}`;
}

/**
 * A problem when the template's period, read as `periodTo` says, is empty or inverted for a sample window of
 * `windowText` (P1D, PT6H), or, read as whole days, longer than the window (each row would load twice).
 */
export function periodProblem(template: unknown, windowText: string, periodTo: PeriodToReading = DEFAULT_PERIOD_TO): PeriodProblem | undefined {
  let size;
  try {
    size = parseWindowSize(windowText);
  } catch {
    return undefined; // the window field reports its own error
  }
  const window = windowAt(SAMPLE_WINDOW_START, size);
  const period = renderedPeriod(template, window, periodTo);
  if (!period) return undefined;
  const end = period.wholeDayEnd ?? period.to;
  const windowShown = `${formatLocalDateTime(window.start)}/${formatLocalDateTime(window.end)}`;
  const written = `for the window ${windowShown}, ${show(period.starts, window.start)} and ${show(period.tos, period.toInstant)}, read as ${readAs(period)}`;
  if (epoch(end) > epoch(period.from)) {
    if (epoch(end) - epoch(period.from) <= epoch(window.end) - epoch(window.start)) return undefined;
    const hours = (epoch(end) - epoch(period.from)) / 3_600_000;
    const length = hours % 24 === 0 ? `${hours / 24} day${hours === 24 ? '' : 's'}` : `${hours} hours`;
    return {
      path: period.tos[0]!.path,
      message: `the period is too long: ${written}: ${length} for a ${windowText} window, so rows would load in more than one window. Fix: ${fixFor(period, size.unit === 'hour')}.`,
    };
  }
  const kind = epoch(end) === epoch(period.from) ? 'empty' : 'inverted';
  return {
    path: period.tos[0]!.path,
    message:
      `the period is ${kind}: ${written}: a bound without a time is that day's 00:00, so the gateway would answer no rows. ` +
      `Fix: ${fixFor(period, size.unit === 'hour')}.`,
  };
}

/** What the body asked the gateway for in one window, as the provider sees it: `"18.11.2026" to "18.11.2026" (inclusive)`. */
export function describePeriod(template: unknown, window: ReportWindow, periodTo: PeriodToReading = DEFAULT_PERIOD_TO): string {
  const all = placeholders(template);
  const period = renderedPeriod(template, window, periodTo);
  const written = (ps: Placeholder[], t: LocalDateTime) => ps.map((p) => JSON.stringify(formatWithPattern(t, p.pattern))).join(' ');
  if (!period) return `from ${written(all.filter((p) => p.bound === 'start'), window.start)}`;
  const reading = period.wholeDayEnd ? 'inclusive, whole days' : period.toBound === 'end' ? 'exclusive' : 'inclusive';
  return `${written(period.starts, window.start)} to ${written(period.tos, period.toInstant)} (${reading})`;
}
