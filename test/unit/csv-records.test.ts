import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { CsvRecordReader, isUtf8Name, physicalBreaks } from '../../functions/core/csv/records.js';
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

/** Reads chunks with a reader of the given delimiter and encoding; records, lines, and the reader after end(). */
function readChunks(chunks: Buffer[], options: { delimiter?: string; encoding?: string; midFile?: boolean } = {}) {
  const records: Array<[string[], number]> = [];
  const reader = new CsvRecordReader('daily', options.delimiter ?? ',', options.encoding ?? 'UTF-8', (record, line) => records.push([record, line]), options.midFile);
  for (const chunk of chunks) reader.write(chunk);
  reader.end();
  return { records, emptyLines: reader.emptyLines, linesRead: reader.linesRead };
}

/** The reader's refusal: a MalformedReport naming the report and the problem. */
function malformed(chunks: Buffer[], problem: string, options: { encoding?: string } = {}) {
  assert.throws(
    () => readChunks(chunks, options),
    (e: unknown) =>
      e instanceof MalformedReport && e.reportId === 'daily' && e.problem === problem && e.message.startsWith(`Report "daily" is not a well-formed CSV file: ${problem}. `) && !('cause' in e),
  );
}

const bytes = (...b: number[]) => Buffer.from(b);
const BOM = bytes(0xef, 0xbb, 0xbf);

