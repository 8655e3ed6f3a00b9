import { createHmac, createPrivateKey, createPublicKey, createSign, createVerify, timingSafeEqual, type KeyObject } from 'node:crypto';
import * as z from 'zod';
import { ConfigurationError } from '../errors.js';
import { percentEncode } from './percent-encode.js';

/**
 * The OAuth 1.0 signature methods the gateway accepts, each declared once: SIGNATURE_METHODS names them and
 * SIGNING holds, per method, everything the pipeline and the simulator need of it: the secret's fields, how
 * they are shown, the signing, what the gateway keeps to verify it, and what to check when it is refused.
 * secret.ts builds the secret's schema and its error messages from here, oauth.ts signs through here, the
 * simulator verifies through here (local/simulator/auth.ts) and makes its test accounts from a table keyed
 * the same way (local/simulator/test-accounts.ts). A method named in SIGNATURE_METHODS without an entry does
 * not compile (test/unit/variant-exhaustiveness.test.ts proves it).
 */
export const SIGNATURE_METHODS = ['HMAC-SHA1', 'RSA-SHA256'] as const;
export type SignatureMethod = (typeof SIGNATURE_METHODS)[number];

/** The method of a secret that names none: the provider's original one (docs/architecture.md "Secret"). */
export const DEFAULT_SIGNATURE_METHOD = 'HMAC-SHA1' satisfies SignatureMethod;

/**
 * One method's entry. `Fields` is the zod shape of the secret's own fields (beside "login" and
 * "signatureMethod"); `Held` is what the gateway keeps for a login of this method. The functions are
 * declared as methods, so an entry of specific types is still an entry of the general one (the dispatch
 * below hands each entry only secrets of its own method).
 */
export interface SignatureMethodEntry<Fields extends z.ZodRawShape = z.ZodRawShape, Held = unknown> {
  /** The secret's fields of this method: each is key material, never logged (functions/aws/redact.ts reads them). */
  readonly secretFields: Fields;
  /** How each field is written in the documented shape, for help texts and error messages. */
  readonly example: { readonly [K in keyof Fields]: string };
  /** What to check when the gateway refuses a request signed this way (AuthenticationRefused, `reports check`). */
  readonly whenRefused: string;
  /** The base64 signature of an OAuth base string. */
  sign(baseString: string, secret: z.infer<z.ZodObject<Fields>>): string;
  /** What the gateway keeps for a login of this method, from the merchant's secret (the simulator's accounts). */
  gatewayRecord(secret: z.infer<z.ZodObject<Fields>>): Held;
  /** A check of signatures by what the gateway keeps; prepared once per account (a key parsed once). */
  verifier(held: Held): (baseString: string, signature: string) => boolean;
}

/** Infers an entry's types from its own fields, so each function sees exactly its method's secret. */
const entry = <Fields extends z.ZodRawShape, Held>(e: SignatureMethodEntry<Fields, Held>) => e;

export const SIGNING = {
  'HMAC-SHA1': entry({
    secretFields: { controlKey: z.string().min(1) },
    example: { controlKey: '...' },
    whenRefused: 'the login and the control key',
    sign: (baseString, secret) => hmacSha1Signature(baseString, secret.controlKey),
    // A shared secret: the gateway holds the same control key.
    gatewayRecord: (secret) => ({ controlKey: secret.controlKey }),
    verifier: (held) => (baseString, signature) => {
      const given = Buffer.from(signature, 'base64');
      const expected = Buffer.from(hmacSha1Signature(baseString, held.controlKey), 'base64');
      // Constant-time, as a real verifier must be; lengths differ only for garbage.
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  }),
  'RSA-SHA256': entry({
    secretFields: { privateKeyPem: z.string().includes('-----BEGIN', { message: 'must be a PEM private key (-----BEGIN ...)' }) },
    example: { privateKeyPem: '-----BEGIN ...' },
    whenRefused: 'that the provider holds your public key',
    sign: (baseString, secret) => rsaSha256Signature(baseString, secret.privateKeyPem),
    // The merchant hands the provider the public key (SPKI PEM) and keeps the private one.
    gatewayRecord: (secret) => ({ publicKeyPem: createPublicKey(secret.privateKeyPem).export({ type: 'spki', format: 'pem' }).toString() }),
    verifier: (held) => {
      const key = createPublicKey(held.publicKeyPem);
      return (baseString, signature) => {
        try {
          return createVerify('RSA-SHA256').update(baseString).verify(key, Buffer.from(signature, 'base64'));
        } catch {
          return false;
        }
      };
    },
  }),
} satisfies Record<SignatureMethod, SignatureMethodEntry>;

/**
 * The secret of a method: "login", "signatureMethod" (optional for the default) and the method's own fields.
 * Of several methods, the secret of any one of them.
 */
export type SecretOf<M extends SignatureMethod> = M extends SignatureMethod
  ? { login: string } & (M extends typeof DEFAULT_SIGNATURE_METHOD ? { signatureMethod?: M } : { signatureMethod: M }) &
      z.infer<z.ZodObject<(typeof SIGNING)[M]['secretFields']>>
  : never;

/** The gateway credentials, as stored in Secrets Manager or a local --secret-file: one method's secret. */
export type GatewaySecret = SecretOf<SignatureMethod>;

/** What a gateway keeps for one login: its method and that method's record (a control key, a public key). */
export type GatewayAccount = {
  [M in SignatureMethod]: { login: string; signatureMethod: M } & ReturnType<(typeof SIGNING)[M]['gatewayRecord']>;
}[SignatureMethod];

export const signatureMethodOf = (secret: GatewaySecret): SignatureMethod => secret.signatureMethod ?? DEFAULT_SIGNATURE_METHOD;

/**
 * The entry of a secret's or an account's method, as the general entry type. Sound because the secret and the
 * entry are looked up by the same method; the one place the pairing is taken on trust.
 */
const entryOf = (method: SignatureMethod): SignatureMethodEntry => SIGNING[method];

/** The signature of `baseString` by `secret`, with the secret's method. */
export const signatureOf = (secret: GatewaySecret, baseString: string): string => entryOf(signatureMethodOf(secret)).sign(baseString, secret);

/** What the gateway keeps for the holder of `secret` (the simulator's accounts are made from the test secrets). */
export function gatewayAccountOf(secret: GatewaySecret): GatewayAccount {
  const method = signatureMethodOf(secret);
  return { login: secret.login, signatureMethod: method, ...(entryOf(method).gatewayRecord(secret) as object) } as GatewayAccount;
}

/** A check of signatures for one gateway account. */
export const verifierOf = (account: GatewayAccount): ((baseString: string, signature: string) => boolean) =>
  entryOf(account.signatureMethod).verifier(account);

/** Every method's secret fields: the key material a log must never show (functions/aws/redact.ts). */
export const SECRET_FIELD_NAMES: readonly string[] = [...new Set(SIGNATURE_METHODS.flatMap((m) => Object.keys(SIGNING[m].secretFields)))];

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
  // Stryker disable next-line OptionalChaining: node:crypto gives every private key its details ({} for Ed25519); the type says "maybe"
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa' || bits < 2048 || bits > 4096) {
    throw new ConfigurationError(
      `privateKeyPem must be an RSA key of 2048 to 4096 bits (got ${key.asymmetricKeyType ?? 'unknown'}, ${bits} bits).`,
    );
  }
  return key;
}

export function rsaSha256Signature(baseString: string, privateKeyPem: string): string {
  return createSign('RSA-SHA256').update(baseString).sign(loadRsaPrivateKey(privateKeyPem), 'base64');
}
