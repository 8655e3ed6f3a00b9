import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';

/**
 * A connection an environment defines and no report names still deploys its own secret, scheduled-runs queue and
 * per-connection alarms, all idle. It is warned of, not removed: the secret may hold credentials a report added
 * next week needs, and a created secret removed from the stack would be scheduled for deletion. `cdk synth` warns
 * (lib/reports-pipeline-stack.ts), and so does `reports check --environment` (local/cli/check.ts).
 */

/** The connections of `defined` that no report's connection names, in the environment file's order. */
export function unusedConnections(defined: readonly string[], reportConnections: readonly string[]): string[] {
  const used = new Set(reportConnections);
  return defined.filter((c) => !used.has(c));
}

/** What to say of one: where it is defined and the two ways out. */
export function unusedConnectionWarning(environment: string, connection: string): string {
  const where =
    connection === DEFAULT_CONNECTION
      ? `the top-level gateway and secret of config/environments/${environment}.json`
      : `connections.${connection} of config/environments/${environment}.json`;
  return (
    `no report names the connection "${connection}" (${where}), yet it gets a secret, a scheduled-runs queue and alarms of its own: ` +
    `name it in a report's "connection", or remove it from the file`
  );
}
