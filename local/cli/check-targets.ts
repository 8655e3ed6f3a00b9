import { simulatorLogin } from '../connections/local-gateways.js';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { requireAwsAccess } from '../args/aws-access.js';
import { environmentOf, environmentsDir, readEnvironmentSource, type ConnectionConfig } from '../../lib/environment/environments.js';
import { ConfigurationError, isPipelineError, type PipelineError } from '../../functions/core/errors.js';
import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import { validateGatewayUrl } from '../../functions/core/gateway/request.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { DEFAULT_SIGNATURE_METHOD, type GatewaySecret } from '../../functions/core/gateway/signature-methods.js';
import { getGatewaySecret } from '../../functions/aws/secrets.js';
import { readSecretFile } from '../args/secret-file.js';

/**
 * What `reports check` calls, per connection: where (the endpoint), as whom (the secret), and with which of the
 * connection's reports. Three sources: an environment file (each connection's endpoint and its Secrets Manager
 * secret), --gateway-url with --secret-file (one gateway, as today), or the embedded simulator (one per connection
 * of the catalog, each serving that connection's reports under a login of its own, as `npm start` does).
 */

export interface TargetOptions {
  report?: string;
  all?: boolean;
  /** Only this connection (of the environment, or of the catalog). */
  connection?: string;
  gatewayUrl?: string;
  secretFile?: string;
  environment?: string;
}

export interface CheckTarget {
  connection: string;
  /** The endpoint and the credentials; absent when they could not be had (then `problem` says why). */
  endpointUrl?: string;
  secret?: GatewaySecret;
  /** The Secrets Manager secret's name (--environment). */
  secretName?: string;
  /** Where the credentials come from, as the verdict line names them. */
  credentials: string;
  /** The reports to request, one request each; none when no report of the catalog names the connection. */
  reports: ReportDefinition[];
  /** Why the connection cannot be checked (its secret unreadable): its verdict, with no request made. */
  problem?: PipelineError;
}

export interface CheckTargets {
  targets: CheckTarget[];
  close(): Promise<void>;
}

/** The reports checked over one connection: --report (if it is the connection's), --all, or else the first. */
function reportsOver(catalog: ReportCatalog, connection: string, opts: TargetOptions): ReportDefinition[] {
  const own = catalog.reportsOver(connection);
  if (opts.report !== undefined) return own.filter((r) => r.id === opts.report);
  return opts.all ? own : own.slice(0, 1);
}

/** --connection narrows, --report picks its own connection; a name that is not there is refused, naming those that are. */
function chosenConnections(names: readonly string[], opts: TargetOptions, catalog: ReportCatalog, where: string): string[] {
  if (opts.connection !== undefined && !names.includes(opts.connection)) {
    throw new ConfigurationError(`--connection "${opts.connection}" is not a connection of ${where}: ${names.join(', ') || 'none'}.`);
  }
  const report = opts.report === undefined ? undefined : catalog.get(opts.report);
  const over = report ? `connection${report.connections.length > 1 ? 's' : ''} ${report.connections.map((c) => `"${c}"`).join(', ')}` : '';
  if (report && opts.connection !== undefined && !report.connections.includes(opts.connection)) {
    throw new ConfigurationError(`--report ${report.id} is over ${over}, not "${opts.connection}": leave out one of them.`);
  }
  const undefinedHere = report?.connections.filter((c) => !names.includes(c)) ?? [];
  if (report && undefinedHere.length) {
    throw new ConfigurationError(`Report "${report.id}" is over connection${undefinedHere.length > 1 ? 's' : ''} ${undefinedHere.map((c) => `"${c}"`).join(', ')}, which ${where} does not define.`);
  }
  if (opts.connection !== undefined) return [opts.connection];
  return report ? [...report.connections] : [...names];
}

/** Each connection of the environment file, its secret read with the caller's AWS credentials (never cached). */
async function environmentTargets(environment: string, opts: TargetOptions, catalog: ReportCatalog, dir: URL | string | undefined): Promise<CheckTargets> {
  if (!/^[a-z][a-z0-9-]{0,11}$/.test(environment)) {
    throw new ConfigurationError(`--environment "${environment}" is not an environment name (config/environments/<name>.json).`);
  }
  const label = `config/environments/${environment}.json`;
  const file = fileURLToPath(new URL(`${environment}.json`, dir ?? pathToFileURL(`${environmentsDir()}/`)));
  if (!existsSync(file)) throw new ConfigurationError(`Cannot read ${label}: there is no such file (an environment is a file config/environments/<name>.json).`);
  // Read as the synth reads it: a syntax error with its line and column, every bad field, the name matching the file.
  const env = environmentOf(readEnvironmentSource(file, label));
  const names = chosenConnections(env.connections.map((c) => c.name), opts, catalog, label);
  const region = env.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  const provider = new SecretsProvider(region ? { clientConfig: { region } } : {});
  // Said once, before any secret is read: otherwise each connection's verdict would blame its secret.
  await requireAwsAccess(provider.client, `set "region" in ${label}`);
  const targets: CheckTarget[] = [];
  for (const connection of env.connections.filter((c) => names.includes(c.name))) {
    targets.push(await environmentTarget(connection, provider, reportsOver(catalog, connection.name, opts)));
  }
  return { targets, close: async () => undefined };
}

