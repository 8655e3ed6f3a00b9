import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { parquetReadObjects } from 'hyparquet';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import type { ByteSink } from '../../functions/core/byte-sink.js';
import { SplitPart } from '../../functions/core/convert/csv-split.js';
import { convertCsvToParquet, DEFAULT_ROW_GROUP_BYTES, manifestOf, type Manifest } from '../../functions/core/convert/csv-to-parquet.js';
import { MalformedReport } from '../../functions/core/errors.js';
import { parquetProblems } from '../helpers/parquet-checks.js';

/**
 * A file parsed on two threads (csv-split.ts, what `npm start` does with large reports) must give exactly
 * what one thread gives: the same rows in the same order, the same counts, the same rejects with the same
 * line numbers, the same data checks, the same failure on a malformed file. Cut at every kind of place: a
 * record boundary, inside a quoted value holding a line break (the worker's part is dropped), in the header.
 */

const sample = loadCatalog().get('transactions');
const HEADER = sample.columns.map((c) => c.header);
const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
const line = (fields: readonly string[]) => fields.map(q).join(',') + '\r\n';
const twoCpus = availableParallelism() >= 2;

class MemorySink implements ByteSink {
  chunks: Uint8Array[] = [];
  write(bytes: Uint8Array) {
    this.chunks.push(bytes);
  }
  end() {}
  abort() {}
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** Rows with line breaks inside values, repeated ids, bad values and blank lines. */
function csvOf(n: number): Buffer {
  const descriptions = ['plain', 'LF\ninside', 'CRLF\r\ninside, and "quotes"', 'CR\rinside', 'Оплата №1 🎉', ''];
  let text = line(HEADER);
  for (let i = 0; i < n; i++) {
    const id = i % 997 === 5 ? '7' : i % 500 === 0 ? (9007199254740993n + BigInt(i)).toString() : String(1000 + i * 2);
    const amount = i % 1234 === 7 ? 'not a number' : `${i % 3 ? '' : '-'}${i}.${String(i % 1000).padStart(3, '0')}`;
    text += line([i % 3 ? 'Acme, Inc.' : 'ООО "Ромашка"', id, `ORD-${i}`, `2026-11-20 ${String(i % 24).padStart(2, '0')}:00:00`, amount, 'RUB', 'SALE', descriptions[i % descriptions.length]!, '21.11.2026']);
    if (i % 4000 === 3) text += '\r\n'; // a blank line
  }
  return Buffer.from(text, 'utf8');
}

/** Hands a buffer out in 64 KiB chunks, as a file or S3 stream does. */
const stream = (bytes: Buffer) => {
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 65536) parts.push(bytes.subarray(i, i + 65536));
  return Readable.from(parts);
};

async function convert(csv: Buffer, at?: number, rowGroupRows = 3000) {
  const output = new MemorySink();
  const rejects = new MemorySink();
  let manifest: Manifest | undefined;
  let error: unknown;
  try {
    manifest = await convertCsvToParquet({
      input: stream(csv),
      output,
      rejects,
      report: sample,
      maxRejectShare: 1,
      rowGroupRows,
      encoder: 'inline',
      ...(at === undefined ? {} : { split: { at, tail: (from: number) => stream(csv.subarray(from)), start: SplitPart.start } }),
    });
  } catch (e) {
    error = e;
    manifest = manifestOf(e);
  }
  return { manifest, error, parquet: output.bytes, rejects: rejects.bytes.toString('utf8') };
}

const rowsOf = async (parquet: Buffer) => parquetReadObjects({ file: parquet.buffer.slice(parquet.byteOffset, parquet.byteOffset + parquet.byteLength) as ArrayBuffer });
const counts = (m: Manifest | undefined) => m && { rowsRead: m.rowsRead, rowsWritten: m.rowsWritten, rowsRejected: m.rowsRejected, emptyLines: m.emptyLines, bytesIn: m.bytesIn, tally: m.tally };

describe('a file parsed on two threads (csv-split.ts)', () => {
  const csv = csvOf(20_000);
  const alone = convert(csv);

  for (const [name, at] of [
    ['near the middle', Math.floor(csv.length / 2)],
    ['inside a quoted value holding a line feed', csv.indexOf('LF\ninside', Math.floor(csv.length / 3)) + 2],
    ['in the header', 3],
    ['near the end', csv.length - 200],
  ] as const) {
    it(`gives the rows, counts, rejects and data checks of one thread: cut ${name}`, async () => {
      const one = await alone;
      const two = await convert(csv, at);
      assert.equal(two.error, undefined);
      assert.deepEqual(counts(two.manifest), counts(one.manifest));
      assert.equal(two.rejects, one.rejects, 'the same rejected rows, with the same line numbers');
      assert.deepEqual(await rowsOf(two.parquet), await rowsOf(one.parquet));
      assert.deepEqual(parquetProblems(two.parquet, { minRowsPerGroup: 3000, maxGroupBytes: BigInt(DEFAULT_ROW_GROUP_BYTES) }), []);
      if (twoCpus && name === 'near the middle') {
        // The worker's part was used: it starts at the first record after the cut.
        assert.ok(two.manifest!.split && two.manifest!.split.rowsRead > 5_000, JSON.stringify(two.manifest!.split));
      }
      if (name === 'inside a quoted value holding a line feed' || name === 'in the header') assert.equal(two.manifest!.split, undefined, 'the second part was dropped');
    });
  }

  it('keeps the row groups before the second part at least rowGroupRows long', async () => {
    const two = await convert(csv, Math.floor(csv.length / 2), 4_000);
    assert.deepEqual(parquetProblems(two.parquet, { minRowsPerGroup: 4_000, maxGroupBytes: BigInt(DEFAULT_ROW_GROUP_BYTES) }), []);
  });

  it('fails on a malformed second part as one thread does, on the same line', async () => {
    // A quote inside an unquoted value, in the second part: csv-parse's error names the line.
    const badQuote = Buffer.concat([csv, Buffer.from('Acme,1,ORD-x,2026-11-20 00:00:00,1.000,RUB,SALE,ab"c,21.11.2026\r\n')]);
    const one = await convert(badQuote);
    const two = await convert(badQuote, Math.floor(badQuote.length / 2));
    assert.ok(one.error instanceof MalformedReport);
    assert.match((one.error as Error).message, /line \d+/);
    assert.equal((two.error as Error).message, (one.error as Error).message);
    // Bytes that are not UTF-8: the same failure (the byte range it names is the input chunk's, which differs).
    const badBytes = Buffer.concat([csv, Buffer.from([0xc3, 0x28]), Buffer.from('\r\n')]);
    const byteRange = /between byte \d+ and \d+/;
    const oneBytes = await convert(badBytes);
    const twoBytes = await convert(badBytes, Math.floor(badBytes.length / 2));
    assert.ok(twoBytes.error instanceof MalformedReport);
    assert.equal((twoBytes.error as Error).message.replace(byteRange, ''), (oneBytes.error as Error).message.replace(byteRange, ''));
  });
});
