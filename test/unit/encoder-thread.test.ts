import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { parquetReadObjects } from 'hyparquet';
import type { RowGroup } from 'hyparquet';
import type { CountingSink } from '../../functions/core/byte-sink.js';
import { columnSchema, type ColumnDefinition } from '../../functions/core/definitions/report-definition.js';
import { RowGroupEncoder } from '../../functions/core/parquet/encoder.js';
import { encoderPlace, startEncoder, type EncoderHandle } from '../../functions/core/parquet/encoder-thread.js';
import type { RowBatch } from '../../functions/core/parquet/row-group-buffer.js';

/**
 * Where Parquet encoding runs (functions/core/parquet/encoder-thread.ts): inline on this thread, or in the real
 * worker (parquet-worker.ts, compiled and started as the converter starts it). The bytes each sends to the sink
 * are read back by hyparquet; failures of the sink and of the encoder reach the caller.
 */

const define = (name: string, type: string, extra: Record<string, unknown> = {}): ColumnDefinition => columnSchema.parse({ header: name, name, type, ...extra });
const columns = [define('id', 'bigint'), define('currency', 'string'), define('amount', 'decimal(12,2)', { nullable: true })];

/** Rows of (id, currency, amount in cents or null) in their wire form, as the parsing thread sends them. */
function batch(rows: Array<[number, string, number | null]>): RowBatch {
  const currencies = [...new Set(rows.map((r) => r[1]))];
  return {
    rows: rows.length,
    columns: [
      { kind: 'int64', values: BigInt64Array.from(rows, (r) => BigInt(r[0])) },
      { kind: 'dict', values: currencies, codes: Int32Array.from(rows, (r) => currencies.indexOf(r[1])) },
      { kind: 'int64', values: BigInt64Array.from(rows, (r) => BigInt(r[2] ?? 0)), nulls: Uint8Array.from(rows, (r) => (r[2] === null ? 1 : 0)) },
    ],
  };
}

/** A sink that keeps what it is given; `hold` makes each write wait until released. */
function sink(options: { fail?: Error; hold?: boolean } = {}) {
  const chunks: Uint8Array[] = [];
  const waiting: Array<() => void> = [];
  const counting: CountingSink & { chunks: Uint8Array[]; release(): void } = {
    chunks,
    get bytes() {
      return chunks.reduce((n, c) => n + c.length, 0);
    },
    async write(bytes) {
      if (options.fail) throw options.fail;
      chunks.push(bytes);
      if (options.hold) await new Promise<void>((resolve) => waiting.push(resolve));
    },
    async end() {},
    async abort() {},
    release() {
      options.hold = false;
      waiting.splice(0).forEach((resolve) => resolve());
    },

  };
  return counting;
}

const rowsOf = async (chunks: Uint8Array[]) => {
  const file = Buffer.concat(chunks);
  return parquetReadObjects({ file: file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer });
};

async function roundTrip(encoder: EncoderHandle, out: ReturnType<typeof sink>) {
  encoder.add(batch([[1, 'EUR', 100]]), false);
  encoder.add(batch([[2, 'USD', null]]), true);
  await encoder.ready();
  encoder.add(batch([[3, 'RUB', 333]]), true);
  const result = await encoder.finish();
  assert.equal(result.rowGroups, 2);
  assert.ok(result.encodeMs > 0);
  assert.deepEqual(await rowsOf(out.chunks), [{ id: 1n, currency: 'EUR', amount: 1 }, { id: 2n, currency: 'USD', amount: null }, { id: 3n, currency: 'RUB', amount: 3.33 }]);
  return result;
}

