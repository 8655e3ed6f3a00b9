import {
  parseAuthorizationHeader,
  signatureBaseString,
  type BodySigningRule,
  type OAuthParams,
} from '../../functions/core/gateway/oauth.js';
import { verifierOf, type GatewayAccount, type SignatureMethod } from '../../functions/core/gateway/signature-methods.js';

/**
 * The simulator's OAuth 1.0 check, as a careful gateway would do it. The base string is rebuilt from the
 * URL the server saw (http://<Host header><path and query>) with the same functions the client signs with.
 *
 * Order of checks: header present and OAuth → all five oauth_* parameters present → oauth_version is 1.0 →
 * the login is known → the method is the one registered for that login → timestamp within maxSkewSeconds →
 * signature → nonce not seen before. A nonce is remembered only once the signature is good (a forger must
 * not be able to burn a client's nonces) and for as long as its timestamp stays acceptable, which is all a
 * replay check needs.
 *
 * The caller answers every failure with the same "not authorised" body; the reason is only for the log.
 */

/** What the simulator keeps for a login: its method and that method's record (functions/core/gateway/signature-methods.ts). */
export type SimulatorAccount = GatewayAccount;

export type RefusalReason =
  | 'no-authorization-header'
  | 'not-an-oauth-header'
  | 'missing-oauth-parameter'
  | 'unsupported-oauth-version'
  | 'unknown-login'
  | 'wrong-signature-method'
  | 'bad-timestamp'
  | 'stale-timestamp'
  | 'unverifiable-body'
  | 'bad-signature'
  | 'replayed-nonce'
  /** A good signature of a login the simulator was told to refuse (`npm run simulator -- --refuse <connection>`). */
  | 'login-refused';

export type AuthResult =
  | { ok: true; login: string; signatureMethod: string; nonce: string; timestamp: string }
  | { ok: false; reason: RefusalReason; login?: string; signatureMethod?: string; nonce?: string; timestamp?: string };

const REQUIRED = ['oauth_consumer_key', 'oauth_nonce', 'oauth_signature', 'oauth_signature_method', 'oauth_timestamp', 'oauth_version'] as const;

/** Nonces seen per login, each kept until its timestamp leaves the skew window. */
export class NonceMemory {
  private readonly seen = new Map<string, number>(); // key → forget after (Unix seconds)
  private inserts = 0;

  /** Records the nonce; false when it was already there (a replay). */
  remember(login: string, nonce: string, timestamp: number, nowSeconds: number, maxSkewSeconds: number): boolean {
    const key = `${login}\u0000${nonce}`;
    const until = this.seen.get(key);
    if (until !== undefined && until >= nowSeconds) return false;
    this.seen.set(key, timestamp + maxSkewSeconds);
    if (++this.inserts % 256 === 0) {
      for (const [k, t] of this.seen) if (t < nowSeconds) this.seen.delete(k);
    }
    return true;
  }
}

interface PreparedAccount {
  signatureMethod: SignatureMethod;
  /** The method's check of a signature, its key parsed once. */
  verify: (baseString: string, signature: string) => boolean;
}

export class Authenticator {
  private readonly accounts = new Map<string, PreparedAccount>();
  private readonly nonces = new NonceMemory();

  constructor(
    accounts: readonly SimulatorAccount[],
    private readonly opts: { maxSkewSeconds: number; bodySigning: BodySigningRule },
  ) {
    for (const a of accounts) this.accounts.set(a.login, { signatureMethod: a.signatureMethod, verify: verifierOf(a) });
  }

  check(req: { method: string; url: URL; authorization: string | undefined; body: string; now: Date }): AuthResult {
    if (!req.authorization) return { ok: false, reason: 'no-authorization-header' };
    const p = parseAuthorizationHeader(req.authorization);
    if (!p) return { ok: false, reason: 'not-an-oauth-header' };
    const seen = {
      login: p.oauth_consumer_key,
      signatureMethod: p.oauth_signature_method,
      nonce: p.oauth_nonce,
      timestamp: p.oauth_timestamp,
    };
    if (REQUIRED.some((k) => !p[k])) return { ok: false, reason: 'missing-oauth-parameter', ...seen };
    if (p.oauth_version !== '1.0') return { ok: false, reason: 'unsupported-oauth-version', ...seen };
    const account = this.accounts.get(p.oauth_consumer_key!);
    if (!account) return { ok: false, reason: 'unknown-login', ...seen };
    if (account.signatureMethod !== p.oauth_signature_method) return { ok: false, reason: 'wrong-signature-method', ...seen };
    if (!/^\d{1,12}$/.test(p.oauth_timestamp!)) return { ok: false, reason: 'bad-timestamp', ...seen };
    const ts = Number(p.oauth_timestamp);
    const nowSeconds = Math.floor(req.now.getTime() / 1000);
    if (Math.abs(nowSeconds - ts) > this.opts.maxSkewSeconds) return { ok: false, reason: 'stale-timestamp', ...seen };

    const oauth: OAuthParams = {
      oauth_consumer_key: p.oauth_consumer_key!,
      oauth_nonce: p.oauth_nonce!,
      oauth_signature_method: account.signatureMethod,
      oauth_timestamp: p.oauth_timestamp!,
      oauth_version: '1.0',
    };
    let base: string;
    try {
      base = signatureBaseString(req.method, req.url, oauth, req.body, this.opts.bodySigning);
    } catch {
      // Only the asFormParameters rule reads the body, and it needs JSON to do so.
      return { ok: false, reason: 'unverifiable-body', ...seen };
    }
    if (!account.verify(base, p.oauth_signature!)) return { ok: false, reason: 'bad-signature', ...seen };
    if (!this.nonces.remember(oauth.oauth_consumer_key, oauth.oauth_nonce, ts, nowSeconds, this.opts.maxSkewSeconds)) {
      return { ok: false, reason: 'replayed-nonce', ...seen };
    }
    return { ok: true, login: oauth.oauth_consumer_key, signatureMethod: account.signatureMethod, nonce: oauth.oauth_nonce, timestamp: oauth.oauth_timestamp };
  }
}
