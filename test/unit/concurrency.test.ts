import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mapWithConcurrency } from '../../functions/core/concurrency.js';
import { ConfigurationError } from '../../functions/core/errors.js';

/**
 * mapWithConcurrency (concurrency.ts) with calls the test settles by hand: which items are in flight at each step is
 * seen directly, never timed.
 */

/** Calls that wait until the test settles them, by item. */
function heldCalls<T>() {
  const started: T[] = [];
  const settle = new Map<T, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  const fn = (item: T) =>
    new Promise<string>((resolve, reject) => {
      started.push(item);
      settle.set(item, { resolve, reject });
    });
  return { started, settle, fn };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('mapWithConcurrency', () => {
  it('starts `limit` calls in order, the next as one settles, and keeps results in the items\' order', async () => {
    const { started, settle, fn } = heldCalls<string>();
    const all = mapWithConcurrency(['a', 'b', 'c', 'd'], 2, fn);
    await turn();
    assert.deepEqual(started, ['a', 'b']);
    settle.get('b')!.resolve('B');
    await turn();
    assert.deepEqual(started, ['a', 'b', 'c']);
    settle.get('c')!.resolve('C');
    await turn();
    assert.deepEqual(started, ['a', 'b', 'c', 'd']);
    settle.get('d')!.resolve('D');
    settle.get('a')!.resolve('A');
    assert.deepEqual(await all, ['A', 'B', 'C', 'D']);
  });

  it('passes each item\'s index', async () => {
    assert.deepEqual(await mapWithConcurrency(['x', 'y', 'z'], 3, async (item, i) => `${i}:${item}`), ['0:x', '1:y', '2:z']);
  });

  it('a rejection rejects the call at once, with that error', async () => {
    const { settle, fn } = heldCalls<number>();
    const all = mapWithConcurrency([1, 2, 3], 2, fn);
    await turn();
    settle.get(1)!.reject(new Error('window 1 failed'));
    await assert.rejects(all, /^Error: window 1 failed$/);
  });

  it('no items: no call, an empty result', async () => {
    let calls = 0;
    assert.deepEqual(await mapWithConcurrency([], 3, async () => ++calls), []);
    assert.equal(calls, 0);
  });

  it('refuses a limit that is not a whole number of at least 1, naming it', async () => {
    for (const limit of [0, -1, 1.5, NaN]) {
      await assert.rejects(
        mapWithConcurrency([1], limit, async (x) => x),
        (e: unknown) => e instanceof ConfigurationError && e.message === `concurrency must be a whole number of at least 1, not ${limit}`,
      );
    }
  });
});
