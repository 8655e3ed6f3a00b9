import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import { DEFAULT_RETRY, parseRetryAfter, resolveRetryPolicy, retryDelayMs } from '../../functions/core/retry.js';

/**
 * The gateway client's back-off (retry.ts): the policy a definition may override, full-jitter delays under doubling
 * ceilings, and Retry-After read as seconds or an HTTP date. Every expected delay is worked out by hand.
 */

const refused = (given: object, message: string) =>
  assert.throws(() => resolveRetryPolicy(given), (e: unknown) => e instanceof ConfigurationError && e.message === message);

describe('resolveRetryPolicy', () => {
  it('is 4 attempts, 1 s base and 30 s cap unless overridden, field by field', () => {
    assert.deepEqual(DEFAULT_RETRY, { attempts: 4, baseDelayMs: 1000, maxDelayMs: 30_000 });
    assert.deepEqual(resolveRetryPolicy(undefined), { attempts: 4, baseDelayMs: 1000, maxDelayMs: 30_000 });
    assert.deepEqual(resolveRetryPolicy({ attempts: 1 }), { attempts: 1, baseDelayMs: 1000, maxDelayMs: 30_000 });
    assert.deepEqual(resolveRetryPolicy({ baseDelayMs: 0, maxDelayMs: 0 }), { attempts: 4, baseDelayMs: 0, maxDelayMs: 0 });
  });

  it('does not change the defaults it starts from', () => {
    resolveRetryPolicy({ attempts: 9 });
    assert.equal(DEFAULT_RETRY.attempts, 4);
  });

  it('refuses attempts that are not a whole number of at least 1, saying what it got', () => {
    refused({ attempts: 0 }, 'retry.attempts must be a whole number of at least 1 (got 0).');
    refused({ attempts: -3 }, 'retry.attempts must be a whole number of at least 1 (got -3).');
    refused({ attempts: 1.5 }, 'retry.attempts must be a whole number of at least 1 (got 1.5).');
  });

  it('refuses a negative or non-finite delay, naming the field', () => {
    refused({ baseDelayMs: -1 }, 'retry.baseDelayMs must be a number of milliseconds, 0 or more (got -1).');
    refused({ maxDelayMs: -0.5 }, 'retry.maxDelayMs must be a number of milliseconds, 0 or more (got -0.5).');
    refused({ maxDelayMs: Infinity }, 'retry.maxDelayMs must be a number of milliseconds, 0 or more (got Infinity).');
    refused({ baseDelayMs: NaN }, 'retry.baseDelayMs must be a number of milliseconds, 0 or more (got NaN).');
  });
});

describe('retryDelayMs', () => {
  const policy = { attempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000 };

  it('draws in [0, base * 2^(n-1)): 1000, 2000, 4000 ceilings for the first three failures', () => {
    assert.equal(retryDelayMs(1, policy, () => 0.5), 500);
    assert.equal(retryDelayMs(2, policy, () => 0.5), 1000);
    assert.equal(retryDelayMs(3, policy, () => 0.5), 2000);
    assert.equal(retryDelayMs(3, policy, () => 0.999_9), 3999);
    assert.equal(retryDelayMs(1, policy, () => 0), 0);
  });

  it('caps the ceiling at maxDelayMs: the 6th failure would be 32 s, is at most 30 s', () => {
    assert.equal(retryDelayMs(6, policy, () => 0.5), 15_000);
    assert.equal(retryDelayMs(5, policy, () => 0.5), 8000);
  });

  it('keeps a random number outside [0, 1] inside it', () => {
    assert.equal(retryDelayMs(2, policy, () => 1.5), 2000);
    assert.equal(retryDelayMs(2, policy, () => -0.5), 0);
  });

  it('takes Retry-After as a floor above the draw, never below it, and caps both at maxDelayMs', () => {
    assert.equal(retryDelayMs(1, policy, () => 0.5, 3000), 3000);
    assert.equal(retryDelayMs(3, policy, () => 0.5, 1500), 2000);
    assert.equal(retryDelayMs(1, policy, () => 0.5, 0), 500);
    assert.equal(retryDelayMs(1, policy, () => 0.5, 45_000), 30_000);
    assert.equal(retryDelayMs(1, { ...policy, maxDelayMs: 200 }, () => 0.9), 180);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2024-05-02T03:00:00Z');

  it('delay-seconds: whole seconds to milliseconds, spaces around allowed', () => {
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 7 ', now), 7000);
    assert.equal(parseRetryAfter('0', now), 0);
  });

  it('an HTTP date: the milliseconds from now, 0 once past', () => {
    assert.equal(parseRetryAfter('Thu, 02 May 2024 03:01:30 GMT', now), 90_000);
    assert.equal(parseRetryAfter('Thu, 02 May 2024 02:59:59 GMT', now), 0);
  });

  it('the first of several values', () => {
    assert.equal(parseRetryAfter(['3', '9'], now), 3000);
    assert.equal(parseRetryAfter([], now), undefined);
  });

  it('absent, blank or unreadable: undefined', () => {
    for (const value of [undefined, '', '   ', '1.5', '-1', '12abc', 'soon', '2024-13-45', '1e3', '3 s']) {
      assert.equal(parseRetryAfter(value, now), undefined, String(value));
    }
  });

  it('a number-like text with no letter is never handed to Date.parse (which would guess a date)', () => {
    assert.equal(parseRetryAfter('2024', now), 2_024_000, 'all digits: seconds');
    assert.equal(parseRetryAfter('2024/05/03', now), undefined);
    assert.equal(parseRetryAfter('05-03-2024', now), undefined);
  });
});
