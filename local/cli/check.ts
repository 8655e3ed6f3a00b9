import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { renderBody } from '../../functions/core/gateway/body-template.js';
import { CsvRecordReader } from '../../functions/core/csv/records.js';
import { isPipelineError, UnexpectedAnswer, type PipelineError } from '../../functions/core/errors.js';
import { escapeControls, expectationOf, headerLine } from '../../functions/core/gateway/answer.js';
import { fetchReport, type GatewayClientOptions, type GatewayEvent } from '../../functions/core/gateway/client.js';
import type { BodySigningRule } from '../../functions/core/gateway/oauth.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { signatureMethodOf, SIGNING, type GatewaySecret, type SignatureMethod } from '../../functions/core/gateway/signature-methods.js';
import { formatLocalDateTime, parseLocalDateTime, parseWindowSize, windowAt, windowsStartingIn, type ReportWindow } from '../../functions/core/time/window.js';
import { resolveTargets, type CheckTarget } from './check-targets.js';
import { emptyWindowNote } from '../pipeline/check-summary.js';
import { unusedConnectionWarning } from '../../lib/environment/unused-connections.js';

/**
 * `reports check`: the connector check (as Airbyte calls it) for a first contact with a gateway. One signed
 * request per report for its last complete window (or --from), nothing stored, and what came back told
 * field by field with a verdict: "OK: this answer would load", or what to fix. No retries: the point is to
 * see the gateway's own answer. Never prints a key or a signature (the client redacts echoed signatures).
 *
 * Per connection (functions/core/connections/connection.ts): each is its own gateway and login, so each is checked
 * with one of its reports (--all: every one) and gets a verdict line of its own: with --environment every connection
 * the environment defines, or --connection NAME only.
 */

export interface CheckOptions {
  report?: string;
  all?: boolean;
  /** Window start (YYYY-MM-DD or YYYY-MM-DDTHH:mm); default: the last complete window. */
  from?: string;
  gatewayUrl?: string;
  secretFile?: string;
  /** Take the endpoints from config/environments/<name>.json and the credentials from their Secrets Manager secrets. */
  environment?: string;
  /** Only this connection: of the environment, or of the catalog (the simulator, or what --gateway-url is for). */
  connection?: string;
  json?: boolean;
  bodySigning?: BodySigningRule;
}

export interface CheckDeps {
  catalog?: ReportCatalog;
  /** Where <environment>.json files live; default config/environments/. */
  environmentsDir?: URL | string;
  /** Client settings for tests (a CA, a DNS lookup). */
  gateway?: Pick<GatewayClientOptions, 'ca' | 'lookup' | 'timeouts' | 'acceptEncoding'>;
  now?: () => Date;
}

export interface HeaderDiff {
  column: number;
  expected?: string;
  got?: string;
}

export interface CheckResult {
  /** The connection the request went over (the report's). */
  connection: string;
  /** Absent when no report of the catalog names the connection: nothing was requested. */
  report?: string;
  /** "start/end" wall clock in the report's zone, end exclusive. */
  window?: string;
  /** Origin and path of the endpoint. */
  url: string;
  /** Where the credentials came from: a Secrets Manager secret (--environment), a file, or the simulator's test account. */
  credentials: string;
  /** The Secrets Manager secret (--environment). */
  secretName?: string;
  /** Absent when the secret could not be read. */
  login?: string;
  signatureMethod?: string;
  status?: number;
  contentType?: string;
  contentCoding?: string;
  timeToFirstByteMs?: number;
  /** Bytes of the decoded answer (what a run stores), and on the wire. */
  bytes?: number;
  wireBytes?: number;
  kind?: 'csv' | 'pdf';
  /** CSV: records after the header row. */
  records?: number;
  firstLine?: string;
  headerMatches?: boolean;
  headerDiff?: HeaderDiff[];
  ok: boolean;
  verdict: string;
  error?: { code: string; message: string };
}

const OK = 'OK: this answer would load';

function windowFor(report: ReportDefinition, from: string | undefined, now: Date): ReportWindow {
  return from ? windowAt(parseLocalDateTime(from), parseWindowSize(report.window)) : windowsStartingIn(report, {}, now)[0]!;
}

