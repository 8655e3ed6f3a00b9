import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { DeleteObjectCommand, DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';
import { earliestLoadedWindowDate, freshSince, isCompletedLoad, lookbackHours } from '../../functions/core/freshness/stale-reports.js';
import { bucketNames } from '../../functions/core/naming.js';
import { manifestKey } from '../../functions/core/lake/s3-keys.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { functionS3Client } from '../../functions/aws/env.js';
import { putJson } from '../../functions/aws/s3-streams.js';
import { handler } from '../../functions/check-freshness/handler.js';
import { LOCAL_LAKE_CREDENTIALS, startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';
import { captureJsonLines, dimensionSetOf, lambdaContext, metricPoints } from '../helpers/handler-harness.js';
import { feedKey } from '../helpers/feed-key.js';
import { injectS3Faults, s3AccessDenied } from '../helpers/s3-faults.js';

/**
 * The freshness check through its event shape (the Scheduler's input, `scheduledTime`): the catalog's reports, their
 * load manifests in the curated bucket of a real S3-protocol server (the local lake), and the ReportStale lines it
 * writes for the late ones. s3rver dates each manifest when it is written, now: a check "later" is a scheduledTime ahead.
 */

const saved = { ...process.env };
const buckets = bucketNames('freshness');
const HOUR = 3_600_000;
let dir: string;
let reportsDir: string;
let lake: LocalLake;

/** Three reports: the fixture's daily one, a 6-hour one, and a daily one over a second connection. */
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'freshness-'));
  reportsDir = join(dir, 'reports');
  await mkdir(reportsDir);
  const base = JSON.parse(await readFile(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(reportsDir, 'transactions.json'), JSON.stringify(base));
  await writeFile(join(reportsDir, 'hourly.json'), JSON.stringify({ ...base, id: 'hourly', window: 'PT6H' }));
  await writeFile(join(reportsDir, 'payouts.json'), JSON.stringify({ ...base, id: 'payouts', connection: 'payouts-eu' }));
  lake = await startLocalLake({ dir: join(dir, 'lake'), buckets });
});
after(async () => {
  process.env = saved;
  await lake.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  process.env = {
    ...saved,
    [REPORTS_DIR_VARIABLE]: reportsDir,
    PIPELINE_ENVIRONMENT: 'test',
    FRESHNESS_GRACE_HOURS: '6',
    CURATED_BUCKET: buckets.curated,
    AWS_REGION: 'eu-central-1',
    AWS_ENDPOINT_URL_S3: lake.endpoint,
    AWS_ACCESS_KEY_ID: LOCAL_LAKE_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_LAKE_CREDENTIALS.secretAccessKey,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const listed = await lake.client.send(new ListObjectsV2Command({ Bucket: buckets.curated }));
  const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key! }));
  if (keys.length) await lake.client.send(new DeleteObjectsCommand({ Bucket: buckets.curated, Delete: { Objects: keys } }));
});

/** A manifest of `report`'s window starting `start` (local), with the outcome given, written now; its key. */
async function manifest(report: string, start: string, outcome: string, window = 'P1D') {
  const key = manifestKey(feedKey(report, report === 'payouts' ? 'payouts-eu' : 'default'), windowAt(parseLocalDateTime(start), parseWindowSize(window)));
  await putJson({ client: lake.client, bucket: buckets.curated, key, value: { version: 1, outcome } });
  return key;
}

/** Today's local date in Moscow (the fixture's time zone) shifted by `days`, as the windows' dates are. */
function moscowDate(days: number): string {
  return new Date(Date.now() + 3 * HOUR + days * 24 * HOUR).toISOString().slice(0, 10);
}

const check = (requestId: string, hoursAhead?: number) =>
  captureJsonLines(() => handler(hoursAhead === undefined ? {} : { scheduledTime: new Date(Date.now() + hoursAhead * HOUR).toISOString() }, lambdaContext(requestId)));

