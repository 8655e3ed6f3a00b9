/**
 * The gateway simulator: a real HTTP server on 127.0.0.1 that implements the report endpoint of
 * docs/gateway.md ("The gateway simulator"), for tests, `npm start` and `npm run simulator`.
 *
 * ANSWERS (the README quotes this block). Checked in this order:
 *
 *  1. Path other than /<pathPrefix>/services/v2/rpt-engine   404 text/plain "Not found."
 *  2. Method other than POST                                  405 text/plain, Allow: POST
 *  3. Body larger than 1 MiB                                  400 text/plain, Connection: close
 *  4. Infrastructure fault, if one was chosen at start-up (see faults.ts): slow (waits, then goes on),
 *     error500 (500 text/plain), rateLimited (429 text/plain + Retry-After: seconds),
 *     htmlError (200 text/html error page), emptyBody (200 text/csv, zero bytes). Before authentication.
 *  5. Authentication (see auth.ts): missing/garbled header, missing oauth_* parameter, oauth_version not
 *     1.0, unknown login, a method other than the login's, timestamp more than maxSkewSeconds (default 300)
 *     from the simulator's clock, bad signature, replayed nonce, a login of `refuseLogins`. Every refusal is the spec's answer:
 *     HTTP 200, Content-Type text/plain, body NOT_AUTHORISED_MESSAGE, the same for every cause (the cause
 *     is only recorded in `requests`).
 *  6. Body (see report-request.ts): every problem is HTTP 400, Content-Type text/plain; charset=UTF-8, one
 *     sentence naming the problem: Content-Type not application/json; not JSON; not an object;
 *     reportIdentifier missing, or neither "custom-transactions-report" (not served with onlyReports) nor a
 *     catalog report's (the answer lists those it serves); a catalog report's window fields not where or not in the form its template puts
 *     them; reportFormat missing or not CSV/PDF
 *     (any case); reportEncode not known to iconv-lite (default UTF-8); reportCsvDelimiter not exactly one
 *     character, a quote, CR/LF, or not writable in the encoding (default ","); inputReportParameters not
 *     an array; dateFrom/dateTo missing or not "yyyy-MM-dd HH:mm:ss"; dateFrom not before dateTo; a period
 *     over 31 days. Other fields (reportName, filters, ...) are accepted and ignored.
 *  7. Report fault, if chosen: dropMidBody (headers with the full Content-Length, half of the real report,
 *     then the socket is destroyed), schemaDrift (a report whose header renames Merchant_OID to
 *     Merchant_Order_ID and adds Transaction_status; rows to match).
 *  8. The report, HTTP 200:
 *     CSV: Content-Type "text/csv; charset=<reportEncode as sent>", every field quoted, CRLF, see report-csv.ts.
 *     PDF: Content-Type application/pdf, see report-pdf.ts.
 *     Both with Content-Disposition: attachment; filename="custom-transactions-report_<from>_<to>.<csv|pdf>"
 *     (from/to as yyyyMMddHHmmss), streamed with chunked transfer encoding.
 *     Transport options chosen at start-up (see transport.ts) change only how it travels: another
 *     Content-Type or none, gzip/deflate/br compression whether asked or not, a body trickled in small chunks.
 *     Rows: see transactions.ts (deterministic in login, window and rowsPerDay, which `volume` shapes: volume.ts).
 *
 * REPORTS OF THE CATALOG (`reports`): a request whose reportIdentifier is a catalog report's is read by that
 * report's body template (report-request.ts) and answered with rows generated from its columns
 * (definition-rows.ts), or with the spec's sample rows when its columns are the sample's; in its delimiter
 * and encoding, CSV or PDF by its format. `samples` (report id -> file) answers that report's every request
 * with the file's bytes instead (a sample the provider sent), as CSV, or as PDF when it starts with %PDF-.
 *
 * The base string is rebuilt from http://<Host header><path?query>, i.e. the URL as this server was called.
 * Nothing here logs; the `requests` list never holds a signature or key.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_BODY_SIGNING, parseAuthorizationHeader, type BodySigningRule } from '../../functions/core/gateway/oauth.js';
import { gatewayAccountOf, SIGNATURE_METHODS } from '../../functions/core/gateway/signature-methods.js';
import { formatWithPattern, type LocalDateTime } from '../../functions/core/time/window.js';
import { Authenticator, type RefusalReason, type SimulatorAccount } from './auth.js';
import { FaultPlan, HTML_ERROR_PAGE, type FaultModeAt, type FaultOptions } from './faults.js';
import { reportCsvChunks, writeReportCsv } from './report-csv.js';
import { reportPdfStream, writeReportPdf } from './report-pdf.js';
import { parseReportRequest, type PeriodToReading, type ReportRequest } from './report-request.js';
import { askedFor, checkTransportOptions, encodeWhole, sendReportBody, setReportHeaders, type TransportOptions } from './transport.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { generatedContent, readSamples, type ReportContent, type SampleFile } from './report-source.js';
import { makeTestCredentials, testSecretOf, type TestAccountOverrides, type TestCredentials } from './test-accounts.js';
import type { VolumeShape } from './volume.js';

/** The body of every authentication refusal. A client must look for it in 200 text/plain answers. */
export const NOT_AUTHORISED_MESSAGE = 'You are not authorized to perform this request.';

