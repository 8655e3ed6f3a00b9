import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { FAULT_MODES, type FaultMode, type FaultOptions } from './faults.js';
import { DECODABLE_CODINGS, isDecodable } from '../../functions/core/gateway/content-coding.js';
import type { TransportOptions } from './transport.js';
import { NOT_AUTHORISED_MESSAGE, startSimulator, type LoggedRequest, type Simulator } from './server.js';
import { connectionAccounts, connectionsOf, refusedLogins, tryCommands } from './connection-accounts.js';
import { gatewayAccountOf } from '../../functions/core/gateway/signature-methods.js';
import { describeTestAccounts, testAccountFiles, type TestAccountFiles } from './test-accounts.js';
import { volumeShapeFrom, type VolumeShape } from './volume.js';
import { DEFAULT_PERIOD_TO, PERIOD_TO_READINGS, type PeriodToReading } from './report-request.js';

/**
 * The simulator as a long-running process (`npm run simulator`, or `tsx local/simulator/standalone.ts`):
 * starts it, writes its test secrets (one per signature method) where `npm start --secret-file` can read them, prints how to use
 * it, logs one line per request, and stops on SIGINT/SIGTERM.
 *
 * The credentials are throwaway test values made for this simulator (the RSA pair is new at every start),
 * so printing the control key and writing the private key to a file is deliberate; the output says so.
 * Each simulator writes them under a directory named for its port (.simulator/<port>/), so two running at
 * once keep their own files; they are removed when it stops, since they open nothing after that.
 */

export interface StandaloneOptions {
  port?: number;
  pathPrefix?: string;
  fault?: FaultOptions;
  /** Where the <port>/ directory with the test accounts' files (hmac.json, rsa.json, rsa-public.pem) goes. Default ./.simulator */
  secretsDir?: string;
  rowsPerDay?: number;
  /** A weekly rhythm and dates whose volume drops (--weekday-volume, --drop-date; volume.ts). */
  volume?: VolumeShape;
  /** How reports travel: --content-type, --compress, --chunked (transport.ts). */
  transport?: TransportOptions;
  /** The reports served besides the spec's sample; default: the catalog (config/reports/). */
  reports?: readonly ReportDefinition[];
  /** Report id -> a file answered for that report (`--sample ID=FILE`). */
  samples?: Readonly<Record<string, string>>;
  /** How a period's "to" is read for every report (`--period-to`); default: as each definition's `periodTo` says. */
  periodTo?: PeriodToReading;
  /** Connections whose logins are answered with the provider's refusal (`--refuse`; connection-accounts.ts). */
  refuse?: readonly string[];
  /** Stop when aborted, besides SIGINT/SIGTERM (for tests and embedding). */
  signal?: AbortSignal;
  /** Where the text goes; default console.log. */
  print?: (line: string) => void;
  /** Called once the simulator listens and the files are written. */
  onReady?: (ready: StandaloneReady) => void;
}

export interface StandaloneReady {
  simulator: Simulator;
  files: TestAccountFiles;
  /** The secret file of each connection other than `default`, by connection. */
  connectionFiles: Record<string, string>;
}

const describeRequest = (r: LoggedRequest) =>
  `${r.time.toISOString()} ${r.httpMethod} ${r.path} login=${r.login ?? '-'} method=${r.signatureMethod ?? '-'} ` +
  `-> ${r.status} ${r.outcome}${r.detail ? ` (${r.detail})` : ''}${r.coding ? ` ${r.coding}` : ''}`;

