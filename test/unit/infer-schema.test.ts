import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import transactions from '../fixtures/reports/transactions.json' with { type: 'json' };
import { athenaColumnNames, snakeCase } from '../../functions/core/lake/athena-names.js';
import { detectDelimiter } from '../../functions/core/csv/sample.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { inferColumnType } from '../../functions/core/definitions/infer-column-type.js';
import { inferReportDefinition, type InferredReport } from '../../functions/core/definitions/infer-schema.js';
import { FILL_ME, parseReportDefinition } from '../../functions/core/definitions/report-definition.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url));
const columnsOf = (r: InferredReport) => r.definition.columns.map((c) => ({ ...c }));
const byHeader = (r: InferredReport, header: string, nth = 0) => r.definition.columns.filter((c) => c.header === header)[nth]!;
const noteFor = (r: InferredReport, header: string) => r.notes.filter((n) => n.startsWith(`column ${JSON.stringify(header)}`)).join('\n');

/** What the user does after reading the notes: fill the placeholders the CSV could not tell. */
function filled(r: InferredReport) {
  const d = structuredClone(r.definition);
  d.id = 'sample_report';
  d.reportIdentifier = 'custom-transactions-report';
  d.schedule.timeZone = 'Europe/Moscow';
  d.bodyTemplate = { ...d.bodyTemplate, reportIdentifier: 'custom-transactions-report', reportName: 'Custom transactions report' };
  return d;
}

describe('inferReportDefinition on a sample-shaped CSV with hard cases', async () => {
  const r = await inferReportDefinition(fixture('sample-report.csv'));

  it('proposes the shipped definition for the spec sample columns', () => {
    const shipped = transactions.columns.map((c) => ({ nullable: false, ...c }));
    assert.deepEqual(columnsOf(r).slice(0, 9), shipped);
  });

  it('keeps ids bigint beyond 2^53, and codes with leading zeros string', () => {
    assert.equal(byHeader(r, 'Transaction_id').type, 'bigint'); // holds 9007199254740993
    assert.equal(byHeader(r, 'Terminal_code').type, 'string');
    assert.match(noteFor(r, 'Terminal_code'), /leading zeros such as "00123"/);
    assert.equal(byHeader(r, 'Gateway_ref').type, 'string');
    assert.match(noteFor(r, 'Gateway_ref'), /beyond 64 bits/);
  });

  it('gives decimals scale of at least 2, and reads slashed dates day first unless the values say otherwise', () => {
    assert.equal(byHeader(r, 'Fee').type, 'decimal(18,2)');
    assert.match(noteFor(r, 'Fee'), /at most 1 fractional digit/);
    assert.deepEqual([byHeader(r, 'Settled_on').type, byHeader(r, 'Settled_on').pattern], ['date', 'MM/dd/yyyy']);
    assert.deepEqual(
      [byHeader(r, 'Processed_at').type, byHeader(r, 'Processed_at').pattern, byHeader(r, 'Processed_at').nullable],
      ['timestamp', 'dd/MM/yyyy HH:mm:ss', true],
    );
    assert.match(noteFor(r, 'Processed_at'), /1 empty value\(s\) of 4: made nullable/);
  });

  it('names columns for Athena: digits, dt, duplicates, quoted delimiters', () => {
    assert.deepEqual(r.definition.columns.slice(14).map((c) => [c.header, c.name, c.type, c.nullable]), [
      ['3DS', 'c_3ds', 'bigint', true],
      ['dt', 'c_dt', 'string', false],
      ['Amount', 'amount_2', 'bigint', false],
      ['Customer, name', 'customer_name', 'string', false],
    ]);
    assert.match(noteFor(r, 'Amount'), /already taken.*amount_2/);
    assert.match(noteFor(r, 'Amount'), /if it is money, use decimal\(18,2\)/);
  });

  it('keeps quoted values whole: commas, doubled quotes, line breaks, non-ASCII', () => {
    assert.equal(r.definition.columns.length, 18);
    assert.match(r.notes.join('\n'), /Read 4 data row\(s\), delimiter ",", encoding UTF-8/);
  });

  it('leaves placeholders that stop it loading until filled, then loads', () => {
    assert.throws(
      () => parseReportDefinition(r.definition, 'config/reports/proposal.json'),
      (e: unknown) => {
        assert.ok(e instanceof ConfigurationError);
        for (const path of ['id', 'reportIdentifier', 'schedule.timeZone', 'bodyTemplate.reportIdentifier', 'bodyTemplate.reportName']) {
          assert.match(e.message, new RegExp(`\\n {2}${path.replace('.', '\\.')}: still the placeholder ${FILL_ME}`));
        }
        return true;
      },
    );
    // Through JSON, as the CLI prints it and the user saves it.
    const loaded = parseReportDefinition(JSON.parse(JSON.stringify(filled(r))), 'config/reports/sample_report.json');
    assert.equal(loaded.columns.find((c) => c.header === 'Amount')!.scale, 3);
    assert.equal(loaded.encoding, 'UTF-8');
  });

  it('carries the spec sample body with window placeholders and the detected CSV settings', () => {
    const body = r.definition.bodyTemplate as Record<string, unknown>;
    assert.equal(body.reportCsvDelimiter, ',');
    assert.equal(body.reportEncode, 'UTF-8');
    assert.deepEqual(body.inputReportParameters, transactions.bodyTemplate.inputReportParameters);
    assert.deepEqual(body.filters, transactions.bodyTemplate.filters);
    assert.equal(r.definition.$schema, '../report-definition.schema.json');
  });

  it('takes a stream as well as a Buffer, in chunks that split characters', async () => {
    const bytes = fixture('sample-report.csv');
    const chunks = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7));
    const fromStream = await inferReportDefinition(Readable.from(chunks));
    assert.deepEqual(fromStream, r);
  });

  it('uses the given id in snake_case', async () => {
    const named = await inferReportDefinition(fixture('sample-report.csv'), { id: 'Daily-Transactions', source: 'daily.csv' });
    assert.equal(named.definition.id, 'daily_transactions');
    assert.match(named.definition.description!, /daily\.csv/);
    assert.match(named.notes.join('\n'), new RegExp(`Fill every ${FILL_ME}: reportIdentifier and schedule\\.timeZone`));
    assert.match(r.notes.join('\n'), new RegExp(`Fill every ${FILL_ME}: id, reportIdentifier`));
  });
});

