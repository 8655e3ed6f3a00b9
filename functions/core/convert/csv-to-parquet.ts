import type { Readable } from 'node:stream';
import { countingSink, type OutputSink } from '../byte-sink.js';
import { CsvRecordReader } from '../csv/records.js';
import { startEncoder, type EncoderMode } from '../parquet/encoder-thread.js';
import { ConfigurationError, SchemaDrift, TooManyRejectedRows } from '../errors.js';
import { RejectWriter } from '../csv/reject-writer.js';
import type { ReportDefinition } from '../definitions/report-definition.js';
import { RowBatchBuilder } from '../parquet/row-group-buffer.js';
import { RowLoop } from './row-loop.js';
import { RowTally, type RowTallyResult } from '../quality/row-tally.js';
import type { PartResult, SplitInput, StartSplitPart } from './csv-split.js';

/**
 * A report's CSV to one Parquet file (docs/architecture.md, "The flow"), streaming end to end:
 * input chunk -> decode -> csv-parse -> header check -> typed batches -> row groups -> Parquet bytes
 * -> output sink, each step waiting for the next, so memory is bounded whatever the file size
 * (a chunk of input, one row group being filled, one being encoded and written).
 *
 * The output only receives bytes after the header matched the definition. It is ended (the file is
 * complete) only on success; on any failure, including too many rejected rows, it is aborted, so an
 * S3 multipart upload is never completed with a file that must not be published. The rejects file is
 * ended whenever the whole input was read, so it is complete when TooManyRejectedRows is thrown.
 */

export interface ConvertOptions {
  /** The raw report bytes (a file or S3 object stream). */
  input: Readable | AsyncIterable<Uint8Array | string>;
  /** The Parquet file: a Writable (file, the PassThrough an S3 Upload reads) or a ByteSink. */
  output: OutputSink;
  report: ReportDefinition;
  /** The rejected rows as CSV (line, column, reason, record). Omit to only count them. */
  rejects?: OutputSink;
  /** Most rows in a row group (default 131,072; see DEFAULT_ROW_GROUP_ROWS). */
  rowGroupRows?: number;
  /** Most estimated Parquet bytes (before compression) in a row group (default 64 MiB): keeps huge fields from piling up. */
  rowGroupBytes?: number;
  /** Largest share of rejected rows that still publishes (default: the report's rejects.maxShare). */
  maxRejectShare?: number;
  /** Where Parquet encoding runs (default 'auto': a worker thread when available; see encoder-thread.ts). */
  encoder?: EncoderMode;
  /** The worker script, when it is not parquet-worker.js beside this module (bundles). */
  workerUrl?: URL;
  /**
   * Parse the file on two threads (local runs): the input is this thread's read of the whole file, `split`
   * a second read from near its middle, whose part a worker converts (csv-split.ts). Ignored where it cannot
   * be done (one CPU, not UTF-8, no worker script).
   */
  split?: SplitInput & { start: StartSplitPart };
  /**
   * End (commit) the output after the last byte on success (default true). False leaves committing to
   * the caller, e.g. MultipartSink.finish() after the manifest is stored; failures still abort it.
   */
  finishOutput?: boolean;
}

export interface Manifest {
  reportId: string;
  /** Data records read (the header is not one). rowsRead = rowsWritten + rowsRejected. */
  rowsRead: number;
  /** Records that typed and went into the Parquet file. */
  rowsWritten: number;
  rowsRejected: number;
  /** Blank lines skipped (they hold no record). */
  emptyLines: number;
  rowGroups: number;
  /** Raw bytes read from the input. */
  bytesIn: number;
  /** Parquet bytes written to the output. */
  bytesOut: number;
  /** Bytes of the rejects file, when one was asked for. */
  rejectBytes?: number;
  /** Duplicate keys and the sum column's total over the rows written, when the definition declares them (row-tally.ts). */
  tally?: RowTallyResult;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  encoder: 'worker' | 'inline';
  /** Inline encoding only: the milliseconds of encodeMs spent writing each column's chunks (benchmarks). */
  encodeMsByColumn?: Record<string, number>;
  /** When a second thread converted the file's second part: where it began, its rows, its own times. */
  split?: { atByte: number; rowsRead: number; parseMs: number; encodeMs: number };
  timings: {
    /** Decoding, parsing and typing on the calling thread. */
    parseMs: number;
    /** Parquet encoding (on the worker when there is one, so it overlaps parseMs). */
    encodeMs: number;
    /** Waiting for the input, the encoder and the sinks. */
    waitMs: number;
  };
}

