import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { countingSink, type ByteSink } from '../../functions/core/byte-sink.js';
import { RejectWriter, csvLine } from '../../functions/core/csv/reject-writer.js';

const HEADER = '"line","column","reason","record"\r\n';

/** A rejects file in memory: every write kept apart, so a test sees when and how the writer wrote. */
function memoryFile() {
  const writes: Buffer[] = [];
  const state = { ended: false, aborted: undefined as Error | undefined };
  const memory: ByteSink = {
    write: (bytes) => void writes.push(Buffer.from(bytes)),
    end: () => void (state.ended = true),
    abort: (reason) => void (state.aborted = reason),
  };
  const sink = countingSink(memory);
  return { sink, writes, state, text: () => Buffer.concat(writes).toString('utf8') };
}

describe('csvLine', () => {
  it('quotes every field, doubles the quotes inside, and ends with CRLF', () => {
    assert.equal(csvLine(['a', 'b"c', 'd,e', '']), '"a","b""c","d,e",""\r\n');
    assert.equal(csvLine(['1', 'x;y'], ';'), '"1";"x;y"\r\n');
    assert.equal(csvLine(['"', '""']), '"""",""""""\r\n');
  });
});

describe('RejectWriter', () => {
  it('writes line, column, reason and the record re-serialised with the report delimiter, which csv-parse reads back', async () => {
    const file = memoryFile();
    const writer = new RejectWriter(file.sink, ';');
    writer.add(7, 'amount', 'not a decimal: "1,5"', ['42', '1,5', 'say "hi"', 'x;y']);
    writer.add(9, '', 'expected 4 fields, got 1', ['lonely']);
    await writer.close();
    assert.equal(
      file.text(),
      `${HEADER}"7","amount","not a decimal: ""1,5""","""42"";""1,5"";""say """"hi"""""";""x;y"""\r\n"9","","expected 4 fields, got 1","""lonely"""\r\n`,
    );
    const rows = parse(file.text()) as string[][];
    assert.deepEqual(rows, [
      ['line', 'column', 'reason', 'record'],
      ['7', 'amount', 'not a decimal: "1,5"', '"42";"1,5";"say ""hi""";"x;y"'],
      ['9', '', 'expected 4 fields, got 1', '"lonely"'],
    ]);
    // The record field is the original row: fixed and replayed with the report's delimiter, it reads as it came.
    assert.deepEqual(parse(rows[1]![3]!, { delimiter: ';' }), [['42', '1,5', 'say "hi"', 'x;y']]);
    assert.equal(file.state.ended, true);
  });

  it('a run without rejects leaves a header-only file, and a second close adds nothing', async () => {
    const file = memoryFile();
    const writer = new RejectWriter(file.sink, ',');
    await writer.close();
    assert.equal(file.text(), HEADER);
    assert.equal(file.state.ended, true);
    await writer.close();
    assert.equal(file.text(), HEADER);
  });

  it('holds rows until 64 KiB (65,536 characters) are pending, then writes them all as UTF-8', async () => {
    const file = memoryFile();
    const writer = new RejectWriter(file.sink, ',');
    // The header is 35 characters; a row for line 1, column "c", record ["v"] is 20 characters around its reason.
    const reason = 'я'.repeat(65_536 - 35 - 20 - 1);
    writer.add(1, 'c', reason, ['v']);
    assert.equal(writer.pending, 65_535);
    await writer.drain();
    assert.equal(file.writes.length, 0, 'one character short of 64 Ki: nothing written');
    writer.add(1, 'c', '', ['v']);
    assert.equal(writer.pending, 65_535 + 20);
    await writer.drain();
    assert.equal(file.writes.length, 1);
    assert.equal(writer.pending, 0);
    // Every я is two bytes in UTF-8.
    assert.equal(file.sink.bytes, 65_535 + 20 + reason.length);
    await writer.drain(true);
    assert.equal(file.writes.length, 1, 'nothing pending: no empty write');
    await writer.close();
    assert.equal(file.writes.length, 1, 'close writes no second header');
    assert.ok(file.text().startsWith(`${HEADER}"1","c","${reason}","""v"""\r\n"1","c","","""v"""\r\n`));
    assert.equal(file.text().split(HEADER).length, 2, 'one header');
  });

  it('exactly 64 Ki characters pending are written', async () => {
    const file = memoryFile();
    const writer = new RejectWriter(file.sink, ',');
    writer.add(1, 'c', 'r'.repeat(65_536 - 35 - 20), ['v']);
    assert.equal(writer.pending, 65_536);
    await writer.drain();
    assert.equal(file.writes.length, 1);
    assert.equal(file.sink.bytes, 65_536);
  });

  it('a forced drain writes what is pending, and the header is written once', async () => {
    const file = memoryFile();
    const writer = new RejectWriter(file.sink, ',');
    writer.add(3, 'id', 'not an integer: "x"', ['x']);
    await writer.drain(true);
    assert.equal(file.text(), `${HEADER}"3","id","not an integer: ""x""","""x"""\r\n`);
    writer.add(4, 'id', 'empty', ['']);
    await writer.close();
    assert.equal(file.text(), `${HEADER}"3","id","not an integer: ""x""","""x"""\r\n"4","id","empty",""""""\r\n`);
  });

  it('abort passes the reason to the sink, so the file is not published', async () => {
    const file = memoryFile();
    const writer = new RejectWriter(file.sink, ',');
    writer.add(2, 'a', 'r', ['v']);
    const reason = new Error('too many rejected rows');
    await writer.abort(reason);
    assert.equal(file.state.aborted, reason);
    assert.equal(file.writes.length, 0);
  });

  it('without a sink (rejects not kept) it holds nothing and every call is a no-op', async () => {
    const writer = new RejectWriter(undefined, ',');
    writer.add(2, 'a', 'r', ['v']);
    assert.equal(writer.pending, 0);
    await writer.drain(true);
    await writer.close();
    await writer.abort(new Error('x'));
    assert.equal(writer.pending, 0);
  });
});
