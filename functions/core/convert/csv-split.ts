import type { RowGroup } from 'hyparquet';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { FromPartWorker, PartDone, PartReject, PartWorkerData, ToPartWorker } from './part-worker.js';
import { isUtf8Name } from '../csv/records.js';
import type { ReportDefinition } from '../definitions/report-definition.js';
import { scriptBeside, startWorkerScript } from '../../runtime/worker-script.js';

/**
 * One CSV file converted on two threads: the converter parses the first part itself while a worker
 * (part-worker.ts) parses the rest, from a second read of the same file starting at `at`.
 *
 * Where the parts meet: the worker's part starts after the first line feed at or after `at`. That is a record
 * boundary unless the line feed sits inside a quoted value, which only the bytes before it can tell; so the
 * converter, which parses up to that point anyway, checks it there (CsvRecordReader.atRecordBoundary). When
 * the cut was inside a value, the worker's part is dropped and the converter parses on through the whole
 * file, as without a split: the output is the same either way. A worker that fails (malformed bytes in its
 * part) is handled the same way: the converter then parses the rest itself and fails on the same line, with
 * the same message, as it would have alone.
 *
 * Only for UTF-8 reports (a line feed byte is a line feed), and where there are two CPUs to run on: the
 * local chain asks for it (`npm start`, where a second core is idle while one parses); the parse Lambda
 * function does not (at 2,048 MB it has 1.16 vCPUs, and a second parse thread would only add CPU).
 */

export interface SplitInput {
  /** The byte offset to cut near: the second part starts at the first record boundary at or after it. */
  at: number;
  /** The file's bytes from `from` to its end: a second read of the same object. */
  tail(from: number): Promise<AsyncIterable<Uint8Array | string>> | AsyncIterable<Uint8Array | string>;
}

/**
 * What starts the second part's thread: SplitPart.start, handed in by local runs. csv-to-parquet.ts imports
 * no split code itself, so the parse function's bundle, which never splits, carries none.
 */
export type StartSplitPart = typeof SplitPart.start;

export interface PartResult extends PartDone {
  /** Each row group's bytes (its column chunks, in order) and metadata. */
  groups: Array<{ bytes: Uint8Array[]; group: RowGroup }>;
  rejects: PartReject[];
}

/**
 * The worker isolate's young generation (V8 grows it to 48 MB by default). Its garbage is csv-parse's strings,
 * dead within a row: 12 MB collects it at the same CPU cost (docs/benchmarks.md) and keeps the isolate's
 * pages fewer beside the converter's, at the run's peak of memory.
 */
const PART_WORKER_YOUNG_MB = 12;

/** Chunks on their way to the worker at most: ~2 MiB, so the second read waits for the worker. */
const IN_FLIGHT = 32;

export class SplitPart {
  /** Where the first part ends and the second begins (after a line feed); undefined: no line feed, no split. */
  readonly limit: Promise<number | undefined>;
  private resolveLimit!: (limit: number | undefined) => void;
  private readonly worker: Worker;
  private readonly groups: PartResult['groups'] = [];
  /** The bytes of the group being received. */
  private pending: Uint8Array[] = [];
  private readonly rejects: PartReject[] = [];
  private done: PartDone | undefined;
  private failure: Error | undefined;
  private inFlight = 0;
  private wake: (() => void) | undefined;
  private finished: Promise<void>;
  private resolveFinished!: () => void;
  private stopped = false;

