import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Parse, PARSE_MAX_CONCURRENCY } from '../../lib/constructs/parse.js';
import { emptyStack, FIXTURE_ENTRY, resourcesOf, type Cfn } from './helpers.js';

/** reservedConcurrency is opt-in: none by default (new accounts refuse any), and when set it also caps the poller. */
function build(reservedConcurrency?: number) {
  const stack = emptyStack();
  const key = new kms.Key(stack, 'Key');
  new Parse(stack, 'Parse', {
    environment: 'test',
    rawBucket: new s3.Bucket(stack, 'Raw', { encryptionKey: key }),
    curatedBucket: new s3.Bucket(stack, 'Curated', { encryptionKey: key }),
    key,
    timeout: Duration.minutes(1),
    memorySize: 256,
    reservedConcurrency,
    logLevel: 'INFO',
    logRetention: logs.RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.DESTROY,
    entry: FIXTURE_ENTRY,
  });
  const template = Template.fromStack(stack);
  const fn = Object.values(resourcesOf(template, 'AWS::Lambda::Function')).map((f) => f.Properties as Cfn).find((f) => f.Handler === 'index.handler');
  const [mapping] = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping')).map((m) => m.Properties as Cfn);
  return { fn, mapping };
}

describe('Parse concurrency', () => {
  // The default (no reservation, the poller at PARSE_MAX_CONCURRENCY) is asserted on the whole stack (deploy-readiness.ts).
  it(`reserves what the environment opts into, and polls no more than that (${PARSE_MAX_CONCURRENCY} without a reservation)`, () => {
    const { fn, mapping } = build(5);
    assert.equal(fn.ReservedConcurrentExecutions, 5);
    // Two of the five are the reparse's (reports reparse --environment invokes the function beside its queue).
    assert.deepEqual(mapping.ScalingConfig, { MaximumConcurrency: 3 });
    assert.throws(() => build(3), /at least 4/);
  });
});

describe('Parse build commit', () => {
  // parquet-java parses created_by's "(build <hash>)"; the function learns the hash from its environment.
  it('hands the parse function the commit it was synthesized from, for created_by', async () => {
    const { execFileSync } = await import('node:child_process');
    let head = 'unknown'; // a checkout without .git synthesizes "unknown", and so must the function
    try {
      head = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      // no git here
    }
    const given = process.env.PIPELINE_BUILD_COMMIT;
    delete process.env.PIPELINE_BUILD_COMMIT;
    let env: Record<string, string>;
    try {
      env = (build().fn.Environment as { Variables: Record<string, string> }).Variables;
      assert.equal(env.PIPELINE_BUILD_COMMIT, head);
      // A synth from an export (no .git) is told the commit: that value wins.
      process.env.PIPELINE_BUILD_COMMIT = 'ABCDEF1234567';
      assert.equal((build().fn.Environment as { Variables: Record<string, string> }).Variables.PIPELINE_BUILD_COMMIT, 'abcdef1234567');
    } finally {
      if (given === undefined) delete process.env.PIPELINE_BUILD_COMMIT;
      else process.env.PIPELINE_BUILD_COMMIT = given;
    }
    const { createdBy, buildCommit } = await import('../../functions/core/build-info.js');
    assert.match(createdBy(buildCommit(env.PIPELINE_BUILD_COMMIT)), /^paynet-reports-pipeline version \d+\.\d+\.\d+ \(build ([0-9a-f]{40}|unknown)\)$/);
  });
});
