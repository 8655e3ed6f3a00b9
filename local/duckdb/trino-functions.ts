import type { DuckDBConnection } from '@duckdb/node-api';
import { strptimeText } from './strptime-text.js';
import { jodaToDuckdbFormat, mysqlToDuckdbFormat } from './trino-formats.js';

/**
 * Trino's date functions over DuckDB, so a saved query written for Athena runs unchanged on the local lake.
 * DuckDB lacks most of them by name (date_format, date_parse, format_datetime, from_iso8601_timestamp,
 * to_iso8601, day_of_week, …) and has two under Trino's names with other meanings: date_add takes
 * (date, interval), and date_diff counts boundaries crossed where Trino counts whole units elapsed. Macros
 * shadow DuckDB's functions of the same name, so each is defined here with Trino's arguments and results
 * (https://trino.io/docs/current/functions/datetime.html; test/integration/trino-functions.test.ts holds them
 * to that page's examples).
 *
 * The format strings are translated inside SQL, not in TypeScript: a format may be a column or an expression,
 * and a macro sees it only at run time. Session time zone UTC, as Athena's.
 */

const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** Unit names as Trino takes them (any case), each as a DuckDB interval of one. */
const INTERVAL_UNITS: ReadonlyArray<[unit: string, interval: string]> = [
  ['millisecond', 'to_milliseconds(v)'], ['second', 'to_seconds(v)'], ['minute', 'to_minutes(v)'], ['hour', 'to_hours(v)'],
  ['day', 'to_days(v)'], ['week', 'to_weeks(v)'], ['month', 'to_months(v)'], ['quarter', 'to_months(3 * v)'], ['year', 'to_years(v)'],
];

const dateAddMacro = () =>
  `CREATE OR REPLACE MACRO date_add(u, v, t) AS CASE ${INTERVAL_UNITS.map(([unit, interval]) => `WHEN lower(u) = ${quote(unit)} THEN t + ${interval}`).join(' ')} ` +
  `ELSE error('date_add: unknown unit ' || u) END`;

/** The macros, in dependency order. Each is one statement. */
export function trinoFunctionMacros(): string[] {
  return [
    `CREATE OR REPLACE MACRO date_format(t, f) AS strftime(t, trino_mysql_format(f))`,
    `CREATE OR REPLACE MACRO date_parse(s, f) AS CAST(trino_strptime(s, trino_mysql_format(f)) AS TIMESTAMP)`,
    `CREATE OR REPLACE MACRO format_datetime(t, f) AS strftime(t, trino_joda_format(f))`,
    `CREATE OR REPLACE MACRO parse_datetime(s, f) AS CAST(trino_strptime(s, trino_joda_format(f)) AS TIMESTAMPTZ)`,
    `CREATE OR REPLACE MACRO from_iso8601_timestamp(s) AS CAST(s AS TIMESTAMPTZ)`,
    `CREATE OR REPLACE MACRO from_iso8601_date(s) AS CAST(s AS DATE)`,
    // Trino writes a DATE as a date, a TIMESTAMP with its milliseconds, one WITH TIME ZONE in UTC ending Z.
    `CREATE OR REPLACE MACRO to_iso8601(x) AS CASE typeof(x) WHEN 'DATE' THEN strftime(CAST(x AS DATE), '%Y-%m-%d') ` +
      `WHEN 'TIMESTAMP WITH TIME ZONE' THEN strftime(CAST(x AS TIMESTAMPTZ) AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') ` +
      `ELSE strftime(CAST(x AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%g') END`,
    dateAddMacro(),
    // DuckDB's date_sub counts whole units elapsed, as Trino's date_diff does; DuckDB's date_diff counts boundaries.
    `CREATE OR REPLACE MACRO date_diff(u, a, b) AS date_sub(lower(u), a, b)`,
    `CREATE OR REPLACE MACRO day_of_week(x) AS isodow(x)`,
    `CREATE OR REPLACE MACRO dow(x) AS isodow(x)`,
    `CREATE OR REPLACE MACRO day_of_month(x) AS day(x)`,
    `CREATE OR REPLACE MACRO day_of_year(x) AS dayofyear(x)`,
    `CREATE OR REPLACE MACRO doy(x) AS dayofyear(x)`,
    `CREATE OR REPLACE MACRO week_of_year(x) AS week(x)`,
    `CREATE OR REPLACE MACRO year_of_week(x) AS isoyear(x)`,
    `CREATE OR REPLACE MACRO yow(x) AS isoyear(x)`,
    `CREATE OR REPLACE MACRO last_day_of_month(x) AS last_day(x)`,
    `CREATE OR REPLACE MACRO to_unixtime(t) AS CAST(epoch_ms(t) AS DOUBLE) / 1000`,
    `CREATE OR REPLACE MACRO from_unixtime(x) AS to_timestamp(x)`,
  ];
}

/** A scalar function of VARCHAR arguments to VARCHAR in TypeScript: NULL for any NULL argument, a throw as the query's error. */
async function registerTextFunction(connection: DuckDBConnection, name: string, fn: (...args: string[]) => string): Promise<void> {
  const { DuckDBScalarFunction, VARCHAR } = await import('@duckdb/node-api');
  connection.registerScalarFunction(
    DuckDBScalarFunction.create({
      name,
      returnType: VARCHAR,
      parameterTypes: Array.from({ length: fn.length }, () => VARCHAR),
      mainFunction: (info, input, output) => {
        const vectors = Array.from({ length: fn.length }, (_, i) => input.getColumnVector(i));
        try {
          for (let row = 0; row < input.rowCount; row++) {
            const args = vectors.map((v) => v.getItem(row));
            output.setItem(row, args.some((a) => a === null) ? null : fn(...args.map(String)));
          }
        } catch (e) {
          info.setError(e instanceof Error ? e.message : String(e));
        }
        output.flush();
      },
    }),
  );
}

/** Session zone UTC (Athena's), then the macros. */
export async function defineTrinoFunctions(connection: DuckDBConnection): Promise<void> {
  await connection.run(`SET TimeZone = 'UTC'`);
  // Not volatile: with a literal format DuckDB folds the translation to the constant its strftime demands.
  await registerTextFunction(connection, 'trino_mysql_format', mysqlToDuckdbFormat);
  await registerTextFunction(connection, 'trino_joda_format', jodaToDuckdbFormat);
  await registerTextFunction(connection, 'trino_strptime', strptimeText);
  for (const sql of trinoFunctionMacros()) await connection.run(sql);
}
