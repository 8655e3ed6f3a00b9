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

/** Every problem of an expression, as the definition loader prints them. */
const problems = (e: string) => scheduleExpressionProblems(e);

describe('EventBridge Scheduler expressions, field by field (issue 36)', () => {
  it('takes every field at both ends of its range, names in any case, and spaces around the fields', () => {
    for (const e of [
      'cron(0 0 1 1 ? 1970)', 'cron(59 23 31 12 ? 2199)', 'cron(0 0 ? JAN 1 *)', 'cron(0 0 ? dec 7 *)', 'cron(0 0 ? * SUN *)', 'cron(0 0 ? * sat *)',
      'cron(0 0 ? * mon-fri *)', 'cron( 15  3 * * ? * )', 'cron(0 0 ? * MON#1 *)', 'cron(0 0 ? * 7#5 *)', 'cron(0 0 ? * FRIL *)', 'cron(0 0 ? * 7L *)',
      'cron(0 0 1W * ? *)', 'cron(0 0 31W * ? *)', 'cron(0-59/10 * * * ? *)', 'cron(0/59 * * * ? *)', 'cron(1,2,3 * * * ? *)',
      'rate( 6 hours )', 'rate(2 minutes)', 'rate(10 days)', 'rate(1 day )',
    ]) {
      assert.deepEqual(problems(e), [], e);
    }
  });

  it('names the field, the value and the range of every value outside it', () => {
    assert.deepEqual(problems('cron(0 3 0 * ? *)'), ['day-of-month field: 0 is outside 1-31']);
    assert.deepEqual(problems('cron(0 3 * 0 ? *)'), ['month field: 0 is outside 1-12']);
    assert.deepEqual(problems('cron(0 3 ? * 0 *)'), ['day-of-week field: 0 is outside 1-7']);
    assert.deepEqual(problems('cron(0 3 * * ? 1969)'), ['year field: 1969 is outside 1970-2199']);
    assert.deepEqual(problems('cron(0 24 * * ? *)'), ['hours field: 24 is outside 0-23']);
    assert.deepEqual(problems('cron(5-70 3 * * ? *)'), ['minutes field: 70 is outside 0-59']);
    assert.deepEqual(problems('cron(60-5 3 * * ? *)'), ['minutes field: 60 is outside 0-59']);
    assert.deepEqual(problems('cron(0 3 32W * ? *)'), ['day-of-month field: 32 is outside 1-31']);
    assert.deepEqual(problems('cron(0 3 0W * ? *)'), ['day-of-month field: 0 is outside 1-31']);
    assert.deepEqual(problems('cron(0 3 ? * 8#1 *)'), ['day-of-week field: 8 is outside 1-7']);
    assert.deepEqual(problems('cron(0 3 ? * 8L *)'), ['day-of-week field: 8 is outside 1-7']);
    assert.deepEqual(problems('cron(60 24 * * ? *)'), ['minutes field: 60 is outside 0-59', 'hours field: 24 is outside 0-23'], 'every problem, in field order');
  });

  it('says what a field that is no value holds, listing the names where a field has them', () => {
    assert.deepEqual(problems('cron(ab 3 * * ? *)'), ['minutes field: "ab" is not a number']);
    assert.deepEqual(problems('cron(L 3 * * ? *)'), ['minutes field: "L" is not a number']);
    assert.deepEqual(problems('cron(0 3 ? FOO * *)'), ['month field: "FOO" is not a number or one of JAN, FEB, MAR, APR, MAY, JUN, JUL, AUG, SEP, OCT, NOV, DEC']);
    assert.deepEqual(problems('cron(0 3 ? * XL *)'), ['day-of-week field: "XL" is not a number or one of SUN, MON, TUE, WED, THU, FRI, SAT']);
    assert.deepEqual(problems('cron(0 3 ? * LW *)'), ['day-of-week field: "LW" is not a number or one of SUN, MON, TUE, WED, THU, FRI, SAT']);
    assert.deepEqual(problems('cron(0 3 ? * 5#1x *)'), ['day-of-week field: "5#1x" is not a number or one of SUN, MON, TUE, WED, THU, FRI, SAT']);
    assert.deepEqual(problems('cron(0 3 1L * ? *)'), ['day-of-month field: "1L" is not a number']);
    assert.deepEqual(problems('cron(0 3 LX * ? *)'), ['day-of-month field: "LX" is not a number']);
    assert.deepEqual(problems('cron(0 3 W * ? *)'), ['day-of-month field: "W" is not a number']);
    assert.deepEqual(problems('cron(0 3 1W2 * ? *)'), ['day-of-month field: "1W2" is not a number']);
    assert.deepEqual(problems('cron(0 3 ? * 1W *)'), ['day-of-week field: "1W" is not a number or one of SUN, MON, TUE, WED, THU, FRI, SAT'], 'W belongs to day-of-month');
  });

  it('a number is decimal digits alone: no sign, point, exponent or hexadecimal that Number() would read', () => {
    for (const text of ['0x10', '+5', '.5', '1e1', '5.']) {
      assert.deepEqual(problems(`cron(${text} 3 * * ? *)`), [`minutes field: "${text}" is not a number`], text);
    }
  });

  it('the # and L forms are whole items: not the end of a range, nor followed by more', () => {
    const notDay = (text: string) => `day-of-week field: "${text}" is not a number or one of SUN, MON, TUE, WED, THU, FRI, SAT`;
    assert.deepEqual(problems('cron(0 3 ? * 1-2#3 *)'), [notDay('2#3')]);
    assert.deepEqual(problems('cron(0 3 ? * 1-5L *)'), [notDay('5L')]);
    assert.deepEqual(problems('cron(0 3 ? * 5LX *)'), [notDay('5LX')]);
    assert.deepEqual(problems('cron(0 3 ? * 2#10 *)'), ['day-of-week field: "2#10": the week of the month after # must be 1-5']);
  });

  it('the week after # is 1-5', () => {
    assert.deepEqual(problems('cron(0 3 ? * 2#0 *)'), ['day-of-week field: "2#0": the week of the month after # must be 1-5']);
    assert.deepEqual(problems('cron(0 3 ? * 2#6 *)'), ['day-of-week field: "2#6": the week of the month after # must be 1-5']);
    assert.deepEqual(problems('cron(0 3 ? * FOO#6 *)'), [
      'day-of-week field: "FOO" is not a number or one of SUN, MON, TUE, WED, THU, FRI, SAT',
      'day-of-week field: "FOO#6": the week of the month after # must be 1-5',
    ]);
  });

  it('lists, steps and ranges: an empty item, a second /, a step that is not a whole number above 0, a range of three', () => {
    assert.deepEqual(problems('cron(0 3 1,,2 * ? *)'), ['day-of-month field: an empty item in a list']);
    assert.deepEqual(problems('cron(0/5/2 3 * * ? *)'), ['minutes field: "0/5/2" has more than one /']);
    for (const step of ['0', '01', 'x', '', '1.5']) {
      assert.deepEqual(problems(`cron(0/${step} 3 * * ? *)`), [`minutes field: the step in "0/${step}" must be a whole number above 0`], step);
    }
    assert.deepEqual(problems('cron(*/0 3 * * ? *)'), ['minutes field: the step in "*/0" must be a whole number above 0']);
    assert.deepEqual(problems('cron(1-2-3 3 * * ? *)'), ['minutes field: "1-2-3" is not a range a-b']);
  });

  it('the ? rule and the field count, said whole', () => {
    assert.deepEqual(problems('cron(0 3 1 * MON *)'), ['day-of-month ("1") and day-of-week ("MON") cannot both be set: make one of them "?" (for every day: "* * ? *" or "? * * *")']);
    assert.deepEqual(problems('cron(0 3 ? * ? *)'), ['day-of-month and day-of-week are both "?": exactly one of them must be "?"']);
    assert.deepEqual(problems('cron(0 ? * * ? *)'), ['hours field: "?" is allowed only in day-of-month or day-of-week']);
    assert.deepEqual(problems('cron(0 3 * ? ? *)'), ['month field: "?" is allowed only in day-of-month or day-of-week']);
    assert.deepEqual(problems('cron(0 3 * * ? ?)'), ['year field: "?" is allowed only in day-of-month or day-of-week']);
    assert.deepEqual(problems('cron(15 3 * * ?)'), ['a cron expression has 6 fields (minutes hours day-of-month month day-of-week year); "15 3 * * ?" has 5']);
    assert.deepEqual(problems('cron(15 3 * * ? * *)'), ['a cron expression has 6 fields (minutes hours day-of-month month day-of-week year); "15 3 * * ? * *" has 7']);
  });

  it('rate: value and unit, singular exactly for 1, said whole', () => {
    assert.deepEqual(problems('rate(1 days)'), ['"rate(1 days)" must use the singular unit: "rate(1 day)"']);
    assert.deepEqual(problems('rate(5 hour)'), ['"rate(5 hour)" must use the plural unit: "rate(5 hours)"']);
    assert.deepEqual(problems('rate(0 hours)'), ['the rate value must be 1 or more']);
    assert.deepEqual(problems('rate(1 week)'), ['the rate unit "week" must be minute(s), hour(s) or day(s)']);
    assert.deepEqual(problems('rate(2 weeks)'), ['the rate unit "weeks" must be minute(s), hour(s) or day(s)']);
    assert.deepEqual(problems('rate(2 dayss)'), ['the rate unit "dayss" must be minute(s), hour(s) or day(s)']);
    assert.deepEqual(problems('rate(2 sdays)'), ['the rate unit "sdays" must be minute(s), hour(s) or day(s)']);
    assert.deepEqual(problems('rate(2 sday)'), ['the rate unit "sday" must be minute(s), hour(s) or day(s)'], 'only a final s is the plural');
    assert.deepEqual(problems('rate(6  hours)'), [], 'any spaces between value and unit');
    for (const body of ['6hours', '6 Hours', '-1 hours', '1.5 hours', 'x6 hours', '6 hours x', '']) {
      assert.deepEqual(problems(`rate(${body})`), [`a rate expression is "rate(n unit)", for example "rate(1 day)" or "rate(6 hours)"; got "rate(${body})"`], body);
    }
  });

  it('anything but cron(...) or rate(...) is refused with the help', () => {
    const help = 'must be an EventBridge Scheduler expression: "cron(minutes hours day-of-month month day-of-week year)" such as "cron(15 3 * * ? *)", or "rate(n unit)" such as "rate(6 hours)"';
    for (const e of ['xcron(15 3 * * ? *)', 'cron(15 3 * * ? *)x', 'rate(1 day', 'RATE(1 day)', 'at(2026-11-20T03:15:00)', '']) {
      assert.deepEqual(problems(e), [help], e);
    }
  });
});
