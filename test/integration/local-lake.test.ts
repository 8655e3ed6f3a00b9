import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { AbortMultipartUploadCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3EventRecord } from 'aws-lambda';
import { bucketNames } from '../../functions/core/naming.js';
import { decodeS3EventKey, parseRawKey, rawKey, tableKey } from '../../functions/core/lake/s3-keys.js';
import { parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { MultipartSink } from '../../functions/aws/multipart-sink.js';
import { openObjectStream, putJson } from '../../functions/aws/s3-streams.js';
import { uploadStream } from '../../functions/aws/upload-stream.js';
import { startLocalLake, type LocalLake } from '../../local/lake/local-lake.js';
import { feedKey } from '../helpers/feed-key.js';

const MiB = 1024 * 1024;
const window = windowAt({ year: 2026, month: 11, day: 20, hour: 0, minute: 0, second: 0 }, parseWindowSize('P1D'));

/** Deterministic pseudo-random bytes (xorshift32 seeded by `i`): each block differs, so a misplaced part would show in the hash. */
function block(i: number, size = MiB): Buffer {
  const words = new Uint32Array(Math.ceil(size / 4));
  let x = (i + 1) * 2654435761;
  for (let j = 0; j < words.length; j++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[j] = x >>> 0;
  }
  return Buffer.from(words.buffer, 0, size);
}

/** `total` bytes in 1 MiB chunks; throws after `failAfter` bytes if given, like a gateway connection reset. */
function reportStream(total: number, failAfter?: number): { stream: Readable; sha256: string; error: Error } {
  const hash = createHash('sha256');
  const error = new Error('connection reset by the gateway');
  let sent = 0;
  let i = 0;
  const stream = new Readable({
    read() {
      if (failAfter !== undefined && sent >= failAfter) return void this.destroy(error);
      if (sent >= total) return void this.push(null);
      const chunk = block(i++, Math.min(MiB, total - sent));
      sent += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  // The expected digest of the whole stream: compute it up front from the same blocks.
  const whole = createHash('sha256');
  for (let n = 0, k = 0; n < total; n += MiB, k++) whole.update(block(k, Math.min(MiB, total - n)));
  return { stream, sha256: whole.digest('hex'), error };
}

async function readAll(lake: LocalLake, bucket: string, key: string) {
  const opened = await openObjectStream({ client: lake.client, bucket, key });
  const chunks: Buffer[] = [];
  for await (const c of opened.body) chunks.push(c as Buffer);
  const bytes = Buffer.concat(chunks);
  return { opened, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

async function exists(lake: LocalLake, bucket: string, key: string): Promise<boolean> {
  try {
    await lake.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (e) {
    if ((e as { name?: string }).name === 'NotFound') return false;
    throw e;
  }
}

async function keysUnder(lake: LocalLake, bucket: string, prefix: string): Promise<string[]> {
  const out = await lake.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

describe('local lake (s3rver on loopback) with the S3 adapters', () => {
  let dir: string;
  let lake: LocalLake;
  const buckets = bucketNames('test');
  const events: S3EventRecord[] = [];

  /** Parts of unfinished multipart uploads, as s3rver keeps them on disk (ListMultipartUploads is not implemented). */
  const leftoverUploads = async (bucket: string) => readdir(join(dir, bucket, '._S3rver_uploads')).catch(() => []);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'local-lake-'));
    lake = await startLocalLake({ dir, buckets });
    lake.onObjectCreated((r) => void events.push(r));
  });
  after(async () => {
    await lake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the stack-named buckets and listens on loopback', async () => {
    assert.match(lake.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(buckets, { raw: 'paynet-reports-test-raw', curated: 'paynet-reports-test-curated' });
    assert.deepEqual(await keysUnder(lake, buckets.raw, ''), []);
    assert.deepEqual(await keysUnder(lake, buckets.curated, ''), []);
  });

  it('uploadStream lands a 12 MB stream byte for byte, with its metadata, and S3 announces it like AWS', async () => {
    const key = rawKey(feedKey('transactions'), window, 'CSV');
    const report = reportStream(12 * MiB);
    const stored = await uploadStream({
      client: lake.client,
      bucket: buckets.raw,
      key,
      body: report.stream,
      contentType: 'text/csv; charset=utf-8',
      metadata: { 'report-id': 'transactions', 'window-start': '2026-11-20T00:00:00' },
      partSizeBytes: 5 * MiB,
    });
    assert.equal(stored.bytes, 12 * MiB);
    assert.equal(stored.sha256, report.sha256);
    assert.equal(stored.versionId, undefined, 's3rver has no versioning');

    const read = await readAll(lake, buckets.raw, key);
    assert.equal(read.bytes.length, 12 * MiB);
    assert.equal(read.sha256, report.sha256);
    assert.equal(read.opened.contentType, 'text/csv; charset=utf-8');
    assert.deepEqual(read.opened.metadata, { 'report-id': 'transactions', 'window-start': '2026-11-20T00:00:00' });

    await lake.settled();
    const event = events.find((e) => decodeS3EventKey(e.s3.object.key) === key);
    assert.ok(event, 'an ObjectCreated record for the raw key');
    assert.equal(event.eventSource, 'aws:s3');
    assert.equal(event.eventName, 'ObjectCreated:CompleteMultipartUpload');
    assert.equal(event.s3.bucket.name, buckets.raw);
    assert.equal(event.s3.bucket.arn, `arn:aws:s3:::${buckets.raw}`);
    assert.equal(event.s3.object.key, 'raw/transactions/connection%3Ddefault/dt%3D2026-11-20/2026-11-20T00-00-00.csv', 'URL-encoded as AWS sends it');
    assert.equal(event.s3.object.size, 12 * MiB);
    assert.equal(parseRawKey(decodeS3EventKey(event.s3.object.key))?.reportId, 'transactions');
  });

  it('uploadStream of a stream that fails mid-way leaves nothing at the key and no parts behind', async () => {
    const key = rawKey(feedKey('failing'), window, 'CSV');
    const report = reportStream(12 * MiB, 7 * MiB); // one 5 MiB part is already stored when it fails
    const before = events.length;
    await assert.rejects(
      uploadStream({ client: lake.client, bucket: buckets.raw, key, body: report.stream, contentType: 'text/csv', partSizeBytes: 5 * MiB }),
      (e: unknown) => e === report.error,
      'the stream\'s own error, not a clean-up error',
    );
    assert.equal(await exists(lake, buckets.raw, key), false);
    assert.deepEqual(await keysUnder(lake, buckets.raw, 'raw/failing/'), []);
    assert.deepEqual(await leftoverUploads(buckets.raw), []);
    await lake.settled();
    assert.equal(events.length, before, 'no ObjectCreated event');
  });

  it('uploadStream of a stream that fails before its first part stores nothing either', async () => {
    const key = rawKey(feedKey('failing_early'), window, 'CSV');
    const report = reportStream(12 * MiB, 1 * MiB);
    await assert.rejects(
      uploadStream({ client: lake.client, bucket: buckets.raw, key, body: report.stream, contentType: 'text/csv' }),
      (e: unknown) => e === report.error,
    );
    assert.equal(await exists(lake, buckets.raw, key), false);
  });

  it('re-uploading a key overwrites it (the local lake has no versions)', async () => {
    const key = rawKey(feedKey('overwritten'), window, 'PDF');
    const put = (text: string) =>
      uploadStream({ client: lake.client, bucket: buckets.raw, key, body: Readable.from([Buffer.from(text)]), contentType: 'application/pdf' });
    await put('first');
    const second = await put('second run');
    const read = await readAll(lake, buckets.raw, key);
    assert.equal(read.bytes.toString(), 'second run');
    assert.equal(read.sha256, second.sha256);
    assert.deepEqual(await keysUnder(lake, buckets.raw, 'raw/overwritten/'), [key]);
  });

  it('MultipartSink makes its bytes visible only on finish()', async () => {
    const key = tableKey(feedKey('transactions'), window);
    const sink = new MultipartSink({ client: lake.client, bucket: buckets.curated, key, contentType: 'application/vnd.apache.parquet', partSizeBytes: 5 * MiB });
    const whole = createHash('sha256');
    for (let i = 0; i < 11; i++) {
      const chunk = block(100 + i);
      whole.update(chunk);
      sink.write(chunk);
      if (i % 3 === 2) await sink.flush(); // a row group boundary
    }
    await sink.flush();
    assert.equal(await exists(lake, buckets.curated, key), false, 'parts uploaded, object not yet visible');
    const stored = await sink.finish();
    assert.equal(stored.bytes, 11 * MiB);
    assert.equal(stored.sha256, whole.digest('hex'));
    const read = await readAll(lake, buckets.curated, key);
    assert.equal(read.sha256, stored.sha256);
    assert.equal(read.opened.contentType, 'application/vnd.apache.parquet');
    assert.deepEqual(await leftoverUploads(buckets.curated), []);
    await lake.settled();
    assert.ok(events.some((e) => e.s3.bucket.name === buckets.curated && decodeS3EventKey(e.s3.object.key) === key));
  });

  it('MultipartSink.abort() after parts were uploaded leaves nothing', async () => {
    const key = tableKey(feedKey('aborted'), window);
    const sink = new MultipartSink({ client: lake.client, bucket: buckets.curated, key, contentType: 'application/vnd.apache.parquet', partSizeBytes: 5 * MiB });
    for (let i = 0; i < 11; i++) sink.write(block(200 + i));
    await sink.flush();
    await sink.abort();
    assert.equal(sink.abortError, undefined);
    assert.equal(await exists(lake, buckets.curated, key), false);
    assert.deepEqual(await keysUnder(lake, buckets.curated, 'tables/aborted/'), []);
    assert.deepEqual(await leftoverUploads(buckets.curated), []);
    assert.throws(() => sink.write(new Uint8Array(1)), /aborted/);
  });

  it('a small MultipartSink is one PutObject', async () => {
    const key = tableKey(feedKey('small'), window);
    const sink = new MultipartSink({ client: lake.client, bucket: buckets.curated, key, contentType: 'application/vnd.apache.parquet' });
    sink.write(Buffer.from('PAR1...PAR1'));
    await sink.finish();
    assert.equal((await readAll(lake, buckets.curated, key)).bytes.toString(), 'PAR1...PAR1');
    await lake.settled();
    const event = events.find((e) => decodeS3EventKey(e.s3.object.key) === key);
    assert.equal(event?.eventName, 'ObjectCreated:Put');
  });

  it('putJson stores a manifest that reads back', async () => {
    const key = 'manifests/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json';
    const stored = await putJson({ client: lake.client, bucket: buckets.curated, key, value: { rowsRead: 3, rowsWritten: 3 } });
    const read = await readAll(lake, buckets.curated, key);
    assert.deepEqual(JSON.parse(read.bytes.toString()), { rowsRead: 3, rowsWritten: 3 });
    assert.equal(read.sha256, stored.sha256);
    assert.equal(read.opened.contentType, 'application/json; charset=utf-8');
  });

  it('answers AbortMultipartUpload for an unknown upload with NoSuchUpload, as S3 does', async () => {
    await assert.rejects(
      lake.client.send(new AbortMultipartUploadCommand({ Bucket: buckets.raw, Key: 'x', UploadId: 'deadbeef' })),
      (e: unknown) => (e as { name?: string }).name === 'NoSuchUpload',
    );
  });

  it('openObjectStream names a missing object', async () => {
    await assert.rejects(openObjectStream({ client: lake.client, bucket: buckets.raw, key: 'raw/none.csv' }), { name: 'ObjectNotFound' });
  });

  it('settled() reports what a listener threw', async () => {
    const off = lake.onObjectCreated(() => {
      throw new Error('parse failed');
    });
    await putJson({ client: lake.client, bucket: buckets.curated, key: 'manifests/x.json', value: {} });
    await assert.rejects(lake.settled(), (e: unknown) => e instanceof AggregateError && (e.errors[0] as Error).message === 'parse failed');
    off();
    await lake.settled();
  });

  it('a completed multipart upload is its parts joined in order, with S3\'s form of a multipart ETag, new for every upload, and no parts left', async () => {
    const key = rawKey(feedKey('joined'), window, 'CSV');
    const report = reportStream(17 * MiB);
    const stored = await uploadStream({ client: lake.client, bucket: buckets.raw, key, body: report.stream, contentType: 'text/csv', partSizeBytes: 5 * MiB });
    const read = await readAll(lake, buckets.raw, key);
    assert.equal(read.bytes.length, 17 * MiB);
    assert.equal(read.sha256, report.sha256, 'parts 1-4 in order, byte for byte');
    // S3's form for multipart objects: 32 hex digits, "-", the part count; not an MD5 of the content (as
    // under the deployed buckets' SSE-KMS), and a new one for every upload, even of the same bytes.
    assert.match(stored.etag ?? '', /^[0-9a-f]{32}-4$/);
    assert.equal(read.opened.etag, stored.etag, 'GetObject gives the same ETag');
    assert.notEqual(stored.etag, `${createHash('md5').update(read.bytes).digest('hex')}-4`);
    const again = await uploadStream({ client: lake.client, bucket: buckets.raw, key, body: Readable.from([read.bytes]), contentType: 'text/csv', partSizeBytes: 5 * MiB });
    assert.notEqual(again.etag, stored.etag, 'the same bytes uploaded again: another ETag');
    assert.match(again.etag ?? '', /^[0-9a-f]{32}-4$/);
    assert.deepEqual(await leftoverUploads(buckets.raw), []);
  });

  it('a reader sees the old object or the new one whole while a multipart upload completes over it', async () => {
    const key = rawKey(feedKey('replaced'), window, 'CSV');
    const first = reportStream(11 * MiB);
    await uploadStream({ client: lake.client, bucket: buckets.raw, key, body: first.stream, contentType: 'text/csv', partSizeBytes: 5 * MiB });
    const second = reportStream(16 * MiB);
    const upload = uploadStream({ client: lake.client, bucket: buckets.raw, key, body: second.stream, contentType: 'text/csv', partSizeBytes: 5 * MiB });
    const seen = new Set<string>();
    let done = false;
    void upload.finally(() => (done = true));
    while (!done) seen.add((await readAll(lake, buckets.raw, key)).sha256);
    await upload;
    seen.add((await readAll(lake, buckets.raw, key)).sha256);
    assert.deepEqual([...seen].filter((h) => h !== first.sha256 && h !== second.sha256), [], 'no partial object was ever read');
    assert.ok(seen.has(second.sha256));
  });

  it('two PutObjects of one key at once leave one of them whole, never the start of one and the tail of the other', async () => {
    // Two runs of the same window write its manifest (a few KiB) at the same moment; S3 keeps the last writer's
    // object whole, with that writer's metadata.
    const key = 'manifests/concurrent/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json';
    const long = block(300, 3 * 1024);
    const short = block(301, 2 * 1024);
    const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const put = (body: Buffer) =>
      lake.client.send(new PutObjectCommand({ Bucket: buckets.curated, Key: key, Body: body, Metadata: { sha256: digest(body) } }));
    const seen = new Set<string>();
    for (let round = 0; round < 20; round++) {
      await Promise.all([put(long), put(short)]);
      const read = await readAll(lake, buckets.curated, key);
      seen.add(read.sha256);
      assert.equal(read.opened.metadata.sha256, read.sha256, `round ${round}: the metadata is the stored bytes' writer's`);
    }
    assert.deepEqual([...seen].filter((h) => h !== digest(long) && h !== digest(short)), [], 'no mixed object was ever stored');
    assert.deepEqual(await keysUnder(lake, buckets.curated, 'manifests/concurrent/'), [key], 'no partial file listed as a key');
  });

  it('a reader sees the old object or the new one whole while a PutObject replaces it', async () => {
    const key = rawKey(feedKey('put_over'), window, 'CSV');
    const first = block(310, 4 * MiB);
    const second = block(311, 4 * MiB);
    const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    await lake.client.send(new PutObjectCommand({ Bucket: buckets.raw, Key: key, Body: first }));
    const seen = new Set<string>();
    let done = false;
    const put = lake.client.send(new PutObjectCommand({ Bucket: buckets.raw, Key: key, Body: second })).finally(() => (done = true));
    while (!done) seen.add((await readAll(lake, buckets.raw, key)).sha256);
    await put;
    assert.equal((await readAll(lake, buckets.raw, key)).sha256, digest(second), 'the answered PUT is what a read returns');
    assert.deepEqual([...seen].filter((h) => h !== digest(first) && h !== digest(second)), [], 'no partial object was ever read');
  });

  it('an upload that has returned has its ObjectCreated event registered: settled() waits for the listener', async () => {
    // The server runs on a worker thread; its events reach this thread as messages, which need not arrive
    // before the HTTP answer (here they are held back 20 ms). Each answer must wait for its event to be registered.
    const slowDir = await mkdtemp(join(tmpdir(), 'local-lake-slow-'));
    const slow = await startLocalLake({ dir: slowDir, buckets, delayEventsMs: 20 });
    const seenHere: string[] = [];
    const off = slow.onObjectCreated(async (r) => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      seenHere.push(decodeS3EventKey(r.s3.object.key));
    });
    try {
      for (let i = 0; i < 10; i++) {
        const key = `manifests/ordering/${i}.json`;
        await putJson({ client: slow.client, bucket: buckets.curated, key, value: { i } });
        await slow.settled();
        assert.equal(seenHere.at(-1), key, `the listener ran for upload ${i} before settled() resolved`);
      }
    } finally {
      off();
      await slow.close();
      await rm(slowDir, { recursive: true, force: true });
    }
  });
});