async function environmentTarget(connection: ConnectionConfig, provider: SecretsProvider, reports: ReportDefinition[]): Promise<CheckTarget> {
  validateGatewayUrl(connection.gateway.endpointUrl, `connections.${connection.name}.gateway.endpointUrl`);
  const base = { connection: connection.name, endpointUrl: connection.gateway.endpointUrl, secretName: connection.secret.name, reports };
  const credentials = `secret "${connection.secret.name}"`;
  if (!reports.length) return { ...base, credentials };
  try {
    return { ...base, credentials, secret: await getGatewaySecret(connection.secret.name, { provider, maxAgeSeconds: 0 }) };
  } catch (e) {
    // One connection's unreadable secret is its verdict: the others are still checked.
    if (!isPipelineError(e)) throw e;
    return { ...base, credentials, problem: e };
  }
}

/** One gateway and one login for every report chosen: --connection picks the reports, else --report or --all as before connections. */
async function givenTarget(opts: TargetOptions, catalog: ReportCatalog): Promise<CheckTargets> {
  if (!opts.gatewayUrl || !opts.secretFile) {
    throw new ConfigurationError('--gateway-url and --secret-file go together (or use --environment NAME).');
  }
  validateGatewayUrl(opts.gatewayUrl);
  const secret = await readSecretFile(opts.secretFile);
  let reports: ReportDefinition[];
  if (opts.connection !== undefined) {
    reports = reportsOver(catalog, chosenConnections(catalog.connections(), opts, catalog, 'the catalog')[0]!, opts);
  } else {
    reports = opts.all ? catalog.reports : [catalog.chosen(opts.report, '--report ID, --connection NAME or --all')];
  }
  const connection = opts.connection ?? reports[0]?.connections[0] ?? DEFAULT_CONNECTION;
  return {
    targets: [{ connection, endpointUrl: opts.gatewayUrl, secret, credentials: `secret file ${opts.secretFile}`, reports }],
    close: async () => undefined,
  };
}

/** The embedded simulator, one per connection of the catalog, each with that connection's reports and login. */
async function simulatorTargets(opts: TargetOptions, catalog: ReportCatalog): Promise<CheckTargets> {
  const { startSimulator, testSecretOf } = await import('../simulator/index.js');
  const names = chosenConnections(catalog.connections(), opts, catalog, 'the catalog');
  const sims: Array<{ close(): Promise<void> }> = [];
  const close = async () => {
    for (const sim of sims) await sim.close();
  };
  const targets: CheckTarget[] = [];
  try {
    for (const connection of names) {
      // The logins `npm start` gives each connection's simulator (local/connections/local-gateways.ts), as a second provider would.
      const sim = await startSimulator({
        reports: catalog.reportsOver(connection),
        hmac: { login: simulatorLogin(connection, 'hmac') },
        rsa: { login: simulatorLogin(connection, 'rsa') },
      });
      sims.push(sim);
      const secret = testSecretOf(sim.credentials, DEFAULT_SIGNATURE_METHOD);
      targets.push({ connection, endpointUrl: sim.url, secret, credentials: 'the embedded simulator\'s test account', reports: reportsOver(catalog, connection, opts) });
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { targets, close };
}

/** Where to call and as whom, per connection. */
export async function resolveTargets(opts: TargetOptions, catalog: ReportCatalog, environmentsDirectory?: URL | string): Promise<CheckTargets> {
  if (opts.all && opts.report) throw new ConfigurationError('--report and --all exclude each other.');
  if (opts.environment && (opts.gatewayUrl || opts.secretFile)) {
    throw new ConfigurationError('--environment takes the endpoint and the credentials from the environment: leave out --gateway-url and --secret-file.');
  }
  if (opts.environment) return environmentTargets(opts.environment, opts, catalog, environmentsDirectory);
  if (opts.gatewayUrl || opts.secretFile) return givenTarget(opts, catalog);
  return simulatorTargets(opts, catalog);
}
