import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { DECODABLE_CODINGS, encodeWhole as encodeWith, encoderFor, isDecodable, type ContentCoding } from '../../functions/core/gateway/content-coding.js';

/**
 * How the simulator delivers a successful report, chosen at start-up: transport facts the provider's spec
 * leaves open and a real gateway may do differently from the simulator's default. Tests and users turn
 * them on to see the client cope (README "The gateway simulator", docs/gateway.md).
 *
 * - contentType: the Content-Type of a report ('' sends none). Default: text/csv with the charset, or application/pdf.
 * - compress: any coding the client decodes (DECODABLE_CODINGS: gzip, deflate in the zlib format, br), applied whether or not the request asked for it: a server
 *   may compress unasked (RFC 9110 §12.5.3), and a client must decode it either way.
 * - chunked: no Content-Length, and the body trickles out in small pieces with pauses, like a slow back end
 *   streaming a file as it is generated.
 */


export interface TransportOptions {
  contentType?: string;
  compress?: ContentCoding;
  chunked?: boolean;
  /** chunked: bytes per piece (default 512) and pause between pieces (default 1 ms). */
  trickleBytes?: number;
  trickleDelayMs?: number;
}

export function checkTransportOptions(t: TransportOptions | undefined): void {
  if (t?.compress !== undefined && !isDecodable(t.compress)) {
    throw new Error(`Unknown compression "${String(t.compress)}"; use one of ${DECODABLE_CODINGS.join(', ')}.`);
  }
  if (t?.contentType !== undefined && /[\r\n]/.test(t.contentType)) throw new Error('contentType must be one line.');
}

/** The Content-Type the report goes out with. */
export const reportContentType = (t: TransportOptions | undefined, fallback: string): string | undefined =>
  t?.contentType === undefined ? fallback : t.contentType === '' ? undefined : t.contentType;

/** Whether the request listed the coding in Accept-Encoding (for the request log: asked or unasked). */
export function askedFor(req: IncomingMessage, coding: string): boolean {
  const header = String(req.headers['accept-encoding'] ?? '').toLowerCase();
  return header.split(',').some((part) => part.split(';')[0]!.trim() === coding);
}

/** Re-cuts the stream into small pieces with a pause before each. */
function trickle(bytes: number, delayMs: number): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, callback) {
      void (async () => {
        for (let at = 0; at < chunk.length; at += bytes) {
          await sleep(delayMs);
          this.push(chunk.subarray(at, at + bytes));
        }
      })().then(() => callback(), callback);
    },
  });
}

/** Sets the transport headers of a report answer (Content-Type, Content-Encoding); call before writeHead. */
export function setReportHeaders(res: ServerResponse, t: TransportOptions | undefined, defaultContentType: string): void {
  const type = reportContentType(t, defaultContentType);
  if (type === undefined) res.removeHeader('Content-Type');
  else res.setHeader('Content-Type', type);
  if (t?.compress) {
    res.setHeader('Content-Encoding', t.compress);
    res.setHeader('Vary', 'Accept-Encoding');
  }
}

/** A whole body in the chosen compression (for the dropMidBody fault, which cuts a body of known length). */
export const encodeWhole = (body: Buffer, t: TransportOptions | undefined): Buffer => (t?.compress ? encodeWith(body, t.compress) : body);

/** Sends `source` as the report body through the chosen compression and trickle. */
export async function sendReportBody(source: Readable, res: ServerResponse, t: TransportOptions | undefined): Promise<void> {
  const stages: Transform[] = [];
  if (t?.compress) stages.push(encoderFor(t.compress));
  if (t?.chunked) stages.push(trickle(t.trickleBytes ?? 512, t.trickleDelayMs ?? 1));
  await (pipeline as (...s: unknown[]) => Promise<void>)(source, ...stages, res);
}
