import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { readReportSources, REPORTS_DIR } from '../../functions/core/definitions/catalog-files.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { refuseUnprojectedWindows } from '../../functions/core/lake/partition-projection.js';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { tableKey } from '../../functions/core/lake/s3-keys.js';
import { parseWindowSize, wallClockIn, windowAt, windowStartOf, type ReportWindow } from '../../functions/core/time/window.js';
import { planWindows } from '../../functions/fetch-report/plan-windows.js';
import { Catalog } from '../../lib/constructs/catalog.js';
import { dateProjection, type DateProjection } from '../helpers/athena-projection.js';
import { emptyStack, logicalIdOf, resourcesOf, type Cfn } from './helpers.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * Every file the pipeline can write is visible to Athena at the moment it is written, at any hour: the Glue tables
 * the stack synthesizes are read by an emulation of Athena's date projection written from AWS's documentation
 * (test/helpers/athena-projection.ts), not by our own module, and checked against the keys the parse writes.
 */

const dir = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const catalogOf = (path: string) => ReportCatalog.fromSources(readReportSources(path)).reports;

/** The shipped fixture definition, turned into a sub-daily report in an extreme zone. */
function subDaily(id: string, window: 'PT1H' | 'PT6H', timeZone: string): ReportDefinition {
  const raw = JSON.parse(readFileSync(dir('../fixtures/reports/transactions.json'), 'utf8')) as Record<string, unknown>;
  const cron = window === 'PT1H' ? 'cron(5 * * * ? *)' : 'cron(5 0/6 * * ? *)';
  return parseReportDefinition({ ...raw, id, window, lookback: 3, schedule: { cron, timeZone } }, `${id} (test)`);
}

const groups: Array<[string, ReportDefinition[]]> = [
  ['shipped', catalogOf(REPORTS_DIR)],
  ['fixtures', catalogOf(dir('../fixtures/reports/'))],
  ['shapes', catalogOf(dir('../fixtures/report-shapes/'))],
  [
    'sub-daily at the ends of the clock',
    [
      subDaily('hourly_kiritimati', 'PT1H', 'Pacific/Kiritimati'), // UTC+14
      subDaily('six_hourly_kiritimati', 'PT6H', 'Pacific/Kiritimati'),
      subDaily('hourly_baker', 'PT1H', 'Etc/GMT+12'), // UTC-12
      subDaily('six_hourly_baker', 'PT6H', 'Etc/GMT+12'),
      subDaily('hourly_tonga', 'PT1H', 'Pacific/Tongatapu'), // UTC+13
    ],
  ],
];

/** The tables one Catalog synthesizes, each as Athena would read it, with the bucket's name rendered as "curated". */
function synthesizeProjections(reports: ReportDefinition[], projectionStart?: string): Map<string, DateProjection> {
  const stack = emptyStack();
  const key = new kms.Key(stack, 'Key');
  const curated = new s3.Bucket(stack, 'Curated', { encryptionKey: key });
  new Catalog(stack, 'Catalog', {
    environment: 'test',
    reports,
    curatedBucket: curated,
    resultsBucket: new s3.Bucket(stack, 'Results', { encryptionKey: key }),
    key,
    bytesScannedCutoffPerQuery: 10_000_000,
    removalPolicy: RemovalPolicy.DESTROY,
    projectionStart,
  });
  const curatedId = logicalIdOf(stack, curated);
  const render = (v: Cfn): string =>
    typeof v === 'string' ? v : v?.Ref === curatedId ? 'curated' : v?.['Fn::Join'] ? (v['Fn::Join'][1] as Cfn[]).map(render).join(v['Fn::Join'][0]) : JSON.stringify(v);
  const out = new Map<string, DateProjection>();
  for (const table of Object.values(resourcesOf(Template.fromStack(stack), 'AWS::Glue::Table'))) {
    const input = (table.Properties as Cfn).TableInput;
    const parameters = Object.fromEntries(Object.entries(input.Parameters as Record<string, Cfn>).map(([k, v]) => [k, render(v)]));
    out.set(input.Name, dateProjection(parameters, 'dt', parameters['storage.location.template']!));
  }
  return out;
}

/**
 * The windows a load can write at `now`: a scheduled run's (the last complete window and its lookback, as the fetch
 * function plans them) and the window still in progress, which `run --allow-incomplete` loads.
 */
