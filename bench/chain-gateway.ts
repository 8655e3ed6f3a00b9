import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import type { ReportDefinition } from '../functions/core/definitions/report-definition.js';
import { renderBody } from '../functions/core/gateway/body-template.js';
import { fetchReport } from '../functions/core/gateway/client.js';
import type { ReportWindow } from '../functions/core/time/window.js';
import { startSimulator } from '../local/simulator/index.js';

/**
 * The two gateways of the chain benchmark.
 *
 * - The simulator, asked once for the 1M-row report through the project's gateway client: its bytes are
 *   the benchmark's input, and the time it takes is the simulator's serving speed (it generates the CSV
 *   row by row in JavaScript, a stand-in no real run pays for).
 * - A replay gateway: answers every POST with those bytes from disk, as a real gateway streams a finished
 *   report. The chain is measured against it, as a new user meets the pipeline: a gateway that is not
 *   this project's, in a process of its own, so its speed is the network's and the disk's, not the simulator's.
 */

export interface SimulatorFetch {
  bytes: number;
  wallMs: number;
}

/** Writes the simulator's report for `window` to `file` (whole or not at all); returns size and time. */
export async function fetchFromSimulator(report: ReportDefinition, window: ReportWindow, rowsPerDay: number, file: string): Promise<SimulatorFetch> {
  const sim = await startSimulator({ rowsPerDay });
  try {
    const t0 = performance.now();
    const answer = await fetchReport({ endpointUrl: sim.url, secret: sim.credentials.hmac, body: renderBody(report.bodyTemplate, window) });
    const partial = `${file}.partial`;
    const out = createWriteStream(partial, { highWaterMark: 1024 * 1024 });
    let bytes = 0;
    answer.body.on('data', (chunk: Buffer) => (bytes += chunk.length));
    await pipeline(answer.body, out);
    const wallMs = performance.now() - t0;
    await rename(partial, file);
    return { bytes, wallMs };
  } finally {
    await sim.close();
  }
}

export interface ReplayRequest {
  /** Date.now() when the request arrived, and when the last byte of the answer was handed to the socket. */
  arrivedAt: number;
  answeredAt: number | undefined;
}

/** The replay gateway in a process of its own (children/replay-gateway.ts): its requests are asked for, not read. */
export interface ReplayGatewayProcess {
  url: string;
  requests(): Promise<ReplayRequest[]>;
  close(): Promise<void>;
}

/** Forks children/replay-gateway.ts serving `file`; resolves once it listens. */
export async function startReplayGatewayProcess(file: string): Promise<ReplayGatewayProcess> {
  const child = fork(fileURLToPath(new URL('./children/replay-gateway.ts', import.meta.url)), [file], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const next = <T>(key: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: Record<string, unknown>) => {
        if (!(key in m)) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m[key] as T);
      };
      const onExit = (code: number | null) => reject(new Error(`the replay gateway exited (${code}) before answering`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const url = await next<string>('url');
  return {
    url,
    requests: async () => {
      const answer = next<ReplayRequest[]>('requests');
      child.send('requests');
      return answer;
    },
    close: async () => {
      const exited = once(child, 'exit');
      child.send('close');
      await exited;
    },
  };
}

export interface ReplayGateway {
  /** The full rpt-engine URL to pass as --gateway-url. */
  url: string;
  readonly requests: readonly ReplayRequest[];
  close(): Promise<void>;
}

/** Serves `file` as text/csv to every POST on loopback; any signature is accepted (it is not the gateway under test). */
export async function startReplayGateway(file: string): Promise<ReplayGateway> {
  const requests: ReplayRequest[] = [];
  const server: Server = createServer((req, res) => {
    const entry: ReplayRequest = { arrivedAt: Date.now(), answeredAt: undefined };
    requests.push(entry);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'text/csv; charset=UTF-8' });
      pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), res)
        .then(() => (entry.answeredAt = Date.now()))
        .catch(() => undefined);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/paynet-ui/services/v2/rpt-engine`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
