import assert from 'node:assert/strict';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterEach, describe, it } from 'node:test';
import { convertPart, type FromPartWorker, type ToPartWorker } from '../../functions/core/convert/part-worker.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { BATCH_ROWS } from '../../functions/core/parquet/row-group-buffer.js';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };

/**
 * The second part of a split file (part-worker.ts), driven through a real MessageChannel on this thread: the bytes go
 * in as the splitting side sends them, and every message that comes back is checked. The part has no header; its
 * lines count from 1 at its first byte.
 */

const COLUMNS = [
  { header: 'Id', name: 'id', type: 'bigint' },
  { header: 'Note', name: 'note', type: 'string', nullable: true },
];
const report = (keys?: string[]): ReportDefinition => {
  const { keys: _keys, ...rest } = transactionsJson;
  return parseReportDefinition({ ...rest, columns: COLUMNS, ...(keys ? { keys } : {}) }, 'reports/part.json');
};

const open: MessagePort[] = [];
afterEach(() => open.splice(0).forEach((port) => port.close()));

/** Starts a part over a channel; `send` posts to it, `until` collects its messages up to the last one of a run. */
function part(definition: ReportDefinition, rowGroupRows = 1000) {
  const { port1, port2 } = new MessageChannel();
  open.push(port1, port2);
  convertPart(port2, { report: definition, rowGroupRows, rowGroupBytes: 1_000_000 });
  const received: FromPartWorker[] = [];
  let settle: (() => void) | undefined;
  port1.on('message', (m: FromPartWorker) => {
    received.push(m);
    if (m.t === 'done' || m.t === 'error') settle?.();
  });
  const finished = new Promise<void>((resolve) => (settle = resolve));
  const send = (m: ToPartWorker) => port1.postMessage(m);
  const bytes = (text: string) => send({ t: 'bytes', bytes: new TextEncoder().encode(text) });
  return { received, finished, send, bytes };
}

/** The messages' kinds in order, with a group's row count and a reject batch's size. */
const kinds = (messages: FromPartWorker[]) =>
  messages.map((m) => (m.t === 'group' ? `group ${m.group.num_rows}` : m.t === 'rejects' ? `rejects ${m.rejects.length}` : m.t));
/** The same, a run of `bytes` (a group's column chunks) said once. */
const collapsed = (messages: FromPartWorker[]) => kinds(messages).filter((k, i, all) => !(k === 'bytes' && all[i - 1] === 'bytes'));

