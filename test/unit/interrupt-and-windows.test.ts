import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigurationError } from '../../functions/core/errors.js';
import { manifestKey, tableKey } from '../../functions/core/lake/s3-keys.js';
import { parseWindowSize, windowAt, windowsBetween, type ReportWindow } from '../../functions/core/time/window.js';
import { interruptedLines, type WindowReport } from '../../local/pipeline/backfill-runner.js';
import { refuseIncompleteWindows } from '../../local/pipeline/incomplete-window.js';
import { isWholeParquet, removePartialTables } from '../../local/pipeline/interrupt.js';
import { openDuckDb } from '../helpers/duckdb.js';
import { feedKey } from '../helpers/feed-key.js';

const P1D = parseWindowSize('P1D');
const day = (d: number): ReportWindow => windowAt({ year: 2026, month: 11, day: d, hour: 0, minute: 0, second: 0 }, P1D);
/** A report away from UTC, so "today" differs from the UTC date near midnight. */
const report = { id: 'fixture_report', schedule: { cron: 'cron(0 3 * * ? *)', timeZone: 'Asia/Tokyo' } };

describe('incomplete windows', () => {
  // 2026-11-22T16:30Z is 2026-11-23 01:30 in Tokyo: the 22nd has ended there, the 23rd has not.
  const now = new Date('2026-11-22T16:30:00Z');

  it('a window that has ended in the report\'s zone loads; one that has not is refused with the --allow-incomplete hint', () => {
    refuseIncompleteWindows(report, [day(21), day(22)], { now });
    assert.throws(
      () => refuseIncompleteWindows(report, [day(22), day(23)], { now }),
      (e: unknown) =>
        e instanceof ConfigurationError &&
        /window 2026-11-23T00:00:00 of report "fixture_report" is not complete yet: .* ends at 2026-11-24T00:00:00 and it is 2026-11-23T01:30:00 in Asia\/Tokyo/.test(e.message) &&
        /--allow-incomplete/.test(e.message),
    );
    assert.throws(() => refuseIncompleteWindows(report, windowsBetween(day(20).start, day(26).start, P1D), { now }), /3 windows, from 2026-11-23T00:00:00/);
    refuseIncompleteWindows(report, [day(23), day(24)], { now, allowIncomplete: true });
  });

  it('a window ending exactly now is complete', () => {
    refuseIncompleteWindows(report, [day(22)], { now: new Date('2026-11-22T15:00:00Z') });
    assert.throws(() => refuseIncompleteWindows(report, [day(22)], { now: new Date('2026-11-22T14:59:59Z') }), ConfigurationError);
  });
});

describe('after an interrupt', () => {
  let lake: string;
  const bucket = 'curated';
  const objectPath = (key: string) => join(lake, bucket, `${key}._S3rver_object`);

  before(async () => {
    lake = await mkdtemp(join(tmpdir(), 'interrupt-unit-'));
    const db = await openDuckDb();
    try {
      for (const d of [20, 21]) {
        const path = objectPath(tableKey(feedKey(report.id), day(d)));
        await mkdir(dirname(path), { recursive: true });
        await db.query(`COPY (SELECT range AS id, 'row ' || range AS name FROM range(5000)) TO '${path}' (FORMAT parquet)`);
        await writeFile(`${path}.md5`, 'x');
        const manifest = objectPath(manifestKey(feedKey(report.id), day(d)));
        await mkdir(dirname(manifest), { recursive: true });
        await writeFile(manifest, JSON.stringify({ outcome: 'loaded' }));
      }
    } finally {
      db.close();
    }
    // The 21st was being rewritten when Ctrl-C came: s3rver had written part of the new file.
    const cut = objectPath(tableKey(feedKey(report.id), day(21)));
    await truncate(cut, Math.floor((await readFile(cut)).length / 2));
  });
  after(async () => rm(lake, { recursive: true, force: true }));

  it('removes a half-written table file and its manifest (so a re-run loads it); a whole file stays', () => {
    assert.equal(isWholeParquet(objectPath(tableKey(feedKey(report.id), day(20)))), true);
    assert.equal(isWholeParquet(objectPath(tableKey(feedKey(report.id), day(21)))), false);
    const removed = removePartialTables(lake, bucket, feedKey(report.id), [day(20), day(21), day(22)]);
    assert.deepEqual(removed, [day(21)]);
    assert.equal(existsSync(objectPath(tableKey(feedKey(report.id), day(21)))), false);
    assert.equal(existsSync(`${objectPath(tableKey(feedKey(report.id), day(21)))}.md5`), false);
    assert.equal(existsSync(objectPath(manifestKey(feedKey(report.id), day(21)))), false);
    assert.equal(existsSync(objectPath(tableKey(feedKey(report.id), day(20)))), true);
    assert.equal(existsSync(objectPath(manifestKey(feedKey(report.id), day(20)))), true);
  });

  it('says what a deployed backfill leaves running and where to carry on', () => {
    const ended: WindowReport[] = [
      { window: day(1), status: 'done', ms: 1 },
      { window: day(2), status: 'failed', code: 'GatewayUnavailable', message: 'x', ms: 1 },
    ];
    const lines = interruptedLines({ windows: [1, 2, 3, 4, 5].map(day), ended, inFlight: [day(3)], abandoned: [], deployed: true });
    assert.match(lines.join('\n'), /Interrupted: 5 window\(s\) asked: 1 done, 0 skipped, 1 failed, 1 stopped in flight \(2026-11-03\), 2 not started\./);
    assert.match(lines.join('\n'), /The 1 invocation\(s\) in flight carry on in AWS/);
    assert.match(lines.join('\n'), /re-run it with --from 2026-11-02 /);
  });
});
