import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCatalog, readReportSources, REPORTS_DIR, reportSources, reportsDir } from '../../functions/core/definitions/catalog-files.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { parseDefinitionText } from '../../functions/core/definitions/definition-json.js';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { FIXTURE_REPORTS_DIR } from '../helpers/fixture-reports.js';

const fixture = readFileSync(join(FIXTURE_REPORTS_DIR, 'transactions.json'), 'utf8');
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A folder holding these files, as config/reports/ would. */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'paynet-catalog-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const withId = (id: string, text = fixture) => JSON.stringify({ ...JSON.parse(text), id });

/** The ConfigurationError message of loading `dir`. */
function loadError(dir: string): string {
  try {
    ReportCatalog.fromSources(readReportSources(dir));
  } catch (e) {
    assert.ok(e instanceof ConfigurationError, String(e));
    return e.message;
  }
  assert.fail('the catalog loaded');
}

describe('the report catalog: every *.json of the folder is a report', () => {
  it('picks up every definition file, and nothing else, with no list to edit', () => {
    const dir = folder({ 'b.json': withId('payouts'), 'a.json': withId('chargebacks'), 'notes.txt': 'not a report', 'c.json.bak': '{' });
    const catalog = ReportCatalog.fromSources(readReportSources(dir));
    assert.deepEqual(catalog.ids(), ['chargebacks', 'payouts']);
    assert.match(readReportSources(dir)[0]!.file, /a\.json$/);
  });

  it('reads the files in the order of their names as JavaScript sorts them, not as the file system lists them', () => {
    // Node lists a folder in UTF-8 byte order (U+FB00 before U+1F600); JavaScript sorts UTF-16 units, where the
    // emoji's high surrogate (0xD83D) comes first.
    const dir = folder({ '\uFB00.json': '{}', '\u{1F600}.json': '{}' });
    assert.deepEqual(readReportSources(dir).map((source) => source.file.split('/').at(-1)), ['\u{1F600}.json', '\uFB00.json']);
  });

  it('the tests read the fixtures; without PAYNET_REPORTS_DIR the shipped folder', () => {
    assert.equal(reportsDir(), FIXTURE_REPORTS_DIR);
    const saved = process.env.PAYNET_REPORTS_DIR;
    delete process.env.PAYNET_REPORTS_DIR;
    try {
      assert.equal(reportsDir(), REPORTS_DIR);
      // Whatever the shipped folder holds, its files are named as the user knows them.
      for (const s of readReportSources()) assert.match(s.file, /^config\/reports\/[^/]+\.json$/);
    } finally {
      process.env.PAYNET_REPORTS_DIR = saved;
    }
  });

  it('a file that is not JSON: its path, line and column, in one line', () => {
    const broken = fixture.replace('"format": "CSV",', '"format": "CSV"');
    const dir = folder({ 'transactions.json': fixture, 'payouts.json': broken });
    const message = loadError(dir);
    const line = message.split('\n').find((l) => l.includes('payouts.json'));
    const expectedLine = broken.split('\n').findIndex((l) => l.includes('"encoding"')) + 1;
    assert.match(line ?? '', new RegExp(`payouts\\.json:${expectedLine}:3: not valid JSON: `), message);
    assert.doesNotMatch(message, /\n\s+at /, 'no stack trace');
  });

  it('reports every broken file at once, whichever report was asked for', () => {
    const dir = folder({
      'a.json': withId('good'),
      'b.json': '{"id": "half", }',
      'c.json': JSON.stringify({ ...JSON.parse(fixture), id: 'late', schedule: { cron: 'cron(15 25 * * * *)', timeZone: 'UTC' } }),
    });
    const message = loadError(dir);
    assert.match(message, /^2 report definition problems/);
    assert.match(message, /b\.json:1:16: not valid JSON/);
    assert.match(message, /c\.json: report "late" is invalid:\n {2}schedule\.cron: hours field: 25 is outside 0-23/);
  });

  it('two files with one id (one Glue table, one S3 prefix) do not load', () => {
    const message = loadError(folder({ 'a.json': withId('payouts'), 'b.json': withId('payouts') }));
    assert.match(message, /b\.json: report "payouts" has the id of .*a\.json/);
  });

  it('an unknown report says where reports come from', () => {
    const catalog = ReportCatalog.fromSources(readReportSources(folder({ 'a.json': withId('payouts') })));
    assert.throws(() => catalog.get('chargebacks'), /There is no report "chargebacks"; known reports: payouts\. A report is a file config\/reports\/chargebacks\.json/);
  });

  it('reads a byte-order mark and states line and column on any Node version', () => {
    assert.deepEqual(parseDefinitionText('\uFEFF{"a": 1}', 'x.json'), { a: 1 });
    assert.throws(() => parseDefinitionText('{\n  "a": 1,\n  "b": tru\n}', 'x.json'), /^ConfigurationError: x\.json:3:8: not valid JSON: invalid symbol/);
    assert.throws(() => parseDefinitionText('', 'x.json'), /x\.json:1:1: not valid JSON: value expected/);
  });
});