describe('startEncoder: inline', () => {
  it('encodes each closed group on this thread; finish() writes the footer and says what it did', async () => {
    const out = sink();
    const encoder = startEncoder({ columns }, out, 'inline');
    assert.equal(encoder.mode, 'inline');
    const result = await roundTrip(encoder, out);
    assert.equal(result.columnMs!.length, 3);
  });

  it("a sink's failure rejects ready() and finish()", async () => {
    const encoder = startEncoder({ columns }, sink({ fail: new Error('disk full') }), 'inline');
    encoder.add(batch([[1, 'EUR', 100]]), true);
    await assert.rejects(encoder.ready(), { message: 'disk full' });
    await assert.rejects(encoder.finish(), { message: 'disk full' });
  });

  it('an encoding failure rejects ready() with its error', async () => {
    const encoder = startEncoder({ columns }, sink(), 'inline');
    const wrong = batch([[1, 'EUR', 100]]);
    encoder.add({ rows: 1, columns: [wrong.columns[1]!, wrong.columns[0]!, wrong.columns[2]!] }, true);
    await assert.rejects(encoder.ready(), { message: 'batch columns out of order' });
  });

  it('after abort() nothing more reaches the sink', async () => {
    const out = sink({ hold: true });
    const encoder = startEncoder({ columns }, out, 'inline');
    encoder.add(batch([[1, 'EUR', 100]]), true);
    const written = out.chunks.length;
    const aborted = encoder.abort();
    out.release();
    await aborted;
    encoder.add(batch([[2, 'EUR', 100]]), true);
    encoder.appendRowGroup([new Uint8Array(8)], { columns: [], num_rows: 1n, total_byte_size: 8n });
    await encoder.ready();
    assert.equal(out.chunks.length, written);
    // ignored, not encoded: a batch that could not be encoded fails nothing any more
    const wrong = batch([[3, 'EUR', 100]]);
    encoder.add({ rows: 1, columns: [wrong.columns[1]!, wrong.columns[0]!, wrong.columns[2]!] }, true);
    await encoder.ready();
  });

  it('appends a row group another encoder wrote as a fragment', async () => {
    const parts: Uint8Array[] = [];
    const fragment = new RowGroupEncoder({ columns }, (bytes) => void parts.push(bytes), { fragment: true });
    fragment.add(batch([[9, 'EUR', 999]]));
    await fragment.writeRowGroup();
    const out = sink();
    const encoder = startEncoder({ columns }, out, 'inline');
    encoder.add(batch([[1, 'USD', null]]), true);
    encoder.releaseBuffers();
    encoder.appendRowGroup(parts, fragment.groups[0] as RowGroup);
    assert.equal((await encoder.finish()).rowGroups, 2);
    assert.deepEqual((await rowsOf(out.chunks)).map((r) => r.id), [1n, 9n]);
  });
});

describe('encoderPlace', () => {
  const url = new URL('file:///task/parquet-worker.js');
  it("'auto', the default, takes the worker when there is a script and two CPUs or more", () => {
    assert.equal(encoderPlace(undefined, url, 2), 'worker');
    assert.equal(encoderPlace('auto', url, 8), 'worker');
    assert.equal(encoderPlace(undefined, url, 1), 'inline');
    assert.equal(encoderPlace('auto', url, 1), 'inline');
    assert.equal(encoderPlace(undefined, undefined, 8), 'inline', 'a single-file bundle has no worker script: inline, only slower');
  });

  it("'inline' and 'worker' are taken as asked, whatever the CPUs", () => {
    assert.equal(encoderPlace('inline', url, 8), 'inline');
    assert.equal(encoderPlace('worker', url, 1), 'worker');
  });

  it("'worker' without a script says what to pass", () => {
    assert.throws(() => encoderPlace('worker', undefined, 8), { message: 'encoder "worker" was asked for, but parquet-worker.js is not beside this module: pass workerUrl' });
  });
});

