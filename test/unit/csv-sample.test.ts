import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Readable } from 'node:stream';
import iconv from 'iconv-lite';
import { ConfigurationError } from '../../functions/core/errors.js';
import { detectDelimiter, readCsvSample } from '../../functions/core/csv/sample.js';
import { readsAsWindows1251 } from '../../functions/core/csv/sample-encoding.js';

/** Windows-1251 bytes of a text, from iconv-lite (the decoder under test is the other direction). */
const cp1251 = (text: string) => iconv.encode(text, 'windows-1251');
const utf8 = (text: string) => Buffer.from(text, 'utf8');

/** A refusal with exactly this message, a ConfigurationError (the CLI prints it as the user's fix). */
const refused = (message: string) => (e: unknown) => e instanceof ConfigurationError && e.message === message;

describe('readsAsWindows1251', () => {
  it('takes Cyrillic words, with the punctuation such text holds, Ё, ё and џ (the last letter of the range) among them', () => {
    assert.equal(readsAsWindows1251(cp1251('"Сумма";"Дата"')), true);
    assert.equal(readsAsWindows1251(cp1251('Ёлка, ёж, џак')), true);
    assert.equal(readsAsWindows1251(cp1251('№ 5 «Оплата» – 1\u00a0000 … ‘а’ “б” — 5°')), true);
  });

  it('refuses ASCII alone, punctuation without a letter, a byte Cyrillic text lacks, and a word mixing scripts', () => {
    assert.equal(readsAsWindows1251(cp1251('id,amount\n1,2\n')), false, 'nothing past 0x7F');
    assert.equal(readsAsWindows1251(cp1251('«1»')), false, 'no letter');
    assert.equal(readsAsWindows1251(Buffer.from([0xc0, 0x88])), false, '0x88 is € in windows-1251');
    assert.equal(readsAsWindows1251(Buffer.from([0xc0, 0xa9])), false, '0xA9 is ©');
    // "Société" in windows-1252: é is 0xE9, which windows-1251 reads as й inside a Latin word.
    assert.equal(readsAsWindows1251(iconv.encode('Société', 'windows-1252')), false);
    assert.equal(readsAsWindows1251(cp1251('йa')), false, 'Cyrillic then Latin');
    assert.equal(readsAsWindows1251(cp1251('aй')), false, 'Latin then Cyrillic');
    assert.equal(readsAsWindows1251(cp1251('a й')), true, 'two words, each in one script');
  });

  it('reads only the bytes of the view it is given', () => {
    const whole = Buffer.concat([Buffer.from([0x88]), cp1251('Сумма')]);
    assert.equal(readsAsWindows1251(whole), false);
    assert.equal(readsAsWindows1251(whole.subarray(1)), true);
    assert.equal(readsAsWindows1251(new Uint8Array(whole.buffer, whole.byteOffset + 1, 5)), true);
    assert.equal(readsAsWindows1251(new Uint8Array(whole.buffer, whole.byteOffset, 3)), false);
  });
});

