import { loadCheckedCatalog as loadCatalog } from '../args/catalog.js';
import { renderBody } from '../../functions/core/gateway/body-template.js';
import { describeRequest, type DescribedRequest } from '../../functions/core/gateway/request.js';
import type { BodySigningRule } from '../../functions/core/gateway/oauth.js';
import { parseLocalDateTime, parseWindowSize, windowAt, windowsStartingIn } from '../../functions/core/time/window.js';
import { readSecretFile } from '../args/secret-file.js';

export interface SignOptions {
  gatewayUrl: string;
  secretFile: string;
  /** Default: the catalog's only report. */
  report?: string;
  /** Window start; default: the last complete window, as a scheduled run would fetch. */
  from?: string;
  bodySigning?: BodySigningRule;
}

/**
 * `reports sign`: the exact request a run would send for one window, signed now, as an Authorization header
 * and a curl command, for reproducing a call with the provider's support. It holds a live signature (one
 * nonce, valid for minutes): printed to stdout for the user, never logged.
 */
export async function signReportRequest(opts: SignOptions): Promise<DescribedRequest> {
  const report = loadCatalog().chosen(opts.report);
  const window = opts.from ? windowAt(parseLocalDateTime(opts.from), parseWindowSize(report.window)) : windowsStartingIn(report, {})[0]!;
  const secret = await readSecretFile(opts.secretFile);
  return describeRequest({ endpointUrl: opts.gatewayUrl, secret, body: renderBody(report.bodyTemplate, window), bodySigning: opts.bodySigning });
}

/** The command: the warning on stderr, the header and the curl command on stdout (so they can be piped). */
export async function runSignCommand(opts: SignOptions): Promise<void> {
  const described = await signReportRequest(opts);
  console.error('The lines below hold a signature valid for one request (its nonce) within minutes (its timestamp).');
  console.log(`Authorization: ${described.authorization}`);
  console.log('');
  console.log(described.curl);
}
