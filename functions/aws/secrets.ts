import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { ConfigurationError } from '../core/errors.js';
import { parseGatewaySecret, type GatewaySecret } from '../core/gateway/secret.js';

/**
 * The gateway credentials (docs/architecture.md, "Secret") from Secrets Manager. Local runs read the same JSON from a
 * --secret-file with local/args/secret-file.ts (readSecretFile); both end in parseGatewaySecret.
 * Nothing here puts the secret's text into an error: parseGatewaySecret names fields, never values, and
 * Secrets Manager errors carry the secret's name or ARN only.
 */

/**
 * How long a warm Lambda reuses the secret before asking Secrets Manager again. A rotated key is seen within this, or at
 * once when the gateway refuses the cached one (`fresh`).
 */
export const SECRET_MAX_AGE_SECONDS = 300;

// One provider per container: Powertools keeps its cache in the provider, so it survives across invocations.
let defaultProvider: SecretsProvider | undefined;

/** Forgets the cached secret: tests, and a handler that wants the next call to fetch again. */
export function clearGatewaySecretCache(): void {
  defaultProvider?.clearCache();
}

export interface GetGatewaySecretOptions {
  maxAgeSeconds?: number;
  /**
   * Read past the cache (and refresh it): after a refusal, a rotated value must be seen now, not when the cache expires
   * (functions/core/connections/run-credentials.ts).
   */
  fresh?: boolean;
  /** A provider over a traced or differently configured client; default: one built from the Lambda environment. */
  provider?: SecretsProvider;
}

export async function getGatewaySecret(secretName: string, options: GetGatewaySecretOptions = {}): Promise<GatewaySecret> {
  const provider = options.provider ?? (defaultProvider ??= new SecretsProvider());
  const source = `Secrets Manager secret "${secretName}"`;
  let value: unknown;
  try {
    value = await provider.get(secretName, { maxAge: options.maxAgeSeconds ?? SECRET_MAX_AGE_SECONDS, forceFetch: options.fresh === true });
  } catch (e) {
    throw explainFetchError(e, source);
  }
  if (value === undefined || value === null) {
    throw new ConfigurationError(`${source} has no value. Store the secret JSON of docs/deploy.md, step 5, in it.`);
  }
  const text = typeof value === 'string' ? value : new TextDecoder().decode(value as Uint8Array);
  try {
    return parseGatewaySecret(text, source);
  } catch (e) {
    // Do not keep serving a malformed value for maxAge: once someone fixes the secret, the next retry sees it.
    provider.clearCache();
    throw e;
  }
}

/** Missing secret, no permission or no KMS access: configuration, said as such. Anything else (throttling, network) passes through as transient. */
function explainFetchError(e: unknown, source: string): unknown {
  const sdkError = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  const name = sdkError instanceof Error ? sdkError.name : '';
  switch (name) {
    case 'ResourceNotFoundException':
      return new ConfigurationError(
        `${source} does not exist in this account and region (or has no current version). Create it, or fix the secret name the function is configured with.`,
        { cause: e },
      );
    case 'AccessDeniedException':
      return new ConfigurationError(
        `${source} may not be read by this function's role: allow secretsmanager:GetSecretValue on it (and kms:Decrypt on its key).`,
        { cause: e },
      );
    case 'DecryptionFailure':
      return new ConfigurationError(`${source} cannot be decrypted: allow this function's role kms:Decrypt on the secret's KMS key.`, {
        cause: e,
      });
    default:
      return e;
  }
}
