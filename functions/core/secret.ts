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

/**
 * Validates the secret's JSON. Errors name the source and the fields but never echo a value:
 * the text may hold a key.
 */
export function parseGatewaySecret(text: string, source: string): GatewaySecret {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ConfigurationError(
      `${source}: the gateway secret is not valid JSON. Expected {"login": "...", "controlKey": "..."} or ` +
        '{"login": "...", "signatureMethod": "RSA-SHA256", "privateKeyPem": "-----BEGIN ..."}.',
    );
  }
  const parsed = gatewaySecretSchema.safeParse(raw);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(root)'))].join(', ');
    throw new ConfigurationError(
      `${source}: the gateway secret does not have the documented shape (problem with: ${fields}). Expected ` +
        '{"login", "controlKey"} for HMAC-SHA1 or {"login", "signatureMethod": "RSA-SHA256", "privateKeyPem"}.',
    );
  }
  return parsed.data;
}