function windowsWritableAt(report: ReportDefinition, now: Date): ReportWindow[] {
  const size = parseWindowSize(report.window);
  const scheduled = planWindows({ kind: 'scheduled', reportId: report.id, scheduledTime: now }, report, now).windows;
  const current = windowAt(windowStartOf(wallClockIn(now, report.schedule.timeZone), size), size);
  return [...scheduled, current];
}

/** Every hour of two days (one in each half of the year, so daylight-saving zones are seen both ways), at :00 and :59. */
const INSTANTS = ['2026-01-15', '2026-07-15'].flatMap((day) =>
  Array.from({ length: 24 }, (_, h) => [0, 59].map((m) => new Date(`${day}T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00Z`))).flat(),
);

describe('partition projection, read as Athena documents it', () => {
  for (const [group, reports] of groups) {
    it(`shows every window a load can write, the moment it is written, at every hour (${group}: ${reports.map((r) => r.id).join(', ')})`, () => {
      assert.ok(reports.length > 0);
      const projections = synthesizeProjections(reports);
      let checked = 0;
      for (const now of INSTANTS) {
        for (const report of reports) {
          const projection = projections.get(report.id)!;
          const visible = new Set(projection.values(now));
          for (const window of windowsWritableAt(report, now)) {
            const key = tableKey(feedKey(report.id), window);
            const dt = /\/dt=([^/]+)\//.exec(key)![1]!;
            assert.ok(visible.has(dt), `${report.id} at ${now.toISOString()}: ${key} has dt=${dt}, which Athena does not enumerate (last: ${[...visible].at(-1)})`);
            // Athena reads that partition where the parse put the file.
            assert.ok(`s3://curated/${key}`.startsWith(projection.location(dt).replace('${connection}', 'default')), `${projection.location(dt)} does not hold ${key}`);
            // The refusal agrees: nothing a load writes is refused.
            refuseUnprojectedWindows(report.id, [window], { start: '2020-01-01', source: 'test' }, now);
            checked++;
          }
        }
      }
      assert.ok(checked >= INSTANTS.length * reports.length * 2);
    });
  }

  it('would have hidden the sub-daily windows east of UTC with the old range (2020-01-01,NOW): the emulation can fail', () => {
    const [hourly] = groups[3]![1];
    const old = dateProjection(
      { 'projection.enabled': 'true', 'projection.dt.type': 'date', 'projection.dt.format': 'yyyy-MM-dd', 'projection.dt.range': '2020-01-01,NOW' },
      'dt',
      's3://curated/tables/x/connection=default/dt=${dt}/',
    );
    // 12:30 UTC is 02:30 the next day in Kiritimati: the window just ended starts on a date UTC has not reached.
    const now = new Date('2026-07-15T12:30:00Z');
    const dts = windowsWritableAt(hourly!, now).map((w) => /\/dt=([^/]+)\//.exec(tableKey(feedKey(hourly!.id), w))![1]!);
    assert.ok(dts.includes('2026-07-16'));
    assert.ok(!old.values(now).includes('2026-07-16'));
  });

  it("refuses exactly the dates Athena would not show, before the configured start or past today's end, naming the setting", () => {
    const [report] = groups[1]![1];
    const projection = synthesizeProjections([report!], '2024-02-27').get(report!.id)!;
    const now = new Date('2026-07-15T23:30:00Z');
    const visible = new Set(projection.values(now));
    assert.equal([...visible][0], '2024-02-27');
    const setting = { start: '2024-02-27', source: 'athena.projectionStart in config/environments/production.json' };
    const day = (d: string) => windowAt({ year: +d.slice(0, 4), month: +d.slice(5, 7), day: +d.slice(8, 10), hour: 0, minute: 0, second: 0 }, parseWindowSize('P1D'));
    const dates = ['2024-02-25', '2024-02-26', '2024-02-27', '2024-02-28', '2026-07-15', '2026-07-16', '2026-07-17', '2026-07-18'];
    for (const d of dates) {
      const refused = (() => {
        try {
          refuseUnprojectedWindows(report!.id, [day(d)], setting, now);
          return undefined;
        } catch (e) {
          assert.ok(e instanceof ConfigurationError);
          return e.message;
        }
      })();
      assert.equal(refused === undefined, visible.has(d), `${d}: refused=${refused !== undefined}, projected=${visible.has(d)}`);
      if (refused && d < '2025') assert.match(refused, /^The window 2024-02-2\d of report "transactions" is before 2024-02-27, .*athena\.projectionStart in config\/environments\/production\.json/);
      if (refused) assert.doesNotMatch(refused, /\n/, 'one line');
    }
  });
});
