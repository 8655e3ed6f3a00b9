import dc from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { inspect } from 'node:util';
import { parseAuthorizationHeader, percentEncode } from '../../functions/core/gateway/oauth.js';
import type { GatewaySecret } from '../../functions/core/gateway/secret.js';

/**
 * Watches a test process for credentials escaping into anything a person or a log system could read.
 *
 * What it sees:
 * - every write to process.stdout and process.stderr from the moment it is installed (console.*, Powertools
 *   log and EMF lines, the test runner's own reporting). Helpers that divert writes themselves
 *   (captureJsonLines) must hand what they caught to record(); the reliability harness does;
 * - whatever the test hands it: caught errors (message, stack, causes, aggregated errors, util.inspect of the
 *   whole object), request logs, stored manifests;
 * - every OAuth request on the wire, through node:diagnostics_channel ('http.client.request.start' for what
 *   this process sends, 'http.server.request.start' for what a server in it receives): each oauth_signature
 *   becomes a secret the moment it exists, without any code under test knowing, and each nonce the client
 *   sends is counted.
 *
 * What it looks for, at scan() time (so a secret registered late is still looked for in early output):
 * control keys, every base64 body line of a PEM private key, and every signature seen, raw and
 * percent-encoded (upper- and lower-case hex).
 */

export interface Finding {
  /** Which secret, e.g. "oauth_signature", "control key of sim-merchant-hmac". Never the value. */
  secret: string;
  /** Where it was found, e.g. "process.stdout", "error: handler". */
  where: string;
  /** The text around it with the secret itself masked, to find the culprit without re-leaking. */
  context: string;
}

/** A request carrying this header is a deliberate replay: its nonce is not counted as the client's. */
export const REPLAY_HEADER = 'x-reliability-replay';

const MIN_SECRET_LENGTH = 8;

export class LeakGuard {
  private readonly needles = new Map<string, string>(); // value -> label
  private readonly texts: Array<{ where: string; text: string }> = [];
  private installed = false;
  private mutedDepth = 0;
  private bytes = 0;
  /** OAuth requests this process sent, and the signatures seen in either direction. */
  readonly wire = { clientRequests: 0, serverRequests: 0, signatures: new Set<string>() };
  /** oauth_nonce -> how many requests this process's clients sent with it (replays excluded). */
  readonly clientNonces = new Map<string, number>();
  /** Forward Powertools JSON lines to the terminal too (RELIABILITY_VERBOSE=1); recorded either way. */
  verbose = process.env.RELIABILITY_VERBOSE === '1';

