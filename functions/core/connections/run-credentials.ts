import { createHash } from 'node:crypto';
import type { GatewaySecret } from '../gateway/secret.js';

/**
 * The credentials one fetch run signs with, and rotation without a missed window (docs/operations.md, "Rotating
 * credentials"). The run reads its connection's secret once, through the cache (5 minutes in Lambda). When the gateway
 * refuses it, the value may have been rotated inside that cache: the run reads the secret once more past the cache, and
 * if the value differs from the refused one, that window is retried with it (and the rest of the run uses it). An
 * unchanged value means the refusal stands: it is not retried, since repeating a refused login risks the merchant
 * account being locked. Once per run: a new value that is refused too is a refusal like any other.
 */

/** Where a connection's secret is read: `fresh` reads past any cache. */
export interface SecretSource {
  loadSecret(options?: { fresh?: boolean }): Promise<GatewaySecret>;
}

/**
 * A SHA-256 over a secret's fields in a fixed order: two reads of one value agree whatever their key order, and the
 * comparison keeps no second copy of the key material around to be logged by mistake.
 */
export function secretFingerprint(secret: GatewaySecret): string {
  const fields = Object.entries(secret).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/**
 * What re-reading after a refusal found: a `changed` value (now the run's), the `unchanged` one, nothing because the run
 * had `already` re-read once, or an `unreadable` secret (its error, which never holds the value).
 */
export type Renewal =
  | { outcome: 'changed' }
  | { outcome: 'unchanged' }
  | { outcome: 'already' }
  | { outcome: 'unreadable'; error: unknown };

export class RunCredentials {
  #secret: GatewaySecret | undefined;
  #fingerprint = '';
  #renewed = false;
  #reread: 'changed' | 'unchanged' | 'unreadable' | undefined;

  constructor(private readonly source: SecretSource) {}

  /** The first read, through the cache; its errors (missing secret, no permission, bad JSON) are the caller's. */
  async load(): Promise<GatewaySecret> {
    this.#use(await this.source.loadSecret());
    return this.#secret!;
  }

  /** What the run signs with now. */
  get secret(): GatewaySecret {
    if (!this.#secret) throw new Error('RunCredentials.load() was not awaited before signing.');
    return this.#secret;
  }

  /** After the gateway refused `secret`: reads past the cache once per run and keeps a value that differs. */
  async renewAfterRefusal(): Promise<Renewal> {
    if (this.#renewed) return { outcome: 'already' };
    this.#renewed = true;
    let fresh: GatewaySecret;
    try {
      fresh = await this.source.loadSecret({ fresh: true });
    } catch (error) {
      this.#reread = 'unreadable';
      return { outcome: 'unreadable', error };
    }
    if (secretFingerprint(fresh) === this.#fingerprint) {
      this.#reread = 'unchanged';
      return { outcome: 'unchanged' };
    }
    this.#use(fresh);
    this.#reread = 'changed';
    return { outcome: 'changed' };
  }

  /** What the run's one re-read after a refusal found; undefined while there was none. */
  get reread(): 'changed' | 'unchanged' | 'unreadable' | undefined {
    return this.#reread;
  }

  #use(secret: GatewaySecret): void {
    this.#secret = secret;
    this.#fingerprint = secretFingerprint(secret);
  }
}