describe('inferReportDefinition on a windows-1251 sample', () => {
  it('reads Cyrillic headers and transliterates their names', async () => {
    const r = await inferReportDefinition(fixture('windows-1251.csv'), { encoding: 'windows-1251' });
    assert.deepEqual(
      r.definition.columns.map((c) => [c.header, c.name, c.type, c.pattern ?? '', c.nullable]),
      [
        ['Мерчант', 'merchant', 'string', '', false],
        ['Номер транзакции', 'nomer_tranzaktsii', 'bigint', '', false],
        ['Сумма', 'summa', 'decimal(18,2)', '', false],
        ['Дата создания', 'data_sozdaniya', 'timestamp', 'yyyy-MM-dd HH:mm:ss', false],
        ['Дата отчёта', 'data_otcheta', 'date', 'dd.MM.yyyy', false],
        ['Комментарий', 'kommentariy', 'string', '', true],
        ['Код точки', 'kod_tochki', 'string', '', false],
      ],
    );
    assert.equal(r.definition.encoding, 'windows-1251');
    assert.equal((r.definition.bodyTemplate as Record<string, unknown>).reportEncode, 'windows-1251');
    assert.doesNotThrow(() => parseReportDefinition(filled(r), 'x.json'));
  });

  it('given no encoding, detects windows-1251 and says so in a note', async () => {
    const given = await inferReportDefinition(fixture('windows-1251.csv'), { encoding: 'windows-1251' });
    const detected = await inferReportDefinition(fixture('windows-1251.csv'));
    assert.equal(detected.definition.encoding, 'windows-1251');
    assert.deepEqual(detected.definition.columns, given.definition.columns);
    assert.match(detected.notes.join('\n'), /not UTF-8 and reads as Cyrillic in windows-1251/);
  });

  it('detects it in a header and one row: "Сумма";"Дата" as windows-1251 bytes', async () => {
    // The bytes written out, so the expectation does not come from the decoder under test: С у м м а, Д а т а.
    const bytes = Buffer.concat([
      Buffer.from('"'), Buffer.from([0xd1, 0xf3, 0xec, 0xec, 0xe0]), Buffer.from('";"'), Buffer.from([0xc4, 0xe0, 0xf2, 0xe0]),
      Buffer.from('"\n10.50;01.02.2026\n'),
    ]);
    const r = await inferReportDefinition(bytes);
    assert.equal(r.definition.encoding, 'windows-1251');
    assert.deepEqual(r.definition.columns.map((c) => c.header), ['Сумма', 'Дата']);
  });

  it('--encoding UTF-8 on it names the flag to pass, exactly', async () => {
    await assert.rejects(
      inferReportDefinition(fixture('windows-1251.csv'), { encoding: 'UTF-8' }),
      (e: unknown) => e instanceof ConfigurationError && /reads as Cyrillic in windows-1251: pass --encoding windows-1251\.$/.test(e.message),
    );
  });

  it('a Latin-1 sample is not taken for windows-1251: the message asks for its encoding', async () => {
    // "Société" in windows-1252 / Latin-1: é is 0xE9, which windows-1251 reads as й inside a Latin word.
    const bytes = Buffer.concat([Buffer.from('Soci'), Buffer.from([0xe9]), Buffer.from('t'), Buffer.from([0xe9]), Buffer.from(';Montant\nACME;10\n')]);
    await assert.rejects(
      inferReportDefinition(bytes),
      (e: unknown) => e instanceof ConfigurationError && /not valid UTF-8, nor Cyrillic in windows-1251: pass its encoding, e\.g\. --encoding windows-1252/.test(e.message),
    );
    assert.deepEqual((await inferReportDefinition(bytes, { encoding: 'windows-1252' })).definition.columns.map((c) => c.header), ['Société', 'Montant']);
  });

  it('refuses an encoding it cannot decode', async () => {
    await assert.rejects(inferReportDefinition(fixture('windows-1251.csv'), { encoding: 'cp-9999' }), /not an encoding/);
  });
});

