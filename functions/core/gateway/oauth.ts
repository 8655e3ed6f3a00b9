import { randomInt } from 'node:crypto';
import { percentEncode } from './percent-encode.js';
import { signatureMethodOf, signatureOf, type GatewaySecret, type SignatureMethod } from './signature-methods.js';

/**
 * OAuth 1.0 request signing as the gateway specifies it (one-legged, no token), with any method of
 * signature-methods.ts. RFC 5849 is the reference where the provider's page is silent.
 */

export { percentEncode };

/**
 * How a JSON body enters the base string. The provider does not say; RFC 5849 §3.4.1.3 includes only
 * form-encoded bodies, so `excluded` is the default (docs/architecture.md "Decisions"). One list, one entry per
 * rule below; `reports sign` and `check` offer the list as --body-signing, the simulator verifies by the same.
 */
export const BODY_SIGNING_RULES = ['excluded', 'asFormParameters'] as const;
export type BodySigningRule = (typeof BODY_SIGNING_RULES)[number];
export const DEFAULT_BODY_SIGNING = 'excluded' satisfies BodySigningRule;

export interface OAuthParams {
  oauth_consumer_key: string;
  oauth_nonce: string;
  oauth_signature_method: SignatureMethod;
  oauth_timestamp: string;
  oauth_version: '1.0';
  /** Absent for the gateway (one-legged); present only to check RFC vectors that carry a token. */
  oauth_token?: string;
}

