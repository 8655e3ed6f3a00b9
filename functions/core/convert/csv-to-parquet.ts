import type { Readable } from 'node:stream';
import { countingSink, type CountingSink, type OutputSink } from '../byte-sink.js';
import { CsvRecordReader } from '../csv/records.js';
import { startEncoder, type EncoderHandle, type EncoderMode } from '../parquet/encoder-thread.js';
import { ConfigurationError, SchemaDrift, TooManyRejectedRows } from '../errors.js';
import { RejectWriter } from '../csv/reject-writer.js';
import type { ReportDefinition } from '../definitions/report-definition.js';
import { RowBatchBuilder } from '../parquet/row-group-buffer.js';
import { RowLoop } from './row-loop.js';
import { RowTally, type RowTallyResult } from '../quality/row-tally.js';
import type { PartResult, SplitInput, SplitPart, StartSplitPart } from './csv-split.js';

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
  const conversion = new CsvConversion(options, checkedLimits(options));
  try {
    await conversion.readInput();
    await conversion.settleSecondPart();
    const counts = conversion.endParse();
    await conversion.appendSecondPart(counts);
    await conversion.closeRejects();
    await conversion.failIfTooManyRejected(counts);
    return await conversion.finish(counts);
  } catch (e) {
    throw await conversion.abort(e);
  }
}

/** The row-group bounds and the reject share a conversion runs with. */
interface ConvertLimits {
  rowGroupRows: number;
  rowGroupBytes: number;
  maxShare: number;
}

/** The options' limits, or a ConfigurationError before anything is started. */
function checkedLimits(options: ConvertOptions): ConvertLimits {
  const { report } = options;
  const rowGroupRows = options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
  const rowGroupBytes = options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES;
  const maxShare = options.maxRejectShare ?? report.rejects.maxShare;
  if (!(rowGroupRows >= 1) || !(rowGroupBytes >= 1)) throw new ConfigurationError('rowGroupRows and rowGroupBytes must be positive');
  if (!(maxShare >= 0 && maxShare <= 1)) throw new ConfigurationError(`maxRejectShare must be between 0 and 1, got ${maxShare}`);
  if (report.format !== 'CSV') throw new ConfigurationError(`report "${report.id}" is ${report.format}, not CSV: there is nothing to convert`);
  return { rowGroupRows, rowGroupBytes, maxShare };
}

/** The whole file's rows: this thread's part's, then the second part's added when there is one. */
interface RowCounts {
  rowsRead: number;
  rowsWritten: number;
  rowsRejected: number;
  emptyLines: number;
}

/**
 * One file's conversion: the state convertCsvToParquet's stages share, and the per-record callbacks (made once,
 * with the conversion) that the CSV reader and the row loop call.
 */
class CsvConversion {
  private readonly options: ConvertOptions;
  private readonly report: ReportDefinition;
  private readonly maxShare: number;
  private readonly started: number;
  private readonly t0: number;
  private readonly out: CountingSink;
  private readonly rejectSink: CountingSink | undefined;
  private readonly rejects: RejectWriter;
  private readonly builder: RowBatchBuilder;
  private readonly tally: RowTally | undefined;
  private readonly loop: RowLoop;
  private readonly reader: CsvRecordReader;
  /** The second part's thread while it is wanted; undefined once this thread parses the whole file. */
  private part: SplitPart | undefined;
  /** Where this thread's part will end, as soon as the worker found it (before this thread gets there). */
  private partEnd: number | undefined;
  private encoder: EncoderHandle | undefined;
  private headerSeen = false;
  private bytesIn = 0;
  private parseMs = 0;
  // With no rejects allowed, the first one decides the run: stop encoding, keep reading to count them all.
  private doomed = false;
  // The split: where this thread's part ends once known, how far it has been fed, where the open group began.
  private limit: number | undefined;
  private fed = 0;
  private groupStart = 0;
  private partDone = false;
  // Quote characters fed so far, while a split is pending: the cut is a record boundary when their number is
  // even (outside quotes). csv-parse cannot say so itself at the cut: it holds back the last bytes of a
  // chunk (`"\r\n`) until it sees the next one, and the next byte is the second part's.
  private quotes = 0;
  /** The second part's result: null when its worker failed. */
  private second: PartResult | null | undefined;
  private rejectsClosed = false;

