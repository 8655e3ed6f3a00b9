import { availableParallelism } from 'node:os';
import type { RowGroup } from 'hyparquet';
import type { Worker } from 'node:worker_threads';
import type { CountingSink } from '../byte-sink.js';
import { RowGroupEncoder, type EncoderSettings } from './encoder.js';
import type { FromWorker, ToWorker } from './parquet-worker.js';
import type { RowBatch } from './row-group-buffer.js';
import { scriptBeside, startWorkerScript } from '../../runtime/worker-script.js';

/**
 * Where Parquet encoding runs.
 *
 * - 'worker': a worker_threads worker encodes while this thread parses and types the CSV. Since issue 21
 *   encoding is ~10% of the converter's CPU, so this saves that much wall time on two free cores, for a
 *   second isolate (~45 MB more, and its own compilation of the encoder). Batches cross as typed arrays
 *   (no per-value copies), copied by structured clone rather than transferred (see row-group-buffer.ts).
 * - 'inline': a closed row group is encoded on this thread at once. No second thread, no second heap.
 *   What the parse function runs (lib/constructs/parse.ts: 2,048 MB has 1.16 vCPUs).
 * - 'auto' (default): the worker when there are two or more CPUs and the worker script can be found;
 *   inline otherwise. Under tsx (development, tests) the script is parquet-worker.ts beside this file;
 *   in a bundle, `parquet-worker.js` (or .mjs) must sit beside the bundle, i.e. be bundled as a second
 *   entry point, or be passed as `workerUrl`. Without it the converter runs inline, which is correct,
 *   only slower.
 *
 * Flow control: the parsing thread may run at most one row group ahead of the one being encoded and
 * written; then ready() waits. With the sink's own backpressure that bounds memory end to end.
 */
export type EncoderMode = 'auto' | 'worker' | 'inline';

export interface EncoderHandle {
  readonly mode: 'worker' | 'inline';
  /** Queues a batch; `endOfGroup` closes the current row group. Synchronous (called while parsing). */
  add(batch: RowBatch, endOfGroup: boolean): void;
  /** Appends a row group another thread encoded (a split file's second part; inline encoders only). */
  appendRowGroup(bytes: readonly Uint8Array[], group: RowGroup): void;
  /** No more batches will come: the memory they were gathered in can go (inline encoders). */
  releaseBuffers(): void;
  /** Resolves when the parser may go on; rejects with the encoder's or the sink's error. */
  ready(): Promise<void>;
  /** Writes the footer and resolves once every byte went to the sink (the sink is not ended). */
  finish(): Promise<{ encodeMs: number; rowGroups: number; columnMs?: number[] }>;
  /** Stops encoding; nothing more is written to the sink. */
  abort(): Promise<void>;
}

export function startEncoder(settings: EncoderSettings, sink: CountingSink, mode?: EncoderMode, workerUrl?: URL): EncoderHandle {
  const url = workerUrl ?? defaultWorkerUrl();
  return encoderPlace(mode, url, availableParallelism()) === 'worker' ? new WorkerEncoder(settings, sink, url as URL) : new InlineEncoder(settings, sink);
}

/** Where `mode` (default 'auto') encodes, given the worker script found (if any) and the CPUs there are. */
export function encoderPlace(mode: EncoderMode | undefined, workerUrl: URL | undefined, cpus: number): 'worker' | 'inline' {
  const asked = mode ?? 'auto';
  if (asked === 'inline' || (asked === 'auto' && (!workerUrl || cpus < 2))) return 'inline';
  if (!workerUrl) throw new Error('encoder "worker" was asked for, but parquet-worker.js is not beside this module: pass workerUrl');
  return 'worker';
}

/** parquet-worker.{js,mjs,ts} beside this module, if it is there (it is not in a single-file bundle). */
function defaultWorkerUrl(): URL | undefined {
  // import.meta.url is undefined in a CommonJS bundle: then there is no worker to start.
  return scriptBeside('parquet-worker', import.meta.url);
}

class InlineEncoder implements EncoderHandle {
  readonly mode = 'inline' as const;
  private readonly encoder: RowGroupEncoder;
  /** The sink's writes, in order; rejects with the first failure (encoding or sink). */
  private work: Promise<void> = Promise.resolve();
  private aborted = false;

  constructor(settings: EncoderSettings, sink: CountingSink) {
    this.encoder = new RowGroupEncoder(settings, (bytes) => {
      this.work = this.work.then(() => (this.aborted ? undefined : sink.write(bytes)));
      return this.work;
    });
  }

  add(batch: RowBatch, endOfGroup: boolean): void {
    if (this.aborted) return;
    try {
      // The batch is copied into the group's column buffers at once, and a closed group is encoded at
      // once (its bytes then wait for the sink in `work`): the builder reuses its arrays after this.
      this.encoder.add(batch);
      // Stryker disable next-line ArrowFunction: () => undefined is this same empty handler
      if (endOfGroup) this.encoder.writeRowGroup().catch(() => {}); // failures surface through `work`
    } catch (e) {
      this.work = Promise.reject(e instanceof Error ? e : new Error(String(e)));
      // Stryker disable next-line ArrowFunction: () => undefined is this same empty handler
      this.work.catch(() => {});
    }
  }

  // Stryker disable next-line BlockStatement: frees the grown column buffers (memory, which bench/ measures); the bytes are the same
  releaseBuffers(): void {
    this.encoder.releaseBuffers();
  }

  appendRowGroup(bytes: readonly Uint8Array[], group: RowGroup): void {
    // Stryker disable next-line ConditionalExpression: the sink's callback writes nothing after abort() either; this spares the append's work
    if (this.aborted) return;
    // Stryker disable next-line ArrowFunction: () => undefined is this same empty handler
    this.encoder.appendRowGroup(bytes, group).catch(() => {}); // failures surface through `work`
  }

