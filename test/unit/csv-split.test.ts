import assert from 'node:assert/strict';
import { syncBuiltinESMExports } from 'node:module';
import os, { availableParallelism } from 'node:os';
import { Readable } from 'node:stream';
import { describe, it, mock } from 'node:test';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { SplitPart } from '../../functions/core/convert/csv-split.js';
import { convertCsvToParquet, manifestOf, type Manifest } from '../../functions/core/convert/csv-to-parquet.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { MalformedReport, TooManyRejectedRows } from '../../functions/core/errors.js';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };
import { MemorySink } from '../helpers/memory-sink.js';

/**
 * One small CSV parsed on two threads (csv-split.ts, part-worker.ts through its real worker entry), read back with
 * hyparquet. The file, with each line's first byte:
 *
 *     0  Id,Note\r\n
 *     9  1,a\r\n
 *    14  2,b\r\n
 *    19  3,"x\r\ny"\r\n      (a value holding a line break: its LF is at 24)
 *    29  4,d\r\n
 *    34  5,e\r\n             (39 bytes in all)
 *
 * The second part starts after the first LF at or after the cut: a cut at 16 gives 19, a cut at 22 falls inside the
 * quoted value (the LF at 24), so the second part is dropped and this thread parses the whole file.
 */

const twoCpus = availableParallelism() >= 2;
const COLUMNS = [
  { header: 'Id', name: 'id', type: 'bigint' },
  { header: 'Note', name: 'note', type: 'string', nullable: true },
];
function reportWith(extra: Record<string, unknown> = {}): ReportDefinition {
  const { keys: _keys, ...rest } = transactionsJson;
  const body = { ...rest.bodyTemplate, ...(typeof extra.encoding === 'string' ? { reportEncode: extra.encoding } : {}) };
  return parseReportDefinition({ ...rest, bodyTemplate: body, columns: COLUMNS, ...extra }, 'reports/split.json');
}
const REPORT = reportWith({ keys: ['id'] });
const FILE = 'Id,Note\r\n1,a\r\n2,b\r\n3,"x\r\ny"\r\n4,d\r\n5,e\r\n';
const ROWS = [
  { id: 1n, note: 'a' },
  { id: 2n, note: 'b' },
  { id: 3n, note: 'x\r\ny' },
  { id: 4n, note: 'd' },
  { id: 5n, note: 'e' },
];

/** The second read of the file from `from`, in `size`-byte chunks, as strings when asked. */
const tailOf = (file: Buffer, size: number, strings: boolean) => (from: number) => {
  const chunks: Array<Buffer | string> = [];
  for (let i = from; i < file.length; i += size) chunks.push(strings ? file.subarray(i, i + size).toString('latin1') : file.subarray(i, i + size));
  return Readable.from(chunks);
};

interface SplitOptions {
  report?: ReportDefinition;
  rowGroupRows?: number;
  maxRejectShare?: number;
  /** The second read's chunk size, and whether its chunks are strings. */
  tailChunk?: number;
  strings?: boolean;
  /** This thread's read in chunks of this size (default: one chunk). */
  inputChunk?: number;
  encoder?: 'worker' | 'inline';
}

async function convert(text: string, at: number | undefined, options: SplitOptions = {}) {
  const file = Buffer.from(text, 'utf8');
  const output = new MemorySink();
  const rejects = new MemorySink();
  let manifest: Manifest | undefined;
  let error: unknown;
  try {
    manifest = await convertCsvToParquet({
      input: options.inputChunk ? tailOf(file, options.inputChunk, false)(0) : Readable.from([file]),
      output,
      rejects,
      report: options.report ?? REPORT,
      encoder: options.encoder ?? 'inline',
      maxRejectShare: options.maxRejectShare ?? 1,
      ...(options.rowGroupRows ? { rowGroupRows: options.rowGroupRows } : {}),
      ...(at === undefined ? {} : { split: { at, tail: tailOf(file, options.tailChunk ?? 1 << 16, options.strings ?? false), start: SplitPart.start } }),
    });
  } catch (e) {
    error = e;
    manifest = manifestOf(e);
  }
  const bytes = output.bytes;
  const parquet = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = output.ended ? await parquetReadObjects({ file: parquet }) : undefined;
  const groups = output.ended ? parquetMetadata(parquet).row_groups.map((g) => Number(g.num_rows)) : undefined;
  return { manifest, error, rows, groups, output, rejectText: rejects.bytes.toString('utf8') };
}

