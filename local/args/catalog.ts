import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { loadEnvironments, refuseUndefinedConnections } from '../../lib/environment/environments.js';

/**
 * The catalog every command works with: the definitions (config/reports/), each report's connection defined by
 * every environment (config/environments/), as `cdk synth` checks them, so a report that would not deploy does
 * not run locally either.
 */
export function loadCheckedCatalog(): ReportCatalog {
  const catalog = loadCatalog();
  refuseUndefinedConnections(catalog, loadEnvironments());
  return catalog;
}
