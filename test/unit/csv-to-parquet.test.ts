import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import {
  checkHeader,
  convertCsvToParquet,
  DEFAULT_ROW_GROUP_BYTES,
  DEFAULT_ROW_GROUP_ROWS,
  manifestOf,
  type ConvertOptions,
  type Manifest,
} from '../../functions/core/convert/csv-to-parquet.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { ConfigurationError, SchemaDrift, TooManyRejectedRows } from '../../functions/core/errors.js';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };
import { MemorySink } from '../helpers/memory-sink.js';

/**
 * One small CSV to one Parquet file on this thread (csv-to-parquet.ts), read back with hyparquet: the rows, the
 * row groups, the manifest's counts, the rejects file, and what the output sink is told on success and failure.
 */

const COLUMNS = [
  { header: 'Id', name: 'id', type: 'bigint' },
  { header: 'Amount', name: 'amount', type: 'decimal(18,3)' },
  { header: 'Note', name: 'note', type: 'string', nullable: true },
  { header: 'Day', name: 'day', type: 'date', pattern: 'dd.MM.yyyy' },
];
const HEADER = 'Id,Amount,Note,Day\r\n';

function reportWith(extra: Record<string, unknown> = {}): ReportDefinition {
  return parseReportDefinition({ ...transactionsJson, columns: COLUMNS, keys: ['id'], ...extra }, 'reports/t.json');
}
const REPORT = reportWith();

const arrayBuffer = (bytes: Buffer) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

async function convert(input: ConvertOptions['input'] | string, options: Partial<ConvertOptions> = {}) {
  const output = new MemorySink();
  const rejects = new MemorySink();
  let manifest: Manifest | undefined;
  let error: unknown;
  try {
    manifest = await convertCsvToParquet({
      input: typeof input === 'string' ? Readable.from([Buffer.from(input, 'utf8')]) : input,
      output,
      rejects,
      report: REPORT,
      encoder: 'inline',
      ...options,
    });
  } catch (e) {
    error = e;
    manifest = manifestOf(e);
  }
  const rows = output.ended ? await parquetReadObjects({ file: arrayBuffer(output.bytes) }) : undefined;
  const groups = output.ended ? parquetMetadata(arrayBuffer(output.bytes)).row_groups.map((g) => Number(g.num_rows)) : undefined;
  return { manifest, error, output, rejects, rows, groups, rejectText: rejects.bytes.toString('utf8') };
}

const day = (iso: string) => new Date(`${iso}T00:00:00Z`);

