import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { resumeCommand } from '../../local/run/resume.js';
import type { RunItem } from '../../local/run/run-plan.js';

/** The command an interrupted `npm start` prints: one, for every feed and window not done, with the flags that shaped the run. */

const report = (id: string, connections: string[], window = 'P1D') => ({ id, connections, window }) as unknown as RunItem['report'];
const day = (r: RunItem['report'], date: string, connection = r.connections[0]!): RunItem => ({
  feed: { reportId: r.id, connection, report: r },
  report: r,
  window: windowAt(parseLocalDateTime(date), parseWindowSize(r.window)),
});

describe('the resume command of an interrupted run', () => {
  const alpha = report('alpha', ['provider-a']);
  const beta = report('beta', ['provider-b']);
  const hourly = report('hourly', ['default'], 'PT1H');
  const shared = report('shared', ['acme', 'beta', 'gamma']);

  it('reports left over the same range: one command; the flags of their connections only', () => {
    const rest = [day(alpha, '2026-11-20'), day(alpha, '2026-11-21'), day(beta, '2026-11-20'), day(beta, '2026-11-21')];
    const gateways = [
      { connection: 'provider-a', url: 'https://a.example/rpt-engine', secretFile: 'a.json' },
      { connection: 'default', url: 'https://d.example/rpt-engine', secretFile: 'my secret.json' },
    ];
    assert.equal(
      resumeCommand(rest, { gateways, lake: '.lake', concurrency: 4 }),
      'npm start -- --report alpha --report beta --from 2026-11-20 --to 2026-11-22 --gateway-url provider-a=https://a.example/rpt-engine --secret-file provider-a=a.json --concurrency 4',
    );
  });

  it('reports left over different ranges still get one command, over the range covering them all; days as dates', () => {
    const rest = [day(alpha, '2026-11-21'), day(hourly, '2026-11-20T05:00')];
    const gateways = [{ connection: 'default', url: 'https://d.example/rpt-engine', secretFile: 'my secret.json' }];
    assert.equal(
      resumeCommand(rest, { gateways, lake: '.lake', allowIncomplete: true }),
      "npm start -- --report alpha --report hourly --from 2026-11-20 --to 2026-11-22 --gateway-url https://d.example/rpt-engine --secret-file 'my secret.json' --allow-incomplete",
    );
  });

  it('names --connection only when some connection of the reports left had nothing left', () => {
    const all = [day(shared, '2026-11-20', 'acme'), day(shared, '2026-11-20', 'beta'), day(shared, '2026-11-20', 'gamma')];
    assert.equal(resumeCommand(all, { gateways: [], lake: '.lake' }), 'npm start -- --report shared --from 2026-11-20 --to 2026-11-21');
    assert.equal(
      resumeCommand(all.slice(1), { gateways: [], lake: '.lake' }),
      'npm start -- --report shared --connection beta --connection gamma --from 2026-11-20 --to 2026-11-21',
    );
  });
});
