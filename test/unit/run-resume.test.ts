import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { resumeCommands } from '../../local/run/resume.js';
import type { RunItem } from '../../local/run/run-plan.js';

/** The command an interrupted `npm start` prints: the reports and windows not done, with the flags that shaped the run. */

const report = (id: string, connection: string, window = 'P1D') => ({ id, connection, window }) as RunItem['report'];
const day = (r: RunItem['report'], date: string): RunItem => ({ report: r, window: windowAt(parseLocalDateTime(date), parseWindowSize(r.window)) });

describe('the resume command of an interrupted run', () => {
  const alpha = report('alpha', 'provider-a');
  const beta = report('beta', 'provider-b');
  const hourly = report('hourly', 'default', 'PT1H');

  it('reports left over the same range share one command; the flags of their connections only', () => {
    const rest = [day(alpha, '2026-11-20'), day(alpha, '2026-11-21'), day(beta, '2026-11-20'), day(beta, '2026-11-21')];
    const gateways = [
      { connection: 'provider-a', url: 'https://a.example/rpt-engine', secretFile: 'a.json' },
      { connection: 'default', url: 'https://d.example/rpt-engine', secretFile: 'my secret.json' },
    ];
    assert.deepEqual(resumeCommands(rest, { gateways, lake: '.lake', concurrency: 4 }), [
      'npm start -- --report alpha --report beta --from 2026-11-20 --to 2026-11-22 --gateway-url provider-a=https://a.example/rpt-engine --secret-file provider-a=a.json --concurrency 4',
    ]);
  });

  it('reports left over different ranges get a command each; the plain forms name the default connection', () => {
    const rest = [day(alpha, '2026-11-21'), day(hourly, '2026-11-20T05:00')];
    const gateways = [{ connection: 'default', url: 'https://d.example/rpt-engine', secretFile: 'my secret.json' }];
    assert.deepEqual(resumeCommands(rest, { gateways, lake: '.lake', allowIncomplete: true }), [
      "npm start -- --report alpha --from 2026-11-21 --to 2026-11-22 --gateway-url https://d.example/rpt-engine --secret-file 'my secret.json' --allow-incomplete",
      "npm start -- --report hourly --from 2026-11-20T05:00:00 --to 2026-11-20T06:00:00 --gateway-url https://d.example/rpt-engine --secret-file 'my secret.json' --allow-incomplete",
    ]);
  });
});