/** Column by column: the positions where the first line and the definition's header differ. */
export function diffHeader(expected: readonly string[], got: readonly string[]): HeaderDiff[] {
  const diff: HeaderDiff[] = [];
  for (let i = 0; i < Math.max(expected.length, got.length); i++) {
    if (expected[i] !== got[i]) diff.push({ column: i + 1, ...(i < expected.length ? { expected: expected[i] } : {}), ...(i < got.length ? { got: got[i] } : {}) });
  }
  return diff;
}

const FIX_BY_CODE: Record<string, string> = {
  UnexpectedAnswer: 'the answer is not a report: check the endpoint URL and the report body (bodyTemplate); if they are right, send the quoted start to the provider',
  GatewayUnavailable: 'the gateway did not answer usefully: check the URL\'s host and port; if they are right, try again later or ask the provider',
  EndpointUnreachable: 'the endpoint cannot be reached: check the URL\'s host, and the CA if its certificate is refused',
  InsecureEndpoint: 'use the https:// URL the provider publishes',
  ConfigurationError: 'fix the configuration named above',
  MalformedReport: 'the file is not well-formed CSV in the definition\'s encoding and delimiter: check encoding and delimiter, or send the file to the provider',
};

/** What to fix for an error code; a refused login names what its signature method needs checked. */
const fixFor = (code: string, method: SignatureMethod): string =>
  code === 'AuthenticationRefused'
    ? `the gateway refused the login: check ${SIGNING[method].whenRefused} (${method}), and the clock`
    : (FIX_BY_CODE[code] ?? 'see the message');

/** What a result of the target says before any request: the connection, where, and as whom. */
function resultOf(target: CheckTarget, report: ReportDefinition | undefined, window: ReportWindow | undefined): CheckResult {
  const url = target.endpointUrl ? new URL(target.endpointUrl) : undefined;
  return {
    connection: target.connection,
    ...(report ? { report: report.id } : {}),
    ...(window ? { window: `${formatLocalDateTime(window.start)}/${formatLocalDateTime(window.end)}` } : {}),
    url: url ? `${url.origin}${url.pathname}` : '',
    credentials: target.credentials,
    ...(target.secretName ? { secretName: target.secretName } : {}),
    ...(target.secret ? { login: target.secret.login, signatureMethod: signatureMethodOf(target.secret) } : {}),
    ok: false,
    verdict: '',
  };
}

/** A connection not requested: its secret unreadable (NOT OK), or no report to request with (not a failure). */
function unrequested(target: CheckTarget, report: ReportDefinition | undefined, problem: PipelineError | undefined, opts: CheckOptions, now: Date): CheckResult {
  const result = resultOf(target, report, report ? windowFor(report, opts.from, now) : undefined);
  if (problem) {
    result.error = { code: problem.code, message: problem.message };
    result.verdict = `NOT OK: ${problem.code}: the credentials could not be read: ${FIX_BY_CODE[problem.code] ?? 'see the message'}`;
  } else {
    // Not a failure (exit 0), but a warning: the stack still deploys the connection (lib/environment/unused-connections.ts).
    result.ok = true;
    result.verdict = opts.environment
      ? `NOT CHECKED: ${unusedConnectionWarning(opts.environment, target.connection)}`
      : 'NOT CHECKED: no report of the catalog names this connection, so nothing would be requested over it';
  }
  return result;
}

