import { DEFAULT_CONNECTION } from '../../functions/core/connections/connection.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { DEFAULT_SIGNATURE_METHOD, signatureMethodOf, type GatewaySecret, type SignatureMethod } from '../../functions/core/gateway/signature-methods.js';
import type { GatewayConnection } from '../../functions/fetch-report/fetch-windows.js';
import type { Simulator, SimulatorOptions } from '../simulator/index.js';
import type { RealGateway } from './connection-flags.js';
import { RequestLimiter } from './request-bound.js';
import { connectionLogin } from '../simulator/test-accounts.js';

/**
 * The gateway behind each connection of a local run: a real one when the run was given its URL and secret, else an
 * embedded simulator of its own (its own loopback port and test accounts, a login naming the connection), serving
 * only that connection's reports, so a report sent over the wrong connection is not answered. Each connection's
 * requests pass its limiter: never more than its maxConcurrentRequests in flight.
 */

/** One connection as the run shows and uses it. */
export interface LocalConnection {
  readonly name: string;
  readonly endpointUrl: string;
  readonly login: string;
  readonly signatureMethod: SignatureMethod;
  /** The embedded simulator serving it, when no real gateway was given. */
  readonly simulator: Simulator | undefined;
  /** Requests in flight to it at most. */
  readonly maxConcurrentRequests: number;
}

export interface LocalGatewaysOptions {
  catalog: ReportCatalog;
  /** Connections pointed at a real gateway, by name. */
  real: Readonly<Record<string, RealGateway>>;
  /** A secret the simulator of `default` is called with instead of its test account's (tests of refusals). */
  defaultSecret?: GatewaySecret;
  /** Which simulator test account signs (default DEFAULT_SIGNATURE_METHOD). */
  signatureMethod?: SignatureMethod;
  /** Settings every embedded simulator gets; `samples` go to the simulator of each report's connection. */
  simulator?: SimulatorOptions;
  /** Requests in flight at most, per connection. */
  boundOf: (connection: string) => number;
}

/** The test login of a connection's simulator: `sim-<connection>-hmac`, `sim-<connection>-rsa` (test-accounts.ts). */
export const simulatorLogin = connectionLogin;

interface Started {
  connection: LocalConnection;
  loadSecret: GatewayConnection['loadSecret'];
  /** Named by a refusal as where the new value goes. */
  credentials: string;
}

export class LocalGateways {
  private readonly started = new Map<string, Promise<Started>>();
  private readonly ready = new Map<string, Started>();
  private readonly limiters = new Map<string, RequestLimiter>();
  /** The RSA test account's key of this run's simulators, made when the first one starts. */
  private rsaKey: Promise<string> | undefined;

  constructor(private readonly options: LocalGatewaysOptions) {
    refuseMisplacedSamples(options);
  }

  /** The connection's gateway, its simulator started on first use. */
  async connection(name: string): Promise<LocalConnection> {
    let starting = this.started.get(name);
    if (!starting) {
      starting = this.start(name);
      this.started.set(name, starting);
    }
    const started = await starting;
    this.ready.set(name, started);
    return started.connection;
  }

  /** What the fetch logic calls; the connection must have been started (connection()) first. */
  connectionOf(name: string): GatewayConnection {
    const started = this.ready.get(name);
    if (!started) throw new ConfigurationError(`The connection "${name}" is not one this run has started.`);
    return { name, endpointUrl: started.connection.endpointUrl, loadSecret: started.loadSecret, credentials: started.credentials };
  }

  /** Runs `task` (one window's requests) when the connection has a request slot free. */
  limit<T>(name: string, task: () => Promise<T>): Promise<T> {
    let limiter = this.limiters.get(name);
    if (!limiter) {
      limiter = new RequestLimiter(this.options.boundOf(name));
      this.limiters.set(name, limiter);
    }
    return limiter.run(task);
  }

  /** Stops every simulator started. */
  async close(): Promise<void> {
    const started = await Promise.allSettled(this.started.values());
    for (const s of started) if (s.status === 'fulfilled') await s.value.connection.simulator?.close().catch(() => undefined);
  }

  private async start(name: string): Promise<Started> {
    const { options } = this;
    const maxConcurrentRequests = options.boundOf(name);
    const real = options.real[name];
    if (real) {
      const secret = await real.loadSecret();
      const connection = { name, endpointUrl: real.endpointUrl, login: secret.login, signatureMethod: signatureMethodOf(secret), simulator: undefined, maxConcurrentRequests };
      return { connection, loadSecret: (o) => real.loadSecret(o), credentials: real.credentials };
    }
    // Loaded only here: with real gateways only, the simulator's modules (the PDF writer among them) cost ~20 MB and ~0.5 s for nothing.
    const { startSimulator, testSecretOf, makeRsaTestKey } = await import('../simulator/index.js');
    // One RSA test key for every simulator of the run: a pair per simulator was ~60-170 ms of CPU each before
    // the first request (a second over 10 connections), for an account a run signs with only when asked to.
    this.rsaKey ??= makeRsaTestKey();
    const privateKeyPem = options.simulator?.rsa?.privateKeyPem ?? (await this.rsaKey);
    const reports = options.catalog.reportsOver(name);
    const samples = Object.fromEntries(Object.entries(options.simulator?.samples ?? {}).filter(([id]) => reports.some((r) => r.id === id)));
    const sim = await startSimulator({
      ...options.simulator,
      hmac: { login: simulatorLogin(name, 'hmac'), ...options.simulator?.hmac },
      rsa: { login: simulatorLogin(name, 'rsa'), ...options.simulator?.rsa, privateKeyPem },
      reports,
      samples,
      onlyReports: true,
    });
    const secret = (name === DEFAULT_CONNECTION && options.defaultSecret) || testSecretOf(sim.credentials, options.signatureMethod ?? DEFAULT_SIGNATURE_METHOD);
    const connection = { name, endpointUrl: sim.url, login: secret.login, signatureMethod: signatureMethodOf(secret), simulator: sim, maxConcurrentRequests };
    return { connection, loadSecret: async () => secret, credentials: "the embedded simulator's test account" };
  }
}

/** A sample answers a report through its connection's simulator: refused for an unknown report or one a real gateway answers. */
function refuseMisplacedSamples({ catalog, real, simulator }: LocalGatewaysOptions): void {
  for (const [id, file] of Object.entries(simulator?.samples ?? {})) {
    if (!catalog.ids().includes(id)) {
      throw new ConfigurationError(`--sample ${id}=${file}: there is no report "${id}" in the catalog (${catalog.ids().join(', ') || 'none'}).`);
    }
    // The sample goes to the simulator of each of the report's connections that has one.
    const connections = catalog.get(id).connections;
    if (connections.every((c) => real[c])) {
      const over = connections.map((c) => `"${c}"`).join(', ');
      throw new ConfigurationError(`--sample ${id}=${file}: report "${id}" goes over ${over}, which --gateway-url points at a gateway: that gateway answers, not the simulator.`);
    }
  }
}
