import type { CountingSink } from '../byte-sink.js';

/**
 * The rejects file: one CSV row per rejected record, `line,column,reason,record`, where line is the
 * physical line the record starts on (1 = the header), column the CSV header of the value that failed
 * (empty when the record as a whole is wrong), and record the original fields re-serialised as one CSV
 * line with the report's delimiter, so the row can be fixed and replayed.
 */
export const REJECTS_HEADER = ['line', 'column', 'reason', 'record'];

/** Quotes every field (RFC 4180): simplest to read back, and rejects are few. */
export function csvLine(fields: readonly string[], delimiter = ','): string {
  return fields.map((f) => `"${f.replace(/"/g, '""')}"`).join(delimiter) + '\r\n';
}

/** Buffers rejected rows and writes them in ~64 KiB pieces; the converter awaits drain() between input chunks. */
export class RejectWriter {
  private buffer = '';
  private started = false;

  constructor(
    private readonly sink: CountingSink | undefined,
    private readonly delimiter: string,
  ) {}

  add(line: number, column: string, reason: string, record: readonly string[]): void {
    if (!this.sink) return;
    if (!this.started) {
      this.buffer += csvLine(REJECTS_HEADER);
      this.started = true;
    }
    this.buffer += csvLine([String(line), column, reason, csvLine(record, this.delimiter).slice(0, -2)]);
  }

  get pending(): number {
    return this.buffer.length;
  }

  async drain(force = false): Promise<void> {
    if (!this.sink || (!force && this.buffer.length < 1 << 16) || this.buffer.length === 0) return;
    const bytes = Buffer.from(this.buffer); // UTF-8
    this.buffer = '';
    await this.sink.write(bytes);
  }

  /** Writes what is left and ends the file (a run without rejects leaves a header-only file). */
  async close(): Promise<void> {
    if (!this.sink) return;
    if (!this.started) this.buffer = csvLine(REJECTS_HEADER) + this.buffer;
    this.started = true;
    await this.drain(true);
    await this.sink.end();
  }

  async abort(reason: Error): Promise<void> {
    await this.sink?.abort(reason);
  }
}
