import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CsvRecordReader } from '../../functions/core/csv/records.js';
import { MalformedReport } from '../../functions/core/errors.js';

/** Feeds bytes in chunks of the given sizes (cycled) and returns every record with its line. */
function read(bytes: Buffer, sizes: number[]): Array<[string[], number]> {
  const out: Array<[string[], number]> = [];
  const reader = new CsvRecordReader('r', ',', 'UTF-8', (record, line) => out.push([record, line]));
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const size = sizes[k % sizes.length]!;
    reader.write(bytes.subarray(at, at + size));
    at += size;
  }
  reader.end();
  return out;
}

/** Rows with quoted values holding CRLF, LF and CR, blank lines between some, Cyrillic: ~3 KiB each 100. */
function sampleCsv(rows: number): { csv: Buffer; expected: Array<[string[], number]> } {
  const expected: Array<[string[], number]> = [['id,text,note'.split(','), 1]];
  let text = 'id,text,note\r\n';
  let line = 2;
  for (let i = 0; i < rows; i++) {
    const value = i % 7 === 0 ? `line one\r\nline two ${i}` : i % 11 === 0 ? `a\nb\rc ${i}` : `Привет, мир ${i}`;
    expected.push([[String(i), value, `n"${i}`], line]);
    text += `${i},"${value.replace(/"/g, '""')}","n""${i}"\r\n`;
    line += 1 + (value.match(/\r\n|\r|\n/g)?.length ?? 0);
    if (i % 13 === 0) {
      text += '\r\n';
      line++;
    }
  }
  return { csv: Buffer.from(text, 'utf8'), expected };
}

describe('CsvRecordReader', () => {
  const { csv, expected } = sampleCsv(20_000);

  it('hands every record over in order with its line, whatever the chunks (one chunk far larger than a slice too)', () => {
    assert.ok(csv.length > 32 * 16 * 1024, 'the file spans many 16 KiB slices');
    assert.deepEqual(read(csv, [csv.length]), expected);
    assert.deepEqual(read(csv, [1, 3, 65_535, 97, 200_000]), expected);
  });

  it('hands over the records before a parse error in the same chunk, then fails with the line of the last good one', () => {
    const { csv: head, expected: want } = sampleCsv(5_000);
    const broken = Buffer.concat([head, Buffer.from('1,"closed"then more,y\r\n'), head.subarray(head.indexOf('\n') + 1)]);
    const out: Array<[string[], number]> = [];
    const reader = new CsvRecordReader('r', ',', 'UTF-8', (record, line) => out.push([record, line]));
    let error: unknown;
    try {
      reader.write(broken);
      reader.end();
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof MalformedReport, String(error));
    // the last good record's value holds no line break, and no blank line follows it
    assert.match(error.message, new RegExp(`last good record ended on line ${want.at(-1)![1]}\\)`));
    assert.deepEqual(out, want);
  });
});
