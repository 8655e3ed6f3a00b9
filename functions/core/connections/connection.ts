import * as z from 'zod';
import { ConfigurationError } from '../errors.js';
import { refusalWording } from '../definitions/refusal-wording.js';

/**
 * A connection: one gateway (its rpt-engine URL) reached with one login (one secret), and a bound on the requests
 * in flight to it. Reports name their connection (`"connection"` in a definition; absent means `default`); the
 * environment files define each (`"connections"`, or the top-level `gateway` and `secret` for `default`). Several
 * white-label providers, or several logins at one provider, are several connections of one environment: one lake,
 * one set of alarms, one Athena database (docs/architecture.md, "Connections").
 */

/** What a report without `"connection"` uses, and what an environment's top-level `gateway` and `secret` define. */
export const DEFAULT_CONNECTION = 'default';

/**
 * Lower-case letters, digits and `-`, starting with a letter or digit, at most 32 characters: a connection names
 * resources (a queue, a secret's construct id) and log fields, so it stays short and safe in every one of them.
 */
export const CONNECTION_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const CONNECTION_NAME_RULE = 'must be 1-32 lower-case letters, digits or "-", starting with a letter or digit';

export const connectionName = z.string().regex(CONNECTION_NAME, CONNECTION_NAME_RULE);

/**
 * Requests in flight to one connection at once, whatever number of its reports fall due together: the provider
 * sees a steady client, not a burst. 2 by default (AWS's floor for an SQS event source's maximum concurrency);
 * 1 is served one at a time in order (lib/constructs/fetch-queues.ts); 10 at most.
 */
export const MAX_CONCURRENT_REQUESTS = { min: 1, max: 10, default: 2 } as const;

/** Where a connection's requests go and which secret signs them: what the fetch function needs of it at run time. */
export interface ConnectionEndpoint {
  readonly name: string;
  /** The gateway's full rpt-engine URL. */
  readonly endpointUrl: string;
  /** The Secrets Manager secret holding the login and key (docs/architecture.md, "Secret"). */
  readonly secretName: string;
}

/**
 * The fetch function's CONNECTIONS variable: `{"<name>": {"endpointUrl": "…", "secretName": "…"}}`, set by the
 * stack from the environment file. Refused whole when malformed: a function that would sign for the wrong
 * gateway must not start.
 */
export const CONNECTIONS_VARIABLE = 'CONNECTIONS';

const connectionsVariableSchema = z
  .record(z.string(), z.object({ endpointUrl: z.url({ protocol: /^https?$/ }), secretName: z.string().min(1) }).strict())
  // Names checked here, not by a key schema, as the environment file's are: zod reports a refused record key only
  // as "Invalid key in record".
  .superRefine((connections, ctx) => {
    for (const name of Object.keys(connections)) {
      if (!CONNECTION_NAME.test(name)) ctx.addIssue({ code: 'custom', message: `"${name}" ${CONNECTION_NAME_RULE}`, path: [name] });
    }
  });

export function encodeConnectionsVariable(connections: readonly ConnectionEndpoint[]): string {
  return JSON.stringify(Object.fromEntries(connections.map((c) => [c.name, { endpointUrl: c.endpointUrl, secretName: c.secretName }])));
}

/** Every connection of the variable, by name; the error names what is wrong, never a value beyond the names. */
export function parseConnectionsVariable(text: string): Map<string, ConnectionEndpoint> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigurationError(`${CONNECTIONS_VARIABLE} is not JSON: the stack sets it as {"<connection>": {"endpointUrl", "secretName"}}.`);
  }
  const parsed = connectionsVariableSchema.safeParse(json, { error: refusalWording });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ConfigurationError(`${CONNECTIONS_VARIABLE} is invalid (${problems}): the stack sets it as {"<connection>": {"endpointUrl", "secretName"}}.`);
  }
  return new Map(Object.entries(parsed.data).map(([name, c]) => [name, { name, ...c }]));
}