  private constructor(
    readonly at: number,
    url: URL,
    data: PartWorkerData,
    private readonly input: SplitInput,
  ) {
    this.limit = new Promise((resolve) => (this.resolveLimit = resolve));
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    // Stryker disable next-line ObjectLiteral: a memory setting (see PART_WORKER_YOUNG_MB): the same output without it
    this.worker = startWorkerScript(url, { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: PART_WORKER_YOUNG_MB } });
    this.worker.on('message', (m: FromPartWorker) => {
      switch (m.t) {
        case 'credit':
          this.inFlight--;
          this.notify();
          break;
        case 'bytes':
          this.pending.push(m.bytes);
          break;
        case 'group':
          this.groups.push({ bytes: this.pending, group: m.group });
          this.pending = [];
          break;
        case 'rejects':
          for (const r of m.rejects) this.rejects.push(r);
          break;
        case 'done': {
          const { t: _t, ...done } = m;
          this.done = done;
          this.resolveFinished();
          break;
        }
        case 'error':
          this.fail(new Error(m.message));
      }
    });
    this.worker.on('error', (e) => this.fail(e));
    // Stryker disable next-line StringLiteral,ArrowFunction: a backstop: the worker only exits after an uncaught error, which the 'error' listener has failed the part for, or when stop() ended it; the text is never shown
    this.worker.on('exit', () => this.fail(new Error('the part worker exited before it finished')));
    void this.pump().catch((e: unknown) => this.fail(e instanceof Error ? e : new Error(String(e))));
  }

  /** A split of this report's file, when it can be done here; undefined otherwise (the converter parses alone). */
  static start(report: ReportDefinition, bounds: { rowGroupRows: number; rowGroupBytes: number }, input: SplitInput): SplitPart | undefined {
    if (!isUtf8Name(report.encoding) || availableParallelism() < 2 || !(input.at > 0)) return undefined;
    const url = scriptBeside('part-worker', import.meta.url);
    // Stryker disable next-line ConditionalExpression: part-worker.ts always stands beside this file here; only a bundle without it tells
    if (!url) return undefined;
    return new SplitPart(input.at, url, { report, ...bounds }, input);
  }

  /** Reads the file from `at`, finds the cut, and hands the rest to the worker as it can take it. */
  private async pump(): Promise<void> {
    let offset = this.at;
    let found = false;
    const tail = await this.input.tail(this.at);
    for await (const chunk of tail) {
      // Stryker disable next-line ConditionalExpression: reading on after stop() only posts to a terminated worker, which drops it
      if (this.stopped) break;
      // Stryker disable next-line ConditionalExpression,StringLiteral: Buffer.from copies a Buffer whatever the encoding, and UTF-8 is its default for a string
      let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      if (!found) {
        const lf = bytes.indexOf(10);
        if (lf < 0) {
          offset += bytes.length;
          continue;
        }
        found = true;
        this.resolveLimit(offset + lf + 1);
        bytes = bytes.subarray(lf + 1);
      }
      // Backpressure and stopping only (the next four lines): the worker gets the same bytes in the same order without them.
      // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: only how many chunks wait in the worker's queue
      while (this.inFlight >= IN_FLIGHT && !this.stopped) await new Promise<void>((resolve) => (this.wake = resolve));
      // Stryker disable next-line ConditionalExpression: after stop() a post reaches a terminated worker, which drops it
      if (this.stopped) break;
      // Stryker disable next-line ConditionalExpression: an empty chunk parses as nothing and is credited back
      if (bytes.length === 0) continue;
      // Stryker disable next-line UpdateOperator: the count only holds the pump back (the while above)
      this.inFlight++;
      // Copied, never transferred (see row-group-buffer.ts on detached ArrayBuffers).
      this.worker.postMessage({ t: 'bytes', bytes } satisfies ToPartWorker);
    }
    if (!found) {
      this.resolveLimit(undefined);
      await this.stop();
      return;
    }
    // Stryker disable next-line ConditionalExpression,ObjectLiteral,StringLiteral: a terminated worker drops the post, and the worker reads any message but 'bytes' as the end
    if (!this.stopped) this.worker.postMessage({ t: 'end' } satisfies ToPartWorker);
  }

  /** The worker's part, once it is converted; undefined when the worker failed (the converter then parses it). */
  async result(): Promise<PartResult | undefined> {
    await this.finished;
    const done = this.done;
    await this.stop();
    if (!done || this.failure) return undefined;
    return { ...done, groups: this.groups, rejects: this.rejects };
  }

  /** Stops the worker and the second read; the converter parses the whole file itself. */
  async stop(): Promise<void> {
    // Stryker disable next-line ConditionalExpression: a second stop() resolves what is resolved and terminates a terminated worker
    if (this.stopped) return;
    // Stryker disable next-line BooleanLiteral: by the time stop() runs the part is settled (result, parseAlone, abort); the flag only spares later posts and reads
    this.stopped = true;
    this.resolveLimit(undefined);
    this.notify();
    this.resolveFinished();
    await this.worker.terminate();
  }

  private fail(e: Error): void {
    // Stryker disable next-line LogicalOperator: no worker exits or errs between its 'done' and stop(), nor is stopped before 'done' yet read as failed
    if (this.stopped || this.done) return;
    // Stryker disable next-line AssignmentOperator: a failure comes without 'done' (the worker stops at its first error), which result() already reads as none
    this.failure ??= e;
    this.resolveLimit(undefined);
    this.resolveFinished();
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
