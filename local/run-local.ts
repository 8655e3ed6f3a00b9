import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadCatalog } from '../config/reports/index.js';
import { renderBody } from '../functions/core/body-template.js';
import { ConfigurationError } from '../functions/core/errors.js';
import { fetchReport } from '../functions/core/gateway-client.js';
import { signatureMethodOf, type GatewaySecret } from '../functions/core/secret.js';
import { formatLocalDate, windowStamp, type ReportWindow } from '../functions/core/window.js';
import { windowsForRun } from './cli/dates.js';
import { readSecretFile } from './secret-file.js';
import { startSimulator, type Simulator } from './simulator/index.js';

export interface RunLocalOptions {
  report: string;
  from?: string;
  to?: string;
  gatewayUrl?: string;
  secretFile?: string;
  out: string;
}

interface WindowResult {
  window: ReportWindow;
  file: string;
  bytes: number;
  records: number;
  ms: number;
}

/** Counts CSV records without a parser: newlines outside quotes (RFC 4180), header excluded. */
function recordCounter() {
  let inQuotes = false;
  let records = 0;
  let pendingContent = false;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i];
        if (c === 0x22) inQuotes = !inQuotes;
        else if (c === 0x0a && !inQuotes) {
          records++;
          pendingContent = false;
          continue;
        }
        if (c !== 0x0d) pendingContent = true;
      }
      done(null, chunk);
    },
  });
  return { counter, records: () => Math.max(0, records + (pendingContent ? 1 : 0) - 1) };
}

/**
 * `npm start`, first form: fetches the report for each window and saves each raw file under --out.
 * A file is written beside its final name and renamed only once complete, so a failed download
 * never leaves a half file that looks whole.
 */
export async function runLocal(opts: RunLocalOptions): Promise<void> {
  if (opts.gatewayUrl && !opts.secretFile) {
    throw new ConfigurationError('--gateway-url needs --secret-file: the JSON with the login and the control key or private key.');
  }
  const report = loadCatalog().get(opts.report);
  const windows = windowsForRun(report, opts.from, opts.to);
  let simulator: Simulator | undefined;
  let endpoint = opts.gatewayUrl;
  let secret: GatewaySecret | undefined = opts.secretFile ? await readSecretFile(opts.secretFile) : undefined;
  if (!endpoint) {
    simulator = await startSimulator();
    endpoint = simulator.url;
    secret ??= simulator.credentials.hmac;
  }
  if (!secret) throw new ConfigurationError('No gateway credentials: pass --secret-file.');
  console.log(
    `Report "${report.id}" from ${endpoint}${simulator ? ' (embedded simulator)' : ''}, login "${secret.login}" ` +
      `signing with ${signatureMethodOf(secret)}; ${windows.length} window(s).`,
  );

  const started = Date.now();
  const results: WindowResult[] = [];
  try {
    for (const window of windows) {
      const t0 = Date.now();
      const answer = await fetchReport({ endpointUrl: endpoint, secret, body: renderBody(report.bodyTemplate, window) });
      const file = join(opts.out, 'raw', report.id, `dt=${formatLocalDate(window.start)}`, `${windowStamp(window.start)}.${answer.fileExtension}`);
      await mkdir(dirname(file), { recursive: true });
      const partial = `${file}.partial`;
      const { counter, records } = recordCounter();
      let bytes = 0;
      answer.body.on('data', (c: Buffer) => (bytes += c.length));
      try {
        await pipeline(answer.body, counter, createWriteStream(partial));
      } catch (e) {
        await rm(partial, { force: true });
        throw e;
      }
      await rename(partial, file);
      const r = { window, file, bytes, records: answer.kind === 'csv' ? records() : 0, ms: Date.now() - t0 };
      results.push(r);
      console.log(
        `  ${formatLocalDate(window.start)}  ${answer.kind.toUpperCase()}  ${String(r.records).padStart(7)} rows  ` +
          `${String(bytes).padStart(10)} bytes  ${String(r.ms).padStart(6)} ms  ${relative(process.cwd(), file)}`,
      );
    }
  } finally {
    await simulator?.close();
  }
  const rows = results.reduce((a, r) => a + r.records, 0);
  const bytes = results.reduce((a, r) => a + r.bytes, 0);
  console.log(`Done: ${results.length} window(s), ${rows} rows, ${bytes} bytes in ${Date.now() - started} ms.`);
}
