/**
 * EventBridge Scheduler's recurring expressions, checked the way the service checks them, so that a bad
 * schedule fails when the definition loads (and `cdk synth` with it) instead of at `cdk deploy`:
 *
 *   cron(minutes hours day-of-month month day-of-week year)
 *   rate(value unit)    unit: minute | minutes | hour | hours | day | days (singular exactly when value is 1)
 *
 * Field ranges and wildcards follow the Scheduler user guide ("Schedule types on EventBridge Scheduler"):
 * minutes 0-59, hours 0-23, day-of-month 1-31 (also L, W, nW, LW), month 1-12 or JAN-DEC, day-of-week 1-7
 * or SUN-SAT (also L, nL, n#k), year 1970-2199; `,` `-` `*` `/` everywhere; `?` only in day-of-month or
 * day-of-week, and exactly one of those two must be `?`. A one-time at(...) has no "last complete window".
 *
 * Returns the problems as sentences (empty when the expression is valid).
 */

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

const FIELDS: readonly Field[] = [
  { name: 'minutes', min: 0, max: 59 },
  { name: 'hours', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 1, max: 7, names: DAYS },
  { name: 'year', min: 1970, max: 2199 },
];

const DOM = 2;
const DOW = 4;

export const SCHEDULE_HELP =
  'an EventBridge Scheduler expression: "cron(minutes hours day-of-month month day-of-week year)" such as "cron(15 3 * * ? *)", or "rate(n unit)" such as "rate(6 hours)"';

/** A number or a name of the field, or NaN. */
function value(text: string, f: Field): number {
  if (/^\d+$/.test(text)) return Number(text);
  const i = f.names?.indexOf(text.toUpperCase() as never) ?? -1;
  return i === -1 ? NaN : f.min + i;
}

function checkValue(text: string, f: Field, problems: string[]): void {
  const v = value(text, f);
  if (Number.isNaN(v)) {
    problems.push(`${f.name} field: "${text}" is not a number${f.names ? ` or one of ${f.names.join(', ')}` : ''}`);
  } else if (v < f.min || v > f.max) {
    problems.push(`${f.name} field: ${text} is outside ${f.min}-${f.max}`);
  }
}

/** One comma-separated item of a field. */
function checkItem(item: string, f: Field, index: number, problems: string[]): void {
  if (item === '') return void problems.push(`${f.name} field: an empty item in a list`);
  if (index === DOM && /^(L|LW|\d+W)$/.test(item)) {
    if (item.endsWith('W') && item !== 'LW') checkValue(item.slice(0, -1), f, problems);
    return;
  }
  if (index === DOW) {
    const hash = /^(\w+)#(\d+)$/.exec(item);
    if (hash) {
      checkValue(hash[1]!, f, problems);
      const k = Number(hash[2]);
      if (k < 1 || k > 5) problems.push(`day-of-week field: "${item}": the week of the month after # must be 1-5`);
      return;
    }
    if (item === 'L') return;
    const last = /^(\w+)L$/.exec(item);
    if (last && !Number.isNaN(value(last[1]!, f))) return checkValue(last[1]!, f, problems);
  }
  const [range, step, ...more] = item.split('/');
  if (more.length) return void problems.push(`${f.name} field: "${item}" has more than one /`);
  if (step !== undefined && !/^[1-9]\d*$/.test(step)) {
    problems.push(`${f.name} field: the step in "${item}" must be a whole number above 0`);
  }
  if (range === '*') return;
  const [from, to, ...rest] = range!.split('-');
  if (rest.length) return void problems.push(`${f.name} field: "${item}" is not a range a-b`);
  checkValue(from!, f, problems);
  if (to !== undefined) checkValue(to, f, problems);
}

function checkCron(body: string): string[] {
  const fields = body.trim().split(/\s+/);
  if (fields.length !== 6) {
    return [`a cron expression has 6 fields (minutes hours day-of-month month day-of-week year); "${body}" has ${fields.length}`];
  }
  const problems: string[] = [];
  fields.forEach((text, i) => {
    const f = FIELDS[i]!;
    if (text === '?') {
      if (i !== DOM && i !== DOW) problems.push(`${f.name} field: "?" is allowed only in day-of-month or day-of-week`);
      return;
    }
    for (const item of text.split(',')) checkItem(item, f, i, problems);
  });
  const [dom, dow] = [fields[DOM], fields[DOW]];
  if ((dom === '?') === (dow === '?')) {
    problems.push(
      dom === '?'
        ? 'day-of-month and day-of-week are both "?": exactly one of them must be "?"'
        : `day-of-month ("${dom}") and day-of-week ("${dow}") cannot both be set: make one of them "?" (for every day: "* * ? *" or "? * * *")`,
    );
  }
  return problems;
}

function checkRate(body: string): string[] {
  const m = /^\s*(\d+)\s+([a-z]+)\s*$/.exec(body);
  if (!m) return [`a rate expression is "rate(n unit)", for example "rate(1 day)" or "rate(6 hours)"; got "rate(${body})"`];
  const n = Number(m[1]);
  const unit = m[2]!;
  if (n < 1) return ['the rate value must be 1 or more'];
  const units = ['minute', 'hour', 'day'];
  const singular = unit.replace(/s$/, '');
  if (!units.includes(singular)) return [`the rate unit "${unit}" must be minute(s), hour(s) or day(s)`];
  if (n === 1 && unit !== singular) return [`"rate(1 ${unit})" must use the singular unit: "rate(1 ${singular})"`];
  if (n > 1 && unit === singular) return [`"rate(${n} ${unit})" must use the plural unit: "rate(${n} ${unit}s)"`];
  return [];
}

/** The problems of a schedule expression, each one sentence; [] when EventBridge Scheduler would accept it. */
export function scheduleExpressionProblems(expression: string): string[] {
  const m = /^(cron|rate)\((.*)\)$/s.exec(expression);
  if (!m) return [`must be ${SCHEDULE_HELP}`];
  return m[1] === 'cron' ? checkCron(m[2]!) : checkRate(m[2]!);
}
