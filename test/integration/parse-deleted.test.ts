import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Logger } from '@aws-lambda-powertools/logger';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { bucketNames } from '../../functions/core/naming.js';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { rawKey } from '../../functions/core/lake/s3-keys.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { putBytes } from '../../functions/aws/s3-streams.js';
import type { ParseResult } from '../../functions/parse-report/parse-object.js';
import { handleParseBatch } from '../../functions/parse-report/sqs-batch.js';
import { startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { objectCreatedRecord, sqsEventOf } from '../../local/lake/sqs-message.js';
import { REPORT_HEADER, generateTransactions, writeReportCsv } from '../../local/simulator/index.js';
import { captureJsonLines } from '../helpers/handler-harness.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * A raw file deleted before its S3 event is handled (someone cleaned up a window, a late redelivery) is skipped
 * with a log line: no failed manifest, and the message is not failed into the dead-letter queue. Real S3 protocol
 * (s3rver): HEAD and GET of the deleted key answer 404, as AWS does for a role allowed s3:ListBucket.
 */

const buckets = bucketNames('deleted');
const window = windowAt(parseLocalDateTime('2026-11-20'), parseWindowSize('P1D'));
const key = rawKey(feedKey('transactions'), window, 'csv');

describe('parse: a deleted raw key is skipped', () => {
  let dir: string;
  let lake: LocalLake;
  const curated = async () =>
    ((await lake.client.send(new ListObjectsV2Command({ Bucket: buckets.curated }))).Contents ?? []).map((o) => o.Key!);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'deleted-'));
    lake = await startLocalLake({ dir, buckets });
    const rows = generateTransactions('m', window, 5);
    await putBytes({ client: lake.client, bucket: buckets.raw, key, body: writeReportCsv(REPORT_HEADER, rows, { delimiter: ',', encoding: 'UTF-8' }), contentType: 'text/csv' });
    await lake.settled();
    await lake.client.send(new DeleteObjectCommand({ Bucket: buckets.raw, Key: key }));
  });
  after(async () => {
    await lake.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const versionId of [undefined, 'v1']) {
    it(`succeeds the message without writing anything (event ${versionId ? 'with' : 'without'} a version id)`, async () => {
      const results: ParseResult[] = [];
      const deps = { s3: lake.client, curatedBucket: buckets.curated, catalog: loadCatalog(), environment: 'test', logger: new Logger({ serviceName: 'test' }) };
      const event = sqsEventOf([objectCreatedRecord({ bucket: buckets.raw, key, size: 10, eTag: 'x', versionId })]);
      const captured = await captureJsonLines(() => handleParseBatch(event, deps, 'deleted-run', { onResult: (r) => results.push(r) }));
      assert.equal(captured.error, undefined);
      assert.deepEqual(captured.result, { batchItemFailures: [] }, 'not failed towards the dead-letter queue');
      assert.deepEqual(results.map((r) => r.outcome), ['deleted']);
      const line = captured.lines.find((l) => /deleted before it was parsed/.test(String(l.message)));
      assert.ok(line, `a log line says the file was skipped: ${captured.text}`);
      assert.equal(line.level, 'INFO');
      assert.equal(line.sourceKey, key);
      assert.deepEqual(await curated(), [], 'no table, rejects or manifest');
    });
  }
});
