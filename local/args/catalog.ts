import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { loadConfiguration } from '../../lib/environment/configuration.js';

/**
 * The catalog every command works with: the definitions (config/reports/), each report's connection defined by
 * every environment (config/environments/), as `cdk synth` checks them, so a report that would not deploy does
 * not run locally either; every problem of every file in one round (lib/environment/configuration.ts).
 */
export function loadCheckedCatalog(): ReportCatalog {
  return loadConfiguration().catalog;
}
