import { LOADED_OUTCOMES, LOADS_TABLE, REPORT_KEY } from '../../functions/core/lake/loads-table.js';
import { CONNECTION_KEY, literal, PARTITION_KEY } from '../../functions/core/definitions/table-schema.js';
import type { NamedQuerySource } from './saved-queries.js';

/**
 * The saved query every report has without a file: per day, each of its connections and whether its load of that
 * day is in (the `loads` table, functions/core/lake/loads-table.ts). Generated from the definition, so a connection
 * added to it is listed with the next deploy, and no one writes the same query per report. A file
 * queries/<report>/coverage.sql replaces it. Written once for Trino and DuckDB alike: plain joins, no array functions.
 *
 * A day appears once any connection has a load attempt of it; a connection with none that day (its fetch was
 * refused, its gateway down) is "not loaded", as is one whose load failed.
 */

export const COVERAGE_QUERY = 'coverage';

export function coverageQuery(report: { id: string; connections: readonly string[] }): NamedQuerySource {
  const id = literal(report.id);
  const sql = [
    `-- Per day, each connection of ${report.id} and whether its load of that day is in ("loaded") or not ("not loaded": failed, or never fetched).`,
    '-- Built in for every report (lib/saved-queries/coverage-query.ts); join it on dt to any result to know which providers a day includes.',
    `WITH expected (${CONNECTION_KEY}) AS (VALUES ${report.connections.map((c) => `(${literal(c)})`).join(', ')}),`,
    `days AS (SELECT DISTINCT ${PARTITION_KEY} FROM ${LOADS_TABLE} WHERE ${REPORT_KEY} = ${id}),`,
    `loaded AS (`,
    `  SELECT ${PARTITION_KEY}, ${CONNECTION_KEY}, sum("rows"."written") AS rows_written`,
    `  FROM ${LOADS_TABLE}`,
    `  WHERE ${REPORT_KEY} = ${id} AND outcome IN (${LOADED_OUTCOMES.map(literal).join(', ')})`,
    `  GROUP BY ${PARTITION_KEY}, ${CONNECTION_KEY}`,
    ')',
    `SELECT d.${PARTITION_KEY}, e.${CONNECTION_KEY}, CASE WHEN l.${CONNECTION_KEY} IS NULL THEN 'not loaded' ELSE 'loaded' END AS status, l.rows_written`,
    'FROM days d',
    'CROSS JOIN expected e',
    `LEFT JOIN loaded l ON l.${PARTITION_KEY} = d.${PARTITION_KEY} AND l.${CONNECTION_KEY} = e.${CONNECTION_KEY}`,
    `ORDER BY d.${PARTITION_KEY} DESC, e.${CONNECTION_KEY}`,
  ].join('\n');
  const description = `Per day, each connection of ${report.id} and whether its load of that day is in; built in for every report.`;
  return { name: COVERAGE_QUERY, description, sql, file: `(built in: ${COVERAGE_QUERY} of ${report.id})`, text: sql };
}
