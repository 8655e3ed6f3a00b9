import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { csvParseOptions } from '../../functions/core/csv/records.js';
import { AuthenticationRefused, UnexpectedAnswer } from '../../functions/core/errors.js';
import {
  classifyAnswer,
  escapeControls,
  expectationOf,
  headerEquals,
  isRetryableStatus,
  mediaTypeOf,
  quoteStart,
  readCsvHead,
  readFirstRecord,
  sniff,
  type AnswerHead,
  type Caller,
  type ReportExpectation,
} from '../../functions/core/gateway/answer.js';
import { parseContentEncoding } from '../../functions/core/gateway/content-coding.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';

/**
 * The classifier on its own: a report is recognised by its bytes, whatever its label; a refusal by its
 * words; nothing else is ever accepted. The property part generates headers, delimiters, encodings and
 * content types (and refusals, pages and JSON errors) instead of listing them.
 */

const caller: Caller = { login: 'merchant-1', signatureMethod: 'HMAC-SHA1', redact: (t) => t };
const PROPERTY_RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

const expectation = (header: string[], delimiter = ',', encoding = 'UTF-8'): ReportExpectation => ({ format: 'CSV', delimiter, encoding, header });
const answer = (body: Buffer | string, contentType: string, status = 200): AnswerHead => {
  const head = typeof body === 'string' ? Buffer.from(body) : body;
  return { status, contentType, head, complete: true };
};

/**
 * A report as the provider's sample writes it: every field quoted, CRLF, in the report's encoding. Written by
 * csv-stringify, not by the classifier's own headerLine, so a wrong headerLine cannot agree with itself.
 */
function reportBytes(header: string[], rows: string[][], delimiter: string, encoding: string, bom = false): Buffer {
  const text = stringify([header, ...rows], { delimiter, quoted: true, quoted_empty: true, record_delimiter: '\r\n' });
  const body = iconv.encode(text, encoding);
  return bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : body;
}

const HEADER = ['Merchant_Name', 'Transaction_id', 'Amount'];
const REPORT_TYPES = [
  'text/plain',
  'text/plain; charset=UTF-8',
  'text/csv',
  'application/octet-stream',
  'application/vnd.ms-excel',
  'application/x-download',
  '',
  'application/pdf',
];

describe('classifyAnswer: a report by its bytes', () => {
  for (const type of REPORT_TYPES) {
    it(`accepts a CSV report labelled ${type || '(no content type)'} and says its header matches`, () => {
      const body = reportBytes(HEADER, [['Shop', '1', '1.000']], ',', 'UTF-8');
      const c = classifyAnswer(answer(body, type), caller, expectation(HEADER));
      assert.equal(c.kind, 'csv');
      assert.equal(c.headerMatches, true);
      assert.equal(c.firstLine, '"Merchant_Name","Transaction_id","Amount"');
    });
  }

  it('accepts a drifted header as a CSV report (stored raw, refused by the parse) and says it differs', () => {
    const body = reportBytes(['Merchant_Name', 'Merchant_Order_ID', 'Amount', 'Status'], [], ',', 'UTF-8');
    const c = classifyAnswer(answer(body, 'text/plain'), caller, expectation(HEADER));
    assert.equal(c.kind, 'csv');
    assert.equal(c.headerMatches, false);
  });

  it('a short report with a drifted, unquoted header and a decline reason in its rows is a report, not a refused login', () => {
    // Written by csv-stringify, which quotes only where RFC 4180 needs it (our headerLine quotes every field).
    const reasons = ['Card not authorized', 'Operation not allowed for this card', 'Unauthorized 3-D Secure'];
    for (const reason of reasons) {
      const body = stringify([['Merchant_Name', 'Transaction_id', 'Amount', 'Status', 'Reason'], ['Shop', '1', '10.00', 'DECLINED', reason]], { record_delimiter: '\r\n' });
      const c = classifyAnswer(answer(body, 'text/csv'), caller, expectation(['Merchant_Name', 'Transaction_id', 'Amount', 'Status']));
      assert.equal(c.kind, 'csv', reason);
      assert.equal(c.headerMatches, false);
    }
    // The same words on the first line are still a refusal.
    assert.throws(() => classifyAnswer(answer('Sorry, you are not authorized, contact support', 'text/plain'), caller, expectation(HEADER)), AuthenticationRefused);
  });

  it('accepts unquoted headers, a UTF-8 BOM, a semicolon report and a windows-1251 header', () => {
    assert.equal(classifyAnswer(answer('a,b\n1,2\n', 'text/plain'), caller, expectation(['a', 'b'])).headerMatches, true);
    const bom = reportBytes(HEADER, [], ',', 'UTF-8', true);
    assert.equal(classifyAnswer(answer(bom, ''), caller, expectation(HEADER)).headerMatches, true);
    const semi = reportBytes(HEADER, [], ';', 'UTF-8');
    assert.equal(classifyAnswer(answer(semi, 'text/plain'), caller, expectation(HEADER, ';')).headerMatches, true);
    const cyr = ['Магазин', 'Сумма'];
    const cp = reportBytes(cyr, [['Ромашка', '1.000']], ';', 'windows-1251');
    assert.equal(classifyAnswer(answer(cp, 'application/octet-stream'), caller, expectation(cyr, ';', 'windows-1251')).headerMatches, true);
  });

  it('accepts a one-column report whose line is the definition header, and a PDF under any label', () => {
    assert.equal(classifyAnswer(answer('Id\r\n1\r\n', 'text/plain'), caller, expectation(['Id'])).kind, 'csv');
    assert.equal(classifyAnswer(answer('%PDF-1.7\n...', 'text/plain'), caller, expectation(HEADER)).kind, 'pdf');
    assert.equal(classifyAnswer(answer('%PDF-1.7\n...', ''), caller).kind, 'pdf');
  });
});

