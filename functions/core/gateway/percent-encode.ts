/**
 * RFC 3986 percent-encoding, as OAuth 1.0 (RFC 5849 §3.6) encodes every name, value and key: everything but
 * ALPHA / DIGIT / "-" / "." / "_" / "~", UTF-8, upper-case hex. A module of its own because both the base string
 * (oauth.ts) and a signing key (signature-methods.ts, HMAC-SHA1) are encoded with it.
 */
export function percentEncode(value: string): string {
  // encodeURIComponent leaves !'()* alone; RFC 3986 reserves them.
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