  constructor(options: ConvertOptions, { rowGroupRows, rowGroupBytes, maxShare }: ConvertLimits) {
    const { report } = options;
    this.options = options;
    this.report = report;
    this.maxShare = maxShare;
    this.started = Date.now();
    this.t0 = performance.now();
    this.out = countingSink(options.output);
    this.rejectSink = options.rejects ? countingSink(options.rejects) : undefined;
    this.rejects = new RejectWriter(this.rejectSink, report.delimiter);
    this.builder = new RowBatchBuilder(report.columns);
    // Undefined unless the definition declares keys or a sum column: then the row loop pays one test per row.
    this.tally = RowTally.for(report);
    // A second thread for the file's second part, when asked for and possible (csv-split.ts).
    this.part = options.split ? options.split.start(report, { rowGroupRows, rowGroupBytes }, options.split) : undefined;
    void this.part?.limit.then((l) => (this.partEnd = l));
    const bounds = { rows: rowGroupRows, bytes: rowGroupBytes };
    this.loop = new RowLoop(report.columns, this.builder, this.tally, bounds, this.ship, this.reject, this.holdGroup);
    this.reader = new CsvRecordReader(report.id, report.delimiter, report.encoding, this.onRecord);
  }

  /** Each record: the header starts the encoder once it matched the definition; every later one is a row. */
  private readonly onRecord = (record: string[], line: number): void => {
    if (!this.headerSeen) {
      checkHeader(this.report, record);
      this.headerSeen = true;
      // Two parsing threads already use both cores: each encodes its own part.
      this.encoder = startEncoder({ columns: this.report.columns }, this.out, this.part ? 'inline' : this.options.encoder, this.options.workerUrl);
      return;
    }
    this.loop.record(record, line);
  };

  private readonly ship = (endOfGroup: boolean): void => {
    // The batch is copied at once (into the inline encoder's column buffers, or by postMessage to the
    // worker), so it may be views of the builder's buffers.
    // Stryker disable next-line BooleanLiteral: take(false) copies the batch, which add() copies again at once: the same values either way
    const batch = this.builder.take(true);
    // A batch, a reject, a second part: each comes after the header, which started the encoder.
    if (!this.doomed) this.encoder!.add(batch, endOfGroup);
    if (endOfGroup) this.groupStart = this.fed;
  };

  private readonly reject = (line: number, column: string, reason: string, record: string[]): void => {
    this.rejects.add(line, column, reason, record);
    if (this.maxShare === 0 && !this.doomed) {
      this.doomed = true;
      // Settled here, awaited nowhere: failures to abort surface again when the run aborts at the end.
      void this.encoder!.abort();
      this.out.abort(new Error(`rejected rows in report "${this.report.id}": the Parquet file will not be published`)).catch(() => {});
    }
  };

  // In a split file this thread's last row group stays open past its row bound when what is left of the
  // part would not fill another: the groups before the second part's stay at least rowGroupRows long.
  private readonly holdGroup = (): boolean =>
    this.part !== undefined && this.partEnd !== undefined && !this.partDone && this.partEnd - this.fed < this.fed - this.groupStart;