/** Runs until SIGINT, SIGTERM or `signal`, then closes the server and resolves. */
export async function runStandaloneSimulator(opts: StandaloneOptions = {}): Promise<void> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const reports = opts.reports ?? loadCatalog().reports;
  const connections = connectionsOf(reports);
  const refuseLogins = refusedLogins(opts.refuse ?? [], connections);
  // The accounts' logins are known before the port: their files go under it once it is.
  const logins = connectionAccounts(connections, '');
  let simulator: Simulator;
  try {
    simulator = await startSimulator({
      accounts: logins.map((a) => gatewayAccountOf(a.secret)),
      refuseLogins,
      port: opts.port,
      pathPrefix: opts.pathPrefix,
      fault: opts.fault,
      rowsPerDay: opts.rowsPerDay,
      volume: opts.volume,
      transport: opts.transport,
      reports,
      samples: opts.samples,
      periodTo: opts.periodTo,
      onRequest: (r) => print(describeRequest(r)),
    });
  } catch (e) {
    throw portError(e, opts.port) ?? e;
  }

  const dir = join(resolve(opts.secretsDir ?? '.simulator'), String(new URL(simulator.url).port));
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const written = testAccountFiles(simulator.credentials, dir);
    // Owner-only, like any key file, even though these are test keys; what is handed over is public.
    for (const file of written) await writeFile(file.path, file.content, { mode: file.secret ? 0o600 : 0o644 });
    const files = Object.fromEntries(written.map((f) => [f.key, f.path])) as TestAccountFiles;
    const accounts = connectionAccounts(connections, dir);
    for (const a of accounts) {
      await mkdir(join(dir, a.connection), { recursive: true, mode: 0o700 });
      await writeFile(a.file, `${JSON.stringify(a.secret, null, 2)}\n`, { mode: 0o600 });
    }

    const shown = (p: string) => relative(process.cwd(), p) || p;
    const shownFile = (key: string) => shown(written.find((f) => f.key === key)!.path);
    const secretFiles = written.filter((f) => f.secret);
    const fault = opts.fault
      ? `${opts.fault.mode}${opts.fault.times !== undefined ? ` (first ${opts.fault.times} request(s))` : ''}`
      : 'none';
    [
      'Gateway simulator running.',
      `  URL:         ${simulator.url}`,
      ...describeTestAccounts(simulator.credentials, shownFile),
      ...accounts.map((a) => `  ${`${a.connection}:`.padEnd(13)}login "${a.secret.login}" (HMAC-SHA1, the control key above) -> ${shown(a.file)}`),
      ...(refuseLogins.length ? [`  Refused:     ${(opts.refuse ?? []).map((c) => c.toLowerCase()).join(', ')}: logins ${refuseLogins.map((l) => `"${l}"`).join(', ')} get "${NOT_AUTHORISED_MESSAGE}"`] : []),
      `  Fault mode:  ${fault}`,
      `  Transport:   ${describeTransport(opts.transport)}`,
      `  Volume:      ${describeVolume(opts.rowsPerDay ?? 250, opts.volume)}`,
      opts.periodTo
        ? `  Period "to": ${opts.periodTo}, for every report: ${PERIOD_TO_READINGS[opts.periodTo]}`
        : `  Period "to": as each definition's "periodTo" says (default ${DEFAULT_PERIOD_TO}: ${PERIOD_TO_READINGS[DEFAULT_PERIOD_TO]})`,
      '  These are throwaway test credentials made for this simulator (a new RSA key pair at every start);',
      '  they are printed on purpose and open nothing else.',
      'Try:',
      ...tryCommands(simulator.url, connections, secretFiles.map((f) => f.path), accounts, shown).map((c) => `  ${c}`),
      'Stop with Ctrl-C.',
    ].forEach((line) => print(line));
    opts.onReady?.({ simulator, files, connectionFiles: Object.fromEntries(accounts.map((a) => [a.connection, a.file])) });

    await new Promise<void>((done) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        opts.signal?.removeEventListener('abort', stop);
        done();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      if (opts.signal?.aborted) stop();
      else opts.signal?.addEventListener('abort', stop, { once: true });
    });
  } finally {
    await simulator.close();
    await rm(dir, { recursive: true, force: true });
  }
  print('Gateway simulator stopped.');
}

