/**
 * CloudWatch's documented limits the dashboard is built to (CloudWatch service quotas, "Dashboards"; the dashboard
 * body structure; the search expression syntax; Metrics Insights quotas). None of them can be raised, so the
 * dashboard holds to them by construction and a test holds it to them at 500 reports.
 */
export const DASHBOARD_LIMITS = {
  /** Widgets in one dashboard body. */
  widgets: 500,
  /** Metrics one widget retrieves, those only used by math included. */
  metricsPerWidget: 500,
  /** Metrics the whole dashboard retrieves, across its widgets. */
  metricsPerDashboard: 2500,
  /** Time series one Metrics Insights query (or one search) returns. */
  seriesPerQuery: 500,
  /**
   * Characters of one query. A search expression is documented at 1,024; Metrics Insights documents no figure of its
   * own, so its queries are held to the same one rather than to a guess.
   */
  queryLength: 1024,
  /**
   * Characters of one Logs Insights query (a log widget's, its `SOURCE '<log group>'` parts included): the
   * CloudFormation resource schema of AWS::Logs::QueryDefinition gives QueryString a maxLength of 10,000, as
   * CloudWatch Logs' StartQuery reference does for queryString.
   */
  logsQueryLength: 10_000,
  /** Log groups one Logs Insights query reads: StartQuery's reference says up to 50 (older versions of it said 20). */
  logGroupsPerQuery: 50,
  /** The longest log group name (LogGroup in the AWS::Logs::QueryDefinition schema: maxLength 512). */
  logGroupNameLength: 512,
  /** Rows a Logs Insights query returns at most (StartQuery's `limit`, 1 to 10,000). */
  logsQueryRows: 10_000,
} as const;