describe('convertCsvToParquet: rows in, Parquet out', () => {
  it('types every value and reads back as the rows it was given', async () => {
    const csv = `${HEADER}1,12.5,"a, b",21.11.2026\r\n9007199254740993,-0.001,,01.01.2000\r\n`;
    const { manifest, rows, groups, output, rejectText, error } = await convert(csv);
    assert.equal(error, undefined);
    assert.deepEqual(rows, [
      { id: 1n, amount: 12.5, note: 'a, b', day: day('2026-11-21') },
      { id: 9007199254740993n, amount: -0.001, note: null, day: day('2000-01-01') },
    ]);
    assert.deepEqual(groups, [2]);
    assert.equal(output.ended, true);
    assert.equal(output.aborted, undefined);
    assert.deepEqual(
      [manifest!.reportId, manifest!.rowsRead, manifest!.rowsWritten, manifest!.rowsRejected, manifest!.emptyLines, manifest!.rowGroups],
      ['transactions', 2, 2, 0, 0, 1],
    );
    assert.equal(manifest!.bytesIn, Buffer.byteLength(csv));
    assert.equal(manifest!.bytesOut, output.bytes.length);
    assert.equal(manifest!.encoder, 'inline');
    assert.deepEqual(Object.keys(manifest!.encodeMsByColumn!), ['id', 'amount', 'note', 'day']);
    assert.ok(Object.values(manifest!.encodeMsByColumn!).every((ms) => Number.isInteger(ms) && ms >= 0), JSON.stringify(manifest!.encodeMsByColumn));
    assert.equal(manifest!.split, undefined);
    assert.equal(rejectText, '"line","column","reason","record"\r\n', 'a header-only rejects file');
    assert.equal(manifest!.rejectBytes, 35);
    assert.deepEqual(manifest!.tally, { duplicateKeys: 0 });
  });

  it('says when it ran and for how long, in agreement', async () => {
    const before = Date.now();
    const { manifest } = await convert(`${HEADER}1,1,,01.01.2000\r\n`);
    const after = Date.now();
    const started = Date.parse(manifest!.startedAt);
    const finished = Date.parse(manifest!.finishedAt);
    assert.ok(started >= before && finished <= after + 1, `${manifest!.startedAt} ${manifest!.finishedAt}`);
    assert.ok(Math.abs(finished - started - manifest!.durationMs) <= 1, JSON.stringify(manifest));
    const { parseMs, encodeMs, waitMs } = manifest!.timings;
    assert.ok([parseMs, encodeMs, waitMs].every((t) => Number.isInteger(t) && t >= 0), JSON.stringify(manifest!.timings));
    assert.ok(Math.abs(parseMs + waitMs - manifest!.durationMs) <= 1, JSON.stringify(manifest));
  });

  it('takes chunks as Buffers, plain Uint8Arrays or strings, cut anywhere', async () => {
    const text = `${HEADER}1,2.5,é,02.01.2000\r\n`;
    const bytes = Buffer.from(text, 'utf8');
    const view = new Uint8Array(new ArrayBuffer(bytes.length + 4), 2, bytes.length);
    view.set(bytes);
    const parts = [view.subarray(0, 5), 'ount,Note,Day\r\n1,2.5,', Buffer.from('é,02.01.2000\r\n')];
    const { rows, manifest } = await convert(Readable.from(parts));
    assert.deepEqual(rows, [{ id: 1n, amount: 2.5, note: 'é', day: day('2000-01-02') }]);
    assert.equal(manifest!.bytesIn, 5 + Buffer.byteLength('ount,Note,Day\r\n1,2.5,') + Buffer.byteLength('é,02.01.2000\r\n'));
  });

  it('counts blank lines without reading them as rows', async () => {
    const { manifest, rows } = await convert(`${HEADER}\r\n1,1,,01.01.2000\r\n\r\n\r\n2,2,,01.01.2000\r\n`);
    assert.deepEqual([manifest!.rowsRead, manifest!.emptyLines], [2, 3]);
    assert.deepEqual(rows!.map((r) => r.id), [1n, 2n]);
  });

  it('closes a row group at rowGroupRows rows, and at rowGroupBytes estimated bytes', async () => {
    const body = [1, 2, 3, 4, 5].map((i) => `${i},${i},ab,01.01.2000\r\n`).join('');
    const byRows = await convert(HEADER + body, { rowGroupRows: 2 });
    assert.deepEqual(byRows.groups, [2, 2, 1]);
    assert.equal(byRows.manifest!.rowGroups, 3);
    assert.deepEqual(byRows.rows!.map((r) => r.id), [1n, 2n, 3n, 4n, 5n]);
    // A row of bigint, decimal and date is 8 + 8 + 4 bytes, and 2 + 4 for the note "ab": 26 bytes; 52 is two rows.
    assert.deepEqual((await convert(HEADER + body, { rowGroupBytes: 52 })).groups, [2, 2, 1]);
    assert.deepEqual((await convert(HEADER + body, { rowGroupBytes: 53 })).groups, [3, 2]);
  });

  it('bounds a row group at 128 Ki rows and 64 MiB by default', () => {
    assert.equal(DEFAULT_ROW_GROUP_ROWS, 131_072);
    assert.equal(DEFAULT_ROW_GROUP_BYTES, 67_108_864);
  });

  it('encodes on a worker thread when asked, and says so', async () => {
    const { manifest, rows } = await convert(`${HEADER}1,1,,01.01.2000\r\n`, { encoder: 'worker' });
    assert.equal(manifest!.encoder, 'worker');
    assert.equal(manifest!.encodeMsByColumn, undefined, 'per-column times are measured inline only');
    assert.deepEqual(rows, [{ id: 1n, amount: 1, note: null, day: day('2000-01-01') }]);
  });

  it('a header and no row: an empty table with no row group, and no share of rejects to refuse', async () => {
    const { manifest, rows, error } = await convert(HEADER, { maxRejectShare: 0 });
    assert.equal(error, undefined);
    assert.deepEqual(rows, []);
    assert.deepEqual([manifest!.rowsRead, manifest!.rowGroups], [0, 0]);
  });

  it('leaves ending the output to the caller when asked', async () => {
    const output = new MemorySink();
    const manifest = await convertCsvToParquet({ input: Readable.from([Buffer.from(`${HEADER}1,1,,01.01.2000\r\n`)]), output, report: REPORT, encoder: 'inline', finishOutput: false });
    assert.equal(output.ended, false);
    assert.equal(output.aborted, undefined);
    assert.equal(manifest.rejectBytes, undefined, 'no rejects file asked for');
    assert.deepEqual(await parquetReadObjects({ file: arrayBuffer(output.bytes) }), [{ id: 1n, amount: 1, note: null, day: day('2000-01-01') }]);
  });

  it('writes to a Writable and ends it', async () => {
    const stream = new PassThrough();
    const received: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => received.push(chunk));
    const manifest = await convertCsvToParquet({ input: Readable.from([Buffer.from(`${HEADER}7,1,,01.01.2000\r\n`)]), output: stream, report: REPORT, encoder: 'inline' });
    assert.equal(stream.writableFinished, true);
    const bytes = Buffer.concat(received);
    assert.equal(manifest.bytesOut, bytes.length);
    assert.deepEqual((await parquetReadObjects({ file: arrayBuffer(bytes) })).map((r) => r.id), [7n]);
  });

  it('reports the data checks\' tally: duplicate keys among the rows written', async () => {
    const { manifest } = await convert(`${HEADER}1,1,,01.01.2000\r\n1,2,,01.01.2000\r\n2,3,,01.01.2000\r\n`, { report: reportWith({ keys: ['id'] }) });
    assert.deepEqual(manifest!.tally, { duplicateKeys: 1 });
    const untallied = await convert(`${HEADER}1,1,,01.01.2000\r\n`, { report: reportWith({ keys: undefined }) });
    assert.equal(untallied.manifest!.tally, undefined);
  });
});

