import { DECODABLE_CODINGS } from './content-coding.js';
import { ConfigurationError, InsecureEndpoint } from '../errors.js';
import { signRequest, unixSeconds, type BodySigningRule } from './oauth.js';
import type { GatewaySecret } from './secret.js';

/**
 * What the client sends to the report endpoint: the endpoint policy, the compact JSON body and the
 * signed headers, plus the same request as a curl command line for `reports sign`.
 */

/** Report types first; the catch-all keeps a strict server from answering 406 instead of its error text. */
export const ACCEPT =
  'text/csv, application/csv, application/pdf, application/octet-stream;q=0.5, */*;q=0.1';

/**
 * The content codings asked for: a large CSV shrinks 5 to 10 times on the wire. The client decodes
 * whatever coding comes (client.ts), asked or not: a server may compress unasked (RFC 9110 §12.5.3).
 */
export const ACCEPT_ENCODING = DECODABLE_CODINGS.join(', ');

/** 127.0.0.0/8, ::1 (and 127/8 written as an IPv4-mapped IPv6 address), localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === 'localhost' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === '[::1]' ||
    // WHATWG URL rewrites [::ffff:127.0.0.1] as [::ffff:7f00:1].
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host)
  );
}

/**
 * Parses the endpoint and refuses plain HTTP off loopback before anything touches the network:
 * the Authorization header and the report would otherwise cross it in clear.
 */
export function secureEndpoint(endpointUrl: string | URL): URL {
  let url: URL;
  try {
    url = new URL(endpointUrl);
  } catch {
    throw new ConfigurationError(`endpointUrl "${String(endpointUrl)}" is not an absolute URL.`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:') {
    if (isLoopbackHost(url.hostname)) return url;
    throw new InsecureEndpoint(url.hostname);
  }
  throw new ConfigurationError(`endpointUrl must be an https:// URL (got the scheme "${url.protocol}").`);
}

/**
 * What the command line checks in a --gateway-url before it starts anything: the scheme and loopback rule
 * (secureEndpoint, after which the URL has a host: WHATWG URL refuses an http(s) URL without one), no
 * user:password@ (the credentials go in the signature, never in the URL), and
 * a path: the provider publishes the full report URL (…/services/v2/rpt-engine), and a bare host is a
 * URL copied short. The path itself is not checked further: the spec says it may change.
 */
export function validateGatewayUrl(gatewayUrl: string, flag = '--gateway-url'): URL {
  let url: URL;
  try {
    url = secureEndpoint(gatewayUrl);
  } catch (e) {
    if (e instanceof ConfigurationError) {
      throw new ConfigurationError(`${flag} "${gatewayUrl}" is not a usable endpoint: ${e.message} Give the full URL, e.g. https://<host>/paynet-ui/services/v2/rpt-engine.`);
    }
    throw e;
  }
  const example = 'e.g. https://<host>/paynet-ui/services/v2/rpt-engine';
  if (url.username || url.password) {
    throw new ConfigurationError(`${flag} must not carry a user name or password (user:password@host): the login and key go in the secret file.`);
  }
  // An http(s) URL's path is at least "/".
  if (url.pathname === '/') {
    throw new ConfigurationError(`${flag} "${gatewayUrl}" has no path: give the full report endpoint the provider publishes, ${example}.`);
  }
  if (url.hash) throw new ConfigurationError(`${flag} "${gatewayUrl}" has a #fragment, which is never sent: remove it.`);
  return url;
}

/** Compact JSON, exactly the bytes that are sent (and, under `asFormParameters`, signed). */
export function serialiseBody(body: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (e) {
    throw new ConfigurationError(`the report body cannot be written as JSON: ${(e as Error).message}`);
  }
  if (json === undefined) throw new ConfigurationError('the report body is missing (undefined is not JSON).');
  return json;
}

export interface RequestSigning {
  secret: GatewaySecret;
  bodySigning?: BodySigningRule;
  /** Injectable clock for the oauth_timestamp; default: now. */
  now?: () => Date;
  /** Injectable nonce source; default: a fresh crypto-random nonce per request (signRequest's). */
  nonce?: () => string;
  /** The Accept-Encoding header; false sends none (the server may still compress). Default ACCEPT_ENCODING. */
  acceptEncoding?: string | false;
}

export interface PreparedRequest {
  headers: Record<string, string>;
  /** The oauth_signature, kept only so answers that echo it can be redacted. Never log it. */
  signature: string;
  nonce: string;
}

/** Signs one attempt: a new nonce and timestamp every time, so a retry is never a replay. */
export function prepareRequest(url: URL, json: string, signing: RequestSigning): PreparedRequest {
  const signed = signRequest(signing.secret, {
    method: 'POST',
    url,
    body: json,
    bodySigning: signing.bodySigning,
    nonce: signing.nonce?.(),
    timestamp: signing.now ? unixSeconds(signing.now()) : undefined,
  });
  return {
    headers: {
      'Content-Type': 'application/json',
      // A fixed length, not chunked: some gateway front ends refuse chunked request bodies.
      'Content-Length': String(Buffer.byteLength(json)),
      Accept: ACCEPT,
      ...(signing.acceptEncoding === false ? {} : { 'Accept-Encoding': signing.acceptEncoding ?? ACCEPT_ENCODING }),
      'User-Agent': 'paynet-reports-pipeline',
      Authorization: signed.authorization,
    },
    signature: signed.signature,
    nonce: signed.oauth.oauth_nonce,
  };
}

/** POSIX shell single-quoting: the only character that needs care inside '...' is ' itself. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface DescribedRequest {
  /** The Authorization header value. Contains the signature. */
  authorization: string;
  /** The compact JSON body as sent. */
  body: string;
  /** A ready-to-run curl command reproducing the call. Contains the signature: for the user, never for logs. */
  curl: string;
}

/**
 * The request `reports sign` prints, so a user can reproduce a call by hand or with the provider's
 * support. It deliberately holds the signature (valid only for this nonce and timestamp) and must
 * stay out of every logging path. The endpoint policy applies here too.
 */
export function describeRequest(
  options: RequestSigning & { endpointUrl: string | URL; body: unknown },
): DescribedRequest {
  const url = secureEndpoint(options.endpointUrl);
  const body = serialiseBody(options.body);
  const { headers } = prepareRequest(url, body, options);
  const authorization = headers.Authorization!;
  const curl = [
    // --compressed: curl asks for and decodes the codings a run accepts, so the answer prints as text.
    'curl -sS --compressed -X POST',
    shellQuote(url.href),
    '-H',
    shellQuote('Content-Type: application/json'),
    '-H',
    shellQuote(`Accept: ${ACCEPT}`),
    '-H',
    shellQuote(`Authorization: ${authorization}`),
    '--data-binary',
    shellQuote(body),
  ].join(' ');
  return { authorization, body, curl };
}
