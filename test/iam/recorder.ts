import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from '@smithy/core/client';

/**
 * Every AWS SDK v3 request made while a caller runs, recorded as the SDK is asked for it: the service, the operation
 * and its input. It hooks `send` on smithy's Client, which every v3 client inherits, so calls that really go out (S3
 * to the local lake) are seen; aws-sdk-client-mock replaces `send` on a client class's prototype, so such a class is
 * watched again after it is mocked (watchMocked). Who is calling is an AsyncLocalStorage value set by `as`: a
 * request made outside of it (a test putting its fixtures in place) is not recorded.
 */

export interface RecordedRequest {
  /** The caller, as the test names it: a role of the stack ("fetch", "parse") or a person ("operator"). */
  caller: string;
  /** The SDK's service id, lower-case: "s3", "secrets manager", "lambda". */
  service: string;
  /** The operation, as the command's name without "Command": "GetObject". */
  operation: string;
  input: Record<string, unknown>;
  /** "ok", or the name of the error it met ("NoSuchKey"); unset while it is in flight. */
  outcome?: string;
}

type Send = (this: { config?: { serviceId?: string } }, command: { constructor: { name: string }; input?: unknown }, ...rest: unknown[]) => unknown;

const who = new AsyncLocalStorage<string>();
const recorded: RecordedRequest[] = [];
const WRAPPED = Symbol('recorded send');

function wrap(send: Send): Send {
  if ((send as unknown as Record<symbol, boolean>)[WRAPPED]) return send;
  const wrapped: Send = function (this, command, ...rest) {
    const caller = who.getStore();
    const result = send.call(this, command, ...rest);
    if (!caller) return result;
    const request: RecordedRequest = {
      caller,
      service: serviceOf(this),
      operation: command.constructor.name.replace(/Command$/, ''),
      input: structuredCloneable((command.input ?? {}) as Record<string, unknown>),
    };
    recorded.push(request);
    return Promise.resolve(result).then(
      (out) => ((request.outcome = 'ok'), out),
      (error: unknown) => {
        request.outcome = error instanceof Error ? error.name : 'Error';
        throw error;
      },
    );
  };
  Object.assign(wrapped, { [WRAPPED]: true });
  return wrapped;
}

/** The SDK's service id ("S3", "Secrets Manager"), read off the client's own configuration. */
function serviceOf(client: { config?: { serviceId?: string } }): string {
  const id = client.config?.serviceId ?? (client.constructor as { name?: string }).name?.replace(/Client$/, '');
  return String(id).toLowerCase();
}

/** The input's plain values (a stream or a byte body is named by its type, not copied). */
function structuredCloneable(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, v instanceof Uint8Array || (v && typeof v === 'object' && 'pipe' in v) ? `<${v.constructor.name}>` : v]));
}

/** Hooks every client's send; idempotent. */
export function startRecording(): void {
  const proto = Client.prototype as unknown as { send: Send };
  proto.send = wrap(proto.send);
}

/** A client class whose prototype's send was replaced by aws-sdk-client-mock: record its calls too. */
export function watchMocked(clientClass: { prototype: unknown }): void {
  const proto = clientClass.prototype as { send: Send };
  if (Object.prototype.hasOwnProperty.call(proto, 'send')) proto.send = wrap(proto.send);
}

/** Runs `fn` as `caller`: every request it makes, however deep and however asynchronous, is recorded as theirs. */
export function as<T>(caller: string, fn: () => Promise<T>): Promise<T> {
  return who.run(caller, fn);
}

export function recordedRequests(): readonly RecordedRequest[] {
  return recorded;
}
