import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scheduleExpressionProblems } from '../../functions/core/time/schedule-expression.js';

/** The first problem's text, failing when the expression is accepted. */
const problem = (e: string) => {
  const p = scheduleExpressionProblems(e);
  assert.ok(p.length > 0, `${e} was accepted`);
  return p.join(' | ');
};

describe('EventBridge Scheduler expressions', () => {
  it('accepts what the Scheduler user guide shows', () => {
    for (const e of [
      'cron(15 3 * * ? *)', 'cron(0 12 * * ? *)', 'cron(15 10 ? * 6L 2019-2022)', 'cron(0/15 * * * ? *)', 'cron(0/5 8-17 ? * MON-FRI *)',
      'cron(0 9 ? * 2#1 *)', 'cron(0 8 1 * ? *)', 'cron(0 18 ? * MON-FRI *)', 'cron(0 0 L * ? *)', 'cron(0 0 LW * ? *)', 'cron(0 0 15W * ? *)',
      'cron(5,35 14 * JAN,FEB ? 2026)', 'cron(*/10 * ? * * *)', 'cron(0 3 ? * L *)',
      'rate(1 day)', 'rate(6 hours)', 'rate(1 minute)', 'rate(30 minutes)', 'rate(1 hour)', 'rate(2 days)',
    ]) {
      assert.deepEqual(scheduleExpressionProblems(e), [], e);
    }
  });

  it('refuses out-of-range fields, naming the field and its range', () => {
    assert.match(problem('cron(15 25 * * ? *)'), /hours field: 25 is outside 0-23/);
    assert.match(problem('cron(60 3 * * ? *)'), /minutes field: 60 is outside 0-59/);
    assert.match(problem('cron(0 3 32 * ? *)'), /day-of-month field: 32 is outside 1-31/);
    assert.match(problem('cron(0 3 ? 13 * *)'), /month field: 13 is outside 1-12/);
    assert.match(problem('cron(0 3 ? * 8 *)'), /day-of-week field: 8 is outside 1-7/);
    assert.match(problem('cron(0 3 * * ? 2300)'), /year field: 2300 is outside 1970-2199/);
    assert.match(problem('cron(0 3 ? * FOO *)'), /day-of-week field: "FOO" is not a number or one of SUN/);
    assert.match(problem('cron(0 3 ? * 2#6 *)'), /must be 1-5/);
    assert.match(problem('cron(0/0 3 * * ? *)'), /step .* above 0/);
  });

  it('applies the ? rule: exactly one of day-of-month and day-of-week', () => {
    assert.match(problem('cron(15 25 * * * *)'), /cannot both be set/);
    assert.match(problem('cron(0 3 ? * ? *)'), /both "\?"/);
    assert.match(problem('cron(? 3 * * ? *)'), /minutes field: "\?" is allowed only/);
  });

  it('refuses other shapes', () => {
    assert.match(problem('cron(15 3 * * ?)'), /6 fields/);
    assert.match(problem('15 3 * * ? *'), /EventBridge Scheduler expression/);
    assert.match(problem('at(2026-11-20T03:15:00)'), /EventBridge Scheduler expression/);
    assert.match(problem('rate(1 days)'), /singular unit: "rate\(1 day\)"/);
    assert.match(problem('rate(5 hour)'), /plural unit/);
    assert.match(problem('rate(0 hours)'), /1 or more/);
    assert.match(problem('rate(1 week)'), /minute\(s\), hour\(s\) or day\(s\)/);
  });
});
