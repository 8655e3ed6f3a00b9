import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';
import { ENVIRONMENTS_DIR_VARIABLE } from '../../lib/environment/environments.js';
import { QUERIES_DIR_VARIABLE } from '../../lib/saved-queries/saved-queries.js';

/**
 * Catalogs and environments with several connections, written to a temporary folder and pointed at through
 * PAYNET_REPORTS_DIR, PAYNET_ENVIRONMENTS_DIR and PAYNET_QUERIES_DIR, so a test runs `npm start` over them as a
 * user's checkout would. Every report is the fixture transactions definition under another id, connection and,
 * if asked, reportIdentifier.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/reports/transactions.json', import.meta.url));
const SHIPPED_ENVIRONMENT = fileURLToPath(new URL('../../config/environments/integration.json', import.meta.url));

export interface FixtureReport {
  id: string;
  /** One connection (written as "connection"), or several (written as "connections"). */
  connection: string | readonly string[];
  /** Default: the fixture's (custom-transactions-report). */
  reportIdentifier?: string;
}

export interface FixtureConnection {
  name: string;
  maxConcurrentRequests?: number;
}

/** Writes the reports and one environment file per entry of `environments` (its connections), and points the catalog at them. */
export async function useConnectionFixtures(
  dir: string,
  reports: readonly FixtureReport[],
  environments: Readonly<Record<string, readonly FixtureConnection[]>>,
): Promise<void> {
  const base = JSON.parse(await readFile(FIXTURE, 'utf8')) as Record<string, unknown> & { bodyTemplate: Record<string, unknown> };
  const reportsDir = join(dir, 'reports');
  const environmentsDir = join(dir, 'environments');
  const queriesDir = join(dir, 'queries');
  for (const d of [reportsDir, environmentsDir, queriesDir]) await mkdir(d, { recursive: true });
  delete base.$schema;
  for (const r of reports) {
    const reportIdentifier = r.reportIdentifier ?? (base.reportIdentifier as string);
    const over = typeof r.connection === 'string' ? { connection: r.connection } : { connections: r.connection };
    const definition = { ...base, id: r.id, ...over, reportIdentifier, bodyTemplate: { ...base.bodyTemplate, reportIdentifier } };
    await writeFile(join(reportsDir, `${r.id}.json`), JSON.stringify(definition, null, 2));
  }
  const shipped = JSON.parse(await readFile(SHIPPED_ENVIRONMENT, 'utf8')) as Record<string, unknown>;
  delete shipped.gateway;
  delete shipped.secret;
  for (const [name, connections] of Object.entries(environments)) {
    const defined = Object.fromEntries(
      connections.map((c) => [
        c.name,
        {
          gateway: { endpointUrl: `https://${c.name}.gateway.example/paynet-ui/services/v2/rpt-engine` },
          secret: { name: `paynet-reports/${name}/${c.name}`, mode: 'create' },
          ...(c.maxConcurrentRequests === undefined ? {} : { maxConcurrentRequests: c.maxConcurrentRequests }),
        },
      ]),
    );
    await writeFile(join(environmentsDir, `${name}.json`), JSON.stringify({ ...shipped, name, connections: defined }, null, 2));
  }
  process.env[REPORTS_DIR_VARIABLE] = reportsDir;
  process.env[ENVIRONMENTS_DIR_VARIABLE] = environmentsDir;
  process.env[QUERIES_DIR_VARIABLE] = queriesDir;
}