describe('inferReportDefinition on a semicolon-delimited sample with a BOM', async () => {
  const r = await inferReportDefinition(fixture('semicolon-bom.csv'));

  it('detects the BOM and the delimiter; the first header carries no BOM', () => {
    assert.equal(r.definition.delimiter, ';');
    assert.equal(r.definition.encoding, 'UTF-8');
    assert.equal(r.definition.columns[0]!.header, 'ID');
    assert.match(r.notes.join('\n'), /byte-order mark/);
  });

  it('types what fits, and says why the rest is string', () => {
    assert.deepEqual(
      r.definition.columns.map((c) => [c.name, c.type, c.pattern ?? '', c.nullable]),
      [
        ['id', 'bigint', '', false],
        ['created', 'timestamp', 'dd.MM.yyyy HH:mm:ss', false],
        ['op_date', 'date', 'yyyy-MM-dd', false],
        ['amount', 'string', '', false],
        ['value_date', 'date', 'dd/MM/yyyy', false],
        ['posted_at', 'timestamp', 'yyyy-MM-ddTHH:mm:ss', false],
        ['captured', 'timestamp', 'yyyy-MM-dd HH:mm:ss.SSS', false],
        ['status', 'string', '', false],
        ['notes', 'string', '', true],
        ['empty_col', 'string', '', true],
      ],
    );
    assert.match(noteFor(r, 'Amount'), /decimal comma/);
    assert.match(noteFor(r, 'Value date'), /both as dd\/MM\/yyyy and MM\/dd\/yyyy: chose dd\/MM\/yyyy/);
    assert.match(noteFor(r, 'Empty col'), /no values in the sample/);
  });

  it('a BOM wins over a windows-1251 option', async () => {
    const again = await inferReportDefinition(fixture('semicolon-bom.csv'), { encoding: 'windows-1251' });
    assert.equal(again.definition.encoding, 'UTF-8');
    assert.equal(again.definition.columns[0]!.header, 'ID');
    assert.match(again.notes.join('\n'), /read as UTF-8, not windows-1251/);
  });
});

