/**
 * Athena's `date` partition projection, emulated from its documentation ("Supported types for partition
 * projection", Amazon Athena user guide) and nothing of ours: it reads a Glue table's parameters as Athena does
 * and tells which partition values a query at a given instant enumerates, and where each one's files are.
 *
 * - projection.<col>.format: a Java DateTimeFormatter pattern (here the letters yyyy, MM, dd, HH, mm, ss).
 * - projection.<col>.range: "<min>,<max>", each either a date in that format or NOW with an optional offset,
 *   `NOW[+-]<n>(YEARS|MONTHS|WEEKS|DAYS|HOURS|MINUTES|SECONDS)` (singular allowed, spaces allowed), both ends
 *   inclusive. Dates and NOW are read in UTC.
 * - projection.<col>.interval (default 1) and .interval.unit (default: DAYS for a format no finer than a day;
 *   a finer format must name it).
 * - storage.location.template: the location with ${<col>} replaced by the value.
 */

type Fields = { year: number; month: number; day: number; hour: number; minute: number; second: number };
const UNITS = ['YEARS', 'MONTHS', 'WEEKS', 'DAYS', 'HOURS', 'MINUTES', 'SECONDS'] as const;
type Unit = (typeof UNITS)[number];

const TOKENS: Record<string, { field: keyof Fields; width: number }> = {
  yyyy: { field: 'year', width: 4 },
  MM: { field: 'month', width: 2 },
  dd: { field: 'day', width: 2 },
  HH: { field: 'hour', width: 2 },
  mm: { field: 'minute', width: 2 },
  ss: { field: 'second', width: 2 },
};
const TOKEN = /yyyy|MM|dd|HH|mm|ss/g;

function format(ms: number, pattern: string): string {
  const d = new Date(ms);
  const f: Fields = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  return pattern.replace(TOKEN, (t) => String(f[TOKENS[t]!.field]).padStart(TOKENS[t]!.width, '0'));
}

function parse(text: string, pattern: string): number {
  const fields: Fields = { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
  const order: string[] = [];
  const regex = new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(TOKEN, (t) => (order.push(t), `(\\d{${TOKENS[t]!.width}})`))}$`);
  const m = regex.exec(text.trim());
  if (!m) throw new Error(`"${text}" does not read with the format ${pattern}`);
  order.forEach((t, i) => (fields[TOKENS[t]!.field] = Number(m[i + 1])));
  return Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second);
}

function add(ms: number, n: number, unit: Unit): number {
  const d = new Date(ms);
  switch (unit) {
    case 'YEARS':
      return d.setUTCFullYear(d.getUTCFullYear() + n);
    case 'MONTHS':
      return d.setUTCMonth(d.getUTCMonth() + n);
    case 'WEEKS':
      return ms + n * 7 * 86_400_000;
    case 'DAYS':
      return ms + n * 86_400_000;
    case 'HOURS':
      return ms + n * 3_600_000;
    case 'MINUTES':
      return ms + n * 60_000;
    case 'SECONDS':
      return ms + n * 1000;
  }
}

const RELATIVE = /^\s*NOW\s*(?:([+-])\s*(\d+)\s*(YEARS?|MONTHS?|WEEKS?|DAYS?|HOURS?|MINUTES?|SECONDS?)\s*)?$/;

function rangeEnd(text: string, pattern: string, now: Date): number {
  const m = RELATIVE.exec(text);
  if (!m) return parse(text, pattern);
  if (!m[1]) return now.getTime();
  const unit = (m[3]!.endsWith('S') ? m[3] : `${m[3]}S`) as Unit;
  return add(now.getTime(), (m[1] === '-' ? -1 : 1) * Number(m[2]), unit);
}

export interface DateProjection {
  /** Every value a query at `now` enumerates, in order. */
  values(now: Date): string[];
  /** The S3 location Athena reads for a value (the template with the value put in). */
  location(value: string): string;
}

/** Reads a table's parameters (plain strings; a template with CloudFormation tokens is rendered by the caller). */
export function dateProjection(parameters: Record<string, string>, column: string, locationTemplate: string): DateProjection {
  const p = (k: string) => parameters[`projection.${column}.${k}`];
  if (parameters['projection.enabled'] !== 'true') throw new Error('projection.enabled is not "true": Athena would read the Glue partitions instead');
  if (p('type')?.trim().toLowerCase() !== 'date') throw new Error(`projection.${column}.type is ${p('type')}, not date`);
  const pattern = p('format');
  const range = p('range')?.split(',');
  if (!pattern || range?.length !== 2) throw new Error(`projection.${column}.format and a two-element range are required`);
  const interval = Number(p('interval') ?? 1);
  const finerThanDay = /HH|mm|ss/.test(pattern);
  const unit = (p('interval.unit')?.toUpperCase() ?? (finerThanDay ? undefined : 'DAYS')) as Unit | undefined;
  if (!unit || !UNITS.includes(unit)) throw new Error(`projection.${column}.interval.unit is required for the format ${pattern}`);
  return {
    values(now) {
      const out: string[] = [];
      const end = rangeEnd(range[1]!, pattern, now);
      for (let t = rangeEnd(range[0]!, pattern, now); t <= end; t = add(t, interval, unit)) out.push(format(t, pattern));
      return out;
    },
    location: (value) => locationTemplate.replaceAll(`\${${column}}`, value),
  };
}
