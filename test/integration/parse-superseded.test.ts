import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Logger } from '@aws-lambda-powertools/logger';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { bucketNames } from '../../functions/core/naming.js';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { rawKey } from '../../functions/core/lake/s3-keys.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { putBytes } from '../../functions/aws/s3-streams.js';
import { parseRawObject } from '../../functions/parse-report/parse-object.js';
import { startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { REPORT_HEADER, generateTransactions, writeReportCsv } from '../../local/simulator/index.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * On a versioned raw bucket only the parse of the raw key's current version may write the window's table:
 * a late or duplicated event for an older version must not replace a newer load. s3rver has no versions,
 * so a middleware plays S3's part: HeadObject answers the "current" version the test sets, and the
 * version id is dropped from GetObject (s3rver would not know it).
 */

const buckets = bucketNames('superseded');
const window = windowAt(parseLocalDateTime('2026-11-20'), parseWindowSize('P1D'));
const key = rawKey(feedKey('transactions'), window, 'csv');

function playVersions(client: S3Client, current: () => string) {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { VersionId?: string };
      if (context.commandName === 'GetObjectCommand') delete input.VersionId;
      const out = await next(args);
      if (context.commandName === 'HeadObjectCommand') (out.output as { VersionId?: string }).VersionId = current();
      return out;
    },
    { step: 'initialize', name: 'play-versions' },
  );
}

describe('parse: a superseded raw version never writes the table', () => {
  let dir: string;
  let lake: LocalLake;
  let current = 'v1';
  const logger = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
  const deps = () => ({ s3: lake.client, curatedBucket: buckets.curated, catalog: loadCatalog(), environment: 'test', logger });
  const curated = async () =>
    ((await lake.client.send(new ListObjectsV2Command({ Bucket: buckets.curated }))).Contents ?? []).map((o) => o.Key!).sort();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'superseded-'));
    lake = await startLocalLake({ dir, buckets });
    playVersions(lake.client, () => current);
    const rows = generateTransactions('m', window, 30);
    await putBytes({ client: lake.client, bucket: buckets.raw, key, body: writeReportCsv(REPORT_HEADER, rows, { delimiter: ',', encoding: 'UTF-8' }), contentType: 'text/csv' });
    await lake.settled();
  });
  after(async () => {
    await lake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('an event for an older version is skipped before reading', async () => {
    current = 'v2';
    const result = await parseRawObject({ bucket: buckets.raw, key, versionId: 'v1' }, deps(), 'late-event');
    assert.equal(result.outcome, 'superseded');
    assert.deepEqual(await curated(), []);
  });

  it('a newer version stored while parsing: the table is not committed', async () => {
    current = 'v1';
    let heads = 0;
    lake.client.middlewareStack.add(
      (next, context) => async (args) => {
        // The second look (just before committing) sees the newer version.
        if (context.commandName === 'HeadObjectCommand' && ++heads === 2) current = 'v2';
        return next(args);
      },
      { step: 'initialize', name: 'newer-version-arrives', priority: 'high' },
    );
    const result = await parseRawObject({ bucket: buckets.raw, key, versionId: 'v1' }, deps(), 'racing-parse');
    lake.client.middlewareStack.remove('newer-version-arrives');
    assert.equal(result.outcome, 'superseded');
    assert.deepEqual(await curated(), [], 'no table, rejects or manifest from the superseded version');
  });

  it('the current version loads as usual', async () => {
    current = 'v2';
    const result = await parseRawObject({ bucket: buckets.raw, key, versionId: 'v2' }, deps(), 'current');
    assert.equal(result.outcome, 'loaded');
    assert.deepEqual(await curated(), [
      'manifests/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json',
      'rejected/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv',
      'tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet',
    ]);
  });
});
