import * as z from 'zod';
import { ConfigurationError } from '../errors.js';
import {
  DEFAULT_SIGNATURE_METHOD,
  SIGNATURE_METHODS,
  SIGNING,
  type GatewaySecret,
  type SignatureMethod,
} from './signature-methods.js';

/**
 * The gateway credentials, as stored in Secrets Manager or a local --secret-file (docs/architecture.md
 * "Secret"): "login", "signatureMethod" (left out for the default method) and the method's own fields, each
 * method's from its entry in signature-methods.ts. The types live there, beside the entries they come from.
 */
export { signatureMethodOf, type GatewaySecret, type SecretOf, type SignatureMethod } from './signature-methods.js';

/**
 * The strict schema of one method's secret. "signatureMethod" may be left out only for the default method, and
 * parseGatewaySecret sees to that: it takes any other method from that very field, so the schema need not.
 */
const secretSchema = (method: SignatureMethod) =>
  z
    .object({
      login: z.string().min(1),
      signatureMethod: z.literal(method).optional(),
      ...SIGNING[method].secretFields,
    })
    .strict();

/** Every field a secret of `method` may have, in the documented order. */
const fieldsOf = (method: SignatureMethod): readonly string[] => ['login', 'signatureMethod', ...Object.keys(SIGNING[method].secretFields)];

/** {"login": "...", "controlKey": "..."}: the documented shape of one method's secret. */
export function secretShape(method: SignatureMethod): string {
  const fields: Record<string, string> = {
    login: '...',
    ...(method === DEFAULT_SIGNATURE_METHOD ? {} : { signatureMethod: method }),
    ...SIGNING[method].example,
  };
  return `{${Object.entries(fields).map(([k, v]) => `"${k}": "${v}"`).join(', ')}}`;
}

/** Every method's shape: `{"login": "...", "controlKey": "..."} for HMAC-SHA1, or {...} for RSA-SHA256`. */
export const SECRET_SHAPES = SIGNATURE_METHODS.map((m) => `${secretShape(m)} for ${m}`).join(', or ');
const SHAPES = `Expected ${SECRET_SHAPES}.`;
/** "A" or "B" or "C". */
const quotedMethods = SIGNATURE_METHODS.map((m) => `"${m}"`).join(' or ');

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
    // Case and separators aside the same name is at distance 0.
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
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const guess = meant(key, fields.filter((f) => !(f in raw)));
        problems.push(guess ? `"${key}" is not a field: did you mean "${guess}"?` : `"${key}" is not a field of this secret`);
      }
      continue;
    }
    // Every other issue is about one field of the object: its path is that field's name.
    const field = String(issue.path[0]);
    if (!(field in raw)) {
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
  const named = fields.signatureMethod;
  if (named !== undefined && !SIGNATURE_METHODS.includes(named as SignatureMethod)) {
    throw new ConfigurationError(`${source}: "signatureMethod" must be ${quotedMethods} (or left out for ${DEFAULT_SIGNATURE_METHOD}). ${SHAPES}`);
  }
  // The method picks the shape, so the errors are about that shape's fields, not about a union of all.
  const method = (named as SignatureMethod | undefined) ?? DEFAULT_SIGNATURE_METHOD;
  const own = (m: SignatureMethod) => Object.keys(SIGNING[m].secretFields).filter((f) => f in fields);
  if (named === undefined && own(DEFAULT_SIGNATURE_METHOD).length === 0) {
    // Another method's own field, and none of the default's: the method was left out by mistake.
    const meantMethod = SIGNATURE_METHODS.find((m) => own(m).length > 0);
    if (meantMethod) {
      throw new ConfigurationError(
        `${source}: the gateway secret has "${own(meantMethod)[0]}" but no "signatureMethod": add "signatureMethod": "${meantMethod}". ${SHAPES}`,
      );
    }
  }
  const parsed = secretSchema(method).safeParse(fields);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error.issues, fieldsOf(method), fields).join('; ');
    throw new ConfigurationError(`${source}: the ${method} gateway secret is not right: ${problems}${problems.endsWith('?') ? '' : '.'} ${SHAPES}`);
  }
  // The schema is built from the method's own entry, so what it accepts is that method's secret.
  return parsed.data as GatewaySecret;
}