describe('convertCsvToParquet: rejected rows', () => {
  const mixed = `${HEADER}1,1,,01.01.2000\r\nx,2,"say ""hi""",01.01.2000\r\n3,3,,01.01.2000\r\n4,4\r\n`;

  it('writes each rejected row with its line, column, reason and record, and the rest to the table', async () => {
    const { manifest, rows, rejectText, rejects, output } = await convert(mixed, { maxRejectShare: 1 });
    assert.deepEqual(rows!.map((r) => r.id), [1n, 3n]);
    assert.deepEqual([manifest!.rowsRead, manifest!.rowsWritten, manifest!.rowsRejected], [4, 2, 2]);
    const lines = rejectText.split('\r\n');
    assert.equal(lines[0], '"line","column","reason","record"');
    assert.equal(lines[1], '"3","Id","not an integer: ""x""","""x"",""2"",""say """"hi"""""",""01.01.2000"""');
    assert.equal(lines[2], '"5","","has 2 field(s), the header has 4","""4"",""4"""');
    assert.equal(lines.length, 4);
    assert.equal(manifest!.rejectBytes, Buffer.byteLength(rejectText));
    assert.equal(rejects.ended, true);
    assert.equal(output.ended, true);
  });

  it('publishes at exactly the allowed share, refuses above it with the manifest attached', async () => {
    const atShare = await convert(mixed, { maxRejectShare: 0.5 });
    assert.equal(atShare.error, undefined);
    const above = await convert(mixed, { maxRejectShare: 0.49 });
    assert.ok(above.error instanceof TooManyRejectedRows);
    assert.match((above.error as Error).message, /^Report "transactions": 2 of 4 row\(s\) failed typing, above the allowed share 0\.49\./);
    assert.deepEqual([above.manifest!.rowsRead, above.manifest!.rowsRejected, above.manifest!.rowGroups], [4, 2, 0]);
    assert.equal(above.output.ended, false);
    assert.equal(above.output.aborted, above.error, 'the output is aborted with the refusal');
    assert.equal(above.rejects.ended, true, 'the rejects file is complete');
    assert.equal(above.rejects.aborted, undefined);
    assert.equal(above.rejectText.split('\r\n').length, 4);
  });

  it('takes the report\'s own share by default: 0 refuses the first rejected row, and still counts them all', async () => {
    const { error, output, manifest, rejectText } = await convert(mixed);
    assert.ok(error instanceof TooManyRejectedRows);
    assert.ok(output.aborted instanceof Error);
    assert.deepEqual([manifest!.rowsRead, manifest!.rowsWritten, manifest!.rowsRejected], [4, 2, 2]);
    assert.equal(rejectText.split('\r\n').length, 4, 'both rejected rows are written');
    const shared = await convert(mixed, { report: reportWith({ rejects: { maxShare: 0.5 } }) });
    assert.equal(shared.error, undefined);
  });

  it('with no rejects allowed, aborts the output at the first rejected row, before the end of the input', async () => {
    const output = new MemorySink();
    let abortedBeforeEnd: boolean | undefined;
    async function* input() {
      yield Buffer.from(`${HEADER}1,1,,01.01.2000\r\nbad,1,,01.01.2000\r\n`);
      yield Buffer.from('2,2,,01.01.2000\r\n');
      await new Promise((resolve) => setImmediate(resolve));
      abortedBeforeEnd = output.aborted !== undefined;
      yield Buffer.from('3,3,,01.01.2000\r\n');
    }
    await assert.rejects(convertCsvToParquet({ input: input(), output, report: REPORT, encoder: 'inline', maxRejectShare: 0 }), TooManyRejectedRows);
    assert.equal(abortedBeforeEnd, true);
    assert.equal(output.aborted!.message, 'rejected rows in report "transactions": the Parquet file will not be published');
  });

  it('manifestOf finds no manifest on other errors, or on nothing', () => {
    assert.equal(manifestOf(new Error('x')), undefined);
    assert.equal(manifestOf(null), undefined);
    assert.equal(manifestOf(undefined), undefined);
  });
});

