import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnSchema, type ColumnDefinition } from '../../functions/core/definitions/report-definition.js';
import { RowBatchBuilder, writeUtf8 } from '../../functions/core/parquet/row-group-buffer.js';

/**
 * Edges of the typed batches (functions/core/parquet/row-group-buffer.ts) that mutation testing found unguarded
 * after row-batch.test.ts: the order in which a row's values are checked, a text column's later values in the
 * batch where it turned into text, and two low surrogates in a row. Expectations by hand and from Node's Buffer.
 */

const column = (type: string, extra: Record<string, unknown> = {}): ColumnDefinition => columnSchema.parse({ header: type, name: 'c', type, ...extra });

/** PLAIN strings as Buffer writes them: each a 4-byte little-endian length, then its UTF-8. */
const plain = (values: readonly string[]) => Buffer.concat(values.flatMap((v) => {
  const bytes = Buffer.from(v, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(bytes.length);
  return [length, bytes];
}));

describe('RowBatchBuilder: edges', () => {
  it("a row's typed values are checked before its strings: a bad number is the problem named, not an empty string before it", () => {
    const builder = new RowBatchBuilder([column('string'), column('bigint'), column('string', { nullable: true })]);
    assert.deepEqual(builder.add(['', 'abc', 'x']), { column: 1, reason: 'not an integer: "abc"' });
    assert.deepEqual(builder.add(['', '1', 'x']), { column: 0, reason: 'empty, and the column is not nullable' });
  });

  it('after turning into text, 300 more distinct values in the same batch stay text', () => {
    const builder = new RowBatchBuilder([column('string')]);
    const values = Array.from({ length: 557 }, (_, i) => `value ${i}`);
    for (const v of values) builder.add([v]);
    const text = builder.take().columns[0] as { kind: string; bytes: Uint8Array; lengths: Int32Array };
    assert.equal(text.kind, 'utf8');
    assert.deepEqual([...text.lengths], values.map((v) => v.length));
    assert.ok(Buffer.from(text.bytes).equals(plain(values)));
  });

  it('two low surrogates in a row are two U+FFFD, as Buffer writes them', () => {
    for (const text of ['\udc00\udc00', '\udfff\udc01x', '\udc00\ud83d\ude00']) {
      const out = new Uint8Array(text.length * 3);
      const end = writeUtf8(text, out, 0);
      assert.deepEqual([...out.subarray(0, end)], [...Buffer.from(text, 'utf8')], JSON.stringify(text));
    }
  });
});
