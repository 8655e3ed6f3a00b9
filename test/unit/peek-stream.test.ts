import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { peekThenReplay, ReplayStream, type WrapSourceError } from '../../functions/core/gateway/peek-stream.js';

/**
 * Peeking at the first bytes of an answer and replaying it whole (functions/core/gateway/peek-stream.ts): the
 * sources are plain streams fed chunk by chunk, so each bound is tried at, below and above its edge.
 */

const wrap: WrapSourceError = (e, bytes) => new Error(`wrapped after ${bytes}: ${e.message}`);
const all = async (r: Readable): Promise<string> => Buffer.concat(await r.toArray()).toString();

/** A source whose chunks are written one by one, ended when `end` is true. */
function feed(chunks: string[], end = true): PassThrough {
  const s = new PassThrough();
  for (const c of chunks) s.write(c);
  if (end) s.end();
  return s;
}

describe('peekThenReplay', () => {
  it('stops at the first chunk that reaches min after a line end, keeping that chunk whole', async () => {
    const p = await peekThenReplay(feed(['ab', 'c\nd', 'ef', 'gh']), { min: 3, max: 100 }, wrap);
    assert.equal(p.head.toString(), 'abc\nd');
    assert.equal(p.complete, false);
    assert.equal(await all(p.body), 'abc\ndefgh');
  });

  it('a line end in the chunk that reaches min exactly stops it there', async () => {
    const p = await peekThenReplay(feed(['ab\n', 'cd']), { min: 3, max: 100 }, wrap);
    assert.equal(p.head.toString(), 'ab\n');
    assert.equal(await all(p.body), 'ab\ncd');
  });

  it('a line end before min does not stop it; min alone without a line end does not either', async () => {
    const early = await peekThenReplay(feed(['a\n', 'b', 'cd', 'e']), { min: 4, max: 100 }, wrap);
    assert.equal(early.head.toString(), 'a\nbcd');
    const noLine = await peekThenReplay(feed(['abcd', 'ef', 'g\rh', 'ij']), { min: 2, max: 100 }, wrap);
    assert.equal(noLine.head.toString(), 'abcdefg\rh');
    assert.equal(await all(noLine.body), 'abcdefg\rhij');
  });

  it('stops at max without a line end; a number is min and max at once', async () => {
    const p = await peekThenReplay(feed(['abc', 'def', 'ghi']), { min: 1, max: 6 }, wrap);
    assert.equal(p.head.toString(), 'abcdef');
    assert.equal(p.complete, false);
    const n = await peekThenReplay(feed(['ab\n', 'cd', 'ef']), 4, wrap);
    assert.equal(n.head.toString(), 'ab\ncd');
    assert.equal(await all(n.body), 'ab\ncdef');
  });

  it('a body shorter than min is seen whole and complete', async () => {
    const p = await peekThenReplay(feed(['ab', 'c\n']), { min: 10, max: 100 }, wrap);
    assert.deepEqual([p.head.toString(), p.complete], ['abc\n', true]);
    assert.equal(await all(p.body), 'abc\n');
    assert.equal(p.body.bytesReceived, 4);
    const empty = await peekThenReplay(feed([]), 10, wrap);
    assert.deepEqual([empty.head.length, empty.complete], [0, true]);
    assert.equal(await all(empty.body), '');
  });

  it('string chunks count as their UTF-8 bytes', async () => {
    const s = new Readable({ read() {} });
    s.push('Яx\n');
    s.setEncoding('utf8');
    s.push(null);
    const p = await peekThenReplay(s, { min: 2, max: 100 }, wrap);
    assert.equal(p.head.toString(), 'Яx\n');
    assert.equal(p.head.length, 4);
  });

  it('a failure or a close before the head is complete rejects, and leaves no listener behind', async () => {
    const failing = feed(['ab'], false);
    const failed = peekThenReplay(failing, 100, wrap);
    failing.destroy(new Error('socket hang up'));
    await assert.rejects(failed, { message: 'socket hang up' });
    assert.equal(failing.listenerCount('data'), 0);
    assert.equal(failing.listenerCount('close'), 0);
    const closing = feed(['ab'], false);
    const closed = peekThenReplay(closing, 100, wrap);
    closing.destroy();
    await assert.rejects(closed, { message: 'the connection closed before the body began' });
    assert.equal(closing.listenerCount('end'), 0);
    assert.equal(closing.listenerCount('error'), 0);
  });

  it('the peek pauses the source and removes its listeners, so the rest waits for the replay', async () => {
    const source = feed(['ab\n', 'cd', 'ef']);
    const p = await peekThenReplay(source, 2, wrap);
    assert.equal(source.isPaused(), true);
    assert.deepEqual(['data', 'end', 'error', 'close'].map((e) => source.listenerCount(e)), [0, 0, 0, 0]);
    assert.equal(p.body.bytesReceived, 3);
    assert.equal(await all(p.body), 'ab\ncdef');
    assert.equal(p.body.bytesReceived, 7);
  });
});

describe('ReplayStream', () => {
  it('a source that breaks after the head fails the replay with the wrapped error and the bytes so far', async () => {
    const source = feed(['ab\n', 'cd'], false);
    const p = await peekThenReplay(source, 2, wrap);
    const got: Buffer[] = [];
    const failed = new Promise<Error>((resolve) => p.body.on('error', resolve));
    p.body.on('data', (c: Buffer) => {
      got.push(c);
      if (Buffer.concat(got).length === 5) source.destroy(new Error('ECONNRESET'));
    });
    const e = await failed;
    assert.equal(e.message, 'wrapped after 5: ECONNRESET');
    assert.equal(Buffer.concat(got).toString(), 'ab\ncd');
  });

  it('a source closed early without an error of its own is a premature close, wrapped', async () => {
    const source = feed(['ab\n'], false);
    const p = await peekThenReplay(source, 2, wrap);
    p.body.on('data', () => source.destroy());
    await assert.rejects(all(p.body), { message: 'wrapped after 3: Premature close' });
  });

  it('destroying the replay destroys the source', async () => {
    const source = feed(['ab\n', 'cd'], false);
    const p = await peekThenReplay(source, 2, wrap);
    p.body.destroy();
    assert.equal(source.destroyed, true);
  });

  it('a head of zero bytes from a source that goes on replays the rest', async () => {
    const source = feed(['xy', 'z']);
    const r = new ReplayStream(Buffer.alloc(0), source, false, wrap);
    assert.equal(await all(r), 'xyz');
    assert.equal(r.bytesReceived, 3);
    const ended = new ReplayStream(Buffer.from('whole'), feed([]), true, wrap);
    assert.equal(await all(ended), 'whole');
  });

  it('string chunks of the rest count as bytes', async () => {
    const source = new PassThrough({ encoding: 'utf8' });
    source.end('ЯЯ');
    const r = new ReplayStream(Buffer.alloc(0), source, false, wrap);
    assert.equal(await all(r), 'ЯЯ');
    assert.equal(r.bytesReceived, 4);
  });
});
