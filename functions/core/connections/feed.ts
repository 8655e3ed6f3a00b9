import type { ReportDefinition } from '../definitions/report-definition.js';

/**
 * A feed: one report fetched over one of its connections (docs/architecture.md, "Connections"). A definition names
 * its connections (`"connections": ["acme", "beta"]`); each (report, connection) pair is scheduled on the report's
 * schedule over that connection's queue and bound, and has its own windows, raw files, manifests, data checks,
 * freshness and alarms. Its rows land in the report's one table, in the partition `connection=<name>`.
 *
 * Everything that names data takes a FeedKey, never a bare report id: the S3 keys (lake/s3-keys.ts), manifests,
 * fetch messages, metrics and the local lake. So a place that still names data by report alone fails to compile.
 */
export interface FeedKey {
  readonly reportId: string;
  readonly connection: string;
}

/** A feed with its report's definition: what a run of it needs. */
export interface Feed extends FeedKey {
  readonly report: ReportDefinition;
}

export const feedOf = (report: ReportDefinition, connection: string): Feed => ({ reportId: report.id, connection, report });

/** Every feed of a report, in the order its definition names its connections. */
export const feedsOf = (report: ReportDefinition): Feed[] => report.connections.map((c) => feedOf(report, c));

/** How messages and summaries name a feed: `transactions over acme`. */
export const feedLabel = (feed: FeedKey): string => `${feed.reportId} over ${feed.connection}`;

/** A feed's key as one string, for maps and sets: `transactions/acme` (neither part can hold a "/"). */
export const feedId = (feed: FeedKey): string => `${feed.reportId}/${feed.connection}`;

export const sameFeed = (a: FeedKey, b: FeedKey): boolean => a.reportId === b.reportId && a.connection === b.connection;