describe('readCsvSample', () => {
  it('reads a UTF-8 sample: header, rows, delimiter, no BOM, not truncated, no notes', async () => {
    assert.deepEqual(await readCsvSample(utf8('id;name\r\n1;"a;b"\r\n\r\n2;Ёж\r\n')), {
      header: ['id', 'name'],
      rows: [['1', 'a;b'], ['2', 'Ёж']],
      encoding: 'UTF-8',
      delimiter: ';',
      bom: false,
      truncated: false,
      notes: [],
    });
  });

  it('keeps the name the user gave UTF-8 by, in any spelling', async () => {
    for (const name of ['utf8', 'UTF-8', 'utf-8', 'Utf_8']) {
      assert.equal((await readCsvSample(utf8('a\n1\n'), { encoding: name })).encoding, name);
    }
  });

  it('decodes a given single-byte encoding, and detects windows-1251 with a note when none is given', async () => {
    const bytes = cp1251('Сумма;Дата\n1;2\n');
    const given = await readCsvSample(bytes, { encoding: 'windows-1251' });
    assert.deepEqual([given.header, given.encoding, given.notes], [['Сумма', 'Дата'], 'windows-1251', []]);
    const detected = await readCsvSample(bytes);
    assert.deepEqual([detected.header, detected.encoding], [['Сумма', 'Дата'], 'windows-1251']);
    assert.deepEqual(detected.notes, ['The sample is not UTF-8 and reads as Cyrillic in windows-1251: the definition says windows-1251 (--encoding overrides it).']);
    const latin = await readCsvSample(iconv.encode('Société,x\n1,2\n', 'latin1'), { encoding: 'latin1' });
    assert.deepEqual([latin.header, latin.encoding], [['Société', 'x'], 'latin1']);
  });

  it('refuses bytes that are neither UTF-8 nor Cyrillic, naming the flag; UTF-8 given on windows-1251 names windows-1251', async () => {
    await assert.rejects(
      readCsvSample(iconv.encode('Société,x\n', 'latin1')),
      refused('The sample is not valid UTF-8, nor Cyrillic in windows-1251: pass its encoding, e.g. --encoding windows-1252 (any name iconv-lite knows).'),
    );
    await assert.rejects(
      readCsvSample(cp1251('Сумма\n'), { encoding: 'utf8' }),
      refused('The sample is not valid UTF-8, and reads as Cyrillic in windows-1251: pass --encoding windows-1251.'),
    );
    await assert.rejects(readCsvSample(utf8('a\n'), { encoding: 'cp-9999' }), refused('"cp-9999" is not an encoding this pipeline can decode; use for example "UTF-8" or "windows-1251".'));
  });

  it('strips a UTF-8 BOM, which wins over a single-byte encoding with a note; refuses UTF-16 in both byte orders', async () => {
    const bom = await readCsvSample(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('Сумма,b\n1,2\n')]), { encoding: 'windows-1251' });
    assert.deepEqual([bom.header, bom.encoding, bom.bom], [['Сумма', 'b'], 'UTF-8', true]);
    assert.deepEqual(bom.notes, ['The sample starts with a UTF-8 byte-order mark: read as UTF-8, not windows-1251.']);
    const plain = await readCsvSample(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('a,b\n1,2\n')]), { encoding: 'UTF-8' });
    assert.deepEqual([plain.header, plain.bom, plain.notes], [['a', 'b'], true, []]);
    const utf16 = 'The sample is UTF-16 (it starts with a UTF-16 byte-order mark); the pipeline reads UTF-8 or single-byte encodings.';
    await assert.rejects(readCsvSample(Buffer.from([0xff, 0xfe, 0x61, 0x00])), refused(utf16));
    await assert.rejects(readCsvSample(Buffer.from([0xfe, 0xff, 0x00, 0x61])), refused(utf16));
    // A UTF-16 BOM is both bytes: 0xFF is я and 0xFE ю in windows-1251, 0xEF п, the first byte of a UTF-8 BOM.
    for (const text of ['я\n', '1ю\n', 'ю1\n', '1я\n', 'пароль\n']) {
      const r = await readCsvSample(cp1251(text));
      assert.deepEqual([r.header, r.encoding, r.bom], [[text.trim()], 'windows-1251', false], text);
    }
  });

  it('reads at most maxBytes from a buffer or a stream of bytes or strings, up to the last whole record', async () => {
    const text = 'id,note\n1,"a\nb"\n2,x\n3,y\n';
    const cut = text.indexOf('2,x') + 2; // inside the third record
    const note = (rows: number) => `Only the first ${cut} bytes of the sample were read (${rows} rows).`;
    for (const input of [utf8(text), Readable.from([utf8(text.slice(0, 5)), utf8(text.slice(5))]), Readable.from([text], { objectMode: true })]) {
      const r = await readCsvSample(input, { maxBytes: cut });
      assert.deepEqual([r.rows, r.truncated, r.notes], [[['1', 'a\nb']], true, [note(1)]]);
    }
    const whole = await readCsvSample(Readable.from([utf8(text)]), { maxBytes: Buffer.byteLength(text) });
    assert.deepEqual([whole.rows.length, whole.truncated, whole.notes], [3, false, []]);
    const exact = await readCsvSample(utf8(text), { maxBytes: Buffer.byteLength(text) });
    assert.deepEqual([exact.rows.length, exact.truncated], [3, false]);
    // A string chunk counts its UTF-8 bytes: "Ё" is two.
    const cyr = await readCsvSample(Readable.from(['a\nЁ\nЁ\n'], { objectMode: true }), { maxBytes: 6 });
    assert.deepEqual([cyr.rows, cyr.truncated], [[['Ё']], true]);
    await assert.rejects(readCsvSample(utf8(text), { maxBytes: 4 }), refused('The first 4 bytes of the sample hold no complete line; raise maxBytes.'));
  });

  it('an empty sample, a two-character delimiter and a ragged CSV are refused with the fix', async () => {
    const empty = 'The sample is empty: it needs at least its header row.';
    for (const text of ['', ' \n\t', '\r\n\r\n']) await assert.rejects(readCsvSample(utf8(text)), refused(empty), JSON.stringify(text));
    await assert.rejects(readCsvSample(utf8('a,b\n'), { delimiter: ';;' }), refused('The delimiter must be one character; got ";;".'));
    await assert.rejects(readCsvSample(utf8('a,b\n'), { delimiter: '' }), refused('The delimiter must be one character; got "".'));
    await assert.rejects(readCsvSample(utf8('a,b\n1,2,3\n')), (e: unknown) =>
      e instanceof ConfigurationError && e.message.startsWith('The sample is not a CSV with delimiter ",": ') && e.message.endsWith('. Check the delimiter and the encoding.') && e.cause !== undefined);
  });

  it('a header with no delimiter is one column, with a note; a given delimiter is used as is', async () => {
    const one = await readCsvSample(utf8('Amount\n1.25\n'));
    assert.deepEqual([one.header, one.delimiter, one.notes], [['Amount'], ',', ['The header line holds none of , ; tab |: read as a single column with delimiter ",".']]);
    const given = await readCsvSample(utf8('a,b|c\n1,2|3\n'), { delimiter: '|' });
    assert.deepEqual([given.header, given.delimiter, given.notes], [['a,b', 'c'], '|', []]);
  });

  it('reads only the bytes of the view it is given', async () => {
    const whole = utf8('x;y\na,b\n1,2\n');
    const r = await readCsvSample(new Uint8Array(whole.buffer, whole.byteOffset + 4, whole.length - 4), { maxBytes: 8 });
    assert.deepEqual([r.header, r.rows, r.truncated], [['a', 'b'], [['1', '2']], false]);
    const cut = await readCsvSample(new Uint8Array(whole.buffer, whole.byteOffset + 4, whole.length - 4), { maxBytes: 7 });
    assert.deepEqual([cut.header, cut.rows, cut.truncated], [['a', 'b'], [], true]);
  });
});

describe('detectDelimiter', () => {
  it('looks at the header line only, whichever break ends it, quotes and all', () => {
    assert.equal(detectDelimiter('a;b\rc,d,e,f\n'), ';');
    assert.equal(detectDelimiter('a;b\r\nc,d,e,f\n'), ';');
    assert.equal(detectDelimiter('a;b\nc,d,e,f\n'), ';');
    assert.equal(detectDelimiter('"x\ny,z,w";a;b\n'), ';', 'a line break inside quotes does not end the header');
    assert.equal(detectDelimiter('a|b|c\td'), '|');
    assert.equal(detectDelimiter('a\tb\tc|d'), '\t');
    assert.equal(detectDelimiter('a;b|c|d'), '|');
    assert.equal(detectDelimiter('a'), undefined);
  });
});
