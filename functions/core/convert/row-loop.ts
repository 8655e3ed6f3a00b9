import type { ColumnDefinition } from '../definitions/report-definition.js';
import type { RowBatchBuilder } from '../parquet/row-group-buffer.js';
import type { RowTally } from '../quality/row-tally.js';

/**
 * What the converter does with each data record, on whichever thread parses it (csv-to-parquet.ts, and
 * part-worker.ts for the second part of a split file): count it, type it into the batch or reject it with
 * its reason, add it to the data checks' tally, and close batches and row groups at their bounds.
 */
export class RowLoop {
  rowsRead = 0;
  rowsWritten = 0;
  rowsRejected = 0;
  /** Rows and estimated bytes of the row group being filled. */
  groupRows = 0;
  groupBytes = 0;
  private readonly headers: string[];

  constructor(
    columns: readonly ColumnDefinition[],
    private readonly builder: RowBatchBuilder,
    private readonly tally: RowTally | undefined,
    private readonly bounds: { rows: number; bytes: number },
    /** Hands the current batch over; `endOfGroup` closes the row group. */
    private readonly ship: (endOfGroup: boolean) => void,
    private readonly onReject: (line: number, column: string, reason: string, record: string[]) => void,
    /** Whether a group that reached its row bound should stay open (see csv-to-parquet.ts, split files). */
    private readonly holdGroup: () => boolean = () => false,
  ) {
    this.headers = columns.map((c) => c.header);
  }

  record(record: string[], line: number): void {
    this.rowsRead++;
    if (record.length !== this.headers.length) {
      this.reject(line, '', `has ${record.length} field(s), the header has ${this.headers.length}`, record);
      return;
    }
    const typed = this.builder.add(record);
    if (typeof typed !== 'number') {
      this.reject(line, this.headers[typed.column]!, typed.reason, record);
      return;
    }
    this.rowsWritten++;
    if (this.tally) this.tally.add(record, this.builder.safeValues);
    this.groupRows++;
    this.groupBytes += typed;
    if (this.groupBytes >= this.bounds.bytes || (this.groupRows >= this.bounds.rows && !this.holdGroup())) this.closeGroup();
    else if (this.builder.full) this.ship(false);
  }

  /** Ships what is left as the end of a row group (nothing when the group is empty). */
  closeGroup(): void {
    if (this.groupRows === 0 && this.builder.rows === 0) return;
    this.ship(true);
    this.groupRows = 0;
    this.groupBytes = 0;
  }

  private reject(line: number, column: string, reason: string, record: string[]): void {
    this.rowsRejected++;
    this.onReject(line, column, reason, record);
  }
}
