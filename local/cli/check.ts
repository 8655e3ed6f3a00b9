import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { environmentOf, readEnvironmentSource } from '../../lib/environment/environments.js';
import { renderBody } from '../../functions/core/gateway/body-template.js';
import { CsvRecordReader } from '../../functions/core/csv/records.js';
import { ConfigurationError, isPipelineError, UnexpectedAnswer } from '../../functions/core/errors.js';
import { escapeControls, expectationOf, headerLine } from '../../functions/core/gateway/answer.js';
import { fetchReport, type GatewayClientOptions, type GatewayEvent } from '../../functions/core/gateway/client.js';
import { validateGatewayUrl } from '../../functions/core/gateway/request.js';
import type { BodySigningRule } from '../../functions/core/gateway/oauth.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { DEFAULT_SIGNATURE_METHOD, signatureMethodOf, SIGNING, type GatewaySecret, type SignatureMethod } from '../../functions/core/gateway/signature-methods.js';
import { formatLocalDateTime, parseLocalDateTime, parseWindowSize, windowAt, windowsStartingIn, type ReportWindow } from '../../functions/core/time/window.js';
import { getGatewaySecret } from '../../functions/aws/secrets.js';
import { readSecretFile } from '../args/secret-file.js';

/**
 * `reports check`: the connector check (as Airbyte calls it) for a first contact with a gateway. One signed
 * request per report for its last complete window (or --from), nothing stored, and what came back told
 * field by field with a verdict: "OK: this answer would load", or what to fix. No retries: the point is to
 * see the gateway's own answer. Never prints a key or a signature (the client redacts echoed signatures).
 */

export interface CheckOptions {
  report?: string;
  all?: boolean;
  /** Window start (YYYY-MM-DD or YYYY-MM-DDTHH:mm); default: the last complete window. */
  from?: string;
  gatewayUrl?: string;
  secretFile?: string;
  /** Take the endpoint from config/environments/<name>.json and the credentials from its Secrets Manager secret. */
  environment?: string;
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
  report: string;
  /** "start/end" wall clock in the report's zone, end exclusive. */
  window: string;
  /** Origin and path of the endpoint. */
  url: string;
  login: string;
  signatureMethod: string;
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

const DEFAULT_ENVIRONMENTS = new URL('../../config/environments/', import.meta.url);
const OK = 'OK: this answer would load';

interface Target {
  endpointUrl: string;
  secret: GatewaySecret;
  close?: () => Promise<void>;
  source: string;
}

/** Where to call and as whom: --gateway-url with --secret-file, --environment, or the embedded simulator. */
async function resolveTarget(opts: CheckOptions, deps: CheckDeps): Promise<Target> {
  if (opts.environment && (opts.gatewayUrl || opts.secretFile)) {
    throw new ConfigurationError('--environment takes the endpoint and the credentials from the environment: leave out --gateway-url and --secret-file.');
  }
  if (opts.environment) {
    if (!/^[a-z][a-z0-9-]{0,11}$/.test(opts.environment)) {
      throw new ConfigurationError(`--environment "${opts.environment}" is not an environment name (config/environments/<name>.json).`);
    }
    const label = `config/environments/${opts.environment}.json`;
    const file = fileURLToPath(new URL(`${opts.environment}.json`, deps.environmentsDir ?? DEFAULT_ENVIRONMENTS));
    if (!existsSync(file)) throw new ConfigurationError(`Cannot read ${label}: there is no such file (an environment is a file config/environments/<name>.json).`);
    // Read as the synth reads it: a syntax error with its line and column, every bad field, the name matching the file.
    const env = environmentOf(readEnvironmentSource(file, label));
    // One connection for now: the first.
    const connection = env.connections[0]!;
    validateGatewayUrl(connection.gateway.endpointUrl, 'gateway.endpointUrl');
    const region = env.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    const provider = new SecretsProvider(region ? { clientConfig: { region } } : {});
    const secret = await getGatewaySecret(connection.secret.name, { provider, maxAgeSeconds: 0 });
    return { endpointUrl: connection.gateway.endpointUrl, secret, source: `environment "${env.name}", secret "${connection.secret.name}"` };
  }
  if (opts.gatewayUrl || opts.secretFile) {
    if (!opts.gatewayUrl || !opts.secretFile) {
      throw new ConfigurationError('--gateway-url and --secret-file go together (or use --environment NAME).');
    }
    validateGatewayUrl(opts.gatewayUrl);
    return { endpointUrl: opts.gatewayUrl, secret: await readSecretFile(opts.secretFile), source: `secret file ${opts.secretFile}` };
  }
  const { startSimulator, testSecretOf } = await import('../simulator/index.js');
  // The embedded simulator serves every report of the catalog, as `npm start`'s does.
  const sim = await startSimulator({ reports: (deps.catalog ?? loadCatalog()).reports });
  return { endpointUrl: sim.url, secret: testSecretOf(sim.credentials, DEFAULT_SIGNATURE_METHOD), close: () => sim.close(), source: 'the embedded simulator' };
}

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

async function checkOne(report: ReportDefinition, target: Target, opts: CheckOptions, deps: CheckDeps): Promise<CheckResult> {
  const now = deps.now ?? (() => new Date());
  const window = windowFor(report, opts.from, now());
  const url = new URL(target.endpointUrl);
  const result: CheckResult = {
    report: report.id,
    window: `${formatLocalDateTime(window.start)}/${formatLocalDateTime(window.end)}`,
    url: `${url.origin}${url.pathname}`,
    login: target.secret.login,
    signatureMethod: signatureMethodOf(target.secret),
    ok: false,
    verdict: '',
  };
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
      result.verdict = OK;
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

/** Checks the chosen reports, one request each; the target (simulator, file, environment) is set up once. */
export async function checkReports(opts: CheckOptions, deps: CheckDeps = {}): Promise<CheckResult[]> {
  const catalog = deps.catalog ?? loadCatalog();
  if (opts.all && opts.report) throw new ConfigurationError('--report and --all exclude each other.');
  const reports = opts.all ? catalog.reports : [catalog.chosen(opts.report, '--report ID or --all')];
  const target = await resolveTarget(opts, { ...deps, catalog });
  try {
    const results: CheckResult[] = [];
    for (const report of reports) results.push(await checkOne(report, target, opts, deps));
    return results;
  } finally {
    await target.close?.();
  }
}

const n = (v: number) => v.toLocaleString('en-US');

/** The human-readable lines of one result. */
export function formatCheckResult(r: CheckResult, report?: ReportDefinition): string[] {
  const row = (label: string, value: string) => `  ${`${label}:`.padEnd(20)}${value}`;
  const lines = [`Report "${r.report}", window ${r.window}`, row('URL', r.url), row('Login', `"${r.login}"`), row('Signature method', r.signatureMethod)];
  lines.push(row('HTTP status', r.status === undefined ? '(no answer)' : String(r.status)));
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
      formatCheckResult(r, catalog.get(r.report)).forEach((l) => print(l));
    }
  }
  return results.every((r) => r.ok) ? 0 : 1;
}
