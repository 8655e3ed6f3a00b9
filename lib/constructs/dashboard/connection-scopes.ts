import { Dimension } from '../../../functions/aws/metrics.js';
import { condition, identifier, labelValueText } from '../../metrics-insights/identifiers.js';

/**
 * Which reports a dashboard query covers. The per-report metrics carry a `connection` dimension (lib/metrics.ts,
 * functions/aws/metrics.ts), so the dashboard passes `byDimension` (dashboard/insights.ts, HAS_CONNECTION_DIMENSION)
 * and a scope is `connection = 'acme'`: one per connection whatever its size, and the dashboard body does not grow
 * with the catalog. Without the dimension a connection is named by its reports (`report = 'a' OR report = 'b'`), and
 * as a query has a length limit, a connection with many reports is split into parts, each its own scope.
 */
export interface ConnectionScope {
  readonly connection: string;
  /** "acme", or "acme 2/3" when the connection's reports took more than one query. */
  readonly label: string;
  /**
   * A Metrics Insights condition that can follow an AND: `"connection" = '…'` (the documented grammar: `=`, `!=`, AND;
   * `connection` is a reserved keyword, so double-quoted), or, without a connection dimension, its reports ORed in
   * parentheses.
   */
  readonly condition: string;
  /** What the drop-down puts in place of the pattern in chosenCondition's text to make this scope's condition. */
  readonly choice: string;
  /** The reports it covers, in catalog order. */
  readonly reports: readonly string[];
}

export interface ScopeOptions {
  /** The longest condition a query can take (its length limit less the rest of the longest query). */
  readonly maxConditionLength: number;
  /** The metrics carry a `connection` dimension: filter on it instead of listing reports. */
  readonly byDimension?: boolean;
}

const reportTerm = (report: string): string => condition(Dimension.report, '=', report);
const conditionOf = (reports: readonly string[]): string => `(${reports.map(reportTerm).join(' OR ')})`;

/** Reports split, in order, into runs whose condition fits `maxLength`. */
function partsOf(reports: readonly string[], maxLength: number): string[][] {
  const parts: string[][] = [];
  let part: string[] = [];
  for (const report of reports) {
    if (conditionOf([report]).length > maxLength) {
      throw new Error(`Report id "${report}" is too long for a dashboard query (${maxLength} characters for its condition): shorten the id.`);
    }
    if (part.length && conditionOf([...part, report]).length > maxLength) {
      parts.push(part);
      part = [];
    }
    part.push(report);
  }
  if (part.length) parts.push(part);
  return parts;
}

/**
 * The condition of the graphs that show the scope chosen in a drop-down, `pattern` standing where the drop-down puts
 * the scope's `choice`. With a connection dimension only the connection's name is chosen, in the quotes of
 * `"connection" = '…'`: a pattern variable replaces text in the dashboard's JSON, where a double quote in a chosen
 * value would have to be escaped, so the quoted key stays in the graph's own query.
 */
export function chosenCondition(pattern: string, byDimension: boolean): string {
  return byDimension ? `${identifier(Dimension.connection)} = '${pattern}'` : pattern;
}

/** One scope per connection (per part of one, when its reports outgrow a query), connections in the order given. */
export function connectionScopes(reportsByConnection: ReadonlyMap<string, readonly string[]>, options: ScopeOptions): ConnectionScope[] {
  return [...reportsByConnection].flatMap(([connection, reports]) => {
    if (options.byDimension) {
      return [{ connection, label: connection, condition: condition(Dimension.connection, '=', connection), choice: labelValueText(connection), reports }];
    }
    const parts = partsOf(reports, options.maxConditionLength);
    return parts.map((part, i) => ({
      connection,
      label: parts.length > 1 ? `${connection} ${i + 1}/${parts.length}` : connection,
      condition: conditionOf(part),
      choice: conditionOf(part),
      reports: part,
    }));
  });
}

/** Report ids by connection, connections in the order their first report appears. */
export function reportsByConnection(reports: readonly { id: string; connection: string }[]): Map<string, string[]> {
  const byConnection = new Map<string, string[]>();
  for (const r of reports) byConnection.set(r.connection, [...(byConnection.get(r.connection) ?? []), r.id]);
  return byConnection;
}
