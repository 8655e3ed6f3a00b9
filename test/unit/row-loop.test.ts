import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RowLoop } from '../../functions/core/convert/row-loop.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { BATCH_ROWS, RowBatchBuilder } from '../../functions/core/parquet/row-group-buffer.js';
import { RowTally } from '../../functions/core/quality/row-tally.js';
import transactionsJson from '../fixtures/reports/transactions.json' with { type: 'json' };

/**
 * What the converter does with each data record (row-loop.ts): count it, type it or reject it with its reason, tally
 * it, and close batches and row groups at their bounds. A row of `id` (bigint, 8 bytes) and `name` (a string: its
 * length + 4 bytes) is estimated at 8 + 2 + 4 = 14 bytes for a two-letter name (row-group-buffer.ts's estimate).
 */

function report(keys: string[] | undefined): ReportDefinition {
  const columns = [
    { header: 'Id', name: 'id', type: 'bigint' },
    { header: 'Name', name: 'name', type: 'string' },
  ];
  const { keys: _keys, ...rest } = transactionsJson;
  return parseReportDefinition({ ...rest, ...(keys ? { keys } : {}), columns }, 'reports/loop.json');
}

/** A loop over real builders, recording each hand-over (true: the end of a row group) with the rows it carried. */
function loopOf(options: { rows?: number; bytes?: number; keys?: string[]; hold?: () => boolean } = {}) {
  const definition = report(options.keys);
  const builder = new RowBatchBuilder(definition.columns);
  const tally = RowTally.for(definition);
  const shipped: Array<[boolean, number]> = [];
  const rejected: Array<[number, string, string, string[]]> = [];
  const loop = new RowLoop(
    definition.columns,
    builder,
    tally,
    { rows: options.rows ?? 1000, bytes: options.bytes ?? 1_000_000 },
    (end) => void shipped.push([end, builder.take(true).rows]),
    (line, column, reason, record) => void rejected.push([line, column, reason, record]),
    options.hold,
  );
  return { loop, builder, tally, shipped, rejected };
}

describe('RowLoop counts and rejects', () => {
  it('a record with the wrong number of fields is rejected with no column, saying both counts', () => {
    const { loop, rejected, shipped } = loopOf();
    loop.record(['1'], 2);
    loop.record(['1', 'ab', 'extra'], 3);
    assert.deepEqual(rejected, [
      [2, '', 'has 1 field(s), the header has 2', ['1']],
      [3, '', 'has 3 field(s), the header has 2', ['1', 'ab', 'extra']],
    ]);
    assert.deepEqual([loop.rowsRead, loop.rowsWritten, loop.rowsRejected], [2, 0, 2]);
    loop.closeGroup();
    assert.deepEqual(shipped, [], 'no row, no group');
  });

  it('a value that does not type is rejected naming the column by its header', () => {
    const { loop, rejected } = loopOf();
    loop.record(['x1', 'ab'], 7);
    loop.record(['', 'ab'], 8);
    assert.deepEqual(
      rejected.map(([line, column]) => [line, column]),
      [[7, 'Id'], [8, 'Id']],
    );
    assert.equal(rejected[1]![2], 'empty, and the column is not nullable');
    assert.deepEqual([loop.rowsRead, loop.rowsWritten, loop.rowsRejected], [2, 0, 2]);
  });

  it('rows that type are written and counted, and the last group closes with them', () => {
    const { loop, shipped } = loopOf();
    loop.record(['1', 'ab'], 2);
    loop.record(['oops', 'ab'], 3);
    loop.record(['2', 'cd'], 4);
    assert.deepEqual([loop.rowsRead, loop.rowsWritten, loop.rowsRejected], [3, 2, 1]);
    assert.deepEqual([loop.groupRows, loop.groupBytes], [2, 28]);
    loop.closeGroup();
    assert.deepEqual(shipped, [[true, 2]]);
    assert.deepEqual([loop.groupRows, loop.groupBytes], [0, 0]);
    loop.closeGroup();
    assert.deepEqual(shipped, [[true, 2]], 'an empty group is not shipped');
  });

  it('adds every written row, and only those, to the data checks\' tally', () => {
    const { loop, tally } = loopOf({ keys: ['id'] });
    loop.record(['1', 'ab'], 2);
    loop.record(['1', 'cd'], 3);
    loop.record(['1', 'ef', 'x'], 4);
    loop.record(['2', 'gh'], 5);
    loop.record(['1', 'ij'], 6);
    assert.deepEqual(tally!.result(), { duplicateKeys: 2 });
  });
});

describe('RowLoop closes row groups at their bounds', () => {
  it('at exactly the row bound', () => {
    const { loop, shipped } = loopOf({ rows: 2 });
    for (let i = 1; i <= 5; i++) loop.record([String(i), 'ab'], i + 1);
    assert.deepEqual(shipped, [[true, 2], [true, 2]]);
    loop.closeGroup();
    assert.deepEqual(shipped, [[true, 2], [true, 2], [true, 1]]);
  });

  it('at exactly the byte bound: 28 bytes is two 14-byte rows', () => {
    const { loop, shipped } = loopOf({ bytes: 28 });
    for (let i = 1; i <= 3; i++) loop.record([String(i), 'ab'], i + 1);
    assert.deepEqual(shipped, [[true, 2]]);
    assert.deepEqual([loop.groupRows, loop.groupBytes], [1, 14]);
  });

  it('one byte short of two rows closes after the second row, not the first', () => {
    const { loop, shipped } = loopOf({ bytes: 27 });
    loop.record(['1', 'ab'], 2);
    assert.deepEqual(shipped, []);
    loop.record(['2', 'ab'], 3);
    assert.deepEqual(shipped, [[true, 2]]);
  });

  it('a held group stays open past its row bound, but never past its byte bound', () => {
    let hold = true;
    const { loop, shipped } = loopOf({ rows: 2, bytes: 56, hold: () => hold });
    for (let i = 1; i <= 3; i++) loop.record([String(i), 'ab'], i + 1);
    assert.deepEqual(shipped, [], 'held at 3 rows');
    loop.record(['4', 'ab'], 5);
    assert.deepEqual(shipped, [[true, 4]], '56 bytes closes it');
    hold = false;
    loop.record(['5', 'ab'], 6);
    loop.record(['6', 'ab'], 7);
    assert.deepEqual(shipped, [[true, 4], [true, 2]]);
  });

  it(`hands over a full batch (${BATCH_ROWS} rows) without closing the group, then closes it with the rest`, () => {
    const { loop, shipped } = loopOf({ rows: 10_000 });
    for (let i = 0; i < BATCH_ROWS + 3; i++) loop.record([String(i), 'ab'], i + 2);
    assert.deepEqual(shipped, [[false, BATCH_ROWS]]);
    loop.closeGroup();
    assert.deepEqual(shipped, [[false, BATCH_ROWS], [true, 3]]);
  });

  it('a group whose rows were all handed over in batches still closes', () => {
    const { loop, shipped } = loopOf({ rows: 10_000 });
    for (let i = 0; i < BATCH_ROWS; i++) loop.record([String(i), 'ab'], i + 2);
    assert.deepEqual(shipped, [[false, BATCH_ROWS]]);
    loop.closeGroup();
    assert.deepEqual(shipped, [[false, BATCH_ROWS], [true, 0]]);
  });
});
