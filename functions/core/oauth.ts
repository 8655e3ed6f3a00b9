import { createHmac, createPrivateKey, createSign, randomInt, type KeyObject } from 'node:crypto';
import { ConfigurationError } from './errors.js';
import { signatureMethodOf, type GatewaySecret, type SignatureMethod } from './secret.js';

/**
 * OAuth 1.0 request signing as the gateway specifies it (HMAC-SHA1 or RSA-SHA256, one-legged, no token).
 * RFC 5849 is the reference where the provider's page is silent.
 */

/** RFC 3986 percent-encoding: everything but ALPHA / DIGIT / "-" / "." / "_" / "~", UTF-8, upper-case hex. */
export function percentEncode(value: string): string {
  // encodeURIComponent leaves !'()* alone; RFC 3986 reserves them.
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * How a JSON body enters the base string. The provider does not say; RFC 5849 §3.4.1.3 includes only
 * form-encoded bodies, so `excluded` is the default (DESIGN.md). `asFormParameters` signs top-level JSON
 * members as if they were form fields (objects and arrays as compact JSON), for a gateway that wants it.
 */
export type BodySigningRule = 'excluded' | 'asFormParameters';

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

/** RFC 5849 §3.4.1.2: scheme and host lower-cased, default port dropped, no query or fragment. */
export function baseStringUri(url: URL): string {
  const scheme = url.protocol.replace(/:$/, '').toLowerCase();
  const host = url.hostname.toLowerCase();
  const defaultPort = (scheme === 'http' && url.port === '80') || (scheme === 'https' && url.port === '443');
  const port = url.port && !defaultPort ? `:${url.port}` : '';
  return `${scheme}://${host}${port}${url.pathname || '/'}`;
}

/** Top-level JSON members as form-style parameters, for the `asFormParameters` rule. */
function jsonBodyParameters(body: string): Array<[string, string]> {
  const parsed: unknown = JSON.parse(body);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
  return Object.entries(parsed as Record<string, unknown>).map(([k, v]) => [
    k,
    typeof v === 'string' ? v : JSON.stringify(v),
  ]);
}

/**
 * The signature base string: POST&enc(url)&enc(sorted params), params being the URL's query parameters,
 * the oauth_* parameters (never oauth_signature) and, by rule, the body's.
 */
export function signatureBaseString(
  method: string,
  url: URL,
  oauth: OAuthParams,
  body: string | undefined,
  rule: BodySigningRule = 'excluded',
): string {
  const params: Array<[string, string]> = [];
  for (const [k, v] of url.searchParams) params.push([k, v]);
  for (const [k, v] of Object.entries(oauth)) params.push([k, v]);
  if (rule === 'asFormParameters' && body) params.push(...jsonBodyParameters(body));
  const encoded = params.map(([k, v]) => [percentEncode(k), percentEncode(v)] as const);
  // RFC 5849 §3.4.1.3.2: sort by encoded name, then by encoded value; plain code-unit order (ASCII after encoding).
  encoded.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const joined = encoded.map(([k, v]) => `${k}=${v}`).join('&');
  return [method.toUpperCase(), baseStringUri(url), joined].map(percentEncode).join('&');
}

export function hmacSha1Signature(baseString: string, controlKey: string, tokenSecret = ''): string {
  return createHmac('sha1', `${percentEncode(controlKey)}&${percentEncode(tokenSecret)}`)
    .update(baseString)
    .digest('base64');
}

/** Loads an unencrypted PKCS#1 or PKCS#8 PEM RSA key and checks its size (2048 to 4096 bits). */
export function loadRsaPrivateKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new ConfigurationError(
      'privateKeyPem is not a readable unencrypted PEM private key (PKCS#1 "BEGIN RSA PRIVATE KEY" or PKCS#8 "BEGIN PRIVATE KEY").',
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa' || bits < 2048 || bits > 4096) {
    throw new ConfigurationError(
      `privateKeyPem must be an RSA key of 2048 to 4096 bits (got ${key.asymmetricKeyType ?? 'unknown'}, ${bits} bits).`,
    );
  }
  return key;
}

export function rsaSha256Signature(baseString: string, key: KeyObject | string): string {
  return createSign('RSA-SHA256').update(baseString).sign(typeof key === 'string' ? loadRsaPrivateKey(key) : key, 'base64');
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
  if (!header) return null;
  const m = /^\s*OAuth\s+(.*)$/is.exec(header);
  if (!m) return null;
  const out: Record<string, string> = {};
  const pair = /\s*([A-Za-z0-9_]+)\s*=\s*"([^"]*)"\s*(?:,|$)/gy;
  const rest = m[1] ?? '';
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = pair.exec(rest)) !== null) {
    try {
      out[match[1]!] = decodeURIComponent(match[2]!);
    } catch {
      return null;
    }
    consumed = pair.lastIndex;
    if (consumed >= rest.length) break;
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
  const signature =
    secret.signatureMethod === 'RSA-SHA256'
      ? rsaSha256Signature(baseString, secret.privateKeyPem)
      : hmacSha1Signature(baseString, (secret as { controlKey: string }).controlKey);
  return { authorization: authorizationHeader(oauth, signature), oauth, signature, baseString };
}
