import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Credentials } from '../../lib/credentials.js';
import { Fetch, type FetchProps, type ScheduledReport } from '../../lib/fetch.js';
import { emptyStack, FIXTURE_ENTRY } from './helpers.js';

/** The schedule switch and the synth-time checks; the wiring itself is asserted on the whole stack (stack.test.ts). */
function build(reports: ScheduledReport[], overrides: Partial<FetchProps> = {}) {
  const stack = emptyStack();
  const key = new kms.Key(stack, 'Key');
  new Fetch(stack, 'Fetch', {
    environment: 'test',
    reports,
    endpointUrl: 'https://gateway.test/rpt',
    credentials: new Credentials(stack, 'Credentials', { environment: 'test', secretName: 's', mode: 'create', removalPolicy: RemovalPolicy.DESTROY }),
    rawBucket: new s3.Bucket(stack, 'Raw', { encryptionKey: key }),
    key,
    schedulesEnabled: true,
    timeout: Duration.minutes(1),
    memorySize: 256,
    logLevel: 'INFO',
    logRetention: logs.RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.DESTROY,
    entry: FIXTURE_ENTRY,
    ...overrides,
  });
  return Template.fromStack(stack);
}

describe('Fetch', () => {
  it('enables the schedules when the environment says so, one per report', () => {
    const template = build([
      { id: 'a', cron: 'cron(0 1 * * ? *)', timeZone: 'Europe/Berlin' },
      { id: 'b', cron: 'cron(30 */6 * * ? *)', timeZone: 'UTC' },
    ]);
    template.resourceCountIs('AWS::Scheduler::Schedule', 2);
    template.allResourcesProperties('AWS::Scheduler::Schedule', { State: 'ENABLED', GroupName: 'paynet-reports-test' });
    template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'cron(30 */6 * * ? *)', ScheduleExpressionTimezone: 'UTC' });
  });

  it('refuses, naming the report, a cron or time zone the scheduler would refuse at deploy time', () => {
    assert.throws(() => build([{ id: 'x', cron: '15 3 * * ? *', timeZone: 'UTC' }]), /Report "x": schedule\.cron/);
    assert.throws(() => build([{ id: 'y', cron: 'cron(15 3 * * ? *)', timeZone: 'Europe/Atlantis' }]), /Report "y": schedule\.timeZone/);
    assert.throws(() => build([{ id: 'z', cron: 'cron(15 25 * * ? *)', timeZone: 'UTC' }]), /Report "z": schedule\.cron .*25 is outside 0-23/);
  });

  it('synthesizes every expression a definition may load with: rate() as well as cron()', () => {
    const template = build([{ id: 'r', cron: 'rate(6 hours)', timeZone: 'UTC' }]);
    template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(6 hours)' });
  });

  it('says how to synthesize while a handler is missing', () => {
    assert.throws(() => build([], { entry: '/nonexistent/handler.ts' }), /does not exist.*-c handlerEntry=/s);
  });
});