describe('classifyAnswer: what is not a report', () => {
  for (const status of [200, 401, 403]) {
    for (const type of ['text/plain', 'text/html; charset=utf-8']) {
      it(`a refusal in other words under ${status} ${type} is AuthenticationRefused`, () => {
        const body = type.startsWith('text/html')
          ? '<html><head><title>403</title></head><body><h1>Access denied</h1><p>Unauthorized request.</p></body></html>'
          : 'Access denied: the caller is not authorised to perform this request.';
        assert.throws(() => classifyAnswer(answer(body, type, status), caller, expectation(HEADER)), AuthenticationRefused);
      });
    }
  }

  it('a refusal sentence with commas is a refusal, not a CSV record', () => {
    const e = assertThrows(() => classifyAnswer(answer('Sorry, you are not authorized, contact support', 'text/plain'), caller, expectation(HEADER)), AuthenticationRefused);
    assert.match(e.message, /merchant-1/);
  });

  it('a JSON error, an HTML page and plain words are UnexpectedAnswer, naming what the report would begin with', () => {
    for (const [body, type, why] of [
      ['{"error":"bad filters","code":17}', 'application/json', /JSON/],
      ['{"error":"bad filters"}', 'text/plain', /JSON/],
      ['[{"error":"x"}]', 'text/csv', /JSON/],
      ['<!DOCTYPE html><title>Login</title>', 'text/csv', /web page/],
      ['Report engine error: unknown reportIdentifier', 'text/plain', /one field/],
    ] as const) {
      const e = assertThrows(() => classifyAnswer(answer(body, type), caller, expectation(HEADER)), UnexpectedAnswer);
      assert.match(e.message, why);
      assert.match(e.message, /would have begun with "\\"Merchant_Name\\",\\"Transaction_id\\",\\"Amount\\""/);
      assert.ok(e.firstBytes.startsWith(body.slice(0, 10)));
    }
  });

  it('a report in an undeclared encoding (UTF-16 where UTF-8 is declared) is UnexpectedAnswer with a hint', () => {
    const body = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('"Merchant_Name","Transaction_id","Amount"\r\n', 'utf16-le')]);
    const e = assertThrows(() => classifyAnswer(answer(body, 'text/csv'), caller, expectation(HEADER)), UnexpectedAnswer);
    assert.match(e.message, /encoding/);
    // Declared, it is a report.
    assert.equal(classifyAnswer(answer(body, 'text/csv'), caller, expectation(HEADER, ',', 'UTF-16')).headerMatches, true);
  });

  it('a first line that does not end within the peek of a body that goes on is not a report', () => {
    const head = Buffer.from(`"a","${'x'.repeat(70_000)}`);
    assert.throws(() => classifyAnswer({ status: 200, contentType: 'text/csv', head, complete: false }, caller, expectation(['a', 'b'])), UnexpectedAnswer);
  });
});

