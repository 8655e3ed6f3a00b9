import { ConfigurationError } from './errors.js';

/**
 * Calls `fn` on every item with at most `limit` calls in flight, starting them in order; results keep the
 * items' order. `fn` must not throw (runBackfill's wrapper turns throws into results): one rejection would
 * otherwise leave the other workers running unobserved.
 */
export async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) throw new ConfigurationError(`concurrency must be a whole number of at least 1, not ${limit}`);
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
