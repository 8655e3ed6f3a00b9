import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import transactions from '../fixtures/reports/transactions.json' with { type: 'json' };
import {
  assertTemplate,
  findBadPlaceholderPaths,
  findBadPlaceholders,
  renderBody,
} from '../../functions/core/gateway/body-template.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { parseLocalDateTime, type ReportWindow } from '../../functions/core/time/window.js';

const window = (start: string, end: string): ReportWindow => ({ start: parseLocalDateTime(start), end: parseLocalDateTime(end) });
const nov20 = window('2026-11-20', '2026-11-21');

describe('renderBody', () => {
  it('renders the shipped sample template for a day', () => {
    const before = structuredClone(transactions.bodyTemplate);
    const body = renderBody(transactions.bodyTemplate, nov20) as typeof transactions.bodyTemplate;
    assert.deepEqual(body.inputReportParameters, [
      { type: 'INPUT_TEXT', name: 'dateFrom', value: '2026-11-20 00:00:00' },
      { type: 'INPUT_TEXT', name: 'dateTo', value: '2026-11-21 00:00:00' },
    ]);
    // Everything else goes out exactly as the provider's support wrote it.
    assert.deepEqual({ ...body, inputReportParameters: [] }, { ...before, inputReportParameters: [] });
    assert.deepEqual(transactions.bodyTemplate, before, 'the template itself is not changed');
  });

  it('renders window.last as the last second, for inclusive "to" inputs', () => {
    assert.equal(renderBody('{{window.last:yyyy-MM-dd HH:mm:ss}}', nov20), '2026-11-20 23:59:59');
    assert.equal(renderBody('{{window.last:dd.MM.yyyy HH:mm:ss}}', window('2026-12-31', '2027-01-01')), '31.12.2026 23:59:59');
    assert.equal(renderBody('{{window.last:HH:mm:ss}}', window('2026-11-20T09:00', '2026-11-20T10:00')), '09:59:59');
  });

  it('renders inside nested arrays and objects, several per string, with spaces in the braces', () => {
    const template = {
      a: [{ b: ['{{window.start:dd.MM.yyyy}}', ['{{ window.end : yyyy }}']] }],
      c: { d: { e: 'from {{window.start:yyyy-MM-dd}} to {{window.end:yyyy-MM-dd}}' } },
    };
    assert.deepEqual(renderBody(template, nov20), {
      a: [{ b: ['20.11.2026', ['2026']] }],
      c: { d: { e: 'from 2026-11-20 to 2026-11-21' } },
    });
  });

  it('leaves non-string values, keys and plain strings untouched', () => {
    const template = {
      n: 1.5, t: true, f: false, z: null, empty: [], obj: {}, text: 'no placeholder here',
      '{{window.start:yyyy}}': 'keys are not rendered', list: [0, null, { deep: 42 }],
    };
    assert.deepEqual(renderBody(template, nov20), template);
    assert.equal(renderBody(7, nov20), 7);
    assert.equal(renderBody(null, nov20), null);
  });
});

describe('placeholder checks', () => {
  it('find nothing wrong in the shipped template', () => {
    assert.deepEqual(findBadPlaceholders(transactions.bodyTemplate), []);
    assert.doesNotThrow(() => assertTemplate(transactions.bodyTemplate, 'transactions'));
  });

  it('find unknown names, missing or token-less patterns and unclosed braces, with their paths', () => {
    const template = {
      a: '{{window.stop:yyyy}}',
      b: ['ok {{window.start:yyyy}}', '{{window.start}}'],
      c: { d: '{{window.end:}}', e: '{{window.end:today}}', f: 'x {{window.last:yyyy-MM-dd} y' },
      g: '{{ WINDOW.START:yyyy }}',
    };
    assert.deepEqual(findBadPlaceholderPaths(template), [
      { path: ['a'], placeholder: '{{window.stop:yyyy}}' },
      { path: ['b', 1], placeholder: '{{window.start}}' },
      { path: ['c', 'd'], placeholder: '{{window.end:}}' },
      { path: ['c', 'e'], placeholder: '{{window.end:today}}' },
      { path: ['c', 'f'], placeholder: '{{window.last:yyyy-MM-dd} y' },
      { path: ['g'], placeholder: '{{ WINDOW.START:yyyy }}' },
    ]);
  });

  it('accept a pattern holding any one token alone, and JSON nulls beside them', () => {
    const template = ['{{window.start:yyyy}}', '{{window.start:MM}}', '{{window.end:dd}}', '{{window.end:HH}}', '{{window.last:mm}}', '{{window.last:ss}}', null, { n: null }];
    assert.deepEqual(findBadPlaceholderPaths(template), []);
    assert.deepEqual(renderBody(template, window('2026-11-20T09:30', '2026-11-20T10:00')), ['2026', '11', '20', '10', '59', '59', null, { n: null }]);
  });

  it('find a placeholder hidden behind an opening brace pair, and an unclosed one at the start, cut at 40 characters', () => {
    assert.deepEqual(findBadPlaceholderPaths({ a: '{{x{{window.start:yyyy}}' }), [{ path: ['a'], placeholder: '{{x{{window.start:yyyy}}' }]);
    assert.deepEqual(findBadPlaceholderPaths(['{{window.start:yyyy}']), [{ path: [0], placeholder: '{{window.start:yyyy}' }]);
    // The good placeholder after it is left out of the quoted text, which shows only what is wrong.
    assert.deepEqual(findBadPlaceholderPaths(['{{window.start:yyyy} to {{window.end:yyyy}}']), [{ path: [0], placeholder: '{{window.start:yyyy} to ' }]);
    assert.deepEqual(findBadPlaceholderPaths(['{{window.start:yyyy-MM-dd HH:mm:ss, then more than forty characters']), [
      { path: [0], placeholder: '{{window.start:yyyy-MM-dd HH:mm:ss, then' },
    ]);
  });

  it('assertTemplate names where and the documented forms', () => {
    assert.throws(
      () => assertTemplate({ x: '{{window.begin:yyyy}}', y: ['{{window.start:day}}'] }, 'config/reports/t.json: report "t", bodyTemplate'),
      (e: unknown) =>
        e instanceof ConfigurationError &&
        e.message ===
          'config/reports/t.json: report "t", bodyTemplate: unknown placeholder(s) {{window.begin:yyyy}}, {{window.start:day}}; ' +
            'use {{window.start:PATTERN}}, {{window.end:PATTERN}} or {{window.last:PATTERN}} with tokens yyyy MM dd HH mm ss.',
    );
  });
});