const MAX_BODY_BYTES = 1024 * 1024;

/** What each fault that strikes a report does to it (faults.ts FAULTS): its header and rows drift, or its body is cut. */
const REPORT_FAULTS = {
  dropMidBody: { drift: false, cut: true },
  schemaDrift: { drift: true, cut: false },
} satisfies Record<FaultModeAt<'on-report'>, { drift: boolean; cut: boolean }>;

export interface SimulatorOptions extends TestAccountOverrides {
  /** Default 0: the system picks a free port. */
  port?: number;
  /** Leading path segment(s) before /services/v2/rpt-engine. Default "paynet-ui" (the real provider's). */
  pathPrefix?: string;
  /** Transactions per day of window. Default 250. */
  rowsPerDay?: number;
  /** A weekly rhythm and dates whose volume drops, on top of rowsPerDay (volume.ts). */
  volume?: VolumeShape;
  /** The simulator's clock for timestamp checks and the request log. Default: the real clock. */
  now?: () => Date;
  /** Accepted |server time − oauth_timestamp|. Default 300 s. */
  maxSkewSeconds?: number;
  /** How the JSON body enters the base string; must match the client's. Default "excluded". */
  bodySigning?: BodySigningRule;
  // The test accounts (test-accounts.ts), one per signature method, by short name: `hmac: { controlKey }`,
  // `rsa: { privateKeyPem }` (without one, a 2048-bit pair is made at start).
  /** More accounts, besides the test ones. */
  accounts?: SimulatorAccount[];
  /** A fault mode for this simulator's lifetime (see faults.ts). */
  fault?: FaultOptions;
  /** How successful reports travel: content type, compression, trickled chunks (see transport.ts). */
  transport?: TransportOptions;
  /** The catalog's reports: each is served by its reportIdentifier (see REPORTS OF THE CATALOG above). */
  reports?: readonly ReportDefinition[];
  /**
   * Serve the `reports` only, not the spec's sample report besides: a simulator standing for one connection of a
   * local run answers that connection's reports, so a report sent over another connection is refused (400).
   */
  onlyReports?: boolean;
  /** Report id -> a file served as that report's answer to every request (`--sample ID=FILE`). */
  samples?: Readonly<Record<string, string>>;
  /**
   * Logins answered with the refusal although their signature is good: the provider refusing one connection's
   * login (`npm run simulator -- --refuse <connection>`), for the refusal drill without a second simulator.
   */
  refuseLogins?: readonly string[];
  /** How a period's "to" is read for every report (PERIOD_TO_READINGS); default: as each definition's `periodTo` says. */
  periodTo?: PeriodToReading;
  /** Called once per request with its log entry (the standalone simulator prints them). */
  onRequest?: (entry: LoggedRequest) => void;
}

export type RequestOutcome = 'report' | 'refused' | 'bad-request' | 'not-found' | 'method-not-allowed' | 'fault';