async function checkOne(report: ReportDefinition, target: CheckTarget & { endpointUrl: string; secret: GatewaySecret }, opts: CheckOptions, deps: CheckDeps): Promise<CheckResult> {
  const now = deps.now ?? (() => new Date());
  const window = windowFor(report, opts.from, now());
  const result = resultOf(target, report, window);
  const onEvent = (e: GatewayEvent) => {
    if (e.type === 'response') {
      Object.assign(result, { status: e.status, contentType: e.contentType, contentCoding: e.contentCoding, timeToFirstByteMs: e.elapsedMs });
    }
  };
  const expect = expectationOf(report);
  try {
    const answer = await fetchReport({
      ...deps.gateway,
      endpointUrl: target.endpointUrl,
      secret: target.secret,
      body: renderBody(report.bodyTemplate, window),
      bodySigning: opts.bodySigning,
      expect,
      retry: { attempts: 1 },
      onEvent,
    });
    result.kind = answer.kind;
    if (answer.firstLine !== undefined) result.firstLine = answer.firstLine;
    let bytes = 0;
    let records = 0;
    let header: string[] | undefined;
    // The parse's own reader: the same decoding and CSV rules, one record at a time (bounded memory).
    const reader =
      answer.kind === 'csv'
        ? new CsvRecordReader(report.id, report.delimiter, report.encoding, (record) => {
            if (header === undefined) header = record;
            else records++;
          })
        : undefined;
    try {
      for await (const chunk of answer.body) {
        bytes += (chunk as Buffer).length;
        reader?.write(chunk as Buffer);
      }
      reader?.end();
    } finally {
      result.bytes = bytes;
      result.wireBytes = answer.wireBytes();
    }
    if (answer.kind === 'pdf') {
      result.ok = report.format === 'PDF';
      result.verdict = result.ok
        ? `${OK} (a PDF is stored in the raw bucket, not parsed)`
        : 'NOT OK: the definition says CSV but the gateway sent a PDF: check reportFormat in the definition\'s bodyTemplate';
      return result;
    }
    result.records = records;
    const expected = report.columns.map((c) => c.header);
    const diff = diffHeader(expected, header ?? []);
    result.headerMatches = header !== undefined && diff.length === 0;
    if (!result.headerMatches) result.headerDiff = diff;
    if (report.format === 'PDF') {
      result.verdict = 'NOT OK: the definition says PDF but the gateway sent CSV: check reportFormat in the definition\'s bodyTemplate';
    } else if (!result.headerMatches) {
      result.verdict =
        "NOT OK: the first line is not the definition's header (see the columns above): a run would store the file and the parse would refuse it as SchemaDrift. " +
        'Update the definition\'s columns (`reports infer-schema` on a saved answer proposes them), or the delimiter/encoding if every column differs';
    } else {
      result.ok = true;
      const empty = emptyWindowNote(report, window, records);
      result.verdict = empty ? `${OK}; ${empty}` : OK;
    }
  } catch (e) {
    if (!isPipelineError(e)) throw e;
    result.error = { code: e.code, message: e.message };
    if (e instanceof UnexpectedAnswer) {
      result.status ??= e.status;
      result.contentType ??= e.contentType;
    }
    result.verdict = `NOT OK: ${e.code}: ${fixFor(e.code, signatureMethodOf(target.secret))}`;
  }
  return result;
}

/**
 * Checks each connection with its chosen reports, one request each, one connection after the other: the targets
 * (simulators, file, environment) are set up once and closed at the end.
 */
export async function checkReports(opts: CheckOptions, deps: CheckDeps = {}): Promise<CheckResult[]> {
  const catalog = deps.catalog ?? loadCatalog();
  const { targets, close } = await resolveTargets(opts, catalog, deps.environmentsDir);
  const now = () => (deps.now ?? (() => new Date()))();
  try {
    const results: CheckResult[] = [];
    for (const target of targets) {
      const { endpointUrl, secret, problem } = target;
      if (!target.reports.length) results.push(unrequested(target, undefined, undefined, opts, now()));
      for (const report of target.reports) {
        if (problem || !endpointUrl || !secret) results.push(unrequested(target, report, problem, opts, now()));
        else results.push(await checkOne(report, { ...target, endpointUrl, secret }, opts, deps));
      }
    }
    return results;
  } finally {
    await close();
  }
}

const n = (v: number) => v.toLocaleString('en-US');