describe('startEncoder: the worker thread', () => {
  it('encodes in parquet-worker.ts and posts the bytes back, in order', async () => {
    const out = sink();
    const encoder = startEncoder({ columns }, out, 'worker');
    assert.equal(encoder.mode, 'worker');
    assert.throws(() => encoder.appendRowGroup([], { columns: [], num_rows: 0n, total_byte_size: 0n }), { message: 'row groups of another thread are appended by an inline encoder only' });
    encoder.releaseBuffers();
    await roundTrip(encoder, out);
  });

  it("ready() waits while two closed groups are not yet written, and the worker's failure reaches the caller", async () => {
    const out = sink({ hold: true });
    const encoder = startEncoder({ columns }, out, 'worker');
    encoder.add(batch([[1, 'EUR', 100]]), false);
    encoder.add(batch([[1, 'EUR', 100]]), true);
    await encoder.ready(); // one group in flight: no wait, though the sink holds its bytes
    encoder.add(batch([[2, 'EUR', 200]]), true);
    let ready = false;
    const waiting = encoder.ready().then(() => (ready = true));
    // the worker's first bytes arrive and wait in the sink
    while (out.chunks.length === 0) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ready, false);
    out.release();
    await waiting;
    const wrong = batch([[3, 'EUR', 100]]);
    encoder.add({ rows: 1, columns: [wrong.columns[1]!, wrong.columns[0]!, wrong.columns[2]!] }, true);
    await assert.rejects(encoder.finish(), (e: Error) => {
      assert.equal(e.message, 'Parquet encoding failed: batch columns out of order');
      assert.match(e.stack ?? '', /column-buffers/, "the worker's stack, where it failed");
      return true;
    });
    await encoder.abort();
  });

  it('by default, the worker where there are two cores or more', async () => {
    const out = sink();
    const encoder = startEncoder({ columns }, out);
    assert.equal(encoder.mode, availableParallelism() >= 2 ? 'worker' : 'inline');
    encoder.add(batch([[1, 'EUR', 100]]), true);
    await encoder.finish();
    assert.deepEqual(await rowsOf(out.chunks), [{ id: 1n, currency: 'EUR', amount: 1 }]);
  });

  it("a sink's failure rejects ready(); abort() stops the worker", async () => {
    const encoder = startEncoder({ columns }, sink({ fail: new Error('upload refused') }), 'worker');
    encoder.add(batch([[1, 'EUR', 100]]), true);
    encoder.add(batch([[2, 'EUR', 100]]), true);
    encoder.add(batch([[3, 'EUR', 100]]), true);
    // three closed groups in flight: ready() waits, until the sink's failure
    await assert.rejects(encoder.ready(), { message: 'upload refused' });
    await assert.rejects(encoder.finish(), { message: 'upload refused' });
    await encoder.abort();
  });

  it('a worker that dies: its error reaches finish(), and stays the failure after its exit and abort()', async () => {
    const throwing = new URL(`data:text/javascript,${encodeURIComponent('throw new Error("worker script broken")')}`);
    const encoder = startEncoder({ columns }, sink(), 'worker', throwing);
    encoder.add(batch([[1, 'EUR', 100]]), true);
    await assert.rejects(encoder.finish(), { message: 'worker script broken' });
    // Give its exit (code 1) time to arrive: it must not replace the first failure.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await encoder.abort();
    await assert.rejects(encoder.ready(), { message: 'worker script broken' });
  });

  it('a worker that exits before it finished fails finish(), naming its exit code', async () => {
    const exiting = new URL(`data:text/javascript,${encodeURIComponent('process.exit(7)')}`);
    const encoder = startEncoder({ columns }, sink(), 'worker', exiting);
    encoder.add(batch([[1, 'EUR', 100]]), true);
    await assert.rejects(encoder.finish(), { message: 'the Parquet encoding worker exited (code 7) before it finished' });
  });

  it('after abort(), ready() resolves: the terminated worker is not a failure', async () => {
    const encoder = startEncoder({ columns }, sink({ hold: true }), 'worker');
    encoder.add(batch([[1, 'EUR', 100]]), true);
    await encoder.abort();
    await encoder.ready();
  });
});
