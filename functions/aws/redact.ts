import { SECRET_FIELD_NAMES } from '../core/gateway/signature-methods.js';

/**
 * Keeps credentials out of logs. The logger runs every logged value through `redactingReplacer`
 * (Powertools' jsonReplacerFn), so a secret is masked whether it is a top-level key, nested in an
 * object or array, or inside an error's message or stack.
 */

export const REDACTED = '[REDACTED]';

/**
 * Compared without case, "_" or "-": controlKey, control_key and Control-Key are one name. Every signature
 * method's secret fields (functions/core/gateway/signature-methods.ts) are among them, so a new method's key is masked too.
 */
const SECRET_KEYS = new Set(
  [...SECRET_FIELD_NAMES, 'privateKey', 'authorization', 'signature', 'oauth_signature', 'secretString', 'secretBinary', 'password'].map((k) => normalize(k)),
);

function normalize(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

/** A key whose value is always masked: the list above, and anything ending in "signature" (x-amz-signature, oauthSignature). */
export function isSecretKey(key: string): boolean {
  const k = normalize(key);
  return SECRET_KEYS.has(k) || k.endsWith('signature');
}

const TEXT_PATTERNS: Array<[RegExp, string]> = [
  // A PEM private key pasted into a message (PKCS#1 "RSA PRIVATE KEY", PKCS#8 "PRIVATE KEY", encrypted ones).
  [/-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, `-----BEGIN $1PRIVATE KEY-----${REDACTED}`],
  // oauth_signature="..." in an Authorization header, or oauth_signature=... in a query or form string.
  [/(oauth_signature\s*=\s*)("[^"]*"|[^&,\s"]+)/gi, `$1"${REDACTED}"`],
  // A secret's JSON quoted inside a string: "controlKey": "..." (also escaped as \"controlKey\":\"...\").
  [new RegExp(`(\\\\?"(?:${SECRET_FIELD_NAMES.join('|')})\\\\?"\\s*:\\s*\\\\?")((?:[^"\\\\]|\\\\[^"])*)(\\\\?")`, 'g'), `$1${REDACTED}$3`],
];

/** Masks credentials inside free text (messages, stacks, response snippets). */
export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of TEXT_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** A JSON.stringify replacer: Powertools calls it for every key and value it serialises, at every depth. */
export function redactingReplacer(key: string, value: unknown): unknown {
  if (key !== '' && isSecretKey(key) && value !== undefined && value !== null) return REDACTED;
  if (typeof value === 'string') return redactText(value);
  return value;
}

/** A redacted deep copy, for values that leave the process other than through the logger (error payloads, manifests). */
export function redact<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, redactingReplacer) ?? 'null') as T;
}