  /** This thread's read of the whole file: parsed up to the cut of a split, only read through past it. */
  async readInput(): Promise<void> {
    for await (const chunk of this.options.input) {
      // Stryker disable next-line ConditionalExpression,StringLiteral: Buffer.from copies a Buffer whatever the encoding, and UTF-8 is its default for a string
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const chunkStart = this.bytesIn;
      this.bytesIn += bytes.length;
      // Past the cut, the rest of the input is the worker's: it is only read through (the caller hashes it),
      // once the worker is done and gone. Read at once, its chunks would be garbage this thread makes too
      // little of to be collected soon, held beside the worker's whole isolate at the run's peak of memory.
      if (this.partDone) {
        if (this.second === undefined) this.second = (await this.part!.result()) ?? null;
        continue;
      }
      if (this.part && this.limit === undefined && this.bytesIn > this.part.at) {
        this.limit = await this.part.limit;
        if (this.limit === undefined) await this.parseAlone();
      }
      if (this.part && this.limit !== undefined && this.bytesIn >= this.limit) {
        const cut = this.limit - chunkStart;
        this.parse(bytes.subarray(0, cut));
        if (this.quotes % 2 === 0 && this.headerSeen) {
          this.partDone = true;
        } else {
          // The cut fell inside a quoted value (or the header was all there was): parse on through.
          await this.parseAlone();
          this.parse(bytes.subarray(cut));
        }
      } else {
        this.parse(bytes);
      }
      await this.encoder?.ready();
      await this.rejects.drain();
    }
  }