describe('convertCsvToParquet: refusals before any row', () => {
  const refused = async (options: Partial<ConvertOptions>, message: string) => {
    const { error, output } = await convert(`${HEADER}1,1,,01.01.2000\r\n`, options);
    assert.ok(error instanceof ConfigurationError, String(error));
    assert.equal((error as Error).message, message);
    assert.equal(output.chunks.length, 0);
  };

  it('refuses row-group bounds below 1 and a reject share outside [0, 1]', async () => {
    await refused({ rowGroupRows: 0 }, 'rowGroupRows and rowGroupBytes must be positive');
    await refused({ rowGroupBytes: 0 }, 'rowGroupRows and rowGroupBytes must be positive');
    await refused({ rowGroupRows: NaN }, 'rowGroupRows and rowGroupBytes must be positive');
    await refused({ maxRejectShare: -0.01 }, 'maxRejectShare must be between 0 and 1, got -0.01');
    await refused({ maxRejectShare: 1.01 }, 'maxRejectShare must be between 0 and 1, got 1.01');
    await refused({ maxRejectShare: NaN }, 'maxRejectShare must be between 0 and 1, got NaN');
  });

  it('accepts the edges: one-row groups, one-byte groups, a share of 0 or 1', async () => {
    assert.deepEqual((await convert(`${HEADER}1,1,,01.01.2000\r\n2,1,,01.01.2000\r\n`, { rowGroupRows: 1 })).groups, [1, 1]);
    assert.deepEqual((await convert(`${HEADER}1,1,,01.01.2000\r\n`, { rowGroupBytes: 1, maxRejectShare: 0 })).groups, [1]);
    assert.equal((await convert(`${HEADER}1,1,,01.01.2000\r\n`, { maxRejectShare: 1 })).error, undefined);
  });

  it('refuses a report that is not CSV', async () => {
    const pdf = { ...REPORT, format: 'PDF' } as unknown as ReportDefinition;
    await refused({ report: pdf }, 'report "transactions" is PDF, not CSV: there is nothing to convert');
  });

  it('a header that differs is schema drift: nothing written, the output and the rejects file aborted', async () => {
    const { error, output, rejects } = await convert('Id,Amount,Day,Note\r\n1,1,01.01.2000,\r\n', { maxRejectShare: 1 });
    assert.ok(error instanceof SchemaDrift);
    assert.deepEqual([error.missing, error.extra, error.moved], [[], [], ['Note', 'Day']]);
    assert.equal(output.chunks.length, 0);
    assert.equal(output.aborted, error);
    assert.equal(rejects.aborted, error);
    assert.equal(rejects.ended, false);
  });

  it('an empty input is schema drift naming every column as missing', async () => {
    const { error, output } = await convert('');
    assert.ok(error instanceof SchemaDrift);
    assert.deepEqual([error.missing, error.extra, error.moved], [['Id', 'Amount', 'Note', 'Day'], [], []]);
    assert.equal(output.aborted, error);
  });

  it('a failing input aborts the output with its error', async () => {
    async function* input() {
      yield Buffer.from(`${HEADER}1,1,,01.01.2000\r\n`);
      throw new Error('S3 read reset');
    }
    const { error, output } = await convert(input());
    assert.equal((error as Error).message, 'S3 read reset');
    assert.equal(output.aborted, error);
  });

  it('a non-Error thrown by the input is wrapped in one', async () => {
    // eslint-disable-next-line require-yield
    async function* input(): AsyncGenerator<Buffer> {
      throw 'disk gone';
    }
    const { error, output } = await convert(input());
    assert.ok(error instanceof Error);
    assert.equal(error.message, 'disk gone');
    assert.equal(output.aborted, error);
  });
});

