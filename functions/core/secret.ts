import * as z from 'zod';
import { ConfigurationError } from './errors.js';

/** The gateway credentials, as stored in Secrets Manager or a local --secret-file (DESIGN.md "Secret"). */
const hmacSecret = z
  .object({
    login: z.string().min(1),
    signatureMethod: z.literal('HMAC-SHA1').optional(),
    controlKey: z.string().min(1),
  })
  .strict();

const rsaSecret = z
  .object({
    login: z.string().min(1),
    signatureMethod: z.literal('RSA-SHA256'),
    privateKeyPem: z.string().includes('-----BEGIN', { message: 'must be a PEM private key (-----BEGIN ...)' }),
  })
  .strict();

export const gatewaySecretSchema = z.union([rsaSecret, hmacSecret]);

export type GatewaySecret = z.infer<typeof gatewaySecretSchema>;
export type SignatureMethod = 'HMAC-SHA1' | 'RSA-SHA256';

export const signatureMethodOf = (s: GatewaySecret): SignatureMethod =>
  s.signatureMethod === 'RSA-SHA256' ? 'RSA-SHA256' : 'HMAC-SHA1';

const HMAC_FIELDS = ['login', 'signatureMethod', 'controlKey'] as const;
const RSA_FIELDS = ['login', 'signatureMethod', 'privateKeyPem'] as const;
const SHAPES = 'Expected {"login": "...", "controlKey": "..."} for HMAC-SHA1, or {"login": "...", "signatureMethod": "RSA-SHA256", "privateKeyPem": "-----BEGIN ..."}.';

/** Case and separators aside: "controlkey", "control_key" and "Control-Key" all mean controlKey. */
const loose = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Edit distance, for "contolKey" -> controlKey; field names are short, so the plain table is enough. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The documented field (of those not given) an unknown key was probably meant to be, if one is close. */
function meant(key: string, fields: readonly string[]): string | undefined {
  const k = loose(key);
  return (
    fields.find((f) => loose(f) === k) ??
    fields.find((f) => distance(loose(f), k) <= 2) ??
    // "privateKey", "key": a documented name cut short or padded.
    fields.find((f) => k.length >= 3 && (loose(f).includes(k) || k.includes(loose(f))))
  );
}

/**
 * One phrase per problem, naming the field (and, for an unknown key, the documented field it was
 * probably meant to be). Never a value: the text may hold a key.
 */
function describeIssues(issues: readonly z.core.$ZodIssue[], fields: readonly string[], raw: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const issue of issues) {
    const field = String(issue.path[0] ?? '');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const guess = meant(key, fields.filter((f) => !(f in raw)));
        problems.push(guess ? `"${key}" is not a field: did you mean "${guess}"?` : `"${key}" is not a field of this secret`);
      }
    } else if (!(field in raw)) {
      // Reported once, by the unknown key above, when that key looks like this field misspelled.
      if (!Object.keys(raw).some((k) => !fields.includes(k) && meant(k, [field]))) problems.push(`"${field}" is missing`);
    } else if (issue.code === 'invalid_type') {
      problems.push(`"${field}" must be a string`);
    } else if (issue.code === 'too_small') {
      problems.push(`"${field}" is empty`);
    } else {
      problems.push(`"${field}" ${issue.message}`);
    }
  }
  return problems;
}

/**
 * Validates the secret's JSON. Errors name the source and every missing, misspelled or malformed field,
 * but never echo a value: the text may hold a key.
 */
export function parseGatewaySecret(text: string, source: string): GatewaySecret {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ConfigurationError(`${source}: the gateway secret is not valid JSON. ${SHAPES}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigurationError(`${source}: the gateway secret must be a JSON object. ${SHAPES}`);
  }
  const fields = raw as Record<string, unknown>;
  const method = fields.signatureMethod;
  if (method !== undefined && method !== 'HMAC-SHA1' && method !== 'RSA-SHA256') {
    throw new ConfigurationError(`${source}: "signatureMethod" must be "HMAC-SHA1" or "RSA-SHA256" (or left out for HMAC-SHA1). ${SHAPES}`);
  }
  // The method picks the shape, so the errors are about that shape's fields, not about a union of both.
  const rsa = method === 'RSA-SHA256' || (method === undefined && 'privateKeyPem' in fields && !('controlKey' in fields));
  if (rsa && method === undefined) {
    throw new ConfigurationError(`${source}: the gateway secret has "privateKeyPem" but no "signatureMethod": add "signatureMethod": "RSA-SHA256". ${SHAPES}`);
  }
  const parsed = (rsa ? rsaSecret : hmacSecret).safeParse(fields);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error.issues, rsa ? RSA_FIELDS : HMAC_FIELDS, fields);
    throw new ConfigurationError(`${source}: the ${rsa ? 'RSA-SHA256' : 'HMAC-SHA1'} gateway secret is not right: ${problems.join('; ')}${problems.at(-1)?.endsWith('?') ? '' : '.'} ${SHAPES}`);
  }
  return parsed.data;
}
