import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import { bucketNames, LOCAL_ENVIRONMENT, NAME_PREFIX, PLACEHOLDER_SECRET, stackName } from '../../functions/core/naming.js';

/** The names the stack and the local runner share (naming.ts): literal bucket and stack names, and the environment rule. */

describe('bucketNames', () => {
  it('paynet-reports-<environment>-raw and -curated, with a qualifier appended as is', () => {
    assert.deepEqual(bucketNames('prod'), { raw: 'paynet-reports-prod-raw', curated: 'paynet-reports-prod-curated' });
    assert.deepEqual(bucketNames('prod', '123456789012-eu-central-1'), {
      raw: 'paynet-reports-prod-raw-123456789012-eu-central-1',
      curated: 'paynet-reports-prod-curated-123456789012-eu-central-1',
    });
    assert.deepEqual(bucketNames('prod', ''), { raw: 'paynet-reports-prod-raw', curated: 'paynet-reports-prod-curated' });
    assert.deepEqual(bucketNames(LOCAL_ENVIRONMENT), { raw: 'paynet-reports-local-raw', curated: 'paynet-reports-local-curated' });
  });

  it('takes 1-20 lower-case letters, digits and hyphens, starting with a letter', () => {
    for (const environment of ['a', 'staging-2', 'a'.repeat(20), 'x-']) assert.equal(bucketNames(environment).raw, `paynet-reports-${environment}-raw`);
  });

  it('refuses any other environment name, saying the rule and why', () => {
    for (const environment of ['', 'a'.repeat(21), '2prod', '-prod', 'Prod', 'my_env', 'pr od', 'prod\n', 'xprod!']) {
      assert.throws(
        () => bucketNames(environment),
        (e: unknown) =>
          e instanceof ConfigurationError &&
          e.message === `environment "${environment}" must be 1-20 characters of lower-case letters, digits and hyphens, starting with a letter: it is part of bucket names.`,
        JSON.stringify(environment),
      );
    }
  });
});

describe('shared names', () => {
  it('the prefix, the local environment, the stack name and the placeholder secret', () => {
    assert.equal(NAME_PREFIX, 'paynet-reports');
    assert.equal(LOCAL_ENVIRONMENT, 'local');
    assert.equal(stackName('prod'), 'PaynetReports-prod');
    assert.deepEqual(PLACEHOLDER_SECRET, { login: 'REPLACE_ME', controlKey: 'REPLACE_ME' });
  });
});