/**
 * Row-group bounds: a group closes at 128k rows or 64 MiB of estimated uncompressed values, whichever
 * comes first (docs/parquet.md says why). Per-group overhead (footer entries, statistics, a seek and a
 * range request per column chunk for every query) is paid per group, and Trino and parquet-java default
 * to 128 MB groups, so groups should be large; the byte bound keeps rows of huge fields from piling up.
 * Memory stays bounded because the encoder holds a group in typed column buffers, reused from group to
 * group (column-buffers.ts), and the parser runs at most one group ahead (encoder-thread.ts).
 */
export const DEFAULT_ROW_GROUP_ROWS = 128 * 1024;
export const DEFAULT_ROW_GROUP_BYTES = 64 * 1024 * 1024;

/** The number of `"` bytes (a JS loop: ~0.5 ns a byte, where indexOf would be a native call per quote). */
function countQuotes(bytes: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 34) n++;
  return n;
}

/** The manifest of a run that threw TooManyRejectedRows, so the caller can still store it. */
export function manifestOf(error: unknown): Manifest | undefined {
  return (error as { manifest?: Manifest } | null)?.manifest;
}

/**
 * Throws SchemaDrift unless the header row is exactly the definition's headers, in order. Names
 * compare exactly: a renamed, re-cased or padded header is drift, because guessing would silently
 * load one column's values into another.
 */
export function checkHeader(report: ReportDefinition, header: readonly string[]): void {
  const expected = report.columns.map((c) => c.header);
  if (header.length === expected.length && header.every((h, i) => h === expected[i])) return;
  const got = new Set(header);
  const want = new Set(expected);
  const missing = expected.filter((h) => !got.has(h));
  const extra = header.filter((h, i) => !want.has(h) || header.indexOf(h) !== i); // unknown, or a duplicate
  const moved = expected.filter((h, i) => got.has(h) && header.indexOf(h) !== i);
  throw new SchemaDrift(report.id, missing, extra, moved);
}

