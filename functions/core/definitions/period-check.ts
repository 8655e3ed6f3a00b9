import { addSeconds, formatLocalDateTime, formatWithPattern, parseWindowSize, windowAt, type LocalDateTime, type ReportWindow } from '../time/window.js';

/**
 * Whether a body template asks for a period that holds anything. The provider does not say how it reads a
 * period's "to"; the pipeline reads it one way, documented in docs/add-a-report.md ("The period a body asks
 * for") and served so by the simulator: each bound is the instant it writes, a bound without a time is that
 * day's 00:00, a bound without seconds is that minute's :00. `{{window.end}}` stands for an exclusive "to",
 * `{{window.last}}` for an inclusive one. Under that reading `{{window.start:dd.MM.yyyy}}` with
 * `{{window.last:dd.MM.yyyy}}` asks for one instant of each day: every answer is empty, and nothing else
 * would say so before weeks of history exist. The catalog refuses such a template at load.
 */

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

/** The period a template asks for in one window, read as documented: [from, to) for window.end, [from, to] for window.last. */
export function renderedPeriod(template: unknown, window: ReportWindow) {
  const all = placeholders(template);
  const starts = all.filter((p) => p.bound === 'start');
  const tos = all.filter((p) => p.bound === 'end').length ? all.filter((p) => p.bound === 'end') : all.filter((p) => p.bound === 'last');
  if (!starts.length || !tos.length) return undefined;
  const toBound = tos[0]!.bound;
  const from = truncate(window.start, starts.map((p) => p.pattern));
  const to = truncate(toBound === 'end' ? window.end : addSeconds(window.end, -1), tos.map((p) => p.pattern));
  return { starts, tos, toBound, from, to };
}

function fixFor(period: NonNullable<ReturnType<typeof renderedPeriod>>, hourly: boolean): string {
  const to = period.tos[0]!;
  const timed = (p: Placeholder) => (/HH/.test(p.pattern) ? p.pattern : `${p.pattern} HH:mm:ss`);
  if (epoch(period.to) < epoch(period.from)) {
    return `"to" falls before "from": put {{window.start:…}} in the period's "from" and {{window.end:…}} or {{window.last:…}} in its "to"`;
  }
  if (hourly) {
    return `a window shorter than a day needs the time in both bounds: {{window.start:${timed(period.starts[0]!)}}} and {{window.${to.bound}:${timed(to)}}}`;
  }
  return (
    `if the provider's "to" is exclusive, write {{window.end:${to.pattern}}} (the next day); ` +
    `if it is inclusive, give it the time: {{window.last:${timed(to)}}}`
  );
}

/** A problem when the template's period is empty or inverted for a sample window of `windowText` (P1D, PT6H). */
export function periodProblem(template: unknown, windowText: string): PeriodProblem | undefined {
  let size;
  try {
    size = parseWindowSize(windowText);
  } catch {
    return undefined; // the window field reports its own error
  }
  const window = windowAt(SAMPLE_WINDOW_START, size);
  const period = renderedPeriod(template, window);
  if (!period || epoch(period.to) > epoch(period.from)) return undefined;
  const show = (ps: Placeholder[], t: LocalDateTime) => ps.map((p) => `${p.text} writes ${JSON.stringify(formatWithPattern(t, p.pattern))}`).join(', ');
  const kind = epoch(period.to) === epoch(period.from) ? 'empty' : 'inverted';
  const windowShown = `${formatLocalDateTime(window.start)}/${formatLocalDateTime(window.end)}`;
  return {
    path: period.tos[0]!.path,
    message:
      `the period is ${kind}: for the window ${windowShown}, ${show(period.starts, window.start)} and ` +
      `${show(period.tos, period.toBound === 'end' ? window.end : addSeconds(window.end, -1))}, read as ${formatLocalDateTime(period.from)} to ` +
      `${formatLocalDateTime(period.to)} ${period.toBound === 'end' ? '(exclusive)' : '(inclusive)'}: a bound without a time is that day's 00:00, so the gateway would answer no rows. ` +
      `Fix: ${fixFor(period, size.unit === 'hour')}.`,
  };
}

/** What the body asked the gateway for in one window, as the provider sees it: `"18.11.2026" to "18.11.2026" (inclusive)`. */
export function describePeriod(template: unknown, window: ReportWindow): string {
  const all = placeholders(template);
  const period = renderedPeriod(template, window);
  const written = (ps: Placeholder[], t: LocalDateTime) => ps.map((p) => JSON.stringify(formatWithPattern(t, p.pattern))).join(' ');
  if (!period) return `from ${written(all.filter((p) => p.bound === 'start'), window.start)}`;
  const toInstant = period.toBound === 'end' ? window.end : addSeconds(window.end, -1);
  return `${written(period.starts, window.start)} to ${written(period.tos, toInstant)} (${period.toBound === 'end' ? 'exclusive' : 'inclusive'})`;
}
