/**
 * Parses text by a DuckDB strftime-style format into "YYYY-MM-DD HH:MM:SS.mmm", or throws. DuckDB's own
 * strptime takes only a constant format, and a macro's argument is never one when the macro is created, so
 * Trino's date_parse and parse_datetime (trino-functions.ts) parse here. The specifiers are the ones those
 * translations produce.
 */

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

type Field = 'year' | 'year2' | 'month' | 'monthName' | 'day' | 'hour' | 'hour12' | 'minute' | 'second' | 'fraction' | 'ampm' | 'dayOfYear' | 'skip';

const SPECIFIERS: Readonly<Record<string, [pattern: string, field: Field]>> = {
  Y: ['\\d{4}', 'year'], y: ['\\d{2}', 'year2'], m: ['\\d{1,2}', 'month'], d: ['\\d{1,2}', 'day'], H: ['\\d{1,2}', 'hour'],
  I: ['\\d{1,2}', 'hour12'], M: ['\\d{1,2}', 'minute'], S: ['\\d{1,2}', 'second'], f: ['\\d{1,9}', 'fraction'],
  g: ['\\d{1,9}', 'fraction'], p: ['[AaPp][Mm]', 'ampm'], b: ['[A-Za-z]{3}', 'monthName'], B: ['[A-Za-z]+', 'monthName'],
  a: ['[A-Za-z]{3}', 'skip'], A: ['[A-Za-z]+', 'skip'], j: ['\\d{1,3}', 'dayOfYear'],
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function compile(format: string): { re: RegExp; fields: Field[] } {
  const fields: Field[] = [];
  let source = '';
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== '%') {
      source += escape(format[i]!);
      continue;
    }
    const letter = format[i + 1] === '-' ? format[(i += 2)] : format[++i];
    if (letter === '%') {
      source += '%';
      continue;
    }
    const spec = letter === undefined ? undefined : SPECIFIERS[letter];
    if (!spec) throw new Error(`format specifier %${letter ?? ''} cannot be parsed`);
    source += `(${spec[0]})`;
    fields.push(spec[1]);
  }
  return { re: new RegExp(`^${source}$`), fields };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A two-digit year is 1970..2069, as Trino reads %y. */
const century = (yy: number) => (yy >= 70 ? 1900 + yy : 2000 + yy);

function fieldValues(fields: Field[], values: string[]) {
  const t = { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, millis: 0, pm: undefined as boolean | undefined, dayOfYear: 0 };
  fields.forEach((field, i) => {
    const v = values[i]!;
    const n = Number(v);
    if (field === 'year') t.year = n;
    else if (field === 'year2') t.year = century(n);
    else if (field === 'month') t.month = n;
    else if (field === 'monthName') t.month = MONTHS.findIndex((m) => m.startsWith(v.toLowerCase()) && (v.length === 3 || m === v.toLowerCase())) + 1;
    else if (field === 'day') t.day = n;
    else if (field === 'hour' || field === 'hour12') t.hour = n;
    else if (field === 'minute') t.minute = n;
    else if (field === 'second') t.second = n;
    else if (field === 'fraction') t.millis = Math.floor(Number(`0.${v}`) * 1000);
    else if (field === 'ampm') t.pm = v.toLowerCase() === 'pm';
    else if (field === 'dayOfYear') t.dayOfYear = n;
    else if (!DAYS.some((d) => d.startsWith(v.toLowerCase()))) t.month = 0;
  });
  if (t.pm !== undefined) t.hour = (t.hour % 12) + (t.pm ? 12 : 0);
  return t;
}

export function strptimeText(text: string, format: string): string {
  const { re, fields } = compile(format);
  const m = re.exec(text);
  if (!m) throw new Error(`Invalid format: "${text}" does not match the format`);
  const t = fieldValues(fields, m.slice(1));
  const ms = t.dayOfYear
    ? Date.UTC(t.year, 0, t.dayOfYear, t.hour, t.minute, t.second, t.millis)
    : Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second, t.millis);
  const d = new Date(ms);
  const real = t.dayOfYear ? d.getUTCFullYear() === t.year : d.getUTCMonth() === t.month - 1 && d.getUTCDate() === t.day;
  if (!real || t.hour > 23 || t.minute > 59 || t.second > 59) throw new Error(`Invalid format: "${text}" is not a real date and time`);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}.${pad(t.millis, 3)}`;
}
