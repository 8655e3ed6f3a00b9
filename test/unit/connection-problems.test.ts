import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectionProblems, refuseConnectionProblems } from '../../functions/core/connections/connection-problems.js';
import { ConfigurationError } from '../../functions/core/errors.js';

/**
 * The cross-check of report connections against environment files (connection-problems.ts), alone and fast: each
 * problem names the report's file, the report, the connection, the environment file and what to do.
 */

const payouts = { id: 'payouts', file: 'config/reports/payouts.json', connection: 'acme' };
const staging = { file: 'config/environments/staging.json', names: ['default', 'acme'] };
const production = { file: 'config/environments/production.json', names: ['default'] };
const bare = { file: 'config/environments/bare.json', names: [] };
const two = { file: 'config/environments/two.json', names: ['default', 'b2'] };

describe('connectionProblems', () => {
  it('a connection one environment lacks: names that file, what it has, and that every environment needs it', () => {
    assert.deepEqual(connectionProblems([payouts], [staging, production]), [
      'config/reports/payouts.json: report "payouts" uses connection "acme", which config/environments/production.json does not define (it has default). ' +
        'Every environment deploys every report: add the connection there too.',
    ]);
  });

  it('the connections an environment has are listed, "none" when it has none; each lacking environment is one problem, in file order', () => {
    const problems = connectionProblems([payouts], [two, staging, bare]);
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.ok(problems[0]!.includes('which config/environments/two.json does not define (it has default, b2).'), problems[0]);
    assert.ok(problems[1]!.includes('which config/environments/bare.json does not define (it has none).'), problems[1]);
  });

  it('a connection no environment defines is one problem naming every environment file, the connections each defines, and both fixes', () => {
    assert.deepEqual(connectionProblems([payouts], [production, bare]), [
      'config/reports/payouts.json: report "payouts" uses connection "acme", which no environment defines ' +
        '(config/environments/production.json defines default; config/environments/bare.json defines none). ' +
        'Add it under "connections" of each environment file (docs/deploy.md, "Connections"), or name a defined one.',
    ]);
  });

  it('a single environment that lacks the connection is "no environment", not "does not define"', () => {
    const problems = connectionProblems([payouts], [production]);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /which no environment defines \(config\/environments\/production\.json defines default\)\. Add it under "connections"/);
  });

  it('reports on a defined connection pass; the problems keep the reports\' order', () => {
    const refunds = { id: 'refunds', file: 'config/reports/refunds.json', connection: 'other' };
    const daily = { id: 'daily', file: 'config/reports/daily.json', connection: 'default' };
    const problems = connectionProblems([refunds, daily, payouts], [staging, production]);
    assert.deepEqual(problems.map((p) => p.slice(0, p.indexOf(':'))), ['config/reports/refunds.json', 'config/reports/payouts.json']);
  });

  it('no environment file checks nothing, even a report on an unknown connection', () => {
    assert.deepEqual(connectionProblems([payouts], []), []);
  });
});

describe('refuseConnectionProblems', () => {
  it('returns when there is no problem', () => {
    assert.equal(refuseConnectionProblems([payouts], [staging]), undefined);
  });

  it('one problem: a ConfigurationError that counts it in the singular, states the rule and lists it', () => {
    assert.throws(
      () => refuseConnectionProblems([payouts], [staging, production]),
      (e: unknown) =>
        e instanceof ConfigurationError &&
        e.message ===
          '1 report connection problem (every report\'s connection must be defined by every environment):\n' +
            'config/reports/payouts.json: report "payouts" uses connection "acme", which config/environments/production.json does not define (it has default). ' +
            'Every environment deploys every report: add the connection there too.',
    );
  });

  it('several problems: counted in the plural, one line each', () => {
    const refunds = { id: 'refunds', file: 'config/reports/refunds.json', connection: 'other' };
    assert.throws(
      () => refuseConnectionProblems([payouts, refunds], [production]),
      (e: unknown) => {
        assert.ok(e instanceof ConfigurationError);
        const lines = e.message.split('\n');
        assert.equal(lines[0], '2 report connection problems (every report\'s connection must be defined by every environment):');
        assert.equal(lines.length, 3);
        assert.match(lines[1]!, /^config\/reports\/payouts\.json: report "payouts" uses connection "acme"/);
        assert.match(lines[2]!, /^config\/reports\/refunds\.json: report "refunds" uses connection "other"/);
        return true;
      },
    );
  });
});