describe('reading samples', () => {
  const csv = (text: string) => Buffer.from(text, 'utf8');

  it('detects tab and pipe, and lets a given delimiter win', async () => {
    assert.equal((await inferReportDefinition(csv('a\tb\n1\t2\n'))).definition.delimiter, '\t');
    assert.equal((await inferReportDefinition(csv('a|b|c\n1|2|3\n'))).definition.delimiter, '|');
    const given = await inferReportDefinition(csv('a,b;c\n1,2;3\n'), { delimiter: ';' });
    assert.deepEqual(given.definition.columns.map((c) => c.header), ['a,b', 'c']);
  });

  it('counts delimiters outside quotes only, ties going to the comma', () => {
    assert.equal(detectDelimiter('"a;b;c",d\n'), ',');
    assert.equal(detectDelimiter('"a,b,c";d\n'), ';');
    assert.equal(detectDelimiter('a;b,c\n'), ',');
    assert.equal(detectDelimiter('"one, two"\n1\n'), undefined);
  });

  it('reads a one-column file, and a header with no rows', async () => {
    const one = await inferReportDefinition(csv('Amount\n1.25\n'));
    assert.deepEqual(one.definition.columns, [{ header: 'Amount', name: 'amount', type: 'decimal(18,2)', nullable: false }]);
    assert.match(one.notes[0]!, /single column/);
    const empty = await inferReportDefinition(csv('a,b\r\n'));
    assert.deepEqual(empty.definition.columns.map((c) => [c.type, c.nullable]), [['string', true], ['string', true]]);
  });

  it('refuses an empty file, a ragged one and UTF-16', async () => {
    await assert.rejects(inferReportDefinition(csv('')), /empty/);
    await assert.rejects(inferReportDefinition(csv('\n\n')), /empty/);
    await assert.rejects(inferReportDefinition(csv('a,b\n1,2,3\n')), (e: unknown) => e instanceof ConfigurationError && /delimiter/.test(e.message));
    await assert.rejects(inferReportDefinition(iconv.encode('\uFEFFa,b\n', 'utf-16le', { addBOM: true })), /UTF-16/);
  });

  it('reads only maxBytes, up to the last whole record, even inside a quoted line break', async () => {
    const text = 'id,note\n1,"a\nb"\n2,"c\nd"\n3,x\n';
    const cut = text.indexOf('"c\n') + 3; // inside the second quoted value, after its line break
    const r = await inferReportDefinition(Readable.from([Buffer.from(text)]), { maxBytes: cut });
    assert.match(r.notes.join('\n'), new RegExp(`first ${cut} bytes of the sample were read \\(1 rows\\)`));
    assert.equal(r.definition.columns[0]!.type, 'bigint');
    await assert.rejects(inferReportDefinition(csv(text), { maxBytes: 4 }), /no complete line/);
  });

  it('is not fooled by a UTF-8 character cut by maxBytes', async () => {
    const text = 'name\nЁлка\nЁж\n';
    // The cut falls between the two bytes of the second "Ё": not an invalid UTF-8 sample.
    const r = await inferReportDefinition(csv(text), { maxBytes: Buffer.byteLength('name\nЁлка\nЁ') - 1 });
    assert.equal(r.definition.columns[0]!.header, 'name');
    assert.match(r.notes.join('\n'), /\(1 rows\)/);
  });
});