  /** Idempotent: taps stdout/stderr and subscribes to the HTTP diagnostics channels. */
  install(): this {
    if (this.installed) return this;
    this.installed = true;
    for (const [name, stream] of [
      ['process.stdout', process.stdout],
      ['process.stderr', process.stderr],
    ] as const) {
      const original = stream.write.bind(stream) as (...args: unknown[]) => boolean;
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : String(chunk);
        this.record(name, text);
        if (this.mutedDepth > 0 || (!this.verbose && isJsonLogLines(text))) {
          (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
          return true;
        }
        return original(chunk, ...rest);
      }) as typeof stream.write;
    }
    dc.subscribe('http.client.request.start', (message) => {
      const request = (message as { request: ClientRequest }).request;
      const oauth = parseAuthorizationHeader(String(request.getHeader('authorization') ?? ''));
      if (!oauth) return;
      this.wire.clientRequests++;
      this.signature(oauth.oauth_signature);
      const nonce = oauth.oauth_nonce;
      if (nonce && request.getHeader(REPLAY_HEADER) === undefined) this.clientNonces.set(nonce, (this.clientNonces.get(nonce) ?? 0) + 1);
    });
    dc.subscribe('http.server.request.start', (message) => {
      const request = (message as { request: IncomingMessage }).request;
      const oauth = parseAuthorizationHeader(request.headers.authorization);
      if (!oauth) return;
      this.wire.serverRequests++;
      this.signature(oauth.oauth_signature);
    });
    return this;
  }

  /** Runs fn with stdout/stderr recorded but not shown (a test that prints a canary on purpose). */
  async muted<T>(fn: () => T | Promise<T>): Promise<T> {
    this.mutedDepth++;
    try {
      return await fn();
    } finally {
      this.mutedDepth--;
    }
  }

  /** A value that must never be seen, under a label that is safe to print. */
  secret(label: string, value: string | undefined): void {
    if (!value || value.length < MIN_SECRET_LENGTH) return;
    const encoded = percentEncode(value);
    for (const variant of [value, encoded, encoded.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), JSON.stringify(value).slice(1, -1)]) {
      if (!this.needles.has(variant)) this.needles.set(variant, label);
    }
  }

  /** Every base64 body line of a PEM key (a key logged whole, on one line, or in pieces contains them). */
  privateKey(label: string, pem: string): void {
    pem
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l.length >= 16 && !l.startsWith('-----'))
      .forEach((line, i) => this.secret(`${label} (PEM line ${i + 2})`, line));
  }

  /** The key material of a gateway secret in the shape of docs/architecture.md, "Secret". */
  gatewaySecret(label: string, secret: GatewaySecret): void {
    if ('controlKey' in secret) this.secret(`control key of ${label}`, secret.controlKey);
    if ('privateKeyPem' in secret) this.privateKey(`private key of ${label}`, secret.privateKeyPem);
  }

  /** An oauth_signature seen on the wire (or computed by a test). */
  signature(value: string | undefined): void {
    if (!value) return;
    this.wire.signatures.add(value);
    this.secret('oauth_signature', value);
  }

  record(where: string, text: string): void {
    if (!text) return;
    this.bytes += text.length;
    this.texts.push({ where, text });
  }

  /** Everything an error would show: message, stack, causes and aggregated errors, and util.inspect of it. */
  error(where: string, error: unknown): void {
    if (error === undefined || error === null) return;
    const seen = new Set<unknown>();
    const walk = (e: unknown, depth: number) => {
      if (depth > 8 || seen.has(e) || e === null || e === undefined) return;
      seen.add(e);
      if (e instanceof Error) {
        this.record(`error: ${where}`, `${e.name}: ${e.message}\n${e.stack ?? ''}`);
        walk(e.cause, depth + 1);
        if (e instanceof AggregateError) e.errors.forEach((x) => walk(x, depth + 1));
        const recordErrors = (e as { recordErrors?: unknown[] }).recordErrors;
        if (Array.isArray(recordErrors)) recordErrors.forEach((x) => walk(x, depth + 1));
      } else {
        this.record(`error: ${where}`, String(e));
      }
    };
    walk(error, 0);
    this.record(`error: ${where} (inspect)`, inspect(error, { depth: 6 }));
  }

  /** Bytes of text recorded so far (to prove the taps saw something). */
  get recordedBytes(): number {
    return this.bytes;
  }

  get secretCount(): number {
    return this.needles.size;
  }

  /** Every occurrence of a registered secret in everything recorded. */
  scan(): Finding[] {
    const findings: Finding[] = [];
    for (const { where, text } of this.texts) {
      for (const [needle, label] of this.needles) {
        const at = text.indexOf(needle);
        if (at === -1) continue;
        const context = text.slice(Math.max(0, at - 60), at + needle.length + 60).split(needle).join('<SECRET>');
        findings.push({ secret: label, where, context });
      }
    }
    return findings;
  }

  /** Drops recorded text containing `value` and the secret itself: for self-tests that leak a canary on purpose. */
  forget(value: string): void {
    for (let i = this.texts.length - 1; i >= 0; i--) if (this.texts[i]!.text.includes(value)) this.texts.splice(i, 1);
    const label = this.needles.get(value);
    if (label !== undefined) for (const [needle, l] of [...this.needles]) if (l === label) this.needles.delete(needle);
  }

  /** Nonces the client sent more than once (replays marked with REPLAY_HEADER excluded). */
  reusedNonces(): string[] {
    return [...this.clientNonces].filter(([, n]) => n > 1).map(([nonce]) => nonce);
  }
}

/** A chunk made only of JSON object lines: Powertools log and EMF records. */
function isJsonLogLines(text: string): boolean {
  const lines = text.split('\n').filter((l) => l.trim());
  return (
    lines.length > 0 &&
    lines.every((l) => {
      const t = l.trim();
      if (!t.startsWith('{') || !t.endsWith('}')) return false;
      try {
        const o = JSON.parse(t) as Record<string, unknown>;
        return 'level' in o || '_aws' in o;
      } catch {
        return false;
      }
    })
  );
}

/** One guard per process: import it anywhere, it is the same object. */
export const leakGuard = new LeakGuard();