const NONCE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A crypto-random alphanumeric nonce: 24 characters (about 143 bits). Above the 11 the provider's tools use,
 * and inside the 20 to 30 that common server-side OAuth libraries (oauthlib's default validator) accept.
 */
export function makeNonce(length = 24): string {
  let out = '';
  for (let i = 0; i < length; i++) out += NONCE_ALPHABET[randomInt(NONCE_ALPHABET.length)];
  return out;
}

export const unixSeconds = (now: Date = new Date()): string => String(Math.floor(now.getTime() / 1000));

/**
 * RFC 5849 §3.4.1.2: scheme and host lower-cased, default port dropped, no query or fragment. A URL object has
 * done the last two already (WHATWG URL): its port is '' when it is the scheme's default (80 for http, 443 for
 * https) and its path at least "/".
 */
export function baseStringUri(url: URL): string {
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  const port = url.port ? `:${url.port}` : '';
  return `${scheme}://${url.hostname.toLowerCase()}${port}${url.pathname}`;
}

/** Top-level JSON members as form-style parameters, for the `asFormParameters` rule. */
function jsonBodyParameters(body: string | undefined): Array<[string, string]> {
  if (!body) return [];
  const parsed: unknown = JSON.parse(body);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
  return Object.entries(parsed as Record<string, unknown>).map(([k, v]) => [
    k,
    typeof v === 'string' ? v : JSON.stringify(v),
  ]);
}

/** Each rule: what it means (the option's help) and the body parameters it adds to the base string. */
export const BODY_SIGNING = {
  excluded: { meaning: 'the body stays out of the base string (RFC 5849: only form bodies enter it)', parameters: () => [] },
  asFormParameters: {
    meaning: 'top-level JSON members enter it as if they were form fields (objects and arrays as compact JSON)',
    parameters: jsonBodyParameters,
  },
} satisfies Record<BodySigningRule, { meaning: string; parameters: (body: string | undefined) => Array<[string, string]> }>;

/** Plain code-unit order of two strings, as a sort wants it: -1, 0 or 1. */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The signature base string: POST&enc(url)&enc(sorted params), params being the URL's query parameters,
 * the oauth_* parameters (never oauth_signature) and, by rule, the body's.
 */
export function signatureBaseString(
  method: string,
  url: URL,
  oauth: OAuthParams,
  body: string | undefined,
  rule: BodySigningRule = DEFAULT_BODY_SIGNING,
): string {
  const params: Array<[string, string]> = [];
  for (const [k, v] of url.searchParams) params.push([k, v]);
  for (const [k, v] of Object.entries(oauth)) params.push([k, v]);
  params.push(...BODY_SIGNING[rule].parameters(body));
  const encoded = params.map(([k, v]) => [percentEncode(k), percentEncode(v)] as const);
  // RFC 5849 §3.4.1.3.2: sort by encoded name, then by encoded value; plain code-unit order (ASCII after encoding).
  encoded.sort(([ak, av], [bk, bv]) => byCodeUnits(ak, bk) || byCodeUnits(av, bv));
  const joined = encoded.map(([k, v]) => `${k}=${v}`).join('&');
  return [method.toUpperCase(), baseStringUri(url), joined].map(percentEncode).join('&');
}

/** The Authorization header: realm="" first, then the oauth_* pairs, every value percent-encoded. */
export function authorizationHeader(oauth: OAuthParams, signature: string): string {
  const pairs: Array<[string, string]> = [
    ['oauth_consumer_key', oauth.oauth_consumer_key],
    ['oauth_nonce', oauth.oauth_nonce],
    ['oauth_signature', signature],
    ['oauth_signature_method', oauth.oauth_signature_method],
    ['oauth_timestamp', oauth.oauth_timestamp],
    ['oauth_version', oauth.oauth_version],
  ];
  return `OAuth realm="", ${pairs.map(([k, v]) => `${k}="${percentEncode(v)}"`).join(', ')}`;
}

/**
 * Parses an OAuth Authorization header: pairs in any order, with or without spaces after commas,
 * values percent-decoded. Returns null when the header is not an OAuth header.
 */
export function parseAuthorizationHeader(header: string | undefined): Record<string, string> | null {
  // One space after the scheme is enough here: each pair below skips the spaces before it. `.` with the s flag runs to the end.
  // Stryker disable next-line StringLiteral: any text the pattern refuses stands in for a missing header alike
  const m = /^\s*OAuth\s(.*)/is.exec(header ?? '');
  if (!m) return null;
  const out: Record<string, string> = {};
  const pair = /\s*([A-Za-z0-9_]+)\s*=\s*"([^"]*)"\s*(?:,|$)/gy;
  const rest = m[1]!;
  let match: RegExpExecArray | null;
  let consumed = 0;
  // Sticky: each pair starts where the last ended, and a pair is never empty, so the loop ends at the first gap.
  while ((match = pair.exec(rest)) !== null) {
    try {
      out[match[1]!] = decodeURIComponent(match[2]!);
    } catch {
      return null;
    }
    consumed = pair.lastIndex;
  }
  if (rest.slice(consumed).trim() !== '') return null;
  return out;
}

export interface SignOptions {
  method?: string;
  url: URL;
  body?: string;
  bodySigning?: BodySigningRule;
  /** Injectable for tests; default: a fresh crypto-random nonce. */
  nonce?: string;
  /** Injectable for tests; default: now. */
  timestamp?: string;
}

export interface SignedRequest {
  authorization: string;
  oauth: OAuthParams;
  /** Kept for `reports sign` and tests; never log it. */
  signature: string;
  baseString: string;
}

/** Signs one request with the secret's method. A fresh nonce each call unless one is injected. */
export function signRequest(secret: GatewaySecret, opts: SignOptions): SignedRequest {
  const method = signatureMethodOf(secret);
  const oauth: OAuthParams = {
    oauth_consumer_key: secret.login,
    oauth_nonce: opts.nonce ?? makeNonce(),
    oauth_signature_method: method,
    oauth_timestamp: opts.timestamp ?? unixSeconds(),
    oauth_version: '1.0',
  };
  const baseString = signatureBaseString(opts.method ?? 'POST', opts.url, oauth, opts.body, opts.bodySigning);
  const signature = signatureOf(secret, baseString);
  return { authorization: authorizationHeader(oauth, signature), oauth, signature, baseString };
}