describe('freshness check handler', () => {
  it('writes ReportStale for each report with no completed load within its window plus the grace, and nothing for the others', async () => {
    await manifest('transactions', moscowDate(-1), 'loaded');
    await manifest('hourly', `${moscowDate(0)}T00:00`, 'failed', 'PT6H');
    const run = await check('req-fresh-1');
    assert.equal(run.error, undefined, String(run.error));
    assert.deepEqual(run.result, {
      checked: 3,
      stale: [
        { report: 'hourly', connection: 'default', lookbackHours: 12 },
        { report: 'payouts', connection: 'payouts-eu', lookbackHours: 30 },
      ],
    });
    const stale = metricPoints(run.lines, 'ReportStale');
    assert.deepEqual(stale.map((p) => [p.value, p.dims.report, p.dims.connection, p.dims.environment, p.dims.service]), [
      [1, 'hourly', 'default', 'test', 'paynet-reports'],
      [1, 'payouts', 'payouts-eu', 'test', 'paynet-reports'],
    ]);
    // The dimension set the no-fresh-data alarms' SCHEMA names (lib/metrics.ts).
    for (const p of stale) assert.deepEqual(dimensionSetOf(p.dims).sort(), ['connection', 'environment', 'report', 'service']);
    const warning = run.lines.find((l) => l.level === 'WARN');
    assert.match(String(warning?.message), /no completed load within their window plus the grace/);
  });

  it('counts a PDF kept unparsed as a completed load, and a failed attempt written after a load does not undo it', async () => {
    await manifest('transactions', moscowDate(-1), 'not-parsed');
    await manifest('hourly', `${moscowDate(0)}T00:00`, 'loaded', 'PT6H');
    await manifest('hourly', `${moscowDate(0)}T06:00`, 'failed', 'PT6H');
    await manifest('payouts', moscowDate(-2), 'loaded');
    const run = await check('req-fresh-2');
    assert.deepEqual(run.result, { checked: 3, stale: [] });
    assert.deepEqual(metricPoints(run.lines, 'ReportStale'), [], 'all fresh: no series written');
    assert.match(String(run.lines.find((l) => l.level === 'INFO')?.message), /Every report loaded/);
  });

  it("judges the Scheduler's scheduledTime: a load is late once its window plus the grace has passed since it was written", async () => {
    await manifest('transactions', moscowDate(-1), 'loaded');
    await manifest('hourly', `${moscowDate(0)}T00:00`, 'loaded', 'PT6H');
    await manifest('payouts', moscowDate(-1), 'loaded');
    const ids = (r: unknown) => (r as { stale: Array<{ report: string }> }).stale.map((s) => s.report);
    assert.deepEqual(ids((await check('req-fresh-3', 11)).result), [], '11 h later: within every look-back');
    assert.deepEqual(ids((await check('req-fresh-4', 13)).result), ['hourly'], '13 h later: past the 6-hour report\'s 12 h');
    assert.deepEqual(ids((await check('req-fresh-5', 31)).result), ['hourly', 'payouts', 'transactions'], '31 h later: past the daily 30 h');
  });

  it('does not count a load of a window older than a scheduled run could fetch (a backfill of last year)', async () => {
    await manifest('transactions', '2025-11-20', 'loaded');
    const run = await check('req-fresh-6');
    assert.ok((run.result as { stale: Array<{ report: string }> }).stale.some((s) => s.report === 'transactions'));
  });

  it('does not count a manifest removed between the listing and the read, though S3 answers its GET with 403 (the role may not list the key)', async () => {
    const vanishing = await manifest('transactions', moscowDate(-1), 'loaded');
    await manifest('hourly', `${moscowDate(0)}T00:00`, 'loaded', 'PT6H');
    await manifest('payouts', moscowDate(-1), 'loaded');
    // Listed, then removed; its GET answers as S3 does for a missing key without s3:ListBucket on it: 403, not 404.
    const faults = injectS3Faults(functionS3Client(), [
      {
        command: 'GetObjectCommand',
        key: (k) => k === vanishing,
        nth: 1,
        before: async () => void (await lake.client.send(new DeleteObjectCommand({ Bucket: buckets.curated, Key: vanishing }))),
        error: s3AccessDenied,
      },
    ]);
    try {
      const run = await check('req-fresh-9');
      assert.equal(run.error, undefined, String(run.error));
      assert.deepEqual(run.result, { checked: 3, stale: [{ report: 'transactions', connection: 'default', lookbackHours: 30 }] });
      assert.equal(faults.injected, 1);
      // The 403 was told from a refusal by listing the key itself: gone, so not a load.
      assert.deepEqual(faults.commandsFor((k) => k === vanishing), ['GetObjectCommand']);
      assert.ok(faults.sent.some((c) => c.command === 'ListObjectsV2Command'));
    } finally {
      faults.remove();
    }
  });

  it('fails, naming the manifest, when a manifest that is still there is refused (403): a permission fault is not a late report', async () => {
    await manifest('transactions', moscowDate(-1), 'loaded');
    await manifest('hourly', `${moscowDate(0)}T00:00`, 'loaded', 'PT6H');
    await manifest('payouts', moscowDate(-1), 'loaded');
    // Every read refused, as with the role's s3:GetObject or the key's kms:Decrypt taken away by hand.
    const faults = injectS3Faults(functionS3Client(), [{ command: 'GetObjectCommand', nth: 1, times: 1_000, error: s3AccessDenied }]);
    try {
      const run = await check('req-fresh-10');
      assert.equal((run.error as { code?: string }).code, 'ConfigurationError', String(run.error));
      assert.match(String(run.error), /s3:\/\/paynet-reports-freshness-curated[^ ]*\/manifests\/[a-z]+\/.* was refused \(AccessDenied\) although it exists/);
      assert.match(String(run.error), /Redeploy the stack/);
      assert.equal(run.result, undefined, 'no verdict on any report');
    } finally {
      faults.remove();
    }
  });

  it('fails with a typed error naming the variable when the grace is not set, or the scheduled time is not a time', async () => {
    delete process.env.FRESHNESS_GRACE_HOURS;
    const run = await check('req-fresh-7');
    assert.equal((run.error as { code?: string }).code, 'ConfigurationError');
    assert.match(String(run.error), /FRESHNESS_GRACE_HOURS/);
    process.env.FRESHNESS_GRACE_HOURS = '6';
    const bad = await captureJsonLines(() => handler({ scheduledTime: 'yesterday' }, lambdaContext('req-fresh-8')));
    assert.equal((bad.error as { code?: string }).code, 'ConfigurationError');
    assert.match(String(bad.error), /scheduledTime is "yesterday"/);
  });
});