describe('inferColumnType', () => {
  const t = (...values: string[]) => {
    const r = inferColumnType(values);
    return r.pattern ? `${r.type} ${r.pattern}` : r.type;
  };

  it('bigint: signed integers that fit int64, without leading zeros', () => {
    assert.equal(t('1', '-7', '+5', '0'), 'bigint');
    assert.equal(t('9223372036854775807', '-9223372036854775808'), 'bigint');
    assert.equal(t('9223372036854775808'), 'string');
    assert.equal(t('-9223372036854775809'), 'string');
    assert.equal(t('00123', '1'), 'string');
    assert.equal(t('-01'), 'string');
  });

  it('decimal(18,s): plain decimals, s the most fractional digits seen and at least 2', () => {
    assert.equal(t('1.5', '2'), 'decimal(18,2)');
    assert.equal(t('0.12345', '-0.5'), 'decimal(18,5)');
    assert.equal(t('1234567890123456.25'), 'decimal(18,2)');
    assert.equal(t('12345678901234567.25'), 'string'); // 17 + 2 digits do not fit 18
    assert.equal(t('0.1234567890123456789'), 'string');
    for (const notPlain of ['1.', '.5', '1e5', '1 000.00', '007.50', 'NaN', '1,5']) assert.equal(t(notPlain, '1.5'), 'string', notPlain);
  });

  it('timestamp and date: every value on the calendar, in one pattern', () => {
    assert.equal(t('2026-11-20 10:15:30'), 'timestamp yyyy-MM-dd HH:mm:ss');
    assert.equal(t('20.11.2026 23:59:59'), 'timestamp dd.MM.yyyy HH:mm:ss');
    assert.equal(t('2026-11-20T10:15:30'), 'timestamp yyyy-MM-ddTHH:mm:ss');
    assert.equal(t('20/11/2026 10:15:30'), 'timestamp dd/MM/yyyy HH:mm:ss');
    assert.equal(t('11/20/2026 10:15:30'), 'timestamp MM/dd/yyyy HH:mm:ss');
    assert.equal(t('2028-02-29'), 'date yyyy-MM-dd');
    assert.equal(t('29.02.2028'), 'date dd.MM.yyyy');
    assert.equal(t('13/01/2026', '01/02/2026'), 'date dd/MM/yyyy');
    assert.equal(t('01/13/2026', '01/02/2026'), 'date MM/dd/yyyy');
    assert.equal(t('2026-02-29'), 'string');
    assert.equal(t('2026-11-20 24:00:00'), 'string');
    assert.equal(t('2026-11-20', '2026-11-20 10:00:00'), 'string');
    assert.equal(t('13/13/2026'), 'string');
  });

  it('minute precision, milliseconds, the ISO T and eight-digit dates', () => {
    assert.equal(t('20.11.2026 23:59', '01.01.2026 00:00'), 'timestamp dd.MM.yyyy HH:mm');
    assert.equal(t('2026-11-20 10:15'), 'timestamp yyyy-MM-dd HH:mm');
    assert.equal(t('2026-11-20T10:15:30.125'), 'timestamp yyyy-MM-ddTHH:mm:ss.SSS');
    assert.equal(t('2026-11-20 10:15:30.125', '2026-11-20 10:15:30.000'), 'timestamp yyyy-MM-dd HH:mm:ss.SSS');
    assert.equal(t('11/20/2026 10:15'), 'timestamp MM/dd/yyyy HH:mm');
    assert.equal(t('20261120', '20260229'), 'bigint', 'not all real dates: a number');
    assert.equal(t('20261120', '20280229'), 'date yyyyMMdd');
    assert.equal(t('12345678'), 'bigint');
    // Mixed precision is not one pattern: kept as string, with the note.
    assert.equal(t('2026-11-20 10:15', '2026-11-20 10:15:30'), 'string');
  });

  it('nullable when a value is empty; all empty is a nullable string', () => {
    assert.deepEqual(inferColumnType(['1', '', '2', '']), { type: 'bigint', nullable: true, notes: ['2 empty value(s) of 4: made nullable'] });
    assert.deepEqual(inferColumnType(['', '']).type, 'string');
    assert.equal(inferColumnType([]).nullable, true);
    assert.equal(t(' 1'), 'string'); // spaces are data: a typed column would reject them
  });
});