describe('the report a command works on when --report is not given', () => {
  const [source] = readReportSources();
  const base = (source as { raw: { id: string } }).raw;
  it('is the only report of the catalog, whatever its id; with several the user names one', () => {
    const one = ReportCatalog.fromSources([{ file: 'payouts.json', raw: { ...base, id: 'payouts' } }]);
    assert.equal(one.chosen(undefined).id, 'payouts');
    const two = ReportCatalog.fromSources([
      { file: 'payouts.json', raw: { ...base, id: 'payouts' } },
      { file: 'refunds.json', raw: { ...base, id: 'refunds' } },
    ]);
    assert.equal(two.chosen('refunds').id, 'refunds');
    assert.throws(() => two.chosen(undefined), (e: unknown) => e instanceof ConfigurationError && /Say which report: --report ID \(the catalog has payouts, refunds\)/.test(e.message));
    assert.throws(() => two.chosen('transactions'), /There is no report "transactions"/);
  });
});

describe('the catalog, asked by id, by connection and for the file', () => {
  const [source] = readReportSources();
  const base = (source as { raw: Record<string, unknown> }).raw;
  const report = (id: string, connection?: string) => ({ ...base, id, ...(connection ? { connection } : {}) });

  it('names the file each report came from, and where the file would be when it came from no file', () => {
    const catalog = ReportCatalog.fromSources([{ file: 'config/reports/pay.json', raw: report('payouts') }]);
    assert.equal(catalog.fileOf('payouts'), 'config/reports/pay.json');
    assert.equal(catalog.fileOf('refunds'), 'config/reports/refunds.json');
    assert.equal(new ReportCatalog(catalog.reports).fileOf('payouts'), 'config/reports/payouts.json');
  });

  it('the reports over each connection, and the connections in order of first use', () => {
    const catalog = ReportCatalog.fromSources([
      { file: 'a.json', raw: report('a', 'acme-pay') },
      { file: 'b.json', raw: report('b') },
      { file: 'c.json', raw: report('c', 'acme-pay') },
    ]);
    assert.deepEqual(catalog.connections(), ['acme-pay', 'default']);
    assert.deepEqual(catalog.reportsOver('acme-pay').map((r) => r.id), ['a', 'c']);
    assert.deepEqual(catalog.reportsOver('default').map((r) => r.id), ['b']);
    assert.deepEqual(catalog.reportsOver('other'), []);
  });

  it('an empty catalog says so when asked for a report', () => {
    const empty = ReportCatalog.fromSources([]);
    assert.throws(() => empty.get('payouts'), {
      message: 'There is no report "payouts"; known reports: none. A report is a file config/reports/payouts.json (see docs/add-a-report.md).',
    });
    assert.throws(() => empty.chosen(undefined, '--report ID or --all'), { message: 'Say which report: --report ID or --all (the catalog has no reports).' });
  });

  it('two definitions of one id built in code are refused as well', () => {
    const one = ReportCatalog.fromSources([{ file: 'a.json', raw: report('payouts') }]).reports[0]!;
    assert.throws(() => new ReportCatalog([one, one]), (e: unknown) => e instanceof ConfigurationError && e.message === 'Two report definitions share the id "payouts".');
  });

  it('one problem is counted in the singular, with the file that has it', () => {
    assert.throws(() => ReportCatalog.fromSources([{ file: 'config/reports/a.json', problem: 'config/reports/a.json:1:2: not valid JSON: x' }]), {
      message: '1 report definition problem (every config/reports/*.json must load):\nconfig/reports/a.json:1:2: not valid JSON: x',
    });
    assert.throws(() => ReportCatalog.fromSources([{ file: 'a.json', raw: report('payouts') }, { file: 'b.json', raw: report('payouts') }]), {
      message:
        '1 report definition problem (every config/reports/*.json must load):\n' +
        'b.json: report "payouts" has the id of a.json: ids name the Glue table and the S3 prefixes, so each report needs its own (rename one)',
    });
  });

  it('a failure that is not about the definition is not dressed up as one', () => {
    const raw = { get id(): string { throw new TypeError('disk on fire'); } };
    assert.throws(() => ReportCatalog.fromSources([{ file: 'a.json', raw }]), (e: unknown) => e instanceof TypeError && e.message === 'disk on fire');
    const dir = folder({ 'a.json': withId('payouts') });
    mkdirSync(join(dir, 'b.json'));
    assert.throws(() => readReportSources(dir), (e: unknown) => !(e instanceof ConfigurationError) && (e as NodeJS.ErrnoException).code === 'EISDIR');
  });

  it('files are named from the working folder; the fixtures as the tests set them, the working folder itself as "."', () => {
    assert.deepEqual(reportSources().map((s) => s.file), ['test/fixtures/reports/transactions.json']);
    assert.deepEqual(loadCatalog().ids(), ['transactions']);
    assert.ok(readReportSources('.').some((s) => s.file === './package.json'));
    const dir = folder({ 'a.json': withId('payouts') });
    assert.deepEqual(readReportSources(dir).map((s) => s.file), [join(relative(process.cwd(), dir), 'a.json')]);
  });
});