describe('checkHeader', () => {
  const drift = (header: string[]) => {
    try {
      checkHeader(REPORT, header);
    } catch (e) {
      assert.ok(e instanceof SchemaDrift);
      return { missing: e.missing, extra: e.extra, moved: e.moved };
    }
    return undefined;
  };

  it('passes the definition\'s headers in order, exactly', () => {
    assert.equal(drift(['Id', 'Amount', 'Note', 'Day']), undefined);
  });

  it('names a missing, an extra, a renamed and a re-cased header', () => {
    assert.deepEqual(drift(['Id', 'Amount', 'Note']), { missing: ['Day'], extra: [], moved: [] });
    assert.deepEqual(drift(['Id', 'Amount', 'Note', 'Day', 'Fee']), { missing: [], extra: ['Fee'], moved: [] });
    assert.deepEqual(drift(['Id', 'Amount', 'Notes', 'Day']), { missing: ['Note'], extra: ['Notes'], moved: [] });
    assert.deepEqual(drift(['id', 'Amount', 'Note', 'Day']), { missing: ['Id'], extra: ['id'], moved: [] });
    assert.deepEqual(drift([' Id', 'Amount', 'Note', 'Day']), { missing: ['Id'], extra: [' Id'], moved: [] });
  });

  it('names moved headers, and a duplicate as extra', () => {
    assert.deepEqual(drift(['Amount', 'Id', 'Note', 'Day']), { missing: [], extra: [], moved: ['Id', 'Amount'] });
    assert.deepEqual(drift(['Id', 'Amount', 'Note', 'Day', 'Id']), { missing: [], extra: ['Id'], moved: [] });
    assert.deepEqual(drift(['Id', 'Id', 'Note', 'Day']), { missing: ['Amount'], extra: ['Id'], moved: [] });
  });
});