describe('readFirstRecord and Content-Encoding', () => {
  it('reads the first record exactly as csv-parse (the parse step\'s reader) does, for any fields csv-stringify writes', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'Я', ' ', '"', ',', ';', '|', '\t', '\r', '\n', '€', '1') });
    fc.assert(
      fc.property(fc.constantFrom(',', ';', '|', '\t'), fc.array(fc.array(field, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }), (delimiter, rows) => {
        const width = rows[0]!.length;
        const table = rows.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? ''));
        const text = stringify(table, { delimiter, record_delimiter: '\r\n' });
        const [expected] = parse(text, { ...csvParseOptions(delimiter), skip_empty_lines: false }) as string[][];
        const got = readFirstRecord(text, delimiter);
        assert.ok(got.ok, text);
        assert.deepEqual(got.ok && got.fields, expected);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('reads RFC 4180 records and refuses what is not one', () => {
    assert.deepEqual(readFirstRecord('"a ""b""",c\r\nx', ','), { ok: true, fields: ['a "b"', 'c'], quoted: [true, false], ended: true, line: '"a ""b""",c' });
    assert.equal(readFirstRecord('a"b,c\n', ',').ok, false);
    assert.equal(readFirstRecord('"a"b,c\n', ',').ok, false);
    const multi = readFirstRecord('"multi\nline",x\n', ',');
    assert.ok(multi.ok);
    assert.deepEqual(multi.fields, ['multi\nline', 'x']);
  });

  it('lists codings in the order applied, without identity, x-gzip as gzip', () => {
    assert.deepEqual(parseContentEncoding('x-gzip'), ['gzip']);
    assert.deepEqual(parseContentEncoding(' Identity '), []);
    assert.deepEqual(parseContentEncoding('deflate, br'), ['deflate', 'br']);
    assert.deepEqual(parseContentEncoding(undefined), []);
    assert.deepEqual(parseContentEncoding('zstd'), ['zstd']);
  });
});