/** The human-readable lines of one result. */
export function formatCheckResult(r: CheckResult, report?: ReportDefinition): string[] {
  const row = (label: string, value: string) => `  ${`${label}:`.padEnd(20)}${value}`;
  const lines = [r.report ? `Report "${r.report}", window ${r.window}` : `Connection "${r.connection}"`, row('Connection', r.connection), row('URL', r.url)];
  lines.push(row('Credentials', r.credentials));
  if (r.login !== undefined) lines.push(row('Login', `"${r.login}"`), row('Signature method', r.signatureMethod ?? '?'));
  if (r.report) lines.push(row('HTTP status', r.status === undefined ? '(no answer)' : String(r.status)));
  if (r.status !== undefined) {
    lines.push(row('Content type', r.contentType ? r.contentType : '(none)'));
    lines.push(row('Content coding', `${r.contentCoding ?? 'identity'}${r.wireBytes !== undefined ? ` (${n(r.wireBytes)} bytes on the wire)` : ''}`));
    lines.push(row('Time to first byte', `${r.timeToFirstByteMs} ms`));
  }
  if (r.bytes !== undefined) lines.push(row('Bytes', `${n(r.bytes)}${r.kind ? ` (${r.kind.toUpperCase()})` : ''}`));
  if (r.records !== undefined) lines.push(row('Records', n(r.records)));
  if (r.firstLine !== undefined) lines.push(row('First line', escapeControls(r.firstLine)));
  if (r.headerMatches !== undefined) {
    lines.push(row('Header', r.headerMatches ? "equals the definition's header" : "DIFFERS from the definition's header:"));
    for (const d of r.headerDiff ?? []) {
      lines.push(`      column ${d.column}: expected ${d.expected === undefined ? '(none)' : JSON.stringify(d.expected)}, got ${d.got === undefined ? '(none)' : JSON.stringify(d.got)}`);
    }
  } else if (r.error?.code === 'UnexpectedAnswer' && report?.format === 'CSV') {
    lines.push(row('Expected start', escapeControls(headerLine(report.columns.map((c) => c.header), report.delimiter).slice(0, 200))));
  }
  if (r.error) lines.push(row('Error', `${r.error.code}: ${r.error.message}`));
  lines.push(row('Verdict', r.verdict));
  return lines;
}

/**
 * One verdict line per connection, in the order checked: where, as whom (never the key), which reports were
 * requested and what came back; a connection of several reports is OK only when each is.
 */
export function formatConnectionVerdicts(results: readonly CheckResult[]): string[] {
  const byConnection = new Map<string, CheckResult[]>();
  for (const r of results) byConnection.set(r.connection, [...(byConnection.get(r.connection) ?? []), r]);
  return [...byConnection].map(([connection, rs]) => {
    const first = rs[0]!;
    const who = first.login === undefined ? first.credentials : `${first.credentials}, login "${first.login}" (${first.signatureMethod})`;
    const checked = rs.filter((r) => r.report);
    const failed = checked.filter((r) => !r.ok);
    let what: string;
    if (!checked.length) what = first.verdict;
    else if (failed.length) what = failed.map((r) => `report ${r.report}: ${r.verdict}`).join('; ');
    else what = `${checked.length === 1 ? 'report' : 'reports'} ${checked.map((r) => r.report).join(', ')}: ${OK}`;
    const mark = failed.length ? 'NOT OK' : checked.length ? 'OK' : 'WARN';
    return `  ${mark.padEnd(7)}${connection}: ${first.url || '(no endpoint)'}, ${who}; ${what}`;
  });
}

/** The command: prints each result (or JSON) and returns the exit code: 0 only when every answer would load. */
export async function runCheckCommand(opts: CheckOptions, print: (line: string) => void = (l) => console.log(l), deps: CheckDeps = {}): Promise<number> {
  // As in runLocal: the SDK's Node 22 notice would land in the middle of the printed answers.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const catalog = deps.catalog ?? loadCatalog();
  const results = await checkReports(opts, { ...deps, catalog });
  if (opts.json) {
    print(JSON.stringify(results, null, 2));
  } else {
    for (const [i, r] of results.entries()) {
      if (i > 0) print('');
      formatCheckResult(r, r.report ? catalog.get(r.report) : undefined).forEach((l) => print(l));
    }
    print('');
    print('Connections:');
    formatConnectionVerdicts(results).forEach((l) => print(l));
  }
  return results.every((r) => r.ok) ? 0 : 1;
}
