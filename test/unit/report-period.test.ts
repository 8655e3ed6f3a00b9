import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import { parseReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { describePeriod, periodProblem, SAMPLE_WINDOW_START } from '../../functions/core/definitions/period-check.js';
import { parseWindowSize, windowAt } from '../../functions/core/time/window.js';

/**
 * The period a body template asks for, read as docs/add-a-report.md ("The period a body asks for") teaches: every
 * shipped and fixture definition renders a period that holds its window, and the trap of an inclusive "to" written
 * as a date alone is refused at load with the fix.
 */

const dirOf = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const DIRS = ['../../config/reports/', '../fixtures/reports/', '../fixtures/report-shapes/'].map(dirOf);
const REFUSED = join(dirOf('../fixtures/refused-reports/'), 'settlements_inclusive_dates.json');

const definitions = DIRS.flatMap((dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ file: join(dir, f), raw: JSON.parse(readFileSync(join(dir, f), 'utf8')) as { window?: string; bodyTemplate: unknown } })),
);

const templateWith = (from: string, to: string) => ({ reportIdentifier: 'x', inputReportParameters: [{ name: 'dateFrom', value: from }, { name: 'dateTo', value: to }] });

describe('the period a body template asks for', () => {
  it('every shipped and fixture report renders a period that is neither empty nor inverted for a sample window', () => {
    assert.ok(definitions.length >= 5, `found ${definitions.length} definitions`);
    for (const { file, raw } of definitions) {
      const window = windowAt(SAMPLE_WINDOW_START, parseWindowSize(raw.window ?? 'P1D'));
      assert.equal(periodProblem(raw.bodyTemplate, raw.window ?? 'P1D'), undefined, file);
      assert.doesNotThrow(() => parseReportDefinition(raw, file));
      assert.match(describePeriod(raw.bodyTemplate, window), /^".+" to ".+" \((exclusive|inclusive)\)$/, file);
    }
  });

  it('the shipped report asks for its day as the provider writes it', () => {
    const raw = definitions.find((d) => d.file.endsWith(join('config', 'reports', 'transactions.json')))!.raw;
    const window = windowAt({ year: 2026, month: 11, day: 18, hour: 0, minute: 0, second: 0 }, parseWindowSize('P1D'));
    assert.equal(describePeriod(raw.bodyTemplate, window), '"2026-11-18 00:00:00" to "2026-11-19 00:00:00" (exclusive)');
  });

  it('refuses the fixture with window.last and date-only "from" and "to", naming the placeholders and the fix', () => {
    const raw = JSON.parse(readFileSync(REFUSED, 'utf8'));
    assert.throws(
      () => parseReportDefinition(raw, 'config/reports/settlements_inclusive_dates.json'),
      (e: unknown) => {
        assert.ok(e instanceof ConfigurationError);
        assert.equal(
          e.message,
          'config/reports/settlements_inclusive_dates.json: report "settlements_inclusive_dates" is invalid:\n' +
            '  bodyTemplate.inputReportParameters[1].value: the period is empty: for the window 2026-01-15T00:00:00/2026-01-16T00:00:00, ' +
            '{{window.start:dd.MM.yyyy}} writes "15.01.2026" and {{window.last:dd.MM.yyyy}} writes "15.01.2026", read as 2026-01-15T00:00:00 to ' +
            "2026-01-15T00:00:00 (inclusive): a bound without a time is that day's 00:00, so the gateway would answer no rows. " +
            'Fix: if the provider\'s "to" is exclusive, write {{window.end:dd.MM.yyyy}} (the next day); if it is inclusive, give it the time: ' +
            '{{window.last:dd.MM.yyyy HH:mm:ss}}; if it reads a date-only "to" as the whole day, say "periodTo": "whole-day" and write {{window.last:dd.MM.yyyy}}.',
        );
        return true;
      },
    );
  });

  it('a whole-day provider: {{window.last}} written as a date loads, {{window.end}} written as a date is refused for asking two days', () => {
    const dates = (to: string) => templateWith('{{window.start:dd.MM.yyyy}}', to);
    assert.equal(periodProblem(dates('{{window.last:dd.MM.yyyy}}'), 'P1D', 'whole-day'), undefined);
    assert.equal(periodProblem(dates('{{window.last:dd.MM.yyyy HH:mm:ss}}'), 'P1D', 'whole-day'), undefined, 'a "to" with a time reads alike either way');
    assert.equal(
      periodProblem(dates('{{window.end:dd.MM.yyyy}}'), 'P1D', 'whole-day')?.message,
      'the period is too long: for the window 2026-01-15T00:00:00/2026-01-16T00:00:00, {{window.start:dd.MM.yyyy}} writes "15.01.2026" and ' +
        '{{window.end:dd.MM.yyyy}} writes "16.01.2026", read as 2026-01-15T00:00:00 to 2026-01-17T00:00:00 (exclusive: "periodTo" is "whole-day"): ' +
        '2 days for a P1D window, so rows would load in more than one window. ' +
        'Fix: this provider reads a date-only "to" as its whole day: write {{window.last:dd.MM.yyyy}} (the window\'s own day).',
    );
    // Under the default reading the same two templates are the other way round.
    assert.match(periodProblem(dates('{{window.last:dd.MM.yyyy}}'), 'P1D')!.message, /^the period is empty: .* say "periodTo": "whole-day" and write \{\{window\.last:dd\.MM\.yyyy\}\}\.$/);
    assert.equal(periodProblem(dates('{{window.end:dd.MM.yyyy}}'), 'P1D'), undefined);
    const window = windowAt(SAMPLE_WINDOW_START, parseWindowSize('P1D'));
    assert.equal(describePeriod(dates('{{window.last:dd.MM.yyyy}}'), window, 'whole-day'), '"15.01.2026" to "15.01.2026" (inclusive, whole days)');
  });

  it('a definition says its reading with "periodTo"; the load check follows it, and other words are refused', () => {
    const raw = JSON.parse(readFileSync(REFUSED, 'utf8')) as Record<string, unknown>;
    assert.equal(parseReportDefinition({ ...raw, periodTo: 'whole-day' }, 'x.json').periodTo, 'whole-day');
    assert.equal(parseReportDefinition(definitions[0]!.raw, 'x.json').periodTo, 'instant', 'absent: instant, as before');
    assert.throws(() => parseReportDefinition({ ...raw, periodTo: 'whole-day-inclusive' }, 'x.json'), /periodTo: must be one of "instant", "whole-day", not the string "whole-day-inclusive"/);
  });

  it('either fix the message gives loads', () => {
    assert.equal(periodProblem(templateWith('{{window.start:dd.MM.yyyy}}', '{{window.end:dd.MM.yyyy}}'), 'P1D'), undefined);
    assert.equal(periodProblem(templateWith('{{window.start:dd.MM.yyyy}}', '{{window.last:dd.MM.yyyy HH:mm:ss}}'), 'P1D'), undefined);
  });

  it('a date-only period under windows shorter than a day is empty, and the fix asks for the time in both bounds', () => {
    const problem = periodProblem(templateWith('{{window.start:dd.MM.yyyy}}', '{{window.end:dd.MM.yyyy}}'), 'PT6H');
    assert.match(problem!.message, /^the period is empty: for the window 2026-01-15T00:00:00\/2026-01-15T06:00:00, /);
    assert.match(problem!.message, /Fix: a window shorter than a day needs the time in both bounds: \{\{window\.start:dd\.MM\.yyyy HH:mm:ss\}\} and \{\{window\.end:dd\.MM\.yyyy HH:mm:ss\}\}\.$/);
  });

  it('a "from" written to the minute beside a date-only inclusive "to" is empty too: the time of one field does not lend itself to the other', () => {
    const problem = periodProblem({ from: '{{window.start:yyyy-MM-dd}}', fromTime: '{{window.start:HH:mm}}', to: '{{window.last:yyyy-MM-dd}}' }, 'P1D');
    assert.deepEqual(problem?.path, ['to']);
  });

  it('a bound split over a date field and a time field has the precision of both', () => {
    const split = { dateFrom: '{{window.start:dd.MM.yyyy}}', dateTo: '{{window.last:dd.MM.yyyy}}', timeTo: '{{window.last:HH:mm:ss}}' };
    assert.equal(periodProblem(split, 'P1D'), undefined);
  });
});

