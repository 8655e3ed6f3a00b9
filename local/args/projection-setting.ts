import { loadEnvironments } from '../../lib/environment/environments.js';
import { DEFAULT_PROJECTION_START, type ProjectionSetting } from '../../functions/core/lake/partition-projection.js';

/**
 * The projection start a local `run` or `backfill` checks its windows against. The local lake belongs to no
 * environment, and its data is meant for the deployed ones: a window that some environment's Athena would never show
 * is refused, naming that environment's setting. So the latest athena.projectionStart of config/environments/ wins.
 */
export function localProjectionSetting(): ProjectionSetting {
  const environments = loadEnvironments();
  // A checkout with no environment yet (config/environments/ empty) checks against the schema's default.
  if (!environments.length) return { start: DEFAULT_PROJECTION_START, source: 'the default athena.projectionStart (config/environments/ holds no environment)' };
  const start = environments.map((e) => e.athena.projectionStart).reduce((a, b) => (a > b ? a : b));
  const names = environments.filter((e) => e.athena.projectionStart === start).map((e) => `config/environments/${e.name}.json`);
  return { start, source: `athena.projectionStart in ${names.join(' and ')}` };
}