export async function convertCsvToParquet(options: ConvertOptions): Promise<Manifest> {
  const { report } = options;
  const rowGroupRows = options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
  const rowGroupBytes = options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES;
  const maxShare = options.maxRejectShare ?? report.rejects.maxShare;
  if (!(rowGroupRows >= 1) || !(rowGroupBytes >= 1)) throw new ConfigurationError('rowGroupRows and rowGroupBytes must be positive');
  if (!(maxShare >= 0 && maxShare <= 1)) throw new ConfigurationError(`maxRejectShare must be between 0 and 1, got ${maxShare}`);
  if (report.format !== 'CSV') throw new ConfigurationError(`report "${report.id}" is ${report.format}, not CSV: there is nothing to convert`);

  const started = Date.now();
  const t0 = performance.now();
  const out = countingSink(options.output);
  const rejectSink = options.rejects ? countingSink(options.rejects) : undefined;
  const rejects = new RejectWriter(rejectSink, report.delimiter);
  const columns = report.columns;
  const headers = columns.map((c) => c.header);
  const builder = new RowBatchBuilder(columns);
  // Undefined unless the definition declares keys or a sum column: then the row loop pays one test per row.
  const tally = RowTally.for(report);
  // A second thread for the file's second part, when asked for and possible (csv-split.ts).
  let part = options.split ? options.split.start(report, { rowGroupRows, rowGroupBytes }, options.split) : undefined;
  // Where this thread's part will end, as soon as the worker found it (before this thread gets there).
  let partEnd: number | undefined;
  void part?.limit.then((l) => (partEnd = l));

  let encoder: ReturnType<typeof startEncoder> | undefined;
  let headerSeen = false;
  let bytesIn = 0;
  let parseMs = 0;
  // With no rejects allowed, the first one decides the run: stop encoding, keep reading to count them all.
  let doomed = false;
  // The split: where this thread's part ends once known, how far it has been fed, where the open group began.
  let limit: number | undefined;
  let fed = 0;
  let groupStart = 0;
  let partDone = false;

  const ship = (endOfGroup: boolean) => {
    // The batch is copied at once (into the inline encoder's column buffers, or by postMessage to the
    // worker), so it may be views of the builder's buffers.
    const batch = builder.take(true);
    if (!doomed) encoder?.add(batch, endOfGroup);
    if (endOfGroup) groupStart = fed;
  };

  const reject = (line: number, column: string, reason: string, record: string[]) => {
    rejects.add(line, column, reason, record);
    if (maxShare === 0 && !doomed) {
      doomed = true;
      // Settled here, awaited nowhere: failures to abort surface again when the run aborts at the end.
      void encoder?.abort();
      out.abort(new Error(`rejected rows in report "${report.id}": the Parquet file will not be published`)).catch(() => {});
    }
  };

  // In a split file this thread's last row group stays open past its row bound when what is left of the
  // part would not fill another: the groups before the second part's stay at least rowGroupRows long.
  const holdGroup = () => part !== undefined && partEnd !== undefined && !partDone && partEnd - fed < fed - groupStart;
  const loop = new RowLoop(columns, builder, tally, { rows: rowGroupRows, bytes: rowGroupBytes }, ship, reject, holdGroup);

  const onRecord = (record: string[], line: number) => {
    if (!headerSeen) {
      checkHeader(report, record);
      headerSeen = true;
      // Two parsing threads already use both cores: each encodes its own part.
      encoder = startEncoder({ columns }, out, part ? 'inline' : options.encoder, options.workerUrl);
      return;
    }
    loop.record(record, line);
  };

  const reader = new CsvRecordReader(report.id, report.delimiter, report.encoding, onRecord);
  // Quote characters fed so far, while a split is pending: the cut is a record boundary when their number is
  // even (outside quotes). csv-parse cannot say so itself at the cut: it holds back the last bytes of a
  // chunk (`"\r\n`) until it sees the next one, and the next byte is the second part's.
  let quotes = 0;
  const parse = (bytes: Buffer) => {
    const t = performance.now();
    fed += bytes.length;
    if (part) quotes += countQuotes(bytes);
    reader.write(bytes);
    parseMs += performance.now() - t;
  };
  /** Drops the second part: this thread parses the whole file, as without a split. */
  const parseAlone = async () => {
    const dropped = part;
    part = undefined;
    limit = undefined;
    await dropped?.stop();
  };
  let rejectsClosed = false;
  let second: PartResult | null | undefined;
  try {
    for await (const chunk of options.input) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const chunkStart = bytesIn;
      bytesIn += bytes.length;
      // Past the cut, the rest of the input is the worker's: it is only read through (the caller hashes it),
      // once the worker is done and gone. Read at once, its chunks would be garbage this thread makes too
      // little of to be collected soon, held beside the worker's whole isolate at the run's peak of memory.
      if (partDone) {
        if (second === undefined) second = (await part!.result()) ?? null;
        continue;
      }
      if (part && limit === undefined && bytesIn > part.at) {
        limit = await part.limit;
        if (limit === undefined) await parseAlone();
      }
      if (part && limit !== undefined && bytesIn >= limit) {
        const cut = limit - chunkStart;
        parse(bytes.subarray(0, cut));
        if (quotes % 2 === 0 && headerSeen) {
          partDone = true;
        } else {
          // The cut fell inside a quoted value (or the header was all there was): parse on through.
          await parseAlone();
          parse(bytes.subarray(cut));
        }
      } else {
        parse(bytes);
      }
      await encoder?.ready();
      await rejects.drain();
    }
    if (part && partDone) {
      if (second === undefined) second = (await part.result()) ?? null;
      if (!second) {
        // The worker failed (malformed bytes in its part, most likely): parse its part here, so the run fails
        // or succeeds exactly as it would have on one thread.
        const from = limit!;
        await parseAlone();
        for await (const chunk of await options.split!.tail(from)) {
          parse(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          await encoder?.ready();
          await rejects.drain();
        }
      }
    } else if (part) {
      await parseAlone();
    }
    const t = performance.now();
    reader.end();
    parseMs += performance.now() - t;
    if (!headerSeen) throw new SchemaDrift(report.id, headers, [], []);
    loop.closeGroup();

    let rowsRead = loop.rowsRead;
    let rowsWritten = loop.rowsWritten;
    let rowsRejected = loop.rowsRejected;
    let emptyLines = reader.emptyLines;
    if (second) {
      // The second part's row groups follow this thread's, its rejects follow with their lines counted on.
      // One group at a time, each let go once the sink took it: they are the worker's whole part. This
      // thread's column buffers are not needed any more.
      encoder?.releaseBuffers();
      const groups = second.groups.splice(0);
      for (let g = 0; g < groups.length && !doomed; g++) {
        encoder!.appendRowGroup(groups[g]!.bytes, groups[g]!.group);
        groups[g] = undefined!;
        await encoder!.ready();
      }
      const lines = reader.linesRead;
      for (const r of second.rejects) reject(r.line + lines, r.column, r.reason, r.record);
      if (second.tally) tally?.merge(second.tally);
      rowsRead += second.rowsRead;
      rowsWritten += second.rowsWritten;
      rowsRejected += second.rowsRejected;
      emptyLines += second.emptyLines;
    }

    await rejects.close();
    rejectsClosed = true;
    const manifest = (encodeMs: number, rowGroups: number): Manifest => {
      const durationMs = performance.now() - t0;
      return {
        reportId: report.id,
        rowsRead,
        rowsWritten,
        rowsRejected,
        emptyLines,
        rowGroups,
        bytesIn,
        bytesOut: out.bytes,
        ...(rejectSink ? { rejectBytes: rejectSink.bytes } : {}),
        ...(tally ? { tally: tally.result() } : {}),
        startedAt: new Date(started).toISOString(),
        finishedAt: new Date(started + durationMs).toISOString(),
        durationMs: Math.round(durationMs),
        encoder: encoder?.mode ?? 'inline',
        timings: { parseMs: Math.round(parseMs), encodeMs: Math.round(encodeMs), waitMs: Math.round(durationMs - parseMs) },
        ...(second ? { split: { atByte: limit!, rowsRead: second.rowsRead, parseMs: Math.round(second.parseMs), encodeMs: Math.round(second.encodeMs) } } : {}),
      };
    };

    if (rowsRejected > 0 && rowsRejected / rowsRead > maxShare) {
      const error = new TooManyRejectedRows(report.id, rowsRejected, rowsRead, maxShare);
      await encoder?.abort();
      await out.abort(error);
      throw Object.assign(error, { manifest: manifest(0, 0) });
    }
    const { encodeMs, rowGroups, columnMs } = await encoder!.finish();
    if (options.finishOutput !== false) await out.end();
    return {
      ...manifest(encodeMs, rowGroups),
      ...(columnMs ? { encodeMsByColumn: Object.fromEntries(columns.map((c, i) => [c.name, Math.round(columnMs[i]!)])) } : {}),
    };
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    await part?.stop();
    await encoder?.abort();
    await out.abort(error);
    if (!rejectsClosed) await rejects.abort(error);
    throw error;
  }
}