describe('Athena names', () => {
  it('lower snake_case from headers', () => {
    const cases: Array<[string, string]> = [
      ['Transaction_id', 'transaction_id'], ['Merchant_OID', 'merchant_oid'], ['MerchantOID', 'merchant_oid'],
      ['createdDate', 'created_date'], ['Amount (RUB)', 'amount_rub'], ['  Order -- description  ', 'order_description'],
      ['Café crème', 'cafe_creme'], ['Дата отчёта', 'data_otcheta'], ['Объём', 'obem'], ['Й', 'y'], ['№', 'no'],
      ['3DSecure', '3d_secure'], ['日付', ''],
    ];
    for (const [header, name] of cases) assert.equal(snakeCase(header), name, header);
  });

  it('unique, prefixed before a digit, never dt, positional when nothing is left', () => {
    assert.deepEqual(
      athenaColumnNames(['a', 'A', 'a_2', '1st', 'dt', 'DT', '%', '']).map((n) => n.name),
      ['a', 'a_2', 'a_2_2', 'c_1st', 'c_dt', 'c_dt_2', 'column_7', 'column_8'],
    );
  });

  it('transliterate every Russian and Ukrainian letter, capitals too, as the table says (a changed letter renames a column)', () => {
    const russian = 'абвгдеёжзийклмнопрстуфхцчшщъыьэюя';
    const latin = 'a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch  y  e yu ya'.split(' ');
    assert.equal([...russian].length, latin.length);
    [...russian].forEach((letter, i) => assert.equal(snakeCase(`x${letter}x`), `x${latin[i]}x`, letter));
    assert.equal(snakeCase(russian.toUpperCase()), 'abvgdeezhziyklmnoprstufkhtschshshchyeyuya');
    assert.equal(snakeCase('ІЇЄҐ іїєґ'), 'iyiyeg_iyiyeg');
    assert.equal(snakeCase('HTTPStatus 404'), 'http_status_404');
  });

  it('say why a name is not the header in snake_case', () => {
    assert.deepEqual(athenaColumnNames(['Amount', '%', '2nd fee', 'DT', 'amount', 'a_2', 'A', 'a']), [
      { name: 'amount' },
      { name: 'column_2', note: 'no letters or digits in the header: named "column_2" after its position' },
      { name: 'c_2nd_fee', note: 'the header starts with a digit, which Athena names may not: named "c_2nd_fee"' },
      { name: 'c_dt', note: '"dt" is a partition column: named "c_dt"' },
      { name: 'amount_2', note: '"amount" is already taken by an earlier column: named "amount_2"' },
      { name: 'a_2' },
      { name: 'a' },
      { name: 'a_3', note: '"a" is already taken by an earlier column: named "a_3"' },
    ]);
  });

  it('are always valid and distinct for any headers', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 12 }), (headers) => {
        const names = athenaColumnNames(headers).map((n) => n.name);
        for (const n of names) assert.match(n, /^[a-z][a-z0-9_]*$/);
        assert.equal(new Set(names).size, names.length);
        assert.ok(!names.includes('dt'));
      }),
    );
  });
});