/** One received request. Holds what identifies a call, never its signature or any key. */
export interface LoggedRequest {
  time: Date;
  httpMethod: string;
  path: string;
  login?: string;
  signatureMethod?: string;
  nonce?: string;
  timestamp?: string;
  status: number;
  outcome: RequestOutcome;
  /** The refusal reason, the body problem or the fault mode. */
  detail?: RefusalReason | string;
  /** A report sent compressed: the coding, and whether the request asked for it, e.g. "gzip (unasked)". */
  coding?: string;
}

export interface Simulator {
  /** The full endpoint URL, e.g. http://127.0.0.1:PORT/paynet-ui/services/v2/rpt-engine. */
  url: string;
  /** Ready-to-use secrets (docs/architecture.md "Secret"), one per signature method, by short name (test-accounts.ts). */
  credentials: TestCredentials;
  /** Every request received so far, oldest first. */
  readonly requests: readonly LoggedRequest[];
  close(): Promise<void>;
}

/** What every answer reads: the settings fixed at start-up, the request log, and the port once listening. */
interface SimulatorState {
  options: SimulatorOptions;
  now: () => Date;
  rowsPerDay: number;
  endpointPath: string;
  credentials: TestCredentials;
  auth: Authenticator;
  faults: FaultPlan;
  transport: TransportOptions | undefined;
  reports: readonly ReportDefinition[];
  samples: Map<string, SampleFile>;
  requests: LoggedRequest[];
  /** Aborted by close(), which ends a `slow` fault's wait. */
  closing: AbortController;
  /** 0 until the server listens. */
  port: number;
}

/** One request being answered, with its log entry (recorded once its answer is chosen). */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  entry: LoggedRequest;
}