  /** After the input: the second part's result, or the second part parsed here when its worker failed or was not used. */
  async settleSecondPart(): Promise<void> {
    if (this.part && this.partDone) {
      if (this.second === undefined) this.second = (await this.part.result()) ?? null;
      if (!this.second) {
        // The worker failed (malformed bytes in its part, most likely): parse its part here, so the run fails
        // or succeeds exactly as it would have on one thread.
        const from = this.limit!;
        await this.parseAlone();
        for await (const chunk of await this.options.split!.tail(from)) {
          // Stryker disable next-line ConditionalExpression,StringLiteral: Buffer.from reads a string as UTF-8 by default, and a Buffer's view the same
          this.parse(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          await this.encoder!.ready();
          await this.rejects.drain();
        }
      }
    } else if (this.part) {
      await this.parseAlone();
    }
  }

  private parse(bytes: Buffer): void {
    const t = performance.now();
    this.fed += bytes.length;
    if (this.part) this.quotes += countQuotes(bytes);
    this.reader.write(bytes);
    // Stryker disable next-line AssignmentOperator: a duration for benchmarks (the manifest's timings); no test can pin it without timing the run
    this.parseMs += performance.now() - t;
  }

  /** Drops the second part: this thread parses the whole file, as without a split. */
  private async parseAlone(): Promise<void> {
    const dropped = this.part;
    this.part = undefined;
    this.limit = undefined;
    await dropped?.stop();
  }

  /** Ends this thread's parse (the header must have come) and its last row group; its rows. */
  endParse(): RowCounts {
    const t = performance.now();
    this.reader.end();
    // Stryker disable next-line AssignmentOperator: a duration for benchmarks, as in parse()
    this.parseMs += performance.now() - t;
    if (!this.headerSeen) throw new SchemaDrift(this.report.id, this.report.columns.map((c) => c.header), [], []);
    this.loop.closeGroup();
    return { rowsRead: this.loop.rowsRead, rowsWritten: this.loop.rowsWritten, rowsRejected: this.loop.rowsRejected, emptyLines: this.reader.emptyLines };
  }

  /** The worker's row groups, rejects, tally and rows after this thread's, when it converted the second part. */
  async appendSecondPart(counts: RowCounts): Promise<void> {
    const second = this.second;
    if (!second) return;
    // The second part's row groups follow this thread's, its rejects follow with their lines counted on.
    // One group at a time, each let go once the sink took it: they are the worker's whole part. This
    // thread's column buffers are not needed any more.
    this.encoder!.releaseBuffers();
    const groups = second.groups.splice(0);
    for (let g = 0; g < groups.length && !this.doomed; g++) {
      this.encoder!.appendRowGroup(groups[g]!.bytes, groups[g]!.group);
      groups[g] = undefined!;
      await this.encoder!.ready();
    }
    const lines = this.reader.linesRead;
    for (const r of second.rejects) this.reject(r.line + lines, r.column, r.reason, r.record);
    // Stryker disable next-line ConditionalExpression,OptionalChaining: the worker keeps a tally exactly when this thread does (one report, one RowTally.for)
    if (second.tally) this.tally?.merge(second.tally);
    counts.rowsRead += second.rowsRead;
    counts.rowsWritten += second.rowsWritten;
    counts.rowsRejected += second.rowsRejected;
    counts.emptyLines += second.emptyLines;
  }

  /** Ends the rejects file: complete whenever the whole input was read, even when the table is then refused. */
  async closeRejects(): Promise<void> {
    await this.rejects.close();
    this.rejectsClosed = true;
  }

  /** Throws TooManyRejectedRows, its manifest attached, when the rejected share is over the bound. */
  async failIfTooManyRejected(counts: RowCounts): Promise<void> {
    const { rowsRejected, rowsRead } = counts;
    // No rows at all is 0 / 0, NaN, which is above no share.
    if (!(rowsRejected / rowsRead > this.maxShare)) return;
    const error = new TooManyRejectedRows(this.report.id, rowsRejected, rowsRead, this.maxShare);
    await this.encoder!.abort();
    await this.out.abort(error);
    throw Object.assign(error, { manifest: this.manifest(counts, 0, 0) });
  }

  /** The Parquet footer written, the output ended unless the caller commits it: the run's manifest. */
  async finish(counts: RowCounts): Promise<Manifest> {
    const { encodeMs, rowGroups, columnMs } = await this.encoder!.finish();
    if (this.options.finishOutput !== false) await this.out.end();
    return {
      ...this.manifest(counts, encodeMs, rowGroups),
      ...(columnMs ? { encodeMsByColumn: Object.fromEntries(this.report.columns.map((c, i) => [c.name, Math.round(columnMs[i]!)])) } : {}),
    };
  }

  private manifest(counts: RowCounts, encodeMs: number, rowGroups: number): Manifest {
    const durationMs = performance.now() - this.t0;
    const { second, parseMs } = this;
    return {
      reportId: this.report.id,
      rowsRead: counts.rowsRead,
      rowsWritten: counts.rowsWritten,
      rowsRejected: counts.rowsRejected,
      emptyLines: counts.emptyLines,
      rowGroups,
      bytesIn: this.bytesIn,
      bytesOut: this.out.bytes,
      ...(this.rejectSink ? { rejectBytes: this.rejectSink.bytes } : {}),
      ...(this.tally ? { tally: this.tally.result() } : {}),
      startedAt: new Date(this.started).toISOString(),
      finishedAt: new Date(this.started + durationMs).toISOString(),
      durationMs: Math.round(durationMs),
      encoder: this.encoder!.mode, // started with the header, which every manifest follows
      // Stryker disable next-line ArithmeticOperator: the unit test holds parse + wait to the duration, which a parse under half a millisecond (a test's) cannot tell from its double
      timings: { parseMs: Math.round(parseMs), encodeMs: Math.round(encodeMs), waitMs: Math.round(durationMs - parseMs) },
      ...(second ? { split: { atByte: this.limit!, rowsRead: second.rowsRead, parseMs: Math.round(second.parseMs), encodeMs: Math.round(second.encodeMs) } } : {}),
    };
  }

  /** After any failure: the second part's thread stopped, the output aborted, the rejects too unless complete. */
  async abort(e: unknown): Promise<Error> {
    const error = e instanceof Error ? e : new Error(String(e));
    await this.part?.stop();
    await this.encoder?.abort();
    await this.out.abort(error);
    if (!this.rejectsClosed) await this.rejects.abort(error);
    return error;
  }
}
