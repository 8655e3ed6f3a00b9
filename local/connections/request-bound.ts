import { MAX_CONCURRENT_REQUESTS } from '../../functions/core/connections/connection.js';
import { loadEnvironments } from '../../lib/environment/environments.js';

/**
 * How many requests a local run may have in flight to one connection. The local run calls the gateways the
 * deployments call, so it keeps to the strictest of them: the smallest maxConcurrentRequests any environment file
 * gives that connection, or the default (2) when none defines it.
 */
export function localRequestBounds(): (connection: string) => number {
  const environments = loadEnvironments();
  return (connection) => {
    const given = environments.flatMap((e) => e.connections.filter((c) => c.name === connection).map((c) => c.maxConcurrentRequests));
    return given.length ? Math.min(...given) : MAX_CONCURRENT_REQUESTS.default;
  };
}

/** At most `limit` calls of `run` at once; the rest wait their turn, in the order they came. */
export class RequestLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next in line, so a newcomer cannot overtake it.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