/** What a fault before authentication left to do: nothing (`ended`: answered, or the simulator closed), or the rest of the checks. */
type EarlyFaultResult = 'none' | 'slowed' | 'ended';

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await simulatorState(options);
  const server: Server = createServer((req, res) => {
    handleRequest(sim, req, res).catch(() => {
      // A bug here must still answer, not hang the client.
      if (!res.headersSent) sendText(res, 500, 'Internal Server Error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  sim.port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${sim.port}${sim.endpointPath}`,
    credentials: sim.credentials,
    requests: sim.requests,
    close: async () => {
      sim.closing.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** The options checked, the test accounts made and the samples read: a bad setting fails the start, not a request. */
async function simulatorState(options: SimulatorOptions): Promise<SimulatorState> {
  const now = options.now ?? (() => new Date());
  const rowsPerDay = options.rowsPerDay ?? 250;
  if (!Number.isFinite(rowsPerDay) || rowsPerDay < 0) throw new RangeError(`rowsPerDay must be a number ≥ 0, got ${rowsPerDay}.`);
  const prefix = (options.pathPrefix ?? 'paynet-ui').replace(/^\/+|\/+$/g, '');
  const endpointPath = `${prefix ? `/${prefix}` : ''}/services/v2/rpt-engine`;

  const credentials = await makeTestCredentials(options);
  const auth = new Authenticator(
    [...SIGNATURE_METHODS.map((m) => gatewayAccountOf(testSecretOf(credentials, m))), ...(options.accounts ?? [])],
    { maxSkewSeconds: options.maxSkewSeconds ?? 300, bodySigning: options.bodySigning ?? DEFAULT_BODY_SIGNING },
  );
  const faults = new FaultPlan(options.fault);
  checkTransportOptions(options.transport);
  const transport = options.transport;
  const reports = options.reports ?? [];
  const samples = readSamples(options.samples ?? {}, reports);
  return { options, now, rowsPerDay, endpointPath, credentials, auth, faults, transport, reports, samples, requests: [], closing: new AbortController(), port: 0 };
}

/** The checks of ANSWERS (top of this file) in their order: the first that answers ends the request. */
async function handleRequest(sim: SimulatorState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const ex = openExchange(sim, req, res);
  const body = await bodyOfReportCall(sim, ex);
  if (body === undefined) return;
  const early = await answerEarlyFault(sim, ex);
  if (early === 'ended') return;

  const checked = sim.auth.check({ method: 'POST', url: ex.url, authorization: req.headers.authorization, body, now: sim.now() });
  const verdict = checked.ok && sim.options.refuseLogins?.includes(checked.login) ? { ok: false as const, reason: 'login-refused' as const } : checked;
  if (!verdict.ok) {
    // Exactly the spec's refusal: 200, text/plain, one sentence, whatever the cause.
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(NOT_AUTHORISED_MESSAGE);
    return logAnswer(sim, ex, 200, 'refused', verdict.reason);
  }

  const parsed = parseReportRequest(req.headers['content-type'], body, sim.reports, { onlyDefinitions: sim.options.onlyReports, periodTo: sim.options.periodTo });
  if (!parsed.ok) {
    sendText(res, 400, parsed.problem);
    return logAnswer(sim, ex, 400, 'bad-request', parsed.problem);
  }

  const report = parsed.request;
  const sample = report.definition && sim.samples.get(report.definition.id);
  if (sample) return sendSampleFile(sim, ex, report, sample);
  await sendGeneratedReport(sim, ex, report, verdict.login, early === 'slowed');
}

function openExchange(sim: SimulatorState, req: IncomingMessage, res: ServerResponse): Exchange {
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? `127.0.0.1:${sim.port}`}`);
  const oauth = parseAuthorizationHeader(req.headers.authorization) ?? {};
  const entry: LoggedRequest = {
    time: sim.now(),
    httpMethod: req.method ?? '',
    path: url.pathname,
    login: oauth.oauth_consumer_key,
    signatureMethod: oauth.oauth_signature_method,
    nonce: oauth.oauth_nonce,
    timestamp: oauth.oauth_timestamp,
    status: 0,
    outcome: 'fault',
  };
  return { req, res, url, entry };
}

/** Completes the request's log entry with its answer, and records it. */
function logAnswer(sim: SimulatorState, ex: Exchange, status: number, outcome: RequestOutcome, detail?: string): void {
  const { entry } = ex;
  Object.assign(entry, { status, outcome, detail });
  sim.requests.push(entry);
  sim.options.onRequest?.(entry);
}

/** The body of a POST to the endpoint; undefined once another path, another method or too large a body is answered. */
async function bodyOfReportCall(sim: SimulatorState, ex: Exchange): Promise<string | undefined> {
  const { req, res } = ex;
  if (ex.url.pathname !== sim.endpointPath) {
    req.resume();
    sendText(res, 404, 'Not found.');
    logAnswer(sim, ex, 404, 'not-found');
    return undefined;
  }
  if (req.method !== 'POST') {
    req.resume();
    res.setHeader('Allow', 'POST');
    sendText(res, 405, 'Only POST is allowed here.');
    logAnswer(sim, ex, 405, 'method-not-allowed');
    return undefined;
  }
  const body = await readBody(req);
  if (body === null) {
    res.setHeader('Connection', 'close');
    sendText(res, 400, `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    logAnswer(sim, ex, 400, 'bad-request', 'body too large');
    return undefined;
  }
  return body;
}

/** The fault that strikes before authentication, if one is due: its answer, or for `slow` a wait before the request goes on. */
async function answerEarlyFault(sim: SimulatorState, ex: Exchange): Promise<EarlyFaultResult> {
  const { res } = ex;
  const early = sim.faults.take('before-auth');
  if (!early) return 'none';
  switch (early.mode) {
    case 'slow':
      try {
        await sleep(early.delayMs ?? 2000, undefined, { signal: sim.closing.signal });
      } catch {
        return 'ended'; // the simulator is closing
      }
      return 'slowed';
    case 'error500':
      sendText(res, 500, 'Internal Server Error');
      logAnswer(sim, ex, 500, 'fault', early.mode);
      return 'ended';
    case 'rateLimited': {
      const seconds = early.retryAfterSeconds ?? 1;
      res.setHeader('Retry-After', String(seconds));
      sendText(res, 429, `Too many requests; retry after ${seconds} second(s).`);
      logAnswer(sim, ex, 429, 'fault', early.mode);
      return 'ended';
    }
    case 'htmlError':
      res.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' }).end(HTML_ERROR_PAGE);
      logAnswer(sim, ex, 200, 'fault', early.mode);
      return 'ended';
    case 'emptyBody':
      res.writeHead(200, { 'Content-Type': 'text/csv; charset=UTF-8', 'Content-Length': '0' }).end();
      logAnswer(sim, ex, 200, 'fault', early.mode);
      return 'ended';
    default: {
      // Every mode that strikes before authentication is answered above (faults.ts FAULTS).
      const unanswered: never = early.mode;
      throw new Error(`fault mode ${String(unanswered)} has no answer`);
    }
  }
}

async function sendSampleFile(sim: SimulatorState, ex: Exchange, report: ReportRequest, sample: SampleFile): Promise<void> {
  const { res } = ex;
  // The provider's own file, travelling as the start-up transport options say (type, coding, chunks).
  setReportHeaders(res, sim.transport, sample.pdf ? 'application/pdf' : `text/csv; charset=${report.encoding}`);
  noteCoding(sim, ex);
  res.setHeader('Content-Disposition', `attachment; filename="${fileName(report)}"`);
  res.writeHead(200);
  logAnswer(sim, ex, 200, 'report', 'sample file');
  try {
    await sendReportBody(Readable.from([sample.bytes]), res, sim.transport);
  } catch {
    // The client went away mid-answer; nothing to do.
  }
}

/** For the request log: the coding a report travels in, and whether the request asked for it. */
function noteCoding(sim: SimulatorState, ex: Exchange): void {
  const { transport } = sim;
  if (transport?.compress) ex.entry.coding = `${transport.compress} (${askedFor(ex.req, transport.compress) ? 'asked' : 'unasked'})`;
}

/** A report of generated rows, as the report fault due (if any) leaves it: drifted, or cut mid-body. */
async function sendGeneratedReport(sim: SimulatorState, ex: Exchange, report: ReportRequest, login: string, slowed: boolean): Promise<void> {
  const { res } = ex;
  const late = sim.faults.take('on-report');
  const drift = late ? REPORT_FAULTS[late.mode].drift : false;
  const content = generatedContent(report, login, drift, sim.rowsPerDay, sim.options.volume);
  setReportHeaders(res, sim.transport, report.format === 'CSV' ? `text/csv; charset=${report.encoding}` : 'application/pdf');
  noteCoding(sim, ex);
  res.setHeader('Content-Disposition', `attachment; filename="${fileName(report)}"`);
  if (late && REPORT_FAULTS[late.mode].cut) return sendCutReport(sim, ex, report, content, late.mode);

  res.writeHead(200);
  logAnswer(sim, ex, 200, 'report', drift ? 'schemaDrift' : slowed ? 'slow' : undefined);
  const { header, rows, pdfOptions } = content;
  const source = report.format === 'CSV' ? Readable.from(reportCsvChunks(header, rows(), report)) : await reportPdfStream(header, rows(), pdfOptions);
  try {
    await sendReportBody(source, res, sim.transport);
  } catch {
    // The client went away mid-answer; nothing to do.
  }
}

/** dropMidBody: the headers promise the whole report, half of it arrives. */
async function sendCutReport(sim: SimulatorState, ex: Exchange, report: ReportRequest, content: ReportContent, mode: FaultModeAt<'on-report'>): Promise<void> {
  const { res } = ex;
  const { header, rows, pdfOptions } = content;
  // Built whole (not streamed) so the headers can promise its full Content-Length: the client then
  // knows for certain that the body was cut.
  const full = encodeWhole(
    report.format === 'CSV' ? writeReportCsv(header, rows(), report) : await writeReportPdf(header, rows(), pdfOptions),
    sim.transport,
  );
  res.setHeader('Content-Length', String(full.length));
  res.writeHead(200);
  logAnswer(sim, ex, 200, 'fault', mode);
  // Half the promised bytes, flushed, then a hard close: what a dying upstream looks like.
  res.write(full.subarray(0, Math.ceil(full.length / 2)), () => res.socket?.destroy());
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=UTF-8' }).end(text);
}

/**
 * The body as text, or null when it exceeds the limit. An oversized body is still read to its end (and
 * dropped) so that the 400 reaches the client instead of a reset connection.
 */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  return size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8');
}

function fileName(r: ReportRequest): string {
  const stamp = (t: LocalDateTime) => formatWithPattern(t, 'yyyyMMddHHmmss');
  return `${r.reportIdentifier}_${stamp(r.window.start)}_${stamp(r.window.end)}.${r.format.toLowerCase()}`;
}
