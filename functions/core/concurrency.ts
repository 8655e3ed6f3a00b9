import { ConfigurationError } from './errors.js';

/**
 * Calls `fn` on every item with at most `limit` calls in flight, starting them in order; results keep the
 * items' order. A rejection rejects the call at once, while the other workers go on through their items
 * unobserved: a caller that must account for every item turns throws into results (runBackfill does); the
 * freshness check lets one failed read fail the whole check, which its alarm reports.
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
