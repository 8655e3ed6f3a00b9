import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { countingSink, type ByteSink } from '../../functions/core/byte-sink.js';

/**
 * Where the converter's bytes go (byte-sink.ts): a Node Writable (a file, the PassThrough an S3 upload reads) or the
 * small ByteSink interface. Real streams throughout; each call a sink receives is recorded in order.
 */

const bytes = (text: string) => new TextEncoder().encode(text);

/** A ByteSink that records every call it receives, in order. */
function recordingSink(parts: Partial<Record<'flush' | 'end' | 'finish' | 'abort', boolean>> = { flush: true, end: true, abort: true }) {
  const calls: string[] = [];
  const sink: ByteSink = {
    async write(chunk) {
      await Promise.resolve();
      calls.push(`write ${new TextDecoder().decode(chunk)}`);
    },
  };
  if (parts.flush) sink.flush = async () => void calls.push('flush');
  if (parts.end) sink.end = async () => void calls.push('end');
  if (parts.finish) sink.finish = async () => void calls.push('finish');
  if (parts.abort) sink.abort = async (reason?: Error) => void calls.push(`abort ${reason?.message}`);
  return { sink, calls };
}

describe('countingSink over a ByteSink', () => {
  it('awaits each write, then its flush, and counts the bytes', async () => {
    const { sink, calls } = recordingSink();
    const counting = countingSink(sink);
    assert.equal(counting.bytes, 0);
    await counting.write(bytes('abc'));
    await counting.write(bytes('de'));
    assert.equal(counting.bytes, 5);
    await counting.end();
    assert.deepEqual(calls, ['write abc', 'flush', 'write de', 'flush', 'end']);
  });

  it('a sink without flush is written to alone; one with `finish` instead of `end` is finished', async () => {
    const { sink, calls } = recordingSink({ finish: true });
    const counting = countingSink(sink);
    await counting.write(bytes('x'));
    await counting.end();
    assert.deepEqual(calls, ['write x', 'finish']);
  });

  it('a sink with neither end nor finish, nor abort, is simply left', async () => {
    const { sink, calls } = recordingSink({});
    const counting = countingSink(sink);
    await counting.write(bytes('x'));
    await counting.end();
    await countingSink(recordingSink({}).sink).abort(new Error('no abort to call'));
    assert.deepEqual(calls, ['write x']);
  });

  it('awaits what end returns before resolving', async () => {
    let stored = false;
    const counting = countingSink({ write() {}, end: () => new Promise<void>((resolve) => setImmediate(() => ((stored = true), resolve()))) });
    await counting.end();
    assert.equal(stored, true);
  });

  it('aborts once, with the reason, and never after it was ended', async () => {
    const { sink, calls } = recordingSink();
    const counting = countingSink(sink);
    await counting.abort(new Error('schema drift'));
    await counting.abort(new Error('again'));
    assert.deepEqual(calls, ['abort schema drift']);

    const ended = recordingSink();
    const done = countingSink(ended.sink);
    await done.end();
    await done.abort(new Error('too late'));
    assert.deepEqual(ended.calls, ['end']);
  });
});

describe('countingSink over a Writable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'byte-sink-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a file and resolves end once it is on disk', async () => {
    const path = join(dir, 'out.bin');
    const counting = countingSink(createWriteStream(path));
    await counting.write(bytes('PAR1'));
    await counting.write(bytes('-body-'));
    await counting.end();
    assert.equal(counting.bytes, 10);
    assert.equal(readFileSync(path, 'utf8'), 'PAR1-body-');
  });

  it('waits for drain when the stream is full, and leaves no listener behind', async () => {
    const stream = new PassThrough({ highWaterMark: 4 });
    const received: string[] = [];
    const counting = countingSink(stream);
    const writing = counting.write(bytes('0123456789'));
    let resolved = false;
    void writing.then(() => (resolved = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(resolved, false, 'a write past the high-water mark waits for the reader');
    stream.on('data', (chunk: Buffer) => received.push(chunk.toString()));
    await writing;
    assert.deepEqual([stream.listenerCount('drain'), stream.listenerCount('error'), stream.listenerCount('close')], [0, 0, 0]);
    await counting.end();
    assert.deepEqual(received, ['0123456789']);
  });

  it('a stream that errors while it is full rejects the waiting write with that error', async () => {
    const stream = new PassThrough({ highWaterMark: 1 });
    const writing = countingSink(stream).write(bytes('abc'));
    stream.destroy(new Error('upload failed'));
    await assert.rejects(writing, /^Error: upload failed$/);
    assert.deepEqual([stream.listenerCount('drain'), stream.listenerCount('close')], [0, 0]);
  });

  it('a stream closed while it is full, without an error, rejects the waiting write saying so', async () => {
    const stream = new PassThrough({ highWaterMark: 1 });
    const writing = countingSink(stream).write(bytes('abc'));
    stream.destroy();
    await assert.rejects(writing, /^Error: the output stream closed before the conversion ended$/);
  });

  it('refuses to write to a destroyed stream: its error, or saying it was closed', async () => {
    const failed = new PassThrough();
    failed.on('error', () => {});
    failed.destroy(new Error('socket hang up'));
    await assert.rejects(countingSink(failed).write(bytes('x')), /^Error: socket hang up$/);
    const closed = new PassThrough();
    closed.destroy();
    const counting = countingSink(closed);
    await assert.rejects(counting.write(bytes('xy')), /^Error: the output stream was closed before the conversion ended$/);
    assert.equal(counting.bytes, 2, 'counted as given');
  });

  it('abort destroys the stream with the reason, so its reader sees the failure; only once, never after end', async () => {
    const seen: Error[] = [];
    const stream = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    stream.on('error', (e) => seen.push(e));
    const counting = countingSink(stream);
    await counting.write(bytes('part'));
    const reason = new Error('too many rejected rows');
    await counting.abort(reason);
    await counting.abort(new Error('second'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stream.destroyed, true);
    assert.equal(stream.errored, reason);
    assert.deepEqual(seen.map((e) => e.message), ['too many rejected rows']);

    const ended = new PassThrough();
    ended.resume();
    const done = countingSink(ended);
    await done.end();
    await done.abort(new Error('too late'));
    assert.equal(ended.errored, null);
  });

  it('abort with nobody listening for errors does not crash the process', async () => {
    const stream = new PassThrough();
    await countingSink(stream).abort(new Error('nobody listens'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stream.destroyed, true);
    assert.equal(stream.listenerCount('error'), 1);
  });

  it('an object with write and end but no on/once is a ByteSink, not a stream', async () => {
    const calls: string[] = [];
    const counting = countingSink({ write: () => void calls.push('write'), end: () => void calls.push('end'), once: () => {} } as ByteSink);
    await counting.write(bytes('x'));
    await counting.end();
    assert.deepEqual(calls, ['write', 'end']);
    const withOn = countingSink({ write: () => void calls.push('write2'), end: () => void calls.push('end2'), on: () => {} } as ByteSink);
    await withOn.write(bytes('x'));
    assert.deepEqual(calls, ['write', 'end', 'write2']);
  });
});
