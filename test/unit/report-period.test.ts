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
            '{{window.last:dd.MM.yyyy HH:mm:ss}}.',
        );
        return true;
      },
    );
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