  ready(): Promise<void> {
    return this.work;
  }

  async finish() {
    await this.work;
    await this.encoder.finish();
    await this.work;
    return { encodeMs: this.encoder.encodeMs, rowGroups: this.encoder.rowGroups, columnMs: [...this.encoder.columnMs] };
  }

  async abort(): Promise<void> {
    this.aborted = true;
    // Stryker disable next-line ArrowFunction: () => undefined is this same empty handler
    await this.work.catch(() => {});
  }
}

class WorkerEncoder implements EncoderHandle {
  readonly mode = 'worker' as const;
  private readonly worker: Worker;
  /** Sink writes, in the order the worker sent the bytes. */
  private writes: Promise<void> = Promise.resolve();
  /** Closed row groups not yet encoded and written. */
  private inFlight = 0;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private done: ((r: { encodeMs: number; rowGroups: number }) => void) | undefined;
  private aborted = false;
  // Stryker disable next-line ArrowFunction: a placeholder, replaced in the same constructor before anything can call it
  private rejectFailed: (e: Error) => void = () => {};
  /** Rejects with the first failure, so finish() does not wait forever for a dead worker. */
  private readonly failed = new Promise<never>((_, reject) => (this.rejectFailed = reject));

  constructor(settings: EncoderSettings, sink: CountingSink, url: URL) {
    // Stryker disable next-line ArrowFunction: () => undefined is this same empty handler
    this.failed.catch(() => {});
    this.worker = spawn(url, settings);
    this.worker.on('message', (m: FromWorker) => {
      switch (m.t) {
        case 'bytes':
          this.writes = this.writes.then(() => (this.aborted ? undefined : sink.write(m.bytes)));
          this.writes.catch((e: unknown) => this.fail(e));
          break;
        case 'group':
          void this.writes.then(() => {
            this.inFlight--;
            this.notify();
          // Stryker disable next-line ArrowFunction: () => undefined is this same empty handler
          }, () => {});
          break;
        case 'done': {
          const { encodeMs, rowGroups } = m;
          // Stryker disable next-line ArrowFunction: () => undefined is this same empty handler (the other arrow here, not calling done, leaves finish() waiting: the tests time out on it)
          // Stryker disable next-line OptionalChaining: finish() sets done before it posts the 'finish' that this answers
          void this.writes.then(() => this.done?.({ encodeMs, rowGroups }), () => {});
          break;
        }
        case 'error':
          this.fail(Object.assign(new Error(`Parquet encoding failed: ${m.message}`), { stack: m.stack }));
      }
    });
    this.worker.on('error', (e) => this.fail(e));
    // After finish() or abort() an exit is expected, and after a failure it is not news: fail() ignores it then.
    this.worker.on('exit', (code) => this.fail(new Error(`the Parquet encoding worker exited (code ${code}) before it finished`)));
  }

  add(batch: RowBatch, endOfGroup: boolean): void {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: spares a failed or stopped worker's CPU only: ready() has rejected, or abort() terminated it, and no byte reaches the sink either way
    if (this.failure || this.aborted) return;
    const message: ToWorker = { t: 'batch', batch, end: endOfGroup };
    // Copied, never transferred: see row-group-buffer.ts on why no ArrayBuffer is ever detached here.
    this.worker.postMessage(message);
    if (endOfGroup) this.inFlight++;
  }

  appendRowGroup(): void {
    throw new Error('row groups of another thread are appended by an inline encoder only');
  }

  releaseBuffers(): void {}

  async ready(): Promise<void> {
    while (!this.failure && this.inFlight > 1) await new Promise<void>((resolve) => (this.wake = resolve));
    if (this.failure) throw this.failure;
  }

  async finish() {
    await this.ready();
    const result = new Promise<{ encodeMs: number; rowGroups: number }>((resolve) => (this.done = resolve));
    // Stryker disable next-line ObjectLiteral,StringLiteral: parquet-worker.ts reads every message that is not a batch as 'finish'
    this.worker.postMessage({ t: 'finish' } satisfies ToWorker);
    const r = await Promise.race([result, this.failed]);
    // Stryker disable next-line BooleanLiteral: the exit's failure would be recorded after the result is taken, and nothing reads it
    this.aborted = true; // a normal exit from here on is expected
    await this.worker.terminate();
    return r;
  }

  async abort(): Promise<void> {
    this.aborted = true;
    this.notify();
    await this.worker.terminate();
    // Stryker disable next-line ArrowFunction: () => undefined is this same empty handler
    await this.writes.catch(() => {});
  }

  private fail(e: unknown): void {
    if (this.failure || this.aborted) return;
    this.failure = e instanceof Error ? e : new Error(String(e));
    this.rejectFailed(this.failure);
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** Starts the worker (from TypeScript sources, compiled first: worker-script.ts). */
function spawn(url: URL, settings: EncoderSettings): Worker {
  // A smaller young generation than V8's default for the encoder's isolate: its garbage is short-lived
  // column arrays, and on the benchmark this took ~25 MB off peak RSS (260 -> 235 MB at 1M rows) for
  // ~0.5 s more CPU on the worker, which waits for the parser anyway. Old-generation garbage is
  // collected after every row group of 8 MiB or more (encoder.ts).
  // Stryker disable next-line ObjectLiteral: a memory tuning (V8's default young generation instead); the bytes are the same
  const resourceLimits = { maxYoungGenerationSizeMb: 24 };
  return startWorkerScript(url, { workerData: settings, resourceLimits });
}