describe('CsvRecordReader: bytes, BOMs and lines (issue 36)', () => {
  it('drops a UTF-8 BOM, even when it comes a byte at a time, and only at the start of a file', () => {
    const text = Buffer.from('a,b\n1,2\n');
    const want = [[['a', 'b'], 1], [['1', '2'], 2]];
    assert.deepEqual(readChunks([Buffer.concat([BOM, text])]).records, want);
    assert.deepEqual(readChunks([bytes(0xef), bytes(0xbb), bytes(0xbf), text]).records, want);
    assert.deepEqual(readChunks([bytes(0xef, 0xbb), Buffer.concat([bytes(0xbf), text])]).records, want);
    assert.deepEqual(readChunks([Buffer.concat([BOM, text])], { midFile: true }).records[0], [['\ufeffa', 'b'], 1], 'a later part of a file has no BOM to drop');
    assert.deepEqual(readChunks([text, BOM, Buffer.from('x\n')]).records.at(-1), [['\ufeffx'], 3]);
    assert.deepEqual(readChunks([text, Buffer.from('y\n'), Buffer.concat([BOM, Buffer.from('x\n')])]).records.at(-1), [['\ufeffx'], 4]);
  });

  it('a file shorter than a BOM is read as it is: "a", "ab", or a BOM alone', () => {
    assert.deepEqual(readChunks([Buffer.from('a')]).records, [[['a'], 1]]);
    assert.deepEqual(readChunks([Buffer.from('a'), Buffer.from('b')]).records, [[['ab'], 1]]);
    assert.deepEqual(readChunks([BOM]).records, []);
  });

  it('refuses bytes that are not UTF-8, naming where they are, and a file ending inside a character', () => {
    malformed([Buffer.from('a,b\n'), bytes(0x31, 0xff, 0x0a)], 'bytes that are not UTF-8 between byte 4 and 7');
    malformed([Buffer.from('id\n'), bytes(0xd0)], 'the file ends inside a UTF-8 character (byte 3)');
    malformed([bytes(0xef, 0xbb)], 'the file ends inside a UTF-8 character (byte 0)');
    malformed([bytes(0xef), Buffer.from('x,y')], 'bytes that are not UTF-8 between byte 0 and 4');
  });

  it('takes characters of 2, 3 and 4 bytes cut anywhere between chunks', () => {
    const text = 'Ё€😀क,x\n€😀Ёक,y\n'; // क is E0 A4 95: the lowest lead byte of three
    const all = Buffer.from(text);
    for (let cut = 1; cut < all.length; cut++) {
      assert.deepEqual(readChunks([all.subarray(0, cut), all.subarray(cut)]).records, [[['Ё€😀क', 'x'], 1], [['€😀Ёक', 'y'], 2]], `cut at ${cut}`);
    }
    assert.deepEqual(readChunks([...all].map((b) => bytes(b))).records.length, 2, 'one byte at a time');
  });

  it('decodes other encodings with iconv-lite, characters cut between chunks included', () => {
    const cp = iconv.encode('Сумма;Дата\r\n1;Ёж\r\n', 'windows-1251');
    const want = [[['Сумма', 'Дата'], 1], [['1', 'Ёж'], 2]];
    assert.deepEqual(readChunks([cp], { delimiter: ';', encoding: 'windows-1251' }).records, want);
    assert.deepEqual(readChunks([...cp].map((b) => bytes(b)), { delimiter: ';', encoding: 'windows-1251' }).records, want);
    const utf16 = iconv.encode('a,b\n1,2\n', 'utf-16le', { addBOM: true });
    assert.deepEqual(readChunks([utf16.subarray(0, 3), utf16.subarray(3)], { encoding: 'utf-16le' }).records, [[['a', 'b'], 1], [['1', '2'], 2]]);
  });

  it('counts blank lines, not the break that ends the file, and lines read up to the last record', () => {
    const r = readChunks([Buffer.from('a\r\n\r\n1\n\n\n2\n')]);
    assert.deepEqual(r.records, [[['a'], 1], [['1'], 3], [['2'], 6]]);
    assert.deepEqual([r.emptyLines, r.linesRead], [3, 6]);
    // Blank lines at the very end: csv-parse holds a chunk's last bytes back, and counted them with the final break.
    for (const [text, blank] of [['a\n1\n\n', 1], ['a\n1\n\n\n', 2], ['a\n\n1\n', 1], ['a\n\n1', 1], ['a\n1\n', 0], ['a\r\n1\r\n\r\n', 1], ['a\r1\r\r', 1]] as const) {
      assert.equal(readChunks([Buffer.from(text)]).emptyLines, blank, JSON.stringify(text));
      assert.equal(readChunks([...Buffer.from(text)].map((b) => bytes(b))).emptyLines, blank, `${JSON.stringify(text)} a byte at a time`);
    }
    assert.equal(readChunks([]).emptyLines, 0, 'an empty file');
    const slice = readChunks([Buffer.from(`${'a'.repeat(16 * 1024 - 3)}\n\n\n`)]);
    assert.deepEqual([slice.records.length, slice.emptyLines], [1, 2], 'a chunk of exactly one 16 KiB slice');
    assert.equal(readChunks([iconv.encode('a\r\n1\r\n\r\n', 'windows-1251')], { encoding: 'windows-1251' }).emptyLines, 1);
    const noBreak = readChunks([Buffer.from('a\n1')]);
    assert.deepEqual([noBreak.records, noBreak.emptyLines, noBreak.linesRead], [[[['a'], 1], [['1'], 2]], 0, 2]);
  });

  it('reads a record far longer than any line of the tests above', () => {
    assert.deepEqual(readChunks([Buffer.from(`${'x'.repeat(5000)},"${'y'.repeat(5000)}"\n`)]).records[0]![0]![0]!.length, 5000);
  });

  it('separates records by CRLF, LF or a bare CR, and keeps rows of other lengths for the caller to reject', () => {
    assert.deepEqual(readChunks([Buffer.from('a,b\r1,2,3\r\n4\n')]).records, [[['a', 'b'], 1], [['1', '2', '3'], 2], [['4'], 3]]);
  });

  it('a quoted value with line breaks starts on its own line; the next record after all its breaks', () => {
    const r = readChunks([Buffer.from('a,b\n"x\r\ny\rz",1\n2,"\n"\n3,3\n')]);
    assert.deepEqual(r.records, [[['a', 'b'], 1], [['x\r\ny\rz', '1'], 2], [['2', '\n'], 5], [['3', '3'], 7]]);
  });

  it('a parse error names the line the last good record ended on, and keeps csv-parse\'s error as the cause', () => {
    assert.throws(
      () => readChunks([Buffer.from('a,b\n"x\ny",1\n1,"open\n')]),
      (e: unknown) => e instanceof MalformedReport && /\(csv-parse counts CR and LF inside values as separate lines; the last good record ended on line 3\)$/.test(e.problem) && e.cause instanceof Error,
    );
  });
});

describe('physicalBreaks and isUtf8Name', () => {
  it('counts CR, LF and CRLF as one break each, in every field', () => {
    assert.equal(physicalBreaks([]), 0);
    assert.equal(physicalBreaks(['plain', '']), 0);
    assert.equal(physicalBreaks(['a\r\nb', 'c\rd', 'e\nf']), 3);
    assert.equal(physicalBreaks(['\r\r\n\n\r']), 4);
    assert.equal(physicalBreaks(['\n\r']), 2);
    assert.equal(physicalBreaks(['\r\r']), 2);
    assert.equal(physicalBreaks(['a\r\rb\r']), 3);
  });

  it('knows UTF-8 by its names only', () => {
    for (const name of ['UTF-8', 'utf8', 'Utf-8', ' utf-8 ']) assert.equal(isUtf8Name(name), true, name);
    for (const name of ['utf-16', 'utf88', 'xutf8', 'utf-8x', 'windows-1251', 'utf--8']) assert.equal(isUtf8Name(name), false, name);
  });
});
