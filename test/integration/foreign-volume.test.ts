import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { bucketNames } from '../../functions/core/naming.js';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { METRIC_NAMESPACE } from '../../functions/aws/metrics.js';
import { headerLine } from '../../functions/core/gateway/answer.js';
import { manifestKey } from '../../functions/core/lake/s3-keys.js';
import { formatWithPattern, parseLocalDateTime, parseWindowSize, windowAt, type LocalDateTime } from '../../functions/core/time/window.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { SERVICE_NAME } from '../../lib/metrics.js';
import { runLocal, type RunSummary } from '../../local/cli/run.js';
import { LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { startLocalPipeline } from '../../local/pipeline/pipeline.js';
import { captureJsonLines, metricPoints } from '../helpers/handler-harness.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * The volume check as a new user meets it, against a gateway that is not this project's simulator: a
 * hand-written server with its own weekly rhythm (weekdays busy, Saturdays quieter, Sundays quiet, every day
 * a little different), five weeks of daily windows through `npm start`, and one Wednesday on which the
 * provider sends a tenth of its rows. Only that day is flagged: in the run's output and in its manifest,
 * and its alarm's metric is published; the loads all succeed.
 */

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const report = loadCatalog().get('transactions');
const FROM = '2026-10-05'; // a Monday
const TO = '2026-11-09'; // five weeks later, exclusive
const DROPPED = '2026-11-04'; // a Wednesday of the fifth week
const WEEKDAY_ROWS = [60, 400, 400, 400, 400, 400, 150]; // Sunday first

/** This gateway's own volume: its weekday's usual, ±15% from day to day (deterministic), a tenth on the dropped day. */
function rowsOn(date: LocalDateTime): number {
  const iso = formatWithPattern(date, 'yyyy-MM-dd');
  const weekday = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
  const jitter = 0.85 + (createHash('sha256').update(iso).digest()[0]! / 255) * 0.3;
  const usual = Math.round(WEEKDAY_ROWS[weekday]! * jitter);
  return iso === DROPPED ? Math.round(usual / 10) : usual;
}

function reportFor(start: LocalDateTime): string {
  const n = rowsOn(start);
  const day = formatWithPattern(start, 'yyyyMMdd');
  const rows = Array.from({ length: n }, (_, i) => [
    'Foreign Shop',
    `${day}${String(i).padStart(6, '0')}`,
    `F-${i}`,
    `${formatWithPattern(start, 'yyyy-MM-dd')} ${String(Math.floor((i * 24) / n)).padStart(2, '0')}:00:00`,
    `${(i % 97) + 1}.50`,
    'EUR',
    'SALE',
    '',
    formatWithPattern(start, 'dd.MM.yyyy'),
  ]);
  return [report.columns.map((c) => c.header), ...rows].map((r) => headerLine(r, ',')).join('\r\n') + '\r\n';
}

describe('the volume check against a foreign gateway with its own weekly rhythm', () => {
  let dir: string;
  let server: http.Server;
  let url: string;
  let secretFile: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'foreign-volume-'));
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        // It reads the window from the body the definition's template wrote, as the provider's back end would.
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { inputReportParameters: Array<{ name: string; value: string }> };
        const from = body.inputReportParameters.find((p) => p.name === 'dateFrom')!.value;
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(reportFor(parseLocalDateTime(from.slice(0, 10))));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/foreign/services/v2/rpt-engine`;
    secretFile = join(dir, 'secret.json');
    await writeFile(secretFile, JSON.stringify({ login: 'foreign-merchant', controlKey: 'foreign-key' }));
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
    process.exitCode = undefined;
  });

  const lake = () => join(dir, 'lake');
  const manifestOf = async (date: string) => {
    const key = manifestKey(feedKey(report.id), { start: parseLocalDateTime(date) });
    return JSON.parse(await readFile(join(lake(), bucketNames(LOCAL_ENVIRONMENT).curated, `${key}._S3rver_object`), 'utf8')) as LoadManifest;
  };

  let summary: RunSummary;
  let out = '';
  it('five weeks load with one finding: the day with a tenth of its rows, said on its line and on a line of its own; exit code 0', async () => {
    const lines: string[] = [];
    process.exitCode = undefined;
    summary = await runLocal({ report: report.id, from: FROM, to: TO, lake: lake(), gatewayUrl: url, secretFile }, (l) => void lines.push(l));
    out = lines.join('\n');
    assert.deepEqual([summary.asked, summary.loaded, summary.failedWindows, summary.flaggedWindows], [35, 35, 0, 1], out);
    assert.notEqual(process.exitCode, 1, 'the data loaded: a finding is not a failure');

    const flagged = out.split('\n').filter((l) => / FLAGGED$/.test(l));
    assert.deepEqual(flagged.map((l) => l.trim().slice(0, 10)), [DROPPED]);
    assert.match(out, new RegExp(`^ {2}${DROPPED} .* FLAGGED\\n {6}volume low: \\d+ rows, expected [\\d,]+-[\\d,]+ from the last 4 Wednesdays$`, 'm'));
    assert.match(out, /^Data checks: 1 window\(s\) FLAGGED of 35 loaded; 21 not judged \(the first: too little history: 0 of the last 4 Mondays loaded, 3 needed\)\. The data loaded as sent/m);
    assert.match(out, new RegExp(`^ {2}${DROPPED} {2}volume low: `, 'm'));
  });

  it('a normal weekend after busy weekdays is not flagged: it is compared with earlier weekends', () => {
    for (const date of ['2026-10-31', '2026-11-01', '2026-11-07', '2026-11-08']) assert.match(out, new RegExp(`^ {2}${date} .* ok$`, 'm'), date);
  });

  it('the manifest records the finding with its value, band and history, and the run before it as not judged', async () => {
    const m = await manifestOf(DROPPED);
    assert.equal(m.outcome, 'loaded');
    const volume = m.checks!.find((c) => c.check === 'volume-rows')!;
    assert.equal(volume.outcome, 'anomaly');
    assert.equal(volume.observed, rowsOn(parseLocalDateTime(DROPPED)));
    assert.deepEqual(volume.history!.map((h) => h.window), ['2026-10-28T00:00:00', '2026-10-21T00:00:00', '2026-10-14T00:00:00', '2026-10-07T00:00:00']);
    assert.ok(Number(volume.observed) < Number(volume.expected!.low), JSON.stringify(volume));
    assert.deepEqual(m.checks!.find((c) => c.check === 'duplicate-keys'), { check: 'duplicate-keys', outcome: 'pass', observed: 0, expected: { low: 0, high: 0 }, message: 'no repeated transaction_id' });
    const first = await manifestOf(FROM);
    assert.equal(first.checks![0]!.outcome, 'skipped');
    assert.match(first.checks![0]!.message, /too little history: 0 of the last 4 Mondays loaded, 3 needed/);
  });

  it('re-loading the window judges it again and publishes the metric its alarm watches', async () => {
    const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: SERVICE_NAME });
    const p = await startLocalPipeline({ lakeDir: lake(), gatewayUrl: url, secret: { login: 'foreign-merchant', controlKey: 'foreign-key' }, metrics });
    try {
      const run = await captureJsonLines(() => p.runWindow(feedKey(report.id), windowAt(parseLocalDateTime(DROPPED), parseWindowSize(report.window))));
      assert.equal(run.result?.status, 'loaded');
      assert.deepEqual(metricPoints(run.lines, 'QualityFindings').map((pt) => [pt.value, pt.dims.report, pt.dims.environment, pt.dims.service]), [
        [1, report.id, LOCAL_ENVIRONMENT, SERVICE_NAME],
      ]);
      assert.deepEqual(metricPoints(run.lines, 'DuplicateKeys'), [], 'no repeated keys: no series');
      const again = await captureJsonLines(() => p.runWindow(feedKey(report.id), windowAt(parseLocalDateTime('2026-11-05'), parseWindowSize(report.window))));
      assert.deepEqual(metricPoints(again.lines, 'QualityFindings'), [], 'a normal day keeps no series of findings alive');
    } finally {
      await p.close();
    }
  });
});
