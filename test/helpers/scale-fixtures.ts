import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURE_QUERIES_DIR } from './fixture-reports.js';
import { useConnectionFixtures } from './connection-fixtures.js';

/**
 * An environment of many reports, as issue 32 sizes it: `reports` copies of the fixture transactions definition
 * (r000, r001, ...) spread round-robin over `connections` connections (c0, c1, ...), the first `withQueries` of
 * them with the fixture's saved queries (three), each over its own table. Written under `dir` and pointed at
 * through PAYNET_REPORTS_DIR, PAYNET_ENVIRONMENTS_DIR and PAYNET_QUERIES_DIR (one environment, "scale").
 */
export interface ScaleShape {
  readonly reports: number;
  readonly connections: number;
  readonly withQueries: number;
  /** Connections each report is fetched over, consecutive from its own (default 1): reports × this = feeds (issue 45). */
  readonly connectionsPerReport?: number;
}

/** 500 feeds: 50 reports, each over all 10 connections (issue 45's fleet). */
export const FEED_SCALE: ScaleShape = { reports: 50, connections: 10, withQueries: 30, connectionsPerReport: 10 };

/** 500 reports over 10 connections, 30 of them with three saved queries: the size issue 32 holds to the quotas. */
export const ISSUE_SCALE: ScaleShape = { reports: 500, connections: 10, withQueries: 30 };

export const scaleReportId = (i: number): string => `r${String(i).padStart(3, '0')}`;

/** Writes the fixtures and points this process's catalog, environments and queries at them; returns the folders. */
export async function useScaleFixtures(dir: string, shape: ScaleShape): Promise<{ reports: string; environments: string; queries: string }> {
  const connections = Array.from({ length: shape.connections }, (_, i) => ({ name: `c${i}` }));
  const per = Math.min(shape.connectionsPerReport ?? 1, connections.length);
  const reports = Array.from({ length: shape.reports }, (_, i) => {
    const over = Array.from({ length: per }, (_, k) => connections[(i + k) % connections.length]!.name);
    return { id: scaleReportId(i), connection: per === 1 ? over[0]! : over };
  });
  await useConnectionFixtures(dir, reports, { scale: connections });
  const queries = join(dir, 'queries');
  const fixture = join(FIXTURE_QUERIES_DIR, 'transactions');
  for (const { id } of reports.slice(0, shape.withQueries)) {
    await mkdir(join(queries, id), { recursive: true });
    for (const file of await readdir(fixture)) {
      // Each over its own report's table, as a user's copy would be.
      await writeFile(join(queries, id, file), (await readFile(join(fixture, file), 'utf8')).replace(/\b(FROM|JOIN)\s+transactions\b/gi, `$1 ${id}`));
    }
  }
  return { reports: join(dir, 'reports'), environments: join(dir, 'environments'), queries };
}
