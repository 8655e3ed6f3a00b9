/**
 * Trino's two date-format languages as DuckDB strftime formats: the MySQL-style one of date_format and
 * date_parse, and JodaTime's of format_datetime and parse_datetime
 * (https://trino.io/docs/current/functions/datetime.html). A specifier Trino refuses, or one with no DuckDB
 * equivalent, throws: a query must fail locally where it would print something else in Athena.
 */

/** The letter after % in Trino's table, as DuckDB specifiers. */
const MYSQL_SPECIFIERS: Readonly<Record<string, string>> = {
  a: '%a', b: '%b', c: '%-m', d: '%d', e: '%-d', f: '%f', H: '%H', h: '%I', I: '%I', i: '%M', j: '%j', k: '%-H',
  l: '%-I', M: '%B', m: '%m', p: '%p', r: '%I:%M:%S %p', S: '%S', s: '%S', T: '%H:%M:%S', v: '%V', W: '%A',
  x: '%G', Y: '%Y', y: '%y', '%': '%%',
};

/** "The following specifiers are not currently supported" (Trino's documentation). */
const MYSQL_UNSUPPORTED = new Set(['D', 'U', 'u', 'V', 'w', 'X']);

/** A literal character for DuckDB: its only special character is %. */
const literal = (text: string) => text.replace(/%/g, '%%');

export function mysqlToDuckdbFormat(format: string): string {
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%') {
      out += literal(c);
      continue;
    }
    const letter = format[++i];
    if (letter === undefined) break; // a trailing % prints nothing, as in Trino
    if (MYSQL_UNSUPPORTED.has(letter)) throw new Error(`date format specifier %${letter} is not supported (Trino refuses it too)`);
    // "%x: x, for any x not listed above"
    out += MYSQL_SPECIFIERS[letter] ?? literal(letter);
  }
  return out;
}

/** JodaTime pattern letters, by how many times the letter repeats. */
const JODA_TOKENS: Readonly<Record<string, string>> = {
  yyyy: '%Y', yyy: '%Y', yy: '%y', y: '%Y', YYYY: '%Y', xxxx: '%G',
  MMMM: '%B', MMM: '%b', MM: '%m', M: '%-m', dd: '%d', d: '%-d', DDD: '%j', D: '%-j',
  HH: '%H', H: '%-H', hh: '%I', h: '%-I', mm: '%M', m: '%-M', ss: '%S', s: '%-S',
  SSSSSS: '%f', SSS: '%g', a: '%p', EEEE: '%A', EEE: '%a', EE: '%a', E: '%a', ww: '%V', w: '%-V',
};

/** A quoted literal ('' is a quote), a run of one letter, or anything else copied. */
const JODA_TOKEN = /'((?:[^']|'')*)'|([A-Za-z])\2*|[^A-Za-z']+/g;

export function jodaToDuckdbFormat(format: string): string {
  let out = '';
  for (const m of format.matchAll(JODA_TOKEN)) {
    const [token, quoted, letter] = m;
    if (quoted !== undefined) out += token === "''" ? "'" : literal(quoted.replace(/''/g, "'"));
    else if (letter === undefined) out += literal(token);
    else if (JODA_TOKENS[token] !== undefined) out += JODA_TOKENS[token];
    else throw new Error(`format_datetime pattern ${token} is not supported locally: use yyyy yy MM MMM MMMM dd D HH hh mm ss SSS a E EEEE`);
  }
  return out;
}