describe('classifyAnswer: properties', () => {
  const DELIMITERS = [',', ';', '\t', '|'];
  const ENCODINGS = ['UTF-8', 'windows-1251', 'UTF-16LE'];
  const TYPES = [...REPORT_TYPES, 'text/csv; charset=windows-1251', 'binary/octet-stream'];
  // Header names as a provider might write them: spaces, quotes, non-ASCII (Cyrillic, accents, €), but no
  // line breaks or control characters, and representable in windows-1251.
  const nameChar = fc.constantFrom(...'abcXYZ019 _-."\'()/№АБВабвёЁ€,;|'.split(''));
  const name = fc.array(nameChar, { minLength: 1, maxLength: 20 }).map((cs) => cs.join('')).filter((s) => s.trim().length > 0);

  it('accepts every report, whatever its header, delimiter, encoding and label', () => {
    fc.assert(
      fc.property(
        fc.array(name, { minLength: 1, maxLength: 12 }),
        fc.constantFrom(...DELIMITERS),
        fc.constantFrom(...ENCODINGS),
        fc.constantFrom(...TYPES),
        fc.boolean(),
        (header, delimiter, encoding, type, bom) => {
          const body = reportBytes(header, [header.map((_, i) => String(i))], delimiter, encoding, bom && encoding === 'UTF-8');
          const c = classifyAnswer(answer(body, type), caller, expectation(header, delimiter, encoding));
          assert.equal(c.kind, 'csv');
          assert.equal(c.headerMatches, true);
        },
      ),
      { numRuns: PROPERTY_RUNS },
    );
  });

  const word = fc.constantFrom('request', 'the', 'caller', 'signature', 'invalid', 'please', 'contact', 'support', 'merchant', 'access', 'denied', 'your', 'key');
  const refusalCore = fc.constantFrom('not authorized', 'not authorised', 'Unauthorized', 'unauthorised', 'not allowed', 'NOT AUTHORIZED');
  const sentence = fc
    .tuple(fc.array(word, { maxLength: 6 }), refusalCore, fc.array(word, { maxLength: 6 }), fc.constantFrom(', ', ' ', '; ', ' | '), fc.constantFrom('.', '!', '', '\n'))
    .map(([a, core, b, sep, end]) => `${a.join(sep)} You are ${core} to perform this ${b.join(sep)}${end}`);

  it('never accepts a refusal sentence: it is AuthenticationRefused under 200/401/403 and any text type', () => {
    fc.assert(
      fc.property(sentence, fc.constantFrom(200, 401, 403), fc.constantFrom('text/plain', 'text/plain; charset=UTF-8', 'text/html'), fc.constantFrom(...DELIMITERS), (text, status, type, delimiter) => {
        assert.throws(() => classifyAnswer(answer(text, type, status), caller, expectation(HEADER, delimiter)), AuthenticationRefused);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  const html = fc
    .tuple(fc.constantFrom('<!DOCTYPE html>', '<html>', '  <HTML lang="en">', '\ufeff<!doctype html>', '<?xml version="1.0"?>'), fc.array(word, { maxLength: 20 }))
    .map(([open, words]) => `${open}<body><p>${words.join(', ')}</p></body></html>`);
  const jsonError = fc
    .record({ error: fc.string(), code: fc.integer(), details: fc.array(fc.string(), { maxLength: 3 }) }, { requiredKeys: [] })
    .chain((o) => fc.constantFrom(JSON.stringify(o), JSON.stringify([o]), JSON.stringify(o, null, 2)));

  it('never accepts an HTML page or a JSON error object, under any label', () => {
    fc.assert(
      fc.property(fc.oneof(html, jsonError), fc.constantFrom(...TYPES, 'text/html', 'application/json'), fc.constantFrom(...DELIMITERS), (text, type, delimiter) => {
        assert.throws(
          () => classifyAnswer(answer(text, type), caller, expectation(HEADER, delimiter)),
          // None of the words is a refusal's: a page or a JSON error is never taken for a refused login either.
          UnexpectedAnswer,
        );
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});

function assertThrows<T extends Error>(fn: () => unknown, type: new (...args: never[]) => T): T {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof type, `expected ${type.name}, got ${String(e)}`);
    return e;
  }
  return assert.fail(`expected ${type.name}`);
}

describe('classifyAnswer: the edges issue 36 found unguarded', () => {
  const REPORT = '"Merchant_Name","Transaction_id","Amount"\r\n"Shop","1","1.000"\r\n';
  const reason = (e: UnexpectedAnswer) => /^The gateway's answer is not a report \((.*)\)\. It began:/s.exec(e.message)?.[1];

  it('a redirect, a 404 or a 5xx with a CSV body is never a report, and says which', () => {
    const redirect = assertThrows(
      () => classifyAnswer({ ...answer(REPORT, 'text/csv', 302), location: 'https://new.example.com/rpt' }, caller, expectation(HEADER)),
      UnexpectedAnswer,
    );
    assert.equal(
      reason(redirect),
      'a redirect to "https://new.example.com/rpt", which is not followed (a signed POST is not re-sent elsewhere): the endpoint URL is probably outdated; HTTP 302, content type "text/csv"',
    );
    const bare = assertThrows(() => classifyAnswer(answer(REPORT, 'text/csv', 301), caller), UnexpectedAnswer);
    assert.match(reason(bare)!, /^a redirect, which is not followed/);
    for (const [status, words] of [[404, 'Not Found'], [500, 'Internal Server Error'], [503, 'Service Unavailable'], [400, 'Bad Request'], [199, '']] as const) {
      const e = assertThrows(() => classifyAnswer(answer(REPORT, 'text/csv', status), caller, expectation(HEADER)), UnexpectedAnswer);
      assert.equal(reason(e), `HTTP ${status}${words ? ` ${words}` : ''}; HTTP ${status}, content type "text/csv"`);
      assert.equal(e.status, status);
    }
  });

  it('a header with the right column count and one renamed column does not match', () => {
    const body = reportBytes(['Merchant_Name', 'Transaction_ID', 'Amount'], [['Shop', '1', '1.000']], ',', 'UTF-8');
    assert.deepEqual(classifyAnswer(answer(body, 'text/csv'), caller, expectation(HEADER)), {
      kind: 'csv',
      firstLine: '"Merchant_Name","Transaction_ID","Amount"',
      headerMatches: false,
    });
  });

  it('a short report whose header names hold "Unauthorized" is a report, quoted or (as the definition\'s header) not', () => {
    const header = ['Unauthorized_Attempts', 'Not_Authorised_Amount'];
    const quoted = reportBytes(header, [['3', '1.00']], ',', 'UTF-8');
    assert.equal(classifyAnswer(answer(quoted, 'text/plain'), caller).kind, 'csv');
    const plain = 'Unauthorized_Attempts;Not_Authorised_Amount\n3;1.00\n';
    assert.deepEqual(classifyAnswer(answer(plain, 'text/plain', 200), caller, expectation(header, ';')), {
      kind: 'csv', firstLine: 'Unauthorized_Attempts;Not_Authorised_Amount', headerMatches: true,
    });
  });

  it('a refusal is a complete text answer of at most 1 KB under 2xx, 401 or 403: from the other side, it is not', () => {
    const words = 'You are not authorized to perform this request.';
    const refused = (a: AnswerHead) => assertThrows(() => classifyAnswer(a, caller, expectation(HEADER)), AuthenticationRefused);
    const notRefused = (a: AnswerHead) => assertThrows(() => classifyAnswer(a, caller, expectation(HEADER)), UnexpectedAnswer);
    const sized = (bytes: number) => `${words}${' '.repeat(bytes - words.length)}`;
    assert.equal(Buffer.byteLength(sized(1024)), 1024);
    refused(answer(sized(1024), 'text/plain'));
    notRefused(answer(sized(1025), 'text/plain'));
    refused(answer(words, 'application/xhtml+xml', 403));
    refused(answer(words, 'TEXT/PLAIN; charset=UTF-8', 299));
    notRefused(answer(words, 'application/json'));
    notRefused(answer(words, ''));
    notRefused(answer(words, 'text/plain', 400));
    notRefused(answer(words, 'text/plain', 404));
    notRefused({ ...answer(words, 'text/plain'), complete: false });
    const e = refused(answer(`  ${words}\n  Contact\tsupport.  `, 'text/plain', 401));
    assert.equal(e.message.includes('"You are not authorized to perform this request. Contact support."'), true, e.message);
  });

  it('without a definition: any usual delimiter, no header verdict, and the reason names UTF-8 and the usual delimiters', () => {
    assert.deepEqual(classifyAnswer(answer('a|b\n1|2\n', 'text/csv'), caller), { kind: 'csv', firstLine: 'a|b' });
    assert.deepEqual(classifyAnswer(answer('"a"\t"b"\n', 'text/csv'), caller), { kind: 'csv', firstLine: '"a"\t"b"' });
    const e = assertThrows(() => classifyAnswer(answer('one sentence only', 'text/plain'), caller), UnexpectedAnswer);
    assert.equal(reason(e), 'neither a PDF nor a CSV report: read in UTF-8 with a usual delimiter, its first line has one field only; HTTP 200, content type "text/plain"');
    assert.equal(e.expectedStart, undefined);
    const empty = assertThrows(() => classifyAnswer(answer('', 'text/csv'), caller), UnexpectedAnswer);
    assert.equal(reason(empty), 'an empty body; HTTP 200, content type "text/csv"');
  });

  it('a quoted header ending in a bare LF or CR is a record; its first line stops there', () => {
    for (const end of ['\n', '\r']) {
      assert.deepEqual(classifyAnswer(answer(`"Merchant_Name","Transaction_id","Amount"${end}"Shop","1","1.000"${end}`, 'text/csv'), caller, expectation(HEADER)), {
        kind: 'csv', firstLine: '"Merchant_Name","Transaction_id","Amount"', headerMatches: true,
      });
    }
  });

  it('escapes control characters before a quote reaches a log: C0 but tab, CR and LF; DEL; C1', () => {
    assert.equal(escapeControls('a\u0000b\u0007\u001b[31m\tc\r\n\u007f\u0085\u009f\u00a0Я'), 'a\\x00b\\x07\\x1b[31m\tc\r\n\\x7f\\x85\\x9f\u00a0Я');
    const e = assertThrows(() => classifyAnswer(answer('\u001b]0;owned\u0007 bad gateway', 'text/plain'), caller, expectation(HEADER)), UnexpectedAnswer);
    assert.equal(e.firstBytes, '\\x1b]0;owned\\x07 bad gateway');
  });
});

describe('answer helpers, literal (survivors of npm run mutate -- functions/core/gateway/answer.ts)', () => {
  it('retries 429 and 500-599 only', () => {
    assert.deepEqual([428, 429, 430, 499, 500, 503, 599, 600].map(isRetryableStatus), [false, true, false, false, true, true, true, false]);
  });

  it('reads the media type without parameters, spaces or case', () => {
    assert.equal(mediaTypeOf(' Text/CSV ; charset=windows-1251'), 'text/csv');
    assert.equal(mediaTypeOf(''), '');
  });

  it('says why a first line is not a record, at which position', () => {
    assert.deepEqual(readFirstRecord('a"b,c\n', ','), { ok: false, problem: 'a quote inside an unquoted field at position 1' });
    assert.deepEqual(readFirstRecord('"a"b,c\n', ','), { ok: false, problem: 'a character after a closing quote at position 3' });
    assert.deepEqual(readFirstRecord('ab\u0001c', ','), { ok: false, problem: 'a control character (U+0001) at position 2' });
    assert.deepEqual(readFirstRecord('a,b\u007f', ','), { ok: false, problem: 'a control character (U+007f) at position 3' });
    assert.deepEqual(readFirstRecord('a\tb,c', ','), { ok: true, fields: ['a\tb', 'c'], quoted: [false, false], ended: false, line: 'a\tb,c' });
    assert.deepEqual(readFirstRecord('"a,"open', ','), { ok: false, problem: 'a character after a closing quote at position 4' });
    assert.deepEqual(readFirstRecord('x,"never closed', ','), { ok: true, fields: ['x', 'never closed'], quoted: [false, true], ended: false, line: 'x,"never closed' });
  });

  it('a BOM and blank space before a PDF or a page do not hide it; 300 and 399 are redirects', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    assert.deepEqual(classifyAnswer(answer(Buffer.concat([bom, Buffer.from(' \r\n\t%PDF-1.7\n')]), 'application/octet-stream'), caller), { kind: 'pdf' });
    const page = assertThrows(() => classifyAnswer(answer(Buffer.concat([bom, Buffer.from('\n  <html><body>x</body></html>')]), 'text/csv'), caller), UnexpectedAnswer);
    assert.match(page.message, /^The gateway's answer is not a report \(a web page instead of a report;/);
    for (const status of [300, 399]) {
      const e = assertThrows(() => classifyAnswer({ ...answer('"a","b"\n', 'text/csv', status), location: `/x\u0007${'y'.repeat(300)}` }, caller), UnexpectedAnswer);
      assert.ok(e.message.includes(`a redirect to "/x\\\\x07${'y'.repeat(197)}", which is not followed`), e.message);
    }
  });
});

describe('answer helpers, second pass (survivors of npm run mutate -- functions/core/gateway/answer.ts)', () => {
  const reason = (e: UnexpectedAnswer) => /^The gateway's answer is not a report \((.*); HTTP \d+, content type/s.exec(e.message)?.[1];
  const unexpected = (a: AnswerHead, expect?: ReportExpectation) => assertThrows(() => classifyAnswer(a, caller, expect), UnexpectedAnswer);

  it('quotes at most 200 characters (not UTF-16 units), redacting the whole head first, and holds back a cut character', () => {
    const long = `${'😀'.repeat(150)}${'b'.repeat(100)}`;
    assert.equal(quoteStart(Buffer.from(long)), `${'😀'.repeat(150)}${'b'.repeat(50)}`);
    // The secret straddles character 200: redacted before the cut, none of it is left.
    const secret = `${'a'.repeat(195)}SECRET-VALUE`;
    assert.equal(quoteStart(Buffer.from(secret), (t) => t.replace('SECRET-VALUE', '***')), `${'a'.repeat(195)}***`);
    // "é" is C3 A9: cut after C3, the half character is held back; a stray FF byte inside is U+FFFD.
    assert.equal(quoteStart(Buffer.from([0x61, 0xc3])), 'a');
    assert.equal(quoteStart(Buffer.from([0x61, 0xff, 0x62])), 'a\ufffdb');
    assert.equal(quoteStart(Buffer.from('x\u0001y')), 'x\\x01y');
    const e = unexpected(answer(Buffer.from(`<html>${'z'.repeat(300)}`), 'text/html', 200));
    assert.equal(e.firstBytes, `<html>${'z'.repeat(194)}`);
  });

  it('takes format, delimiter, encoding and the header names from a definition', () => {
    const definition = {
      format: 'CSV', delimiter: ';', encoding: 'windows-1251',
      columns: [{ header: 'Магазин', name: 'shop' }, { header: 'Сумма', name: 'amount' }],
    } as unknown as ReportDefinition;
    assert.deepEqual(expectationOf(definition), { format: 'CSV', delimiter: ';', encoding: 'windows-1251', header: ['Магазин', 'Сумма'] });
  });

  it('names what a report would have begun with: the header every name quoted ("" inside), cut at 200, or %PDF-', () => {
    const page = answer('<html></html>', 'text/html');
    assert.equal(unexpected(page, expectation(['a"b', 'c'], ';')).expectedStart, '"a""b";"c"');
    assert.equal(unexpected(page, expectation(['x'.repeat(300)])).expectedStart, `"${'x'.repeat(199)}`);
    assert.equal(unexpected(page, { format: 'PDF', delimiter: ',', encoding: 'UTF-8', header: ['a'] }).expectedStart, '%PDF-');
    assert.equal(unexpected(page, expectation([])).expectedStart, undefined);
  });

  it('an encoding iconv-lite does not know is read as UTF-8', () => {
    assert.deepEqual(classifyAnswer(answer('"a","b"\r\n', 'text/csv'), caller, expectation(['a', 'b'], ',', 'no-such-encoding')), {
      kind: 'csv', firstLine: '"a","b"', headerMatches: true,
    });
  });

  it('readCsvHead keeps the first delimiter\'s verdict when none reads a record, and quotes the first line', () => {
    // "," finds a quote inside b"; ";" would say a character follows the closing quote of "a".
    assert.deepEqual(readCsvHead(Buffer.from('"a",b"\r\nnext'), true), {
      isRecord: false, fields: [], allQuoted: false, line: '"a",b"', delimiter: ',', problem: 'a quote inside an unquoted field at position 5',
    });
    // Every delimiter reads a record that does not end: the comma's is kept.
    assert.deepEqual(readCsvHead(Buffer.from('a;b'), false), {
      isRecord: false, fields: ['a;b'], allQuoted: false, line: 'a;b', delimiter: ',', problem: 'its first line does not end within the first bytes',
    });
    assert.deepEqual(readCsvHead(Buffer.from('one field\nx,y'), true), {
      isRecord: false, fields: ['one field'], allQuoted: false, line: 'one field', delimiter: ',', problem: 'its first line has one field only',
    });
    assert.deepEqual(readCsvHead(Buffer.from('"only"\r\n'), true), { isRecord: true, fields: ['only'], allQuoted: true, line: '"only"', delimiter: ',', problem: undefined });
    assert.equal(readCsvHead(Buffer.from(`a"${'b'.repeat(300)}\rc`), true).line, `a"${'b'.repeat(198)}`);
  });

  it('a header that is the start of the definition\'s is not a match; neither is a one-field line that is not the header', () => {
    assert.equal(headerEquals(['a', 'b'], ['a', 'b', 'c']), false);
    assert.equal(headerEquals(['a', 'b', 'c'], ['a', 'b']), false);
    assert.equal(headerEquals(['a', 'b'], undefined), false);
    assert.equal(headerEquals(['a', 'b'], ['a', 'b']), true);
    assert.deepEqual(classifyAnswer(answer('a,b\r\n1,2\r\n', 'text/csv'), caller, expectation(['a', 'b', 'c'])), { kind: 'csv', firstLine: 'a,b', headerMatches: false });
    assert.equal(reason(unexpected(answer('Id\r\n1\r\n', 'text/plain'), expectation(['Name']))), 'neither a PDF nor a CSV report: read in UTF-8 with ",", its first line has one field only');
  });

  it('sniffs without a definition: a quoted single field is CSV, a line that does not end is not, unless the body ends', () => {
    assert.equal(sniff(Buffer.from('a,b')), 'csv-like');
    assert.equal(sniff(Buffer.from('a,b'), false), 'unknown');
    assert.equal(sniff(Buffer.from('"Report"\n')), 'csv-like');
    assert.equal(sniff(Buffer.from('Report\n')), 'unknown');
    assert.equal(sniff(Buffer.from('  %PDF-1.4')), 'pdf');
    assert.equal(sniff(Buffer.from('{"a":1}')), 'json');
    assert.equal(sniff(Buffer.from('<x/>')), 'markup');
    assert.equal(sniff(Buffer.from(' \r\n\t')), 'unknown');
    assert.equal(sniff(Buffer.from('a;b\n'), true, expectation(['a', 'b'])), 'unknown');
  });

  it('an array is JSON only when the body is whole and parses; a bracketed CSV header or a bare number is not', () => {
    assert.match(reason(unexpected(answer('[1,2]', 'text/plain')))!, /^a JSON document instead of a report$/);
    assert.deepEqual(classifyAnswer(answer('[id],[name]\r\n1,x\r\n', 'text/csv'), caller), { kind: 'csv', firstLine: '[id],[name]' });
    assert.equal(reason(unexpected({ ...answer('[1,2]', 'text/plain'), complete: false })), 'neither a PDF nor a CSV report: read in UTF-8 with a usual delimiter, its first line does not end within the first bytes');
    assert.equal(reason(unexpected(answer('42', 'text/plain'))), 'neither a PDF nor a CSV report: read in UTF-8 with a usual delimiter, its first line has one field only');
    assert.equal(reason(unexpected(answer('  \r\n', 'text/plain'))), 'neither a PDF nor a CSV report: read in UTF-8 with a usual delimiter, its first line is not a CSV record');
  });

  it('a line of names, some unquoted, holding refusal words is a refusal; every name quoted, it is a report', () => {
    assert.throws(() => classifyAnswer(answer('"Unauthorized",count\r\n', 'text/plain'), caller), AuthenticationRefused);
    assert.deepEqual(classifyAnswer(answer('"Unauthorized","count"\r\n', 'text/plain'), caller), { kind: 'csv', firstLine: '"Unauthorized","count"' });
  });

  it('refusal words across several spaces or a line break; no refusal under 199 or 300', () => {
    for (const words of ['You are not  allowed here', 'You are not\n\tauthorised.', 'Access is unauthorised']) {
      assert.throws(() => classifyAnswer(answer(words, 'text/plain'), caller), AuthenticationRefused, words);
    }
    assert.equal(reason(unexpected(answer('You are not authorized', 'text/plain', 199))), 'HTTP 199');
    assert.match(reason(unexpected(answer('You are not authorized', 'text/plain', 300)))!, /^a redirect, which is not followed/);
  });

  it('the reason names the definition\'s delimiter and encoding, and NUL bytes hint at UTF-16', () => {
    assert.equal(reason(unexpected(answer('plain words', 'text/plain'), expectation(HEADER, ';'))), 'neither a PDF nor a CSV report: read in UTF-8 with ";", its first line has one field only');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('"Merchant_Name","Transaction_id","Amount"\r\n', 'utf16-le')]);
    assert.equal(
      reason(unexpected(answer(utf16, 'text/csv'), expectation(HEADER))),
      'neither a PDF nor a CSV report: read in UTF-8 with ",", a quote inside an unquoted field at position 2; NUL bytes usually mean another encoding than the definition\'s UTF-8 (UTF-16?)',
    );
    assert.equal(
      reason(unexpected(answer('a\u0000b', 'text/plain'))),
      'neither a PDF nor a CSV report: read in UTF-8 with a usual delimiter, a control character (U+0000) at position 1; NUL bytes usually mean another encoding than the definition\'s UTF-8 (UTF-16?)',
    );
    assert.equal(
      reason(unexpected(answer('a\u0001b', 'text/plain'), expectation(HEADER, ',', 'windows-1251'))),
      'neither a PDF nor a CSV report: read in windows-1251 with ",", a control character (U+0001) at position 1',
    );
  });

  it('without a definition a semicolon report is read too; a 299 report is a report', () => {
    assert.deepEqual(classifyAnswer(answer('a;b\r\n1;2\r\n', 'text/csv'), caller), { kind: 'csv', firstLine: 'a;b' });
    assert.deepEqual(classifyAnswer(answer('"a","b"\r\n', 'text/csv', 299), caller, expectation(['a', 'b'])), { kind: 'csv', firstLine: '"a","b"', headerMatches: true });
  });

  it('reads a record that stops right after a closing quote as not ended', () => {
    assert.deepEqual(readFirstRecord('"a","b"', ','), { ok: true, fields: ['a', 'b'], quoted: [true, true], ended: false, line: '"a","b"' });
    assert.deepEqual(readFirstRecord('"a""b', ','), { ok: true, fields: ['a"b'], quoted: [true], ended: false, line: '"a""b' });
    assert.deepEqual(readFirstRecord('a;b\r\n', ';'), { ok: true, fields: ['a', 'b'], quoted: [false, false], ended: true, line: 'a;b' });
  });
});
