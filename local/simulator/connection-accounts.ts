import { join } from 'node:path';
import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { GatewaySecret } from '../../functions/core/gateway/signature-methods.js';
import { connectionLogin, DEFAULT_HMAC_CONTROL_KEY, DEFAULT_HMAC_LOGIN, DEFAULT_RSA_LOGIN } from './test-accounts.js';

/**
 * `npm run simulator` stands for every connection of the catalog at once: the connection `default` signs with the
 * simulator's test accounts (hmac.json, rsa.json), every other connection with an HMAC-SHA1 login of its own,
 * `sim-<connection>-hmac`, written to `<connection>/hmac.json`. A login per connection is what lets one simulator
 * answer one connection with the provider's refusal (`--refuse <connection>`), and its printed "Try:" command point
 * each connection of the catalog at it.
 */

/** A connection other than `default`, its test secret and the file it is written to. */
export interface ConnectionAccount {
  readonly connection: string;
  readonly secret: GatewaySecret;
  readonly file: string;
}

/** The connections the reports name, in order of first use. */
export const connectionsOf = (reports: readonly ReportDefinition[]): string[] => [...new Set(reports.flatMap((r) => r.connections))];

/** The accounts of the connections other than `default`, their files under `dir`. */
export function connectionAccounts(connections: readonly string[], dir: string): ConnectionAccount[] {
  return connections
    .filter((c) => c !== DEFAULT_CONNECTION)
    .map((connection) => ({
      connection,
      secret: { login: connectionLogin(connection, 'hmac'), controlKey: DEFAULT_HMAC_CONTROL_KEY },
      file: join(dir, connection, 'hmac.json'),
    }));
}

/**
 * The logins `--refuse` names, checked against the catalog's connections: `default` is the test accounts' logins,
 * another connection its own. Names are lower-case, so `Beta` is `beta`; an unknown one is refused with the known.
 */
export function refusedLogins(refuse: readonly string[], connections: readonly string[]): string[] {
  return refuse.flatMap((given) => {
    const connection = given.toLowerCase();
    if (!connections.includes(connection)) {
      throw new ConfigurationError(`--refuse ${given}: no report uses the connection "${given}" (the reports' connections: ${connections.join(', ') || 'none'}).`);
    }
    return connection === DEFAULT_CONNECTION ? [DEFAULT_HMAC_LOGIN, DEFAULT_RSA_LOGIN] : [connectionLogin(connection, 'hmac')];
  });
}

/**
 * The `npm start` lines that run the catalog against this simulator: one per test account of `default` (as
 * before connections), and one pointing every connection of the catalog at it, each with its own secret file.
 */
export function tryCommands(url: string, connections: readonly string[], defaultSecretFiles: readonly string[], accounts: readonly ConnectionAccount[], shown: (path: string) => string): string[] {
  const hasDefault = connections.includes(DEFAULT_CONNECTION);
  const lines = hasDefault ? defaultSecretFiles.map((f) => `npm start -- --gateway-url ${url} --secret-file ${shown(f)}`) : [];
  if (accounts.length) {
    const each = [
      ...(hasDefault ? [`--gateway-url ${url} --secret-file ${shown(defaultSecretFiles[0]!)}`] : []),
      ...accounts.map((a) => `--gateway-url ${a.connection}=${url} --secret-file ${a.connection}=${shown(a.file)}`),
    ];
    lines.push(`npm start -- ${each.join(' ')}`);
  }
  return lines;
}