describe('stale reports', () => {
  it('looks back the window plus the grace', () => {
    assert.equal(lookbackHours('P1D', 6), 30);
    assert.equal(lookbackHours('PT1H', 2), 3);
    assert.equal(lookbackHours('P7D', 48), 216, 'no seven-day cap: the check reads manifests, not an alarm period');
    const report = { reportId: 'a', connection: 'x', window: 'PT6H', lookback: 0, timeZone: 'UTC' };
    assert.equal(freshSince(report, 2, new Date('2026-11-20T12:00:00Z')).toISOString(), '2026-11-20T04:00:00.000Z');
  });

  it("lists from the earliest window a load since then can have: its look-back windows, a day's slack, the report's own date", () => {
    const since = new Date('2026-11-20T03:00:00Z');
    const hourly = { reportId: 'a', connection: 'x', window: 'PT1H', lookback: 0, timeZone: 'UTC' };
    assert.equal(earliestLoadedWindowDate(hourly, since), '2026-11-19', '3:00 less an hour and a day');
    assert.equal(earliestLoadedWindowDate({ ...hourly, timeZone: 'America/Los_Angeles' }, since), '2026-11-18', '18:00 on the 18th in Los Angeles');
    assert.equal(earliestLoadedWindowDate({ ...hourly, window: 'P1D', lookback: 2, timeZone: 'Europe/Moscow' }, since), '2026-11-16', 'three days and a day back');
  });

  it('calls a load completed when it converted a CSV or kept a PDF, never when it failed', () => {
    assert.deepEqual((['loaded', 'not-parsed', 'failed', undefined] as const).map(isCompletedLoad), [true, true, false, false]);
  });
});
