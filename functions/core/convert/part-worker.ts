import type { RowGroup } from 'hyparquet';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { CsvRecordReader } from '../csv/records.js';
import { isPipelineError } from '../errors.js';
import { RowGroupEncoder } from '../parquet/encoder.js';
import type { ReportDefinition } from '../definitions/report-definition.js';
import { RowBatchBuilder } from '../parquet/row-group-buffer.js';
import { RowLoop } from './row-loop.js';
import { RowTally, type RowTallyState } from '../quality/row-tally.js';

/**
 * The thread that converts the second part of a split file (csv-split.ts): the bytes from the first record
 * boundary after the cut to the end, with no header. It parses, types and encodes them exactly as the
 * converter does the first part (row-loop.ts, parquet/encoder.ts), into row groups without a file around
 * them, and posts each group's bytes and metadata back; the converter appends them after its own. Line
 * numbers of rejected rows count from the part's start; the converter adds its own lines. convertPart does the work
 * over any message port, so a unit test can drive it through a MessageChannel on its own thread.
 */

export interface PartWorkerData {
  report: ReportDefinition;
  rowGroupRows: number;
  rowGroupBytes: number;
}

export interface PartReject {
  line: number;
  column: string;
  reason: string;
  record: string[];
}

export interface PartDone {
  rowsRead: number;
  rowsWritten: number;
  rowsRejected: number;
  emptyLines: number;
  tally?: RowTallyState;
  parseMs: number;
  encodeMs: number;
}

export type ToPartWorker = { t: 'bytes'; bytes: Uint8Array } | { t: 'end' };
export type FromPartWorker =
  | { t: 'credit' }
  /** A row group's bytes, a column chunk at a time, then its metadata. */
  | { t: 'bytes'; bytes: Uint8Array }
  | { t: 'group'; group: RowGroup }
  | { t: 'rejects'; rejects: PartReject[] }
  | ({ t: 'done' } & PartDone)
  | { t: 'error'; message: string; code?: string };

/** Where the part's messages come from and go: the worker's parentPort, or one end of a MessageChannel. */
export type PartPort = Pick<MessagePort, 'on' | 'postMessage'>;

/**
 * Converts the part whose bytes arrive on `port`, posting back credits, each row group's bytes and metadata, the
 * rejects and, after `end`, the counts; or the first error, after which it ignores the rest.
 */
export function convertPart(port: PartPort, { report, rowGroupRows, rowGroupBytes }: PartWorkerData): void {
  const post = (m: FromPartWorker) => port.postMessage(m);
  const builder = new RowBatchBuilder(report.columns);
  const tally = RowTally.for(report);
  const encoder = new RowGroupEncoder({ columns: report.columns }, (bytes) => post({ t: 'bytes', bytes }), { fragment: true });
  let rejects: PartReject[] = [];
  const flushRejects = (): void => {
    if (rejects.length) post({ t: 'rejects', rejects });
    rejects = [];
  };
  const loop = new RowLoop(
    report.columns,
    builder,
    tally,
    { rows: rowGroupRows, bytes: rowGroupBytes },
    (endOfGroup) => {
      // Stryker disable next-line BooleanLiteral: take(false) copies the batch, which encoder.add copies again at once: the same values either way
      encoder.add(builder.take(true));
      if (!endOfGroup) return;
      void encoder.writeRowGroup();
      post({ t: 'group', group: encoder.groups.at(-1)! });
    },
    (line, column, reason, record) => {
      rejects.push({ line, column, reason, record });
      if (rejects.length >= 1000) flushRejects();
    },
  );
  const reader = new CsvRecordReader(report.id, report.delimiter, report.encoding, (record, line) => loop.record(record, line), true);
  let parseMs = 0;
  let failed = false;

  port.on('message', (m: ToPartWorker) => {
    if (failed) return;
    try {
      const t = performance.now();
      if (m.t === 'bytes') {
        reader.write(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength));
        parseMs += performance.now() - t;
        post({ t: 'credit' });
        return;
      }
      reader.end();
      loop.closeGroup();
      // Stryker disable next-line AssignmentOperator: a duration for benchmarks (manifest.split.parseMs); no test can pin it without timing the run
      parseMs += performance.now() - t;
      flushRejects();
      post({
        t: 'done',
        rowsRead: loop.rowsRead,
        rowsWritten: loop.rowsWritten,
        rowsRejected: loop.rowsRejected,
        emptyLines: reader.emptyLines,
        ...(tally ? { tally: tally.state() } : {}),
        // Stryker disable next-line ArithmeticOperator: a duration for benchmarks; its bound (parse + encode within the run) holds either way when encoding is quick
        parseMs: parseMs - encoder.encodeMs,
        encodeMs: encoder.encodeMs,
      });
    } catch (e) {
      failed = true;
      const error = e instanceof Error ? e : new Error(String(e));
      post({ t: 'error', message: error.message, ...(isPipelineError(error) ? { code: error.code } : {}) });
    }
  });
}

// The worker thread csv-split.ts starts; imported anywhere else (a unit test), the module only defines convertPart.
if (parentPort) convertPart(parentPort, workerData as PartWorkerData);
