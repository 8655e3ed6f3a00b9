import { reportSources } from '../../functions/core/definitions/catalog-files.js';
import { ReportCatalog, type ReportSource } from '../../functions/core/definitions/catalog.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { connectionProblems } from '../../functions/core/connections/connection-problems.js';
import { parseReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { loadEnvironments, readEnvironmentSources, refuseUndefinedConnections, type EnvironmentConfig, type EnvironmentSource } from './environments.js';

/**
 * The configuration as `cdk synth`, `npm start` and every command load it: the definitions (config/reports/), the
 * environment files (config/environments/) and each report's connection defined by every environment, with every
 * problem of every file in one round. Before, a broken definition hid broken environment files until it was fixed,
 * and they in turn the connections of the reports.
 */

export interface Configuration {
  readonly catalog: ReportCatalog;
  readonly environments: EnvironmentConfig[];
}

/** Where the files come from; default: the folders (PAYNET_REPORTS_DIR, PAYNET_ENVIRONMENTS_DIR). */
export interface ConfigurationSources {
  readonly reports?: readonly ReportSource[];
  readonly environments?: readonly EnvironmentSource[];
}

type Attempt<T> = { value: T; problem?: undefined } | { problem: ConfigurationError };

function attempt<T>(step: () => T): Attempt<T> {
  try {
    return { value: step() };
  } catch (e) {
    if (e instanceof ConfigurationError) return { problem: e };
    throw e;
  }
}

/** Every problem of the definitions, the environment files and the connections, thrown at once. */
export function loadConfiguration(sources: ConfigurationSources = {}): Configuration {
  const reports = sources.reports ?? reportSources();
  const catalog = attempt(() => ReportCatalog.fromSources(reports));
  const environments = attempt(() => loadEnvironments(sources.environments ?? readEnvironmentSources()));
  if (!catalog.problem && !environments.problem) {
    refuseUndefinedConnections(catalog.value, environments.value);
    return { catalog: catalog.value, environments: environments.value };
  }
  const problems = [catalog.problem, environments.problem].filter((p): p is ConfigurationError => p !== undefined).map((p) => p.message);
  // The reports that load on their own are still checked against environments that all loaded.
  if (!environments.problem) {
    const defined = environments.value.map((e) => ({ file: `config/environments/${e.name}.json`, names: e.connections.map((c) => c.name) }));
    const found = connectionProblems(loadableReports(reports), defined);
    if (found.length) problems.push(`${found.length} report connection problem${found.length === 1 ? '' : 's'} (every report's connection must be defined by every environment):\n${found.join('\n')}`);
  }
  if (problems.length === 1) throw (catalog.problem ?? environments.problem)!;
  throw new ConfigurationError(`${problems.length} kinds of configuration problem, every one listed:\n\n${problems.join('\n\n')}`);
}

/** The reports of the sources that load on their own, as the connection check reads them. */
function loadableReports(sources: readonly ReportSource[]): Array<{ id: string; file: string; connection: string }> {
  return sources.flatMap((s) => {
    if ('problem' in s) return [];
    const r = attempt(() => parseReportDefinition(s.raw, s.file));
    // One entry per feed: each connection of the report is checked on its own.
    return r.problem ? [] : r.value.connections.map((connection) => ({ id: r.value.id, file: s.file, connection }));
  });
}
