import { CONNECTION_NAME, CONNECTION_NAME_RULE, DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { validateGatewayUrl } from '../../functions/core/gateway/request.js';
import type { GatewaySecret } from '../../functions/core/gateway/signature-methods.js';
import { readSecretFile } from '../args/secret-file.js';

/**
 * `--gateway-url [CONNECTION=]URL` and `--secret-file [CONNECTION=]FILE` of `run` and `backfill`: which connections
 * go to a real gateway (the others stay on the embedded simulator). Each may repeat, once per connection; the plain
 * forms are the connection `default`. A URL never starts with a connection name and `=` (its scheme has a `:`), so
 * the two forms cannot be confused; a file whose name looks like `name=…` is written `./name=…`.
 */

export interface ConnectionFlagValues {
  gatewayUrl?: string | readonly string[];
  secretFile?: string | readonly string[];
}

/** One connection pointed at a real gateway: where, and the secret file that signs for it. */
export interface RealGatewayFlag {
  connection: string;
  url: string;
  secretFile: string;
}

/** Where a real gateway is and how to read its secret: `fresh` reads the file again (it may have been rotated). */
export interface RealGateway {
  readonly endpointUrl: string;
  loadSecret(options?: { fresh?: boolean }): Promise<GatewaySecret>;
  /** Where a new value goes after a refusal: the secret file, as given. */
  readonly credentials: string;
}

const listOf = (v: string | readonly string[] | undefined): readonly string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);

/**
 * `name=value` as [name, value] when it starts with a connection name; else the default connection's value.
 * Connection names are lower-case, so `Beta=…` is the connection `beta`: read otherwise it would be a value of the
 * default connection, and the run would answer about a connection the user never named.
 */
export function connectionValue(value: string): [connection: string, value: string] {
  const eq = value.indexOf('=');
  const name = eq > 0 ? value.slice(0, eq).toLowerCase() : '';
  return CONNECTION_NAME.test(name) ? [name, value.slice(eq + 1)] : [DEFAULT_CONNECTION, value];
}

/** Each flag's values by connection; a connection given twice is refused. */
function byConnection(flag: string, values: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of values) {
    const [connection, value] = connectionValue(v);
    refuseNameLike(flag, v, connection);
    if (!value) throw new ConfigurationError(`${flag} ${v}: expected ${flag === '--gateway-url' ? 'CONNECTION=URL or URL' : 'CONNECTION=FILE or FILE'}.`);
    if (out.has(connection)) throw new ConfigurationError(`${flag} is given twice for the connection "${connection}": one ${flag === '--gateway-url' ? 'gateway' : 'secret file'} per connection.`);
    out.set(connection, value);
  }
  return out;
}

/**
 * A value read as the default connection's that starts like `name=` with a name that is not a connection name
 * (`my_provider=…`): refused, naming it as given, rather than sent to the default connection.
 */
function refuseNameLike(flag: string, given: string, connection: string): void {
  if (connection !== DEFAULT_CONNECTION) return;
  const m = /^([A-Za-z0-9][\w.-]*)=/.exec(given);
  if (!m || CONNECTION_NAME.test(m[1]!.toLowerCase())) return;
  throw new ConfigurationError(
    `${flag} ${given}: "${m[1]}" is not a connection name: connection names ${CONNECTION_NAME_RULE} (write a file whose name has "=" as ./${given}).`,
  );
}

/**
 * The connections the flags point at real gateways, checked against the connections the catalog's reports use:
 * an unknown name, a URL without its secret file (or the reverse), a URL that is not one are refused, each naming
 * the connection and what to write instead.
 */
export function parseConnectionFlags(opts: ConnectionFlagValues, knownConnections: readonly string[]): RealGatewayFlag[] {
  const urls = byConnection('--gateway-url', listOf(opts.gatewayUrl));
  const files = byConnection('--secret-file', listOf(opts.secretFile));
  const known = knownConnections.join(', ') || 'none';
  for (const [flag, given] of [['--gateway-url', urls], ['--secret-file', files]] as const) {
    for (const connection of given.keys()) {
      if (!knownConnections.includes(connection)) {
        throw new ConfigurationError(`${flag}: no report uses the connection "${connection}" (the reports' connections: ${known}).`);
      }
    }
  }
  const flags: RealGatewayFlag[] = [];
  for (const [connection, url] of urls) {
    const secretFile = files.get(connection);
    const named = connection === DEFAULT_CONNECTION ? '' : `${connection}=`;
    if (!secretFile) {
      throw new ConfigurationError(`--gateway-url ${named}URL needs --secret-file ${named}FILE: the JSON with the login and the control key or private key of that connection.`);
    }
    validateGatewayUrl(url);
    flags.push({ connection, url, secretFile });
  }
  for (const connection of files.keys()) {
    if (!urls.has(connection)) {
      const named = connection === DEFAULT_CONNECTION ? '' : `${connection}=`;
      throw new ConfigurationError(`--secret-file ${named}FILE goes with --gateway-url ${named}URL: the embedded simulator has its own test accounts.`);
    }
  }
  return flags;
}

/** The real gateways of the flags, each secret file read now (a bad file refuses the run before anything starts). */
export async function realGatewaysOf(flags: readonly RealGatewayFlag[]): Promise<Record<string, RealGateway>> {
  const gateways: Record<string, RealGateway> = {};
  for (const { connection, url, secretFile } of flags) {
    let secret = await readSecretFile(secretFile);
    gateways[connection] = {
      endpointUrl: url,
      credentials: `secret file ${secretFile}`,
      loadSecret: async (options) => {
        if (options?.fresh) secret = await readSecretFile(secretFile);
        return secret;
      },
    };
  }
  return gateways;
}
