import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { parquetReadObjects } from 'hyparquet';
import { columnSchema } from '../../functions/core/definitions/report-definition.js';
import { encodeOnPort, type FromWorker, type ToWorker } from '../../functions/core/parquet/parquet-worker.js';
import type { RowBatch } from '../../functions/core/parquet/row-group-buffer.js';

/**
 * The encoding thread's work (parquet-worker.ts), driven through a real MessageChannel on this thread, where
 * mutation testing sees it (the worker itself is run by encoder-thread.test.ts): every message that comes back is
 * checked, and the bytes are read back by hyparquet.
 */

const columns = [columnSchema.parse({ header: 'id', name: 'id', type: 'bigint' }), columnSchema.parse({ header: 'note', name: 'note', type: 'string' })];
const batch = (ids: number[]): RowBatch => ({
  rows: ids.length,
  columns: [
    { kind: 'int64', values: BigInt64Array.from(ids, (id) => BigInt(id)) },
    { kind: 'dict', values: ['n'], codes: new Int32Array(ids.length) },
  ],
});

const open: MessagePort[] = [];
afterEach(() => open.splice(0).forEach((port) => port.close()));

/** The encoder over a channel: `send` posts to it; `until(n)` waits for its n-th message. */
function encoderOnChannel() {
  const { port1, port2 } = new MessageChannel();
  open.push(port1, port2);
  encodeOnPort(port2, { columns });
  const received: FromWorker[] = [];
  const waiters: Array<() => void> = [];
  port1.on('message', (m: FromWorker) => {
    received.push(m);
    waiters.splice(0).forEach((wake) => wake());
  });
  const until = async (count: number) => {
    while (received.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { received, until, send: (m: ToWorker) => port1.postMessage(m) };
}

const kinds = (messages: FromWorker[]) => messages.map((m) => m.t).filter((t, i, all) => !(t === 'bytes' && all[i - 1] === 'bytes'));

/** The file the posted bytes make, with the header and footer only a finish writes: its rows as hyparquet reads them. */
async function rowsOf(messages: FromWorker[]) {
  const bytes = Buffer.concat(messages.flatMap((m) => (m.t === 'bytes' ? [m.bytes] : [])));
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return parquetReadObjects({ file });
}

describe('encodeOnPort', () => {
  it('holds a batch until its group closes, posts the group\'s bytes then "group", and "done" with the count at the end', async () => {
    const worker = encoderOnChannel();
    worker.send({ t: 'batch', batch: batch([1, 2]), end: false });
    worker.send({ t: 'batch', batch: batch([3]), end: true });
    worker.send({ t: 'batch', batch: batch([4]), end: true });
    worker.send({ t: 'finish' });
    await worker.until(1);
    while (worker.received.at(-1)?.t !== 'done') await worker.until(worker.received.length + 1);
    assert.deepEqual(kinds(worker.received), ['bytes', 'group', 'bytes', 'group', 'bytes', 'done']);
    const done = worker.received.at(-1) as Extract<FromWorker, { t: 'done' }>;
    assert.equal(done.rowGroups, 2);
    assert.ok(done.encodeMs >= 0);
    assert.deepEqual(await rowsOf(worker.received), [
      { id: 1n, note: 'n' }, { id: 2n, note: 'n' }, { id: 3n, note: 'n' }, { id: 4n, note: 'n' },
    ]);
  });

  it('posts nothing for a batch whose group is still open', async () => {
    const worker = encoderOnChannel();
    worker.send({ t: 'batch', batch: batch([1]), end: false });
    worker.send({ t: 'finish' });
    while (worker.received.at(-1)?.t !== 'done') await worker.until(worker.received.length + 1);
    // The caller closes every group (the converter's last batch ends one): finish writes the footer alone.
    assert.deepEqual(kinds(worker.received), ['bytes', 'done']);
    assert.equal((worker.received.at(-1) as Extract<FromWorker, { t: 'done' }>).rowGroups, 0);
    assert.deepEqual(await rowsOf(worker.received), []);
  });

  it('posts its first error with the stack where it failed, and ignores every message after it', async () => {
    const worker = encoderOnChannel();
    const wrong = batch([1]);
    worker.send({ t: 'batch', batch: { rows: 1, columns: [wrong.columns[1]!, wrong.columns[0]!] }, end: true });
    worker.send({ t: 'batch', batch: batch([2]), end: true });
    worker.send({ t: 'finish' });
    await worker.until(1);
    // Give the two later messages their turn: neither may answer.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(worker.received.length, 1);
    const error = worker.received[0] as Extract<FromWorker, { t: 'error' }>;
    assert.equal(error.t, 'error');
    assert.equal(error.message, 'batch columns out of order');
    assert.match(error.stack ?? '', /^Error: batch columns out of order\n\s+at .*column-buffers/);
  });
});
