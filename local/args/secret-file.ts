import { readFile } from 'node:fs/promises';
import { ConfigurationError } from '../../functions/core/errors.js';
import { parseGatewaySecret, type GatewaySecret } from '../../functions/core/gateway/secret.js';

/** Reads a --secret-file (the Secrets Manager JSON of docs/architecture.md, "Secret"); errors name the file, never its content. */
export async function readSecretFile(file: string): Promise<GatewaySecret> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigurationError(`Cannot read the secret file "${file}": ${(e as NodeJS.ErrnoException).code ?? 'error'}.`);
  }
  return parseGatewaySecret(text, file);
}