/** A port that cannot be listened on, as a message naming the port and the flag; undefined for other errors. */
function portError(e: unknown, port: number | undefined): ConfigurationError | undefined {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new ConfigurationError(`Port ${port} on 127.0.0.1 is already in use (another simulator or program): pass another --port, or --port 0 for any free port.`);
  }
  if (code === 'EACCES') {
    return new ConfigurationError(`Port ${port} needs privileges this user does not have: pass --port 1024 or above, or --port 0 for any free port.`);
  }
  return undefined;
}

const describeTransport = (t: TransportOptions | undefined): string =>
  [
    t?.contentType === undefined ? 'text/csv or application/pdf' : t.contentType === '' ? 'no Content-Type' : `Content-Type "${t.contentType}"`,
    t?.compress ? `${t.compress}-compressed whether asked or not` : 'uncompressed',
    t?.chunked ? 'trickled in chunks' : 'streamed',
  ].join(', ');

const describeVolume = (rowsPerDay: number, v: VolumeShape | undefined): string =>
  [
    `${rowsPerDay} rows per day`,
    ...(v?.weekday ? [`times ${v.weekday.join(', ')} Monday to Sunday`] : []),
    ...Object.entries(v?.drops ?? {}).map(([date, share]) => `${date} at ${share} of its rows`),
  ].join(', ');

/** Command-line flags, for running this file directly. */
export function parseStandaloneArgs(argv: string[]): StandaloneOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      'path-prefix': { type: 'string' },
      'secrets-dir': { type: 'string' },
      'rows-per-day': { type: 'string' },
      'weekday-volume': { type: 'string' },
      'drop-date': { type: 'string', multiple: true },
      fault: { type: 'string' },
      times: { type: 'string' },
      'delay-ms': { type: 'string' },
      'retry-after': { type: 'string' },
      'content-type': { type: 'string' },
      compress: { type: 'string' },
      chunked: { type: 'boolean' },
      refuse: { type: 'string', multiple: true },
    },
    strict: true,
  });
  const num = (name: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, got "${v}".`);
    return n;
  };
  let fault: FaultOptions | undefined;
  if (values.fault) {
    if (!FAULT_MODES.includes(values.fault as FaultMode)) {
      throw new Error(`--fault must be one of ${FAULT_MODES.join(', ')}, got "${values.fault}".`);
    }
    fault = {
      mode: values.fault as FaultMode,
      times: num('times', values.times),
      delayMs: num('delay-ms', values['delay-ms']),
      retryAfterSeconds: num('retry-after', values['retry-after']),
    };
  }
  return {
    port: num('port', values.port),
    pathPrefix: values['path-prefix'],
    secretsDir: values['secrets-dir'],
    rowsPerDay: num('rows-per-day', values['rows-per-day']),
    volume: volumeShapeFrom({ weekdayVolume: values['weekday-volume'], dropDate: values['drop-date'] }),
    fault,
    transport: transportFrom({ contentType: values['content-type'], compress: values.compress, chunked: values.chunked }),
    refuse: values.refuse,
  };
}

/** --content-type TYPE ("none": no header), --compress CODING (DECODABLE_CODINGS), --chunked; undefined when none is given. */
export function transportFrom(flags: { contentType?: string; compress?: string; chunked?: boolean }): TransportOptions | undefined {
  if (flags.compress !== undefined && !isDecodable(flags.compress)) {
    throw new Error(`--compress must be one of ${DECODABLE_CODINGS.join(', ')}, got "${flags.compress}".`);
  }
  const t: TransportOptions = {
    ...(flags.contentType !== undefined ? { contentType: flags.contentType === 'none' ? '' : flags.contentType } : {}),
    ...(flags.compress !== undefined ? { compress: flags.compress } : {}),
    ...(flags.chunked ? { chunked: true } : {}),
  };
  return Object.keys(t).length ? t : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runStandaloneSimulator(parseStandaloneArgs(process.argv.slice(2))).catch((e: unknown) => {
    console.error(e instanceof ConfigurationError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : e);
    process.exitCode = 1;
  });
}
