import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import {
  codingLabel,
  DECODABLE_CODINGS,
  decodeBody,
  encodeWhole,
  encoderFor,
  isDecodable,
  parseContentEncoding,
  type ContentCoding,
} from '../../functions/core/gateway/content-coding.js';

/**
 * Content codings of the gateway's answer (functions/core/gateway/content-coding.ts): bodies are coded with
 * node:zlib directly, so the decoder is checked against an implementation it does not share code with.
 */

const REPORT = '"Merchant_Name","Amount"\r\n"Ромашка","1.000"\r\n'.repeat(50);

/** A source that hands out `bytes` in chunks of `size`, as a socket would. */
const source = (bytes: Buffer, size = bytes.length): Readable => {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks, { objectMode: false });
};

const decode = async (bytes: Buffer, codings: ContentCoding[], size?: number) => {
  const decoded = decodeBody(source(bytes, size), codings);
  const body = await text(decoded.body);
  return { body, wire: decoded.wireBytes() };
};

describe('Content-Encoding header', () => {
  it('lists codings in the order applied, lower case, without identity or empty entries', () => {
    assert.deepEqual(parseContentEncoding('GZIP , identity,, br'), ['gzip', 'br']);
    assert.deepEqual(parseContentEncoding(''), []);
    assert.deepEqual(parseContentEncoding('X-GZIP'), ['gzip']);
  });

  it('decodes gzip, deflate and br only, and logs none as identity', () => {
    assert.deepEqual(DECODABLE_CODINGS, ['gzip', 'deflate', 'br']);
    assert.deepEqual(['gzip', 'deflate', 'br', 'zstd', 'compress', 'identity', 'GZIP'].map(isDecodable), [true, true, true, false, false, false, false]);
    assert.equal(codingLabel([]), 'identity');
    assert.equal(codingLabel(['gzip']), 'gzip');
    assert.equal(codingLabel(['deflate', 'br']), 'deflate, br');
  });
});

describe('decodeBody', () => {
  it('decodes each coding written by node:zlib and counts the bytes on the wire', async () => {
    const bytes = Buffer.from(REPORT);
    const cases: Array<[ContentCoding, Buffer]> = [
      ['gzip', zlib.gzipSync(bytes)],
      ['deflate', zlib.deflateSync(bytes)],
      ['br', zlib.brotliCompressSync(bytes)],
    ];
    for (const [coding, coded] of cases) {
      assert.deepEqual(await decode(coded, [coding]), { body: REPORT, wire: coded.length }, coding);
    }
  });

  it('takes raw DEFLATE under the name deflate too, whole or a byte at a time', async () => {
    const raw = zlib.deflateRawSync(Buffer.from(REPORT));
    assert.deepEqual(await decode(raw, ['deflate']), { body: REPORT, wire: raw.length });
    assert.deepEqual(await decode(raw, ['deflate'], 1), { body: REPORT, wire: raw.length });
    const wrapped = zlib.deflateSync(Buffer.from(REPORT));
    assert.deepEqual(await decode(wrapped, ['deflate'], 1), { body: REPORT, wire: wrapped.length });
  });

  it('tells a zlib header by CM 8 and the check bits, not by one of them alone', async () => {
    // Raw DEFLATE, one stored block each (RFC 1951 §3.2.4: a header byte, LEN, NLEN, the bytes). The first
    // starts 78 02 like a zlib header (CM 8) but (0x78 * 256 + 0x02) % 31 is 1; the second starts 01 17,
    // (0x01 * 256 + 0x17) % 31 is 0, but CM is 1.
    const cm8 = Buffer.concat([Buffer.from([0x78, 0x02, 0x00, 0xfd, 0xff]), Buffer.from('AB'), Buffer.from([0x03, 0x00])]);
    const check0 = Buffer.concat([Buffer.from([0x01, 0x17, 0x00, 0xe8, 0xff]), Buffer.from('x'.repeat(23))]);
    for (const [raw, expected] of [[cm8, 'AB'], [check0, 'x'.repeat(23)]] as const) {
      assert.equal(zlib.inflateRawSync(raw).toString(), expected);
      assert.deepEqual(await decode(raw, ['deflate']), { body: expected, wire: raw.length });
    }
  });

  it('applies several codings last first', async () => {
    const coded = zlib.brotliCompressSync(zlib.gzipSync(Buffer.from(REPORT)));
    assert.deepEqual(await decode(coded, ['gzip', 'br']), { body: REPORT, wire: coded.length });
    assert.deepEqual(await decode(Buffer.from('plain'), []), { body: 'plain', wire: 5 });
  });

  it('a cut or corrupt coded body fails the decoded stream with zlib\'s code', async () => {
    const gz = zlib.gzipSync(Buffer.from(REPORT));
    await assert.rejects(decode(gz.subarray(0, gz.length - 10), ['gzip']), { code: 'Z_BUF_ERROR' });
    const deflated = zlib.deflateSync(Buffer.from(REPORT));
    await assert.rejects(decode(deflated.subarray(0, 20), ['deflate']), { code: 'Z_BUF_ERROR' });
    await assert.rejects(decode(Buffer.from([0xff, 0xff, 0xff, 0xff]), ['deflate']), { code: 'Z_DATA_ERROR' });
    // Fewer than two bytes: no header to read, raw inflate says what is wrong.
    await assert.rejects(decode(Buffer.from([0x01]), ['deflate']), { code: 'Z_BUF_ERROR' });
  });

  it('an empty deflate body is an error, not an empty report', async () => {
    await assert.rejects(decode(Buffer.alloc(0), ['deflate']), { code: 'Z_BUF_ERROR' });
  });

  it('a large deflate body reaches a slow consumer whole (backpressure pauses and resumes the inflater)', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024, 'abcdefgh');
    const decoded = decodeBody(source(zlib.deflateSync(big), 4096), ['deflate']);
    let total = 0;
    for await (const chunk of decoded.body) {
      total += (chunk as Buffer).length;
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(total, big.length);
  });

  it('destroying the decoded body destroys the source', async () => {
    const src = source(zlib.deflateSync(Buffer.from(REPORT)), 8);
    const decoded = decodeBody(src, ['deflate']);
    decoded.body.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(src.destroyed, true);
  });
});

describe('encoders (the simulator\'s compressed answers)', () => {
  it('encode in the format the RFC names, as node:zlib reads it back', async () => {
    const bytes = Buffer.from(REPORT);
    assert.equal(zlib.gunzipSync(encodeWhole(bytes, 'gzip')).toString(), REPORT);
    assert.equal(zlib.inflateSync(encodeWhole(bytes, 'deflate')).toString(), REPORT);
    assert.equal(zlib.brotliDecompressSync(encodeWhole(bytes, 'br')).toString(), REPORT);
    const streamed = async (coding: ContentCoding) => Buffer.concat(await Readable.from([bytes]).pipe(encoderFor(coding)).toArray());
    assert.equal(zlib.gunzipSync(await streamed('gzip')).toString(), REPORT);
    assert.equal(zlib.inflateSync(await streamed('deflate')).toString(), REPORT);
    assert.equal(zlib.brotliDecompressSync(await streamed('br')).toString(), REPORT);
  });
});