describe('SplitPart.start', () => {
  const input = { at: 16, tail: () => Readable.from([]) };
  it('does not split a report that is not UTF-8, or with no cut inside the file', () => {
    assert.equal(SplitPart.start(reportWith({ encoding: 'windows-1251' }), { rowGroupRows: 10, rowGroupBytes: 1000 }, input), undefined);
    for (const at of [0, -5, NaN]) assert.equal(SplitPart.start(REPORT, { rowGroupRows: 10, rowGroupBytes: 1000 }, { ...input, at }), undefined, String(at));
  });

  it('does not split on a machine with one CPU', () => {
    mock.method(os, 'availableParallelism', () => 1);
    syncBuiltinESMExports();
    try {
      assert.equal(SplitPart.start(REPORT, { rowGroupRows: 10, rowGroupBytes: 1000 }, input), undefined);
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
  });
});

describe('SplitPart on its own', { skip: !twoCpus && 'one CPU: the converter never splits' }, () => {
  const bounds = { rowGroupRows: 10, rowGroupBytes: 1000 };

  it('stopped before its part is done: no result', async () => {
    const part = SplitPart.start(REPORT, bounds, { at: 16, tail: () => Readable.from([Buffer.from(FILE).subarray(16)]) })!;
    assert.equal(await part.limit, 19);
    await part.stop();
    await part.stop();
    assert.equal(await part.result(), undefined);
  });

  it('a second read that fails: no cut, no result, nothing thrown', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('b\r');
      throw new Error('S3 read reset');
    }
    const part = SplitPart.start(REPORT, bounds, { at: 16, tail: () => failing() })!;
    assert.equal(await part.limit, undefined);
    assert.equal(await part.result(), undefined);
  });

  it('a worker that fails as it starts: no result, and no error event left unheard', async () => {
    const broken = { ...REPORT, columns: [{ ...REPORT.columns[0]!, kind: 'no such kind' }, REPORT.columns[1]!] } as unknown as ReportDefinition;
    const part = SplitPart.start(broken, bounds, { at: 16, tail: () => Readable.from([Buffer.from(FILE).subarray(16)]) })!;
    assert.equal(await part.result(), undefined);
  });
});

