import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Credentials } from '../../lib/constructs/credentials.js';
import { Fetch, type FetchProps, type ScheduledReport } from '../../lib/constructs/fetch.js';
import { emptyStack, FIXTURE_ENTRY } from './helpers.js';

/** The schedule switch and the synth-time checks; the wiring itself is asserted on the whole stack (stack.test.ts). */
function build(reports: ScheduledReport[], overrides: Partial<FetchProps> = {}) {
  const stack = emptyStack();
  const key = new kms.Key(stack, 'Key');
  new Fetch(stack, 'Fetch', {
    environment: 'test',
    reports,
    connections: [{ name: 'default', endpointUrl: 'https://gateway.test/rpt', secretName: 's' }],
    credentials: new Credentials(stack, 'Credentials', { environment: 'test', secretName: 's', mode: 'create', removalPolicy: RemovalPolicy.DESTROY }),
    rawBucket: new s3.Bucket(stack, 'Raw', { encryptionKey: key }),
    key,
    schedulesEnabled: true,
    projectionStart: '2020-01-01',
    timeout: Duration.minutes(15),
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
      { id: 'a', cron: 'cron(0 1 * * ? *)', timeZone: 'Europe/Berlin', lookback: 0 },
      { id: 'b', cron: 'cron(30 */6 * * ? *)', timeZone: 'UTC', lookback: 0 },
    ]);
    template.resourceCountIs('AWS::Scheduler::Schedule', 2);
    template.allResourcesProperties('AWS::Scheduler::Schedule', { State: 'ENABLED', GroupName: 'paynet-reports-test' });
    template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'cron(30 */6 * * ? *)', ScheduleExpressionTimezone: 'UTC' });
  });

  it('refuses, naming the report, a cron or time zone the scheduler would refuse at deploy time', () => {
    assert.throws(() => build([{ id: 'x', cron: '15 3 * * ? *', timeZone: 'UTC', lookback: 0 }]), /Report "x": schedule\.cron/);
    assert.throws(() => build([{ id: 'y', cron: 'cron(15 3 * * ? *)', timeZone: 'Europe/Atlantis', lookback: 0 }]), /Report "y": schedule\.timeZone/);
    assert.throws(() => build([{ id: 'z', cron: 'cron(15 25 * * ? *)', timeZone: 'UTC', lookback: 0 }]), /Report "z": schedule\.cron .*25 is outside 0-23/);
  });

  it('synthesizes every expression a definition may load with: rate() as well as cron()', () => {
    const template = build([{ id: 'r', cron: 'rate(6 hours)', timeZone: 'UTC', lookback: 0 }]);
    template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(6 hours)' });
  });

  it("refuses a time-out that cannot give each window of a scheduled run a share of a minute, naming the report and both settings", () => {
    // 900 s: 885 s after the margin, 3 windows of 295 s; 300 s with lookback 6: 7 windows of 40 s.
    build([{ id: 'ok', cron: 'cron(15 3 * * ? *)', timeZone: 'UTC', lookback: 2 }]);
    assert.throws(
      () => build([{ id: 'many', cron: 'cron(15 3 * * ? *)', timeZone: 'UTC', lookback: 6 }], { timeout: Duration.seconds(300) }),
      /Report "many": a scheduled run fetches 7 windows \(lookback 6\) within fetch\.timeoutSeconds 300, 40 s each .*at least 60 s\. Raise fetch\.timeoutSeconds/,
    );
  });

  it("gives the function the projection's first date, which it refuses windows before", () => {
    const template = build([{ id: 'a', cron: 'cron(0 1 * * ? *)', timeZone: 'UTC', lookback: 0 }], { projectionStart: '2018-06-01' });
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ PROJECTION_START: '2018-06-01' }) } });
  });

  it('says how to synthesize while a handler is missing', () => {
    assert.throws(() => build([], { entry: '/nonexistent/handler.ts' }), /does not exist.*-c handlerEntry=/s);
  });
});
