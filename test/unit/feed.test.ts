import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { feedId, feedLabel, feedOf, feedsOf, sameFeed } from '../../functions/core/connections/feed.js';
import { parseReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';

const raw = JSON.parse(readFileSync(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8')) as Record<string, unknown>;
const over = (connections?: string[]) => parseReportDefinition({ ...raw, ...(connections ? { connections } : {}) }, 'test: transactions');

describe('a feed: one report over one of its connections', () => {
  it('a report has a feed per connection, in the order its definition names them; none named is the default one', () => {
    const report = over(['gamma', 'acme', 'beta']);
    assert.deepEqual(feedsOf(report).map((f) => [f.reportId, f.connection]), [['transactions', 'gamma'], ['transactions', 'acme'], ['transactions', 'beta']]);
    for (const f of feedsOf(report)) assert.equal(f.report, report, 'each feed carries its definition');
    assert.deepEqual(feedsOf(over()).map((f) => f.connection), ['default']);
  });

  it('names a feed by report and connection, in words and as one key', () => {
    const feed = feedOf(over(['acme']), 'acme');
    assert.equal(feedLabel(feed), 'transactions over acme');
    assert.equal(feedId(feed), 'transactions/acme');
    assert.notEqual(feedId({ reportId: 'transactions', connection: 'beta' }), feedId(feed));
  });

  it('two feeds are the same only when report and connection both are', () => {
    const a = { reportId: 'transactions', connection: 'acme' };
    assert.equal(sameFeed(a, { ...a }), true);
    assert.equal(sameFeed(a, { ...a, connection: 'beta' }), false);
    assert.equal(sameFeed(a, { ...a, reportId: 'payouts' }), false);
  });
});