describe('convertPart', () => {
  it('credits each chunk, sends each row group\'s bytes then its metadata, and the counts at the end', async () => {
    const p = part(report(['id']), 2);
    p.bytes('1,a\r\n2,b\r\n3,');
    p.bytes('c\r\n\r\n4,d\r\n5,e\r\n');
    p.send({ t: 'end' });
    await p.finished;
    // Rows 1 and 2 fill a group while the first chunk is parsed, before its credit; rows 3 and 4 the second's.
    assert.deepEqual(collapsed(p.received), ['bytes', 'group 2', 'credit', 'bytes', 'group 2', 'credit', 'bytes', 'group 1', 'done']);
    assert.equal(kinds(p.received).filter((k) => k === 'bytes').length, 6, 'two column chunks a group');
    const done = p.received.at(-1) as Extract<FromPartWorker, { t: 'done' }>;
    assert.deepEqual([done.rowsRead, done.rowsWritten, done.rowsRejected, done.emptyLines], [5, 5, 0, 1]);
    assert.deepEqual([...done.tally!.ints].sort(), [1, 2, 3, 4, 5]);
    assert.equal(done.tally!.duplicates, 0);
    assert.ok(done.parseMs >= 0 && done.encodeMs >= 0, JSON.stringify(done));
    const groups = p.received.filter((m) => m.t === 'group').map((m) => Number(m.group.num_rows));
    assert.deepEqual(groups, [2, 2, 1]);
  });

  it('sends row groups without a file around them: no PAR1 magic, the first column chunk at offset 0', async () => {
    const p = part(report());
    p.bytes('1,a\n2,b\n');
    p.send({ t: 'end' });
    await p.finished;
    const first = p.received.find((m) => m.t === 'bytes') as Extract<FromPartWorker, { t: 'bytes' }>;
    assert.notEqual(Buffer.from(first.bytes.subarray(0, 4)).toString('latin1'), 'PAR1');
    const group = (p.received.find((m) => m.t === 'group') as Extract<FromPartWorker, { t: 'group' }>).group;
    const chunk = group.columns[0]!.meta_data!;
    assert.equal(Number(chunk.dictionary_page_offset ?? chunk.data_page_offset), 0);
  });

  it(`hands batches of ${BATCH_ROWS} rows to the encoder without closing the row group`, async () => {
    const p = part(report(), 10_000);
    p.bytes(Array.from({ length: BATCH_ROWS + 1 }, (_, i) => `${i},a\n`).join(''));
    p.send({ t: 'end' });
    await p.finished;
    assert.deepEqual(collapsed(p.received).filter((k) => k.startsWith('group')), [`group ${BATCH_ROWS + 1}`]);
  });

  it('reads no byte-order mark at the part\'s start: U+FEFF there is data, as it is mid-file', async () => {
    const p = part(report());
    p.bytes('\ufeff1,a\n2,b\n');
    p.send({ t: 'end' });
    await p.finished;
    const rejects = p.received.filter((m) => m.t === 'rejects').flatMap((m) => m.rejects);
    assert.deepEqual(rejects.map((r) => [r.line, r.column, r.record]), [[1, 'Id', ['\ufeff1', 'a']]]);
  });

  it('its parse and encode times are parts of the time it ran', async () => {
    const started = performance.now();
    const p = part(report());
    p.bytes('1,a\n2,b\n');
    p.send({ t: 'end' });
    await p.finished;
    const elapsed = performance.now() - started;
    const done = p.received.at(-1) as Extract<FromPartWorker, { t: 'done' }>;
    assert.ok(done.encodeMs >= 0 && done.parseMs + done.encodeMs <= elapsed, `${JSON.stringify(done)} in ${elapsed} ms`);
  });

  it('a report without keys or a sum column sends no tally', async () => {
    const p = part(report());
    p.bytes('1,a\n');
    p.send({ t: 'end' });
    await p.finished;
    const done = p.received.at(-1) as Extract<FromPartWorker, { t: 'done' }>;
    assert.equal('tally' in done, false);
    assert.deepEqual(collapsed(p.received), ['credit', 'bytes', 'group 1', 'done']);
  });

  it('sends rejected rows with their lines counted from the part\'s start, before the counts', async () => {
    const p = part(report());
    p.bytes('1,a\r\nx,b\r\n3,"two\r\nlines"\r\n4\r\n');
    p.send({ t: 'end' });
    await p.finished;
    const rejects = p.received.filter((m) => m.t === 'rejects').flatMap((m) => m.rejects);
    assert.deepEqual(rejects, [
      { line: 2, column: 'Id', reason: 'not an integer: "x"', record: ['x', 'b'] },
      { line: 5, column: '', reason: 'has 1 field(s), the header has 2', record: ['4'] },
    ]);
    const done = p.received.at(-1) as Extract<FromPartWorker, { t: 'done' }>;
    assert.deepEqual([done.rowsRead, done.rowsWritten, done.rowsRejected], [4, 2, 2]);
  });

  it('sends rejected rows a thousand at a time', async () => {
    const p = part(report());
    p.bytes('x,a\n'.repeat(1001));
    p.send({ t: 'end' });
    await p.finished;
    assert.deepEqual(kinds(p.received).filter((k) => k.startsWith('rejects')), ['rejects 1000', 'rejects 1']);
    assert.equal(kinds(p.received).indexOf('rejects 1000') < kinds(p.received).indexOf('credit'), true, 'the first thousand go as soon as they are there');
  });

  it('a malformed part sends its error with its code, then ignores the rest', async () => {
    const p = part(report());
    p.bytes('1,a\r\n2,b"c\r\n');
    p.bytes('3,d\r\n');
    p.send({ t: 'end' });
    await p.finished;
    const error = p.received.find((m) => m.t === 'error') as Extract<FromPartWorker, { t: 'error' }>;
    assert.equal(error.code, 'MalformedReport');
    assert.match(error.message, /^Report "transactions" is not a well-formed CSV file: .*line 2/);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(p.received.at(-1), error, 'nothing after the error');
    assert.equal(p.received.filter((m) => m.t === 'done').length, 0);
  });
});