describe('the period check on templates written out', () => {
  const window18 = windowAt({ year: 2026, month: 11, day: 18, hour: 0, minute: 0, second: 0 }, parseWindowSize('P1D'));

  it('a "to" coarser than the "from" falls before it: inverted, with the fix that puts each bound in its place', () => {
    assert.deepEqual(periodProblem({ f: '{{window.start:dd.MM.yyyy}}', t: '{{window.end:yyyy}}' }, 'P1D'), {
      path: ['t'],
      message:
        'the period is inverted: for the window 2026-01-15T00:00:00/2026-01-16T00:00:00, {{window.start:dd.MM.yyyy}} writes "15.01.2026" and ' +
        '{{window.end:yyyy}} writes "2026", read as 2026-01-15T00:00:00 to 2026-01-01T00:00:00 (exclusive): a bound without a time is that ' +
        'day\'s 00:00, so the gateway would answer no rows. Fix: "to" falls before "from": put {{window.start:…}} in the period\'s "from" and ' +
        '{{window.end:…}} or {{window.last:…}} in its "to".',
    });
  });

  it('placeholders with spaces inside the braces are read too; a bound to the month is that month\'s first day', () => {
    assert.match(periodProblem({ f: '{{ window.start : yyyy-MM-dd }}', t: '{{ window.last : yyyy-MM-dd }}' }, 'P1D')!.message, /^the period is empty: .* \{\{ window\.last : yyyy-MM-dd \}\} writes "2026-01-15", read as 2026-01-15T00:00:00 to 2026-01-15T00:00:00 \(inclusive\)/);
    assert.equal(
      periodProblem({ f: '{{window.start:MM.yyyy}}', t: '{{window.last:MM.yyyy}}' }, 'P1D')!.message,
      'the period is empty: for the window 2026-01-15T00:00:00/2026-01-16T00:00:00, {{window.start:MM.yyyy}} writes "01.2026" and ' +
        '{{window.last:MM.yyyy}} writes "01.2026", read as 2026-01-01T00:00:00 to 2026-01-01T00:00:00 (inclusive): a bound without a time is ' +
        'that day\'s 00:00, so the gateway would answer no rows. Fix: if the provider\'s "to" is exclusive, write {{window.end:MM.yyyy}} (the next ' +
        'day); if it is inclusive, give it the time: {{window.last:MM.yyyy HH:mm:ss}}.',
    );
  });

  it('an hour window: a "to" to the hour holds it, to the day does not; an inclusive "to" needs the minutes', () => {
    const from = '{{window.start:yyyy-MM-dd HH:mm}}';
    assert.equal(periodProblem({ from, to: '{{window.end:yyyy-MM-dd HH}}' }, 'PT1H'), undefined);
    assert.equal(periodProblem({ from, to: '{{window.last:yyyy-MM-dd HH:mm}}' }, 'PT1H'), undefined);
    assert.match(periodProblem({ from, to: '{{window.last:yyyy-MM-dd HH}}' }, 'PT1H')!.message, /read as 2026-01-15T00:00:00 to 2026-01-15T00:00:00 \(inclusive\).* Fix: a window shorter than a day needs the time in both bounds: \{\{window\.start:yyyy-MM-dd HH:mm\}\} and \{\{window\.last:yyyy-MM-dd HH\}\}\.$/);
    assert.match(periodProblem({ from, to: '{{window.end:yyyy-MM-dd}}' }, 'PT1H')!.message, /to 2026-01-15T00:00:00 \(exclusive\)/);
    // Seconds: an inclusive "to" to the second in a one-second-wide sense still ends after the start.
    assert.equal(periodProblem({ from: '{{window.start:HH:mm:ss}}', to: '{{window.last:ss}}' }, 'PT1H'), undefined);
  });

  it('nothing to judge without a "from", without a "to", or with a window that is not one', () => {
    assert.equal(periodProblem({ f: '{{window.start:dd.MM.yyyy}}' }, 'P1D'), undefined);
    assert.equal(periodProblem({ t: '{{window.last:dd.MM.yyyy}}' }, 'P1D'), undefined);
    assert.equal(periodProblem({ f: '{{window.start:dd.MM.yyyy}}', t: '{{window.last:dd.MM.yyyy}}' }, 'P1X'), undefined);
  });

  it('describes what was asked: an exclusive "to" before an inclusive one, only the "from" when there is no "to"', () => {
    assert.equal(describePeriod({ f: '{{window.start:dd.MM.yyyy}}', t: '{{window.last:dd.MM.yyyy HH:mm:ss}}' }, window18), '"18.11.2026" to "18.11.2026 23:59:59" (inclusive)');
    assert.equal(describePeriod({ f: '{{window.start:dd.MM.yyyy}}', t: '{{window.end:dd.MM.yyyy}}', l: '{{window.last:dd.MM.yyyy}}' }, window18), '"18.11.2026" to "19.11.2026" (exclusive)');
    assert.equal(describePeriod({ f: '{{window.start:dd.MM.yyyy}}', g: '{{window.start:HH:mm}}' }, window18), 'from "18.11.2026" "00:00"');
    assert.equal(describePeriod({ f: ['{{window.start:dd.MM.yyyy}}', 3, null], t: { at: '{{window.end:dd.MM.yyyy}}' } }, window18), '"18.11.2026" to "19.11.2026" (exclusive)');
  });
});