describe('any proposal loads once filled', () => {
  const value = fc.oneof(
    fc.constantFrom('', '0', '007', '-1', '2026-11-20 10:00:00', '20.11.2026', '01/02/2026', '12,5', '9223372036854775808'),
    fc.integer().map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((d) => d.toFixed(3)),
    fc.string({ maxLength: 6 }),
  );

  it('whatever the values', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ minLength: 1, maxLength: 8 }).filter((h) => h.trim() !== ''), { minLength: 1, maxLength: 5 }),
        fc.array(fc.array(value, { minLength: 5, maxLength: 5 }), { maxLength: 6 }),
        async (headers, rows) => {
          const text = stringify([headers, ...rows.map((r) => r.slice(0, headers.length))], { quoted: true });
          const r = await inferReportDefinition(Buffer.from(text));
          assert.equal(r.definition.columns.length, headers.length);
          parseReportDefinition(filled(r), 'property.json');
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('inferColumnType proposes boolean only when a word says so', () => {
  it('true/false and yes/no words, in any case, mixed with 1/0 and empties: boolean', () => {
    assert.deepEqual(inferColumnType(['true', 'FALSE', 'True']).type, 'boolean');
    assert.deepEqual(inferColumnType(['yes', 'No', '1', '0']).type, 'boolean');
    const nullable = inferColumnType(['Yes', '', 'no']);
    assert.equal(nullable.type, 'boolean');
    assert.equal(nullable.nullable, true);
  });

  it('only 0 and 1: bigint, with a note that a flag should be boolean; other words: string', () => {
    const bits = inferColumnType(['0', '1', '1', '0']);
    assert.equal(bits.type, 'bigint');
    assert.ok(bits.notes.some((n) => /if it is a flag, make it boolean/.test(n)), bits.notes.join('\n'));
    assert.equal(inferColumnType(['Y', 'N']).type, 'string');
    assert.equal(inferColumnType(['true', 'maybe']).type, 'string');
  });
});

describe('what the reviewer of a proposal reads', () => {
  it('every note of a small sample, in order: placeholders, rows, then per column its header, name, empties and type', async () => {
    const r = await inferReportDefinition(Buffer.from('Total fee,,Total fee,Code\r\n10,x,1,007\r\n20,,2,008\r\n'), { id: '2024 Daily' });
    assert.equal(r.definition.id, 'r_2024_daily');
    assert.equal(r.definition.description, 'Proposed by reports infer-schema from a sample CSV; review the types.');
    assert.deepEqual([r.definition.lookback, r.definition.window, r.definition.schedule], [2, 'P1D', { cron: 'cron(15 3 * * ? *)', timeZone: FILL_ME }]);
    assert.deepEqual(r.notes, [
      `Fill every ${FILL_ME}: reportIdentifier and schedule.timeZone; replace bodyTemplate (the spec's sample body) with the JSON the provider's support gave for this report, with the window placeholders in it.`,
      'Read 2 data row(s), delimiter ",", encoding UTF-8.',
      'column "Total fee": every value is whole; if it is money, use decimal(18,2) so a later "10.50" is not rejected',
      'column "" (position 2): the header is empty; a definition needs one, so the CSV cannot be described as it is',
      'column "": no letters or digits in the header: named "column_2" after its position',
      'column "": 1 empty value(s) of 2: made nullable',
      'column "Total fee": "total_fee" is already taken by an earlier column: named "total_fee_2"',
      'column "Total fee": the header appears more than once in the sample; check that the report really repeats it',
      'column "Total fee": every value is whole; if it is money, use decimal(18,2) so a later "10.50" is not rejected',
      'column "Code": values with leading zeros such as "007": kept as string (codes lose their zeros as numbers)',
    ]);
    assert.deepEqual(r.definition.columns[1], { header: '', name: 'column_2', type: 'string', nullable: true });
    const { columns: _columns, ...rest } = r.definition;
    assert.deepEqual(rest, {
      $schema: '../report-definition.schema.json',
      id: 'r_2024_daily',
      description: 'Proposed by reports infer-schema from a sample CSV; review the types.',
      reportIdentifier: FILL_ME,
      format: 'CSV',
      encoding: 'UTF-8',
      delimiter: ',',
      schedule: { cron: 'cron(15 3 * * ? *)', timeZone: FILL_ME },
      window: 'P1D',
      lookback: 2,
      rejects: { maxShare: 0 },
      bodyTemplate: {
        reportIdentifier: FILL_ME,
        reportEncode: 'UTF-8',
        reportName: FILL_ME,
        reportCsvDelimiter: ',',
        reportFormat: 'CSV',
        configurationReportParameters: [],
        inputReportParameters: [
          { type: 'INPUT_TEXT', name: 'dateFrom', value: '{{window.start:yyyy-MM-dd HH:mm:ss}}' },
          { type: 'INPUT_TEXT', name: 'dateTo', value: '{{window.end:yyyy-MM-dd HH:mm:ss}}' },
        ],
        outputReportParameters: [],
        filters: { gates: [], companies: [], projects: [], endpoints: [], merchants: [], processors: [], managers: [], resellers: [], currencies: [] },
      },
    });
  });

  it('an id with nothing left in snake_case is the placeholder; a whole-number column not named like money gets no money note', async () => {
    const r = await inferReportDefinition(Buffer.from('Count\n3\n'), { id: '日付' });
    assert.equal(r.definition.id, FILL_ME);
    assert.match(r.notes.join('\n'), new RegExp(`Fill every ${FILL_ME}: id, reportIdentifier`));
    assert.deepEqual(r.notes.filter((n) => n.startsWith('column')), []);
    const money = await inferReportDefinition(Buffer.from('Сумма;Price;Commission\n3;4;5\n'));
    assert.equal(money.notes.filter((n) => n.includes('if it is money')).length, 3);
  });
});

describe('inferColumnType: the note beside each proposal', () => {
  const notes = (...values: string[]) => inferColumnType(values).notes;

  it('numbers', () => {
    assert.deepEqual(notes('1.5', '2'), ['at most 1 fractional digit(s) seen: scale 2 so cents fit']);
    assert.deepEqual(notes('3', '2.0'), ['at most 1 fractional digit(s) seen: scale 2 so cents fit']);
    assert.deepEqual(notes('1.25', '-3'), []);
    assert.deepEqual(notes('0.5'), ['at most 1 fractional digit(s) seen: scale 2 so cents fit']);
    assert.deepEqual(notes('007.50', '1.5'), ['values with leading zeros such as "007.50": kept as string (codes lose their zeros as numbers)']);
    assert.deepEqual(notes('9223372036854775808'), ['integers beyond 64 bits such as "9223372036854775808": kept as string']);
    assert.deepEqual(notes('12345678901234567.25'), ['decimals with 17 integer and 2 fractional digits exceed decimal(18,s): kept as string']);
    assert.deepEqual(notes('1.123456789012345678'), ['decimals with 1 integer and 18 fractional digits exceed decimal(18,s): kept as string']);
    assert.equal(inferColumnType(['1.1234567890123456']).type, 'decimal(18,16)');
    assert.deepEqual(notes('0', '2'), []);
  });

  it('a long example is cut at 40 characters', () => {
    const long = `0${'1'.repeat(44)}`;
    assert.deepEqual(notes(long), [`values with leading zeros such as "0${'1'.repeat(39)}…": kept as string (codes lose their zeros as numbers)`]);
    const forty = `0${'1'.repeat(39)}`;
    assert.deepEqual(notes(forty), [`values with leading zeros such as "${forty}": kept as string (codes lose their zeros as numbers)`]);
  });

  it('dates, booleans and text', () => {
    assert.deepEqual(inferColumnType(['20280229']), {
      type: 'date', pattern: 'yyyyMMdd', nullable: false,
      notes: ['every value is an eight-digit date such as "20280229": proposed date yyyyMMdd; make it bigint if it is a number'],
    });
    for (const [value, type] of [['19000101', 'date'], ['21991231', 'date'], ['18991231', 'bigint'], ['22000101', 'bigint']]) {
      assert.equal(inferColumnType([value!]).type, type, value);
    }
    assert.deepEqual(inferColumnType(['01/02/2026']), {
      type: 'date', pattern: 'dd/MM/yyyy', nullable: false, notes: ['every value reads both as dd/MM/yyyy and MM/dd/yyyy: chose dd/MM/yyyy; check it'],
    });
    assert.deepEqual(inferColumnType(['01/02/2026 10:00']), {
      type: 'timestamp', pattern: 'dd/MM/yyyy HH:mm', nullable: false, notes: ['every value reads both as dd/MM/yyyy HH:mm and MM/dd/yyyy HH:mm: chose dd/MM/yyyy HH:mm; check it'],
    });
    assert.deepEqual(inferColumnType(['20.11.2026']), { type: 'date', pattern: 'dd.MM.yyyy', nullable: false, notes: [] });
    assert.deepEqual(inferColumnType(['Yes', '', 'no']), {
      type: 'boolean', nullable: true,
      notes: ['1 empty value(s) of 3: made nullable', 'every value is a boolean token such as "Yes": proposed boolean (true/1/yes, false/0/no, any case)'],
    });
    assert.deepEqual(inferColumnType(['0', '', '1']), {
      type: 'bigint', nullable: true, notes: ['1 empty value(s) of 3: made nullable', 'only 0 and 1 seen: if it is a flag, make it boolean'],
    });
    assert.deepEqual(notes('12,5', '1,25'), ['values such as "12,5" use a decimal comma: kept as string (a decimal column reads a decimal point)']);
    assert.deepEqual(notes('12,5', 'abc'), []);
    const [dateLike] = notes('2026-13-45', '31.02.2026');
    assert.ok(dateLike!.startsWith('values such as "2026-13-45" look like dates but fit no supported pattern (or not all of them do): kept as string; if they are dates, set type and pattern by hand ('), dateLike);
    assert.deepEqual(notes('2026-13-45', 'x'), []);
    // Where a value looks like a date: one to four digits, one or two, one or more, from the start.
    const looksLikeDate = (value: string) => notes(value).some((n) => n.includes('look like dates'));
    assert.deepEqual(['1.2.3', '1.2.26', '2026/1/12345'].map(looksLikeDate), [true, true, true]);
    assert.deepEqual(['12345-1-1', '1.123.1', 'x2026-13-45', '2026-13'].map(looksLikeDate), [false, false, false, false]);
    // A decimal comma only in a whole value, signed or not.
    assert.deepEqual(notes('+1,5', '-2,25'), ['values such as "+1,5" use a decimal comma: kept as string (a decimal column reads a decimal point)']);
    assert.deepEqual([notes('a1,5'), notes('1,5a'), notes('1,'), notes(',5')], [[], [], [], []]);
    assert.deepEqual([inferColumnType(['1 ']).type, inferColumnType(['1', '+1.5 ']).type], ['string', 'string']);
    assert.deepEqual(inferColumnType([]), { type: 'string', nullable: true, notes: ['no values in the sample: typed string and nullable; set the type when data shows it'] });
  });
});
