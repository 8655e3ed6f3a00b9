import type * as z from 'zod';

/**
 * Our wording for every refusal zod words itself, for the files a person writes (report definitions,
 * environment files) and the CONNECTIONS variable: passed to each safeParse as its error map. A schema's own
 * message (`.regex(re, 'must be …')`, a refinement's) still wins; this speaks only where the schema is silent, so
 * no file is ever answered "Invalid input: expected object, received undefined". Each says what to write.
 */

type Issue = z.core.$ZodRawIssue;

/** What a JSON value of each expected type looks like to the person writing it. */
const EXPECTED: Record<string, string> = {
  string: 'a string in quotes',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object {…}',
  record: 'an object {…}',
  array: 'a list […]',
  tuple: 'a list […]',
  null: 'null',
  nan: 'a number',
};

const quote = (v: unknown) => JSON.stringify(v);

/** A value as the person wrote it, shortly: `the string "abc"`, `the number 3`, `a list`. */
export function shown(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  switch (typeof input) {
    case 'string':
      return `the string ${quote(input.length > 40 ? `${input.slice(0, 40)}…` : input)}`;
    case 'number':
      return `the number ${input}`;
    case 'boolean':
      return String(input);
    case 'object':
      return 'an object';
    default:
      return typeof input;
  }
}

const expected = (what: string | undefined) => (what && EXPECTED[what]) ?? `a ${what ?? 'value'}`;

/** The fields an object schema knows, for "not a field here" (a strict object's refusal of an unknown key). */
function fieldsOf(issue: Issue): string[] {
  const shape = (issue.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
  return shape ? Object.keys(shape).filter((k) => k !== '$schema') : [];
}

const SIZE_UNITS: Record<string, [one: string, many: string]> = {
  string: ['character', 'characters'],
  array: ['entry', 'entries'],
  set: ['entry', 'entries'],
  file: ['byte', 'bytes'],
};

function sizeBound(issue: Issue & { origin?: string; inclusive?: boolean }, bound: number | bigint | Date, least: boolean): string {
  const units = SIZE_UNITS[issue.origin ?? ''];
  if (units) {
    const n = Number(bound);
    if (least && n === 1) return issue.origin === 'string' ? 'must not be empty' : 'must list at least one entry';
    return `must have ${least ? 'at least' : 'at most'} ${n} ${n === 1 ? units[0] : units[1]}`;
  }
  if (issue.inclusive === false) return `must be ${least ? 'more' : 'less'} than ${String(bound)}`;
  return `must be ${String(bound)} or ${least ? 'more' : 'less'}`;
}

const FORMATS: Record<string, string> = {
  url: 'a full URL, such as https://host/path',
  email: 'an email address, such as ops@example.com',
  uuid: 'a UUID, such as 0f7d1d1e-1111-2222-3333-444455556666',
  regex: 'text of the form the field documents',
  datetime: 'a date and time such as 2026-11-20T00:00:00Z',
  date: 'a date YYYY-MM-DD',
};

/** The error map: our sentence for the issue, said of the field its path names. */
export function refusalWording(issue: Issue): string {
  const i = issue as Issue & Record<string, unknown>;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `is missing: add it (${expected(i.expected as string)})`;
      return `must be ${expected(i.expected as string)}, not ${shown(issue.input)}`;
    case 'too_small':
      return sizeBound(i, i.minimum as number, true);
    case 'too_big':
      return sizeBound(i, i.maximum as number, false);
    case 'invalid_format': {
      const format = String(i.format);
      const pattern = format === 'regex' && i.pattern ? ` (${String(i.pattern)})` : '';
      return `must be ${FORMATS[format] ?? `in the ${format} format`}${pattern}, not ${shown(issue.input)}`;
    }
    case 'not_multiple_of':
      return `must be a multiple of ${String(i.divisor)}`;
    case 'unrecognized_keys': {
      const keys = (i.keys as string[]).map(quote);
      const fields = fieldsOf(issue);
      const known = fields.length ? ` (the fields here: ${fields.join(', ')})` : '';
      return `${keys.join(', ')} ${keys.length === 1 ? 'is not a field' : 'are not fields'} here: remove ${keys.length === 1 ? 'it' : 'them'} or correct the spelling${known}`;
    }
    case 'invalid_value': {
      const values = (i.values as unknown[]).map(quote);
      return `must be ${values.length === 1 ? values[0] : `one of ${values.join(', ')}`}, not ${shown(issue.input)}`;
    }
    case 'invalid_union':
      return `matches none of the forms this field takes (${shown(issue.input)}): see the field in the docs`;
    case 'invalid_key':
      return 'has a key this field does not take';
    case 'invalid_element':
      return `has an entry this field does not take`;
    default:
      return `is not accepted here (${shown(issue.input)})`;
  }
}