describe('a small file parsed on two threads', { skip: !twoCpus && 'one CPU: the converter never splits' }, () => {
  it('cut at a record boundary: the worker converts from the next line, and the rows come back in order', async () => {
    const { manifest, rows, groups, error } = await convert(FILE, 16, { encoder: 'worker' });
    assert.equal(error, undefined);
    assert.equal(manifest!.encoder, 'inline', 'two parsing threads already use both cores: no encoder thread');
    assert.deepEqual(rows, ROWS);
    assert.deepEqual(groups, [2, 3], 'this thread\'s group, then the worker\'s');
    assert.equal(manifest!.split?.atByte, 19);
    assert.equal(manifest!.split?.rowsRead, 3);
    assert.deepEqual([manifest!.rowsRead, manifest!.rowsWritten, manifest!.rowsRejected, manifest!.emptyLines, manifest!.rowGroups, manifest!.bytesIn], [5, 5, 0, 0, 2, 39]);
    assert.deepEqual(manifest!.tally, { duplicateKeys: 0 });
  });

  it('this thread\'s read in 4-byte chunks: cut where a chunk ends, read through past it', async () => {
    const { manifest, rows, error } = await convert(FILE, 16, { inputChunk: 4 });
    assert.equal(error, undefined);
    assert.deepEqual(rows, ROWS);
    assert.deepEqual([manifest!.split?.atByte, manifest!.split?.rowsRead, manifest!.rowsRead, manifest!.bytesIn], [19, 3, 5, 39]);
  });

  it('a key of the first part repeated in the second is a duplicate', async () => {
    const { manifest } = await convert(FILE.replace('5,e', '1,e'), 16);
    assert.equal(manifest!.split?.rowsRead, 3);
    assert.deepEqual(manifest!.tally, { duplicateKeys: 1 });
  });

  it('a cut past the end of the input: no second part, and its thread is stopped', async () => {
    const { manifest, rows } = await convert(FILE, 500);
    assert.equal(manifest!.split, undefined);
    assert.deepEqual(rows, ROWS);
  });

  it('a drifted header stops the second part\'s thread and fails the file', async () => {
    const { error, output } = await convert(FILE.replace('Id,Note', 'Id,Notes'), 16);
    assert.equal((error as Error).name, 'SchemaDrift');
    assert.equal(output.aborted, error);
  });

  it('a second read that fails leaves this thread to parse the whole file', async () => {
    const file = Buffer.from(FILE);
    async function* failing(): AsyncGenerator<Buffer> {
      yield file.subarray(16, 18);
      throw new Error('S3 read reset');
    }
    const output = new MemorySink();
    const manifest = await convertCsvToParquet({ input: Readable.from([file]), output, report: REPORT, encoder: 'inline', split: { at: 16, tail: () => failing(), start: SplitPart.start } });
    assert.equal(manifest.split, undefined);
    const bytes = output.bytes;
    assert.deepEqual(await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer }), ROWS);
  });

  it('cut inside a quoted value holding a line break: the second part is dropped, the rows are the same', async () => {
    const { manifest, rows, groups } = await convert(FILE, 22);
    assert.equal(manifest!.split, undefined);
    assert.deepEqual(rows, ROWS);
    assert.deepEqual(groups, [5]);
  });

  it('once the second part is dropped, row groups close at their bound again', async () => {
    // Rows 1 and 2 were parsed while the cut at 25 stood (nothing of the part left: held open); row 3 closes it.
    const { manifest, groups } = await convert(FILE, 22, { rowGroupRows: 2 });
    assert.equal(manifest!.split, undefined);
    assert.deepEqual(groups, [3, 2]);
  });

  it('cut in the header: the second part is dropped', async () => {
    const { manifest, rows } = await convert(FILE, 3);
    assert.equal(manifest!.split, undefined);
    assert.deepEqual(rows, ROWS);
  });

  it('no line feed after the cut: no second part', async () => {
    const { manifest, rows } = await convert(FILE.slice(0, -2), 35);
    assert.equal(manifest!.split, undefined);
    assert.deepEqual(rows, ROWS);
  });

  it('a second read in one-byte string chunks, more than may be in flight at once, finds the same cut', async () => {
    const many = FILE + Array.from({ length: 40 }, (_, i) => `${6 + i},z\r\n`).join('');
    const { manifest, rows } = await convert(many, 16, { tailChunk: 1, strings: true });
    assert.equal(manifest!.split?.atByte, 19);
    assert.equal(manifest!.split?.rowsRead, 43);
    assert.deepEqual(rows!.map((r) => r.id), Array.from({ length: 45 }, (_, i) => BigInt(i + 1)));
  });

  it('a byte-order mark is read at the file\'s start only, and the cut counts it', async () => {
    const { manifest, rows } = await convert(`\ufeff${FILE}`, 19);
    assert.equal(manifest!.split?.atByte, 22);
    assert.deepEqual(rows, ROWS);
  });

  it('rejects and blank lines in the second part are counted, the rejects with the file\'s line numbers', async () => {
    const { manifest, rejectText } = await convert(FILE.replace('4,d\r\n', 'x,d\r\n\r\n'), 16);
    assert.equal(manifest!.split?.rowsRead, 3);
    assert.deepEqual([manifest!.rowsRead, manifest!.rowsWritten, manifest!.rowsRejected, manifest!.emptyLines], [5, 4, 1, 1]);
    assert.equal(rejectText, '"line","column","reason","record"\r\n"6","Id","not an integer: ""x""","""x"",""d"""\r\n');
  });

  it('with no rejects allowed, a rejected row in the first part refuses the file with every part\'s rows counted', async () => {
    const { error, manifest, output } = await convert(FILE.replace('1,a', 'y,a'), 16, { maxRejectShare: 0 });
    assert.ok(error instanceof TooManyRejectedRows);
    assert.deepEqual([manifest!.rowsRead, manifest!.rowsRejected], [5, 1]);
    assert.ok(output.aborted);
  });

  it('a malformed second part fails as one thread does, on the same line', async () => {
    const bad = FILE.replace('4,d', '4,d"q');
    const alone = await convert(bad, undefined);
    const split = await convert(bad, 16);
    assert.ok(alone.error instanceof MalformedReport);
    assert.match((alone.error as Error).message, /the last good record ended on line 5\)/);
    assert.equal((split.error as Error).message, (alone.error as Error).message);
    const strings = await convert(bad, 16, { tailChunk: 7, strings: true });
    assert.equal((strings.error as Error).message, (alone.error as Error).message, 'the second read as strings, parsed here');
  });

  it('keeps this thread\'s last row group open when the rest of its part would not fill another', async () => {
    const nine = `Id,Note\r\n${Array.from({ length: 9 }, (_, i) => `${i + 1},a\r\n`).join('')}`;
    // Rows 1-5 (bytes 9-33) are this thread's, the cut at 30 puts 6-9 in the worker's part.
    const { groups, manifest } = await convert(nine, 30, { rowGroupRows: 2 });
    assert.equal(manifest!.split?.atByte, 34);
    assert.deepEqual(groups, [5, 2, 2]);
  });
});