describe('a definition file that is not JSON', () => {
  const error = (text: string, file: string) => {
    try {
      parseDefinitionText(text, file);
    } catch (e) {
      assert.ok(e instanceof ConfigurationError);
      return e.message;
    }
    assert.fail('parsed');
  };

  it('says the file, line and column, the error in words, and the folder to move it out of', () => {
    assert.equal(error('{\n  "a": 1\n  "b": 2\n}', 'config/reports/x.json'), 'config/reports/x.json:3:3: not valid JSON: comma expected. Fix the file (or move it out of config/reports/).');
    assert.equal(error('{"a": 1.}', 'config/environments/dev.json'), 'config/environments/dev.json:1:7: not valid JSON: unexpected end of number. Fix the file (or move it out of config/environments/).');
    assert.equal(error('{', 'x.json'), 'x.json:1:2: not valid JSON: close brace expected. Fix the file (or move it out of ../).');
    assert.equal(error('{"a": 1}\n// note', 'x.json'), 'x.json:2:1: not valid JSON: invalid comment token. Fix the file (or move it out of ../).');
    assert.equal(error('[1,]', 'x.json'), 'x.json:1:4: not valid JSON: value expected. Fix the file (or move it out of ../).');
  });

  it('a byte-order mark only at the start', () => {
    assert.match(error('{"a": 1}\uFEFF', 'x.json'), /^x\.json:1:9: not valid JSON: /);
    assert.deepEqual(parseDefinitionText('{"a": "\uFEFF"}', 'x.json'), { a: '\uFEFF' });
  });
});

describe('messages that list several things', () => {
  const [source] = readReportSources();
  const base = (source as { raw: Record<string, unknown> }).raw;

  it('problems one per line, known reports separated by commas', () => {
    assert.throws(() => ReportCatalog.fromSources([{ file: 'a.json', problem: 'a.json:1:1: first' }, { file: 'b.json', problem: 'b.json:1:1: second' }]), {
      message: '2 report definition problems (every config/reports/*.json must load):\na.json:1:1: first\nb.json:1:1: second',
    });
    const two = ReportCatalog.fromSources([{ file: 'a.json', raw: { ...base, id: 'payouts' } }, { file: 'b.json', raw: { ...base, id: 'refunds' } }]);
    assert.throws(() => two.get('fees'), { message: 'There is no report "fees"; known reports: payouts, refunds. A report is a file config/reports/fees.json (see docs/add-a-report.md).' });
  });

  it('the shipped folder is named config/reports from any working folder', () => {
    const cwd = process.cwd();
    process.chdir(join(cwd, 'test'));
    try {
      for (const s of readReportSources(REPORTS_DIR)) assert.match(s.file, /^config\/reports\/[^/]+\.json$/);
    } finally {
      process.chdir(cwd);
    }
  });
});
