import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import transactions from '../fixtures/reports/transactions.json' with { type: 'json' };
import { ConfigurationError } from '../../functions/core/errors.js';
import {
  reportDefinitionJsonSchema,
  reportDefinitionJsonSchemaText,
  writeReportDefinitionJsonSchema,
} from '../../functions/core/definitions/json-schema.js';
import { FILL_ME, parseReportDefinition, VOLUME_DEFAULTS } from '../../functions/core/definitions/report-definition.js';

const FILE = 'config/reports/transactions.json';
const SCHEMA_FILE = fileURLToPath(new URL('../../config/report-definition.schema.json', import.meta.url));

/** Untyped JSON: these tests break definitions on purpose, which no precise type would allow. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** A deep copy of the shipped definition, changed by `edit`, as a config file would hold it. */
function shipped(edit: (d: Json) => void = () => {}): Json {
  const d = structuredClone(transactions) as Json;
  edit(d);
  return d;
}

/** The ConfigurationError message for a definition, failing the test if it loads. */
function errorOf(raw: unknown, file = FILE): string {
  try {
    parseReportDefinition(raw, file);
  } catch (e) {
    assert.ok(e instanceof ConfigurationError, `expected a ConfigurationError, got ${String(e)}`);
    return e.message;
  }
  assert.fail('the definition loaded but should not have');
}

/** Asserts the message names the file, the report and `path: message`. */
function assertNames(message: string, path: string, fragment: string) {
  assert.ok(message.startsWith(`${FILE}: report "transactions" is invalid:`), message);
  // A column's field is said with its name first: `column "amount" (columns[4].type): …`.
  const line = message.split('\n').find((l) => l.trim().startsWith(`${path}:`) || new RegExp(`^column "[^"]+" \\(${path.replace(/[.[\]]/g, '\\$&')}\\):`).test(l.trim()));
  assert.ok(line, `no line for ${path} in:\n${message}`);
  assert.ok(line.includes(fragment), `line "${line}" lacks "${fragment}"`);
}

describe('the fixture catalog (test/fixtures/reports/)', () => {
  it('loads through the catalog', () => {
    const catalog = loadCatalog();
    assert.deepEqual(catalog.ids(), ['transactions']);
    const r = catalog.get('transactions');
    assert.equal(r.reportIdentifier, 'custom-transactions-report');
    assert.deepEqual(r.schedule, { cron: 'cron(15 3 * * ? *)', timeZone: 'Europe/Moscow' });
    assert.equal(r.columns.length, 9);
  });

  it('derives kind, precision and scale, and fills defaults', () => {
    const r = parseReportDefinition(shipped(), FILE);
    const amount = r.columns[4]!;
    assert.deepEqual([amount.kind, amount.precision, amount.scale], ['decimal', 18, 3]);
    assert.equal(r.columns[3]!.kind, 'timestamp');
    assert.equal(r.columns[0]!.nullable, false);
    assert.equal(r.columns[7]!.nullable, true);
    const minimal = parseReportDefinition(
      shipped((d) => ['format', 'encoding', 'delimiter', 'window', 'lookback', 'rejects'].forEach((k) => delete d[k])),
      FILE,
    );
    assert.deepEqual(
      [minimal.format, minimal.encoding, minimal.delimiter, minimal.window, minimal.lookback, minimal.rejects],
      ['CSV', 'UTF-8', ',', 'P1D', 0, { maxShare: 0 }],
    );
  });

  it('fills the volume check\'s defaults, and keeps the declared keys', () => {
    const r = parseReportDefinition(shipped((d) => delete d.volume), FILE);
    assert.deepEqual(r.volume, VOLUME_DEFAULTS);
    assert.deepEqual(r.keys, ['transaction_id']);
    const none = parseReportDefinition(shipped((d) => delete d.keys), FILE);
    assert.equal(none.keys, undefined, 'no keys declared: no duplicate check');
    const sum = parseReportDefinition(shipped((d) => (d.volume = { sumColumn: 'amount', skipDates: ['2026-12-31'] })), FILE);
    assert.deepEqual([sum.volume.sumColumn, sum.volume.skipDates, sum.volume.historyWeeks], ['amount', ['2026-12-31'], 4]);
  });

  it('matches the gateway spec sample columns in order', () => {
    const headers = parseReportDefinition(shipped(), FILE).columns.map((c) => c.header);
    assert.deepEqual(headers, [
      'Merchant_Name', 'Transaction_id', 'Merchant_OID', 'Created_date', 'Amount',
      'Currency', 'Transaction_type', 'Order_description', 'Date_of_report',
    ]);
  });
});

describe('definition errors name the file, the report and the field', () => {
  it('a bad column type', () => {
    assertNames(errorOf(shipped((d) => (d.columns[4].type = 'money'))), 'columns[4].type', 'must be string, bigint, decimal(p,s), timestamp, date or boolean');
  });

  it('a column type names the column and, when only its case is wrong, the lower-case spelling', () => {
    const upper = errorOf(shipped((d) => (d.columns[4].type = 'DECIMAL(18,2)')));
    assert.ok(upper.split('\n').includes('  column "amount" (columns[4].type): "DECIMAL(18,2)": types are written in lower case: "decimal(18,2)"'), upper);
    const dialect = errorOf(shipped((d) => (d.columns[0].type = 'varchar')));
    assert.match(dialect, /\n {2}column "merchant_name" \(columns\[0\]\.type\): "varchar": must be string, .* \(lower case\); for "varchar" write string$/m);
  });

  it('a missing reportIdentifier', () => {
    assertNames(errorOf(shipped((d) => delete d.reportIdentifier)), 'reportIdentifier', 'is missing: add it (a string in quotes)');
  });

  it('a column name that is not lower snake_case', () => {
    assertNames(errorOf(shipped((d) => (d.columns[0].name = 'MerchantName'))), 'columns[0].name', 'lower snake_case');
    assertNames(errorOf(shipped((d) => (d.columns[0].name = 'merchant-name'))), 'columns[0].name', 'lower snake_case');
  });

  it('a decimal precision above 18, or a scale above the precision', () => {
    assertNames(errorOf(shipped((d) => (d.columns[4].type = 'decimal(19,3)'))), 'columns[4].type', 'precision must be 1 to 18');
    assertNames(errorOf(shipped((d) => (d.columns[4].type = 'decimal(4,6)'))), 'columns[4].type', 'scale must not exceed precision');
  });

  it('a timestamp or date without a pattern, a pattern missing a token, a pattern on a string', () => {
    assertNames(errorOf(shipped((d) => delete d.columns[3].pattern)), 'columns[3].pattern', 'a timestamp column needs an input pattern');
    assertNames(errorOf(shipped((d) => delete d.columns[8].pattern)), 'columns[8].pattern', 'a date column needs an input pattern');
    assertNames(errorOf(shipped((d) => (d.columns[3].pattern = 'yyyy-MM-dd'))), 'columns[3].pattern', 'lacks HH, mm for a timestamp');
    assertNames(errorOf(shipped((d) => (d.columns[3].pattern = 'dd.MM.yy HH:mm'))), 'columns[3].pattern', 'supported tokens: yyyy (year)');
    assertNames(errorOf(shipped((d) => (d.columns[8].pattern = 'dd.MM.yyyy HH:mm'))), 'columns[8].pattern', 'time tokens');
    // Minute precision, milliseconds and the ISO T are patterns users meet: they load.
    for (const pattern of ['yyyy-MM-dd HH:mm', "yyyy-MM-dd'T'HH:mm:ss.SSS", 'MM/dd/yyyy HH:mm:ss']) {
      assert.equal(parseReportDefinition(shipped((d) => (d.columns[3].pattern = pattern)), FILE).columns[3]!.pattern, pattern);
    }
    assertNames(errorOf(shipped((d) => (d.columns[0].pattern = 'yyyy'))), 'columns[0].pattern', 'only timestamp and date');
  });

  it('a boolean column: its own tokens load, and are refused on other kinds, empty, or both true and false', () => {
    const withFlag = (values?: unknown) =>
      shipped((d) => d.columns.push({ header: '3ds', name: 'three_ds', type: 'boolean', nullable: true, ...(values === undefined ? {} : { values }) }));
    const flag = parseReportDefinition(withFlag({ true: ['Y'], false: ['N'] }), FILE).columns.at(-1)!;
    assert.equal(flag.kind, 'boolean');
    assert.deepEqual(flag.values, { true: ['Y'], false: ['N'] });
    assert.equal(parseReportDefinition(withFlag(), FILE).columns.at(-1)!.values, undefined);
    assertNames(errorOf(withFlag({ true: ['Y'], false: ['y'] })), 'columns[9].values.false[0]', 'listed as true and as false');
    assertNames(errorOf(withFlag({ true: [''], false: ['N'] })), 'columns[9].values.true[0]', 'an empty value is a null');
    assertNames(errorOf(withFlag({ true: ['Y'] })), 'columns[9].values.false', '');
    assertNames(errorOf(shipped((d) => (d.columns[0].values = { true: ['Y'], false: ['N'] }))), 'columns[0].values', 'only boolean columns take values');
    assertNames(errorOf(shipped((d) => d.columns.push({ header: 'F', name: 'f', type: 'boolean', pattern: 'yyyy' }))), 'columns[9].pattern', 'only timestamp and date');
  });

  it('a duplicate column name, and the partition name dt', () => {
    assertNames(errorOf(shipped((d) => (d.columns[5].name = 'amount'))), 'columns[5].name', 'duplicate column name "amount"');
    assertNames(errorOf(shipped((d) => (d.columns[2].name = 'dt'))), 'columns[2].name', 'partition column');
  });

  it('an unknown placeholder in the bodyTemplate, at its path', () => {
    const msg = errorOf(shipped((d) => (d.bodyTemplate.inputReportParameters[1].value = '{{window.stop:yyyy-MM-dd}}')));
    assertNames(msg, 'bodyTemplate.inputReportParameters[1].value', 'unknown placeholder {{window.stop:yyyy-MM-dd}}');
    for (const bad of ['{{window.start}}', '{{window.start:}}', '{{window.start:today}}', '{{window.start:yyyy-MM-dd}']) {
      assertNames(errorOf(shipped((d) => (d.bodyTemplate.reportName = bad))), 'bodyTemplate.reportName', 'unknown placeholder');
    }
  });

  it('a bad window', () => {
    for (const w of ['1 day', 'P0D', 'PT0H', 'P1W', 'PT1D']) {
      assertNames(errorOf(shipped((d) => (d.window = w))), 'window', 'must be "P<n>D" (days) or "PT<n>H"');
    }
    assertNames(errorOf(shipped((d) => (d.window = 'PT5H'))), 'window', 'hours must divide 24');
  });

  it('a bad schedule, time zone, encoding, delimiter and lookback', () => {
    assertNames(errorOf(shipped((d) => (d.schedule.timeZone = 'Europe/Moskva'))), 'schedule.timeZone', 'IANA time zone');
    assertNames(errorOf(shipped((d) => (d.schedule.cron = '15 3 * * *'))), 'schedule.cron', 'EventBridge Scheduler expression');
    assertNames(errorOf(shipped((d) => (d.schedule.cron = 'cron(15 25 * * ? *)'))), 'schedule.cron', 'hours field: 25 is outside 0-23');
    assertNames(errorOf(shipped((d) => (d.encoding = 'KOI-9'))), 'encoding', 'not an encoding');
    assertNames(errorOf(shipped((d) => (d.delimiter = ';;'))), 'delimiter', '');
    assertNames(errorOf(shipped((d) => (d.lookback = 40))), 'lookback', '');
  });

  it('a body asking the gateway for another delimiter, encoding or format than the definition reads', () => {
    assertNames(errorOf(shipped((d) => (d.bodyTemplate.reportCsvDelimiter = ';'))), 'bodyTemplate.reportCsvDelimiter', 'is ";" but delimiter is ","');
    assertNames(errorOf(shipped((d) => (d.bodyTemplate.reportEncode = 'windows-1251'))), 'bodyTemplate.reportEncode', 'but encoding is "UTF-8"');
    assertNames(errorOf(shipped((d) => (d.bodyTemplate.reportFormat = 'PDF'))), 'bodyTemplate.reportFormat', 'but format is "CSV"');
    // Aliases of one encoding agree; a body without the fields has nothing to disagree with.
    const cp = parseReportDefinition(shipped((d) => { d.encoding = 'cp1251'; d.bodyTemplate.reportEncode = 'windows-1251'; }), FILE);
    assert.equal(cp.encoding, 'cp1251');
    parseReportDefinition(shipped((d) => { d.delimiter = ';'; delete d.bodyTemplate.reportCsvDelimiter; delete d.bodyTemplate.reportEncode; }), FILE);
  });

  it('an unknown key, at its parent', () => {
    assertNames(errorOf(shipped((d) => (d.schedul = {}))), '(root)', 'schedul');
    assertNames(errorOf(shipped((d) => (d.columns[1].nulable = true))), 'columns[1]', 'nulable');
  });

  it('keys and the sum column that are not columns, or not fit for it; thresholds out of range; a date that does not exist', () => {
    assertNames(errorOf(shipped((d) => (d.keys = ['transaction_idd']))), 'keys[0]', '"transaction_idd" is not a column name (the columns are merchant_name, transaction_id');
    assertNames(errorOf(shipped((d) => (d.keys = ['order_description']))), 'keys[0]', 'nullable: a key column must always have a value');
    assertNames(errorOf(shipped((d) => (d.keys = ['transaction_id', 'transaction_id']))), 'keys[1]', 'listed twice');
    assertNames(errorOf(shipped((d) => (d.keys = []))), 'keys', 'must list at least one entry');
    assertNames(errorOf(shipped((d) => (d.volume = { sumColumn: 'currency' }))), 'volume.sumColumn', 'is a string column: the sum needs a decimal or bigint column');
    assertNames(errorOf(shipped((d) => (d.volume = { sumColumn: 'amt' }))), 'volume.sumColumn', '"amt" is not a column name');
    const badType = errorOf(shipped((d) => ((d.columns[4].type = 'DECIMAL(18,3)'), (d.volume = { sumColumn: 'amount' }))));
    assertNames(badType, 'columns[4].type', 'types are written in lower case: "decimal(18,3)"');
    assert.doesNotMatch(badType, /volume\.sumColumn|undefined/, 'only the column\'s own type is named, not a sum on a column of no kind');
    assertNames(errorOf(shipped((d) => (d.volume = { historyWeeks: 2 }))), 'volume.minHistory', 'is 3 but historyWeeks is 2');
    assertNames(errorOf(shipped((d) => (d.volume = { lowRatio: 1.5 }))), 'volume.lowRatio', 'must be less than 1');
    assertNames(errorOf(shipped((d) => (d.volume = { highRatio: 0.9 }))), 'volume.highRatio', 'must be more than 1');
    assertNames(errorOf(shipped((d) => (d.volume = { skipDates: ['2026-02-30'] }))), 'volume.skipDates[0]', 'not a real calendar date');
    assertNames(errorOf(shipped((d) => (d.volume = { skipDates: ['31.12.2026'] }))), 'volume.skipDates[0]', 'must be a date YYYY-MM-DD');
    assertNames(errorOf(shipped((d) => (d.volume = { minRows: 5 }))), 'volume', 'minRows');
  });

  it('lists every bad field at once', () => {
    const msg = errorOf(shipped((d) => { d.columns[4].type = 'money'; delete d.reportIdentifier; }));
    assertNames(msg, 'columns[4].type', 'must be');
    assertNames(msg, 'reportIdentifier', 'is missing: add it');
  });

  it('placeholders left by infer-schema, even beside other errors', () => {
    const msg = errorOf(shipped((d) => { d.reportIdentifier = FILL_ME; d.schedule.timeZone = FILL_ME; d.columns[4].type = 'money'; }));
    assertNames(msg, 'reportIdentifier', `still the placeholder ${FILL_ME}`);
    assertNames(msg, 'schedule.timeZone', `still the placeholder ${FILL_ME}`);
    assertNames(msg, 'columns[4].type', 'must be');
  });

  it('a definition without an id, or not an object at all', () => {
    const msg = errorOf(shipped((d) => delete d.id), 'config/reports/x.json');
    assert.match(msg, /^config\/reports\/x\.json: report \(no id\) is invalid:\n {2}id: /);
    assert.match(errorOf(null, 'config/reports/x.json'), /^config\/reports\/x\.json: report \(no id\) is invalid:\n {2}\(root\): /);
  });
});

/**
 * Enough of JSON Schema draft 7 to check a definition against the generated schema without a validator
 * dependency. It throws on a keyword it does not know, so the test notices when the generator starts
 * emitting one instead of silently ignoring it.
 */
function schemaErrors(schema: Json, value: unknown, path = '$'): string[] {
  const known = new Set([
    '$schema', 'title', 'description', 'default', 'examples', 'type', 'properties', 'required', 'additionalProperties',
    'propertyNames', 'enum', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
    'minItems', 'items', 'if', 'then',
  ]);
  for (const k of Object.keys(schema)) if (!known.has(k)) throw new Error(`schemaErrors does not know the keyword "${k}" (at ${path})`);
  const errors: string[] = [];
  const kind = Array.isArray(value) ? 'array' : value === null ? 'null' : Number.isInteger(value) ? 'integer' : typeof value;
  if (schema.type && !(schema.type === kind || (schema.type === 'number' && kind === 'integer'))) return [`${path}: expected ${schema.type}, got ${kind}`];
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${path}: not one of ${schema.enum.join(', ')}`);
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${path}: does not match ${schema.pattern}`);
    if (schema.minLength !== undefined && value.length < schema.minLength) errors.push(`${path}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) errors.push(`${path}: longer than ${schema.maxLength}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${path}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${path}: above ${schema.maximum}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) errors.push(`${path}: not above ${schema.exclusiveMinimum}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) errors.push(`${path}: not below ${schema.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) errors.push(`${path}: fewer than ${schema.minItems} items`);
    if (schema.items) value.forEach((v, i) => errors.push(...schemaErrors(schema.items, v, `${path}[${i}]`)));
  }
  if (kind === 'object') {
    const obj = value as Record<string, unknown>;
    for (const r of schema.required ?? []) if (!(r in obj)) errors.push(`${path}: missing ${r}`);
    for (const [k, v] of Object.entries(obj)) {
      const sub = schema.properties?.[k] ?? schema.additionalProperties;
      if (sub === false) errors.push(`${path}: unknown key ${k}`);
      else if (sub) errors.push(...schemaErrors(sub, v, `${path}.${k}`));
    }
    if (schema.if && schemaErrors(schema.if, value, path).length === 0 && schema.then) errors.push(...schemaErrors(schema.then, value, path));
  }
  return errors;
}

describe('the JSON Schema for editors', () => {
  it('is up to date with the validator', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8').catch(() => '(missing)');
    assert.equal(
      committed,
      reportDefinitionJsonSchemaText(),
      'config/report-definition.schema.json is out of date with functions/core/definitions/report-definition.ts. ' +
        'Regenerate it with `npm run reports -- json-schema` (or `npx tsx --eval "import(\'./functions/core/definitions/json-schema.ts\')' +
        '.then((m) => m.writeReportDefinitionJsonSchema(\'config/report-definition.schema.json\'))"`) and commit it.',
    );
  });

  it('writes the same text it checks', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'report-schema-'));
    try {
      await writeReportDefinitionJsonSchema(join(dir, 'schema.json'));
      assert.equal(await readFile(join(dir, 'schema.json'), 'utf8'), reportDefinitionJsonSchemaText());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('describes the input side: defaults optional, enums and patterns present', () => {
    const s = reportDefinitionJsonSchema() as Json;
    assert.equal(s.$schema, 'http://json-schema.org/draft-07/schema#');
    assert.deepEqual([...s.required].sort(), ['bodyTemplate', 'columns', 'id', 'reportIdentifier', 'schedule']);
    assert.deepEqual(s.properties.format.enum, ['CSV', 'PDF']);
    assert.equal(s.additionalProperties, false);
    const column = s.properties.columns.items;
    assert.deepEqual(column.required, ['header', 'name', 'type']);
    assert.ok(column.properties.type.examples.includes('decimal(18,2)'));
    assert.deepEqual(column.then, { required: ['pattern'] });
  });

  it('accepts the shipped definition', () => {
    assert.deepEqual(schemaErrors(reportDefinitionJsonSchema(), transactions), []);
  });

  it('rejects what an editor should flag', () => {
    const s = reportDefinitionJsonSchema();
    const errors = schemaErrors(s, shipped((d) => {
      delete d.reportIdentifier;
      d.format = 'XLSX';
      d.columns[0].name = 'Merchant Name';
      delete d.columns[3].pattern;
      d.extra = 1;
      d.volume = { lowRatio: 1.5, skipDates: ['31.12.2026'] };
    }));
    assert.deepEqual(errors.sort(), [
      '$.columns[0].name: does not match ^[a-z][a-z0-9_]*$',
      '$.columns[3]: missing pattern',
      '$.format: not one of CSV, PDF',
      '$: missing reportIdentifier',
      '$: unknown key extra',
      '$.volume.lowRatio: not below 1',
      '$.volume.skipDates[0]: does not match ^\\d{4}-\\d{2}-\\d{2}$',
    ].sort());
  });
});

/** The message's lines after the first, without their two-space indent; fails unless each is indented so. */
function linesOf(message: string): string[] {
  const lines = message.split('\n').slice(1);
  for (const l of lines) assert.match(l, /^ {2}\S/, `not indented by two spaces: "${l}"`);
  return lines.map((l) => l.slice(2));
}

describe('each line of a definition error, as the user reads it', () => {
  it('a column field is said by the column\'s name, else its header, else its index alone', () => {
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[4].type = 'money')))), [
      'column "amount" (columns[4].type): "money": must be string, bigint, decimal(p,s), timestamp, date or boolean (lower case); for "money" write decimal(18,2)',
    ]);
    assert.deepEqual(linesOf(errorOf(shipped((d) => delete d.columns[4].name))), ['column "Amount" (columns[4].name): is missing: add it (a string in quotes)']);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[4] = { type: 'string' })))), [
      'columns[4].header: is missing: add it (a string in quotes)',
      'columns[4].name: is missing: add it (a string in quotes)',
    ]);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[4].name = 7)))), ['column "Amount" (columns[4].name): must be a string in quotes, not the number 7']);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[4] = null)))), ['columns[4]: must be an object {…}, not null']);
    // A header that is not text does not name the column either.
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[4] = { header: 5, type: 'string' })))), [
      'columns[4].header: must be a string in quotes, not the number 5',
      'columns[4].name: is missing: add it (a string in quotes)',
    ]);
  });

  it('a path below a column keeps its indexes; paths outside the columns are written the same way', () => {
    const flag = (values: unknown) => shipped((d) => d.columns.push({ header: '3ds', name: 'three_ds', type: 'boolean', values }));
    assert.deepEqual(linesOf(errorOf(flag({ true: ['Y', 'j'], false: ['N', 'J'] }))), [
      'column "three_ds" (columns[9].values.false[1]): "J" is listed as true and as false (tokens are compared without regard to case)',
    ]);
    // Compared without case from either side.
    assert.deepEqual(linesOf(errorOf(flag({ true: ['y'], false: ['Y'] }))), [
      'column "three_ds" (columns[9].values.false[0]): "Y" is listed as true and as false (tokens are compared without regard to case)',
    ]);
    assert.match(linesOf(errorOf(flag({ true: [], false: ['N'] })))[0]!, /^column "three_ds" \(columns\[9\]\.values\.true\): must list at least one entry$/);
    assert.deepEqual(linesOf(errorOf(flag({ true: ['Y'], false: [''] }))), ['column "three_ds" (columns[9].values.false[0]): an empty value is a null (or a rejected row), never a token']);
    const names = 'merchant_name, transaction_id, merchant_oid, created_date, amount, currency, transaction_type, order_description, date_of_report';
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.keys = ['x', 'x'])))), [
      `keys[0]: "x" is not a column name (the columns are ${names})`,
      `keys[1]: "x" is not a column name (the columns are ${names})`,
      'keys[1]: "x" is listed twice',
    ]);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.volume = { skipDates: ['2026-01-01', '2026-02-29'] })))), ['volume.skipDates[1]: is not a real calendar date']);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns = [])))), [
      'columns: must list at least one entry',
      'keys[0]: "transaction_id" is not a column name (the columns are )',
    ]);
  });

  it('a duplicate name and the partition column dt, at the column that repeats or takes it', () => {
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[5].name = 'amount')))), ['column "amount" (columns[5].name): duplicate column name "amount"']);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[2].name = 'dt')))), ['column "dt" (columns[2].name): "dt" is a partition column; pick another name']);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[2].name = 'connection')))), ['column "connection" (columns[2].name): "connection" is a partition column; pick another name']);
  });

  it('a type another SQL dialect would write: the spelling here, for each word a newcomer tries', () => {
    const spelled: Array<[string, string]> = [
      ['int', 'bigint'], ['integer', 'bigint'], ['long', 'bigint'], ['smallint', 'bigint'], ['tinyint', 'bigint'], ['number', 'bigint or decimal(p,s)'],
      ['numeric', 'decimal(p,s)'], ['money', 'decimal(18,2)'], ['float', 'decimal(p,s) (money is never a float)'],
      ['double', 'decimal(p,s) (money is never a float)'], ['real', 'decimal(p,s) (money is never a float)'], ['varchar', 'string'], ['text', 'string'],
      ['char', 'string'], ['bool', 'boolean'], ['datetime', 'timestamp'],
    ];
    for (const [word, spelling] of spelled) {
      assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[1].type = word)))), [
        `column "transaction_id" (columns[1].type): "${word}": must be string, bigint, decimal(p,s), timestamp, date or boolean (lower case); for "${word}" write ${spelling}`,
      ]);
    }
    // Another case and a length: the word is what counts, the message quotes what was written.
    assert.match(errorOf(shipped((d) => (d.columns[0].type = 'VARCHAR(255)'))), /: "VARCHAR\(255\)": must be .* \(lower case\); for "VARCHAR\(255\)" write string$/m);
    // A word no dialect means, even one every object has, gets the list alone.
    for (const word of ['toString', 'constructor', 'strings']) {
      assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[1].type = word)))), [
        `column "transaction_id" (columns[1].type): "${word}": must be string, bigint, decimal(p,s), timestamp, date or boolean (lower case)`,
      ]);
    }
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[4].type = ' Decimal(18,3) ')))), [
      'column "amount" (columns[4].type): " Decimal(18,3) ": types are written in lower case: "decimal(18,3)"',
    ]);
  });

  it('decimal precision 1 to 18 and scale up to the precision load, with a space after the comma', () => {
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[4].type = 'decimal(0,0)')))), ['column "amount" (columns[4].type): decimal precision must be 1 to 18 (INT64-backed)']);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[4].type = 'decimal(4,5)')))), ['column "amount" (columns[4].type): decimal scale must not exceed precision']);
    for (const [type, precision, scale] of [['decimal(1,0)', 1, 0], ['decimal(18,18)', 18, 18], ['decimal(18, 2)', 18, 2]] as const) {
      const amount = parseReportDefinition(shipped((d) => (d.columns[4].type = type)), FILE).columns[4]!;
      assert.deepEqual([amount.kind, amount.precision, amount.scale], ['decimal', precision, scale], type);
    }
    const text = parseReportDefinition(shipped(), FILE).columns[0]!;
    assert.deepEqual([text.kind, text.precision, text.scale], ['string', undefined, undefined]);
  });

  it('a pattern: needed by timestamp and date, checked for their kind, refused elsewhere', () => {
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[1].pattern = 'yyyy')))), ['column "transaction_id" (columns[1].pattern): only timestamp and date columns take a pattern']);
    assert.match(linesOf(errorOf(shipped((d) => delete d.columns[8].pattern)))[0]!, /^column "date_of_report" \(columns\[8\]\.pattern\): a date column needs an input pattern; /);
    // A date pattern on a timestamp column lacks the time; a time on a date column is refused: the kind decides.
    assert.match(errorOf(shipped((d) => (d.columns[3].pattern = 'dd.MM.yyyy'))), /column "created_date" \(columns\[3\]\.pattern\): .*lacks HH, mm for a timestamp/);
    assert.equal(parseReportDefinition(shipped((d) => (d.columns[8].pattern = 'yyyyMMdd')), FILE).columns[8]!.pattern, 'yyyyMMdd');
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.columns[1].values = { true: ['Y'], false: ['N'] })))), ['column "transaction_id" (columns[1].values): only boolean columns take values']);
  });

  it('windows: days or hours with any number of digits, anchored at both ends', () => {
    for (const window of ['P10D', 'PT12H', 'PT24H', 'PT1H']) assert.equal(parseReportDefinition(shipped((d) => (d.window = window)), FILE).window, window);
    for (const window of ['xP1D', 'P1Dx', 'PT1Hx', ' PT1H', 'P01D', 'PT', 'P']) {
      assert.deepEqual(linesOf(errorOf(shipped((d) => (d.window = window)))), ['window: must be "P<n>D" (days) or "PT<n>H" (hours dividing 24)'], window);
    }
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.window = 'PT7H')))), ['window: hours must divide 24 (PT1H, PT2H, PT3H, PT4H, PT6H, PT8H, PT12H, PT24H)']);
  });

  it('the body and the definition: an encoding the body names that no codec knows disagrees; case and placeholders are left alone', () => {
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.bodyTemplate.reportEncode = 'KOI-9')))), [
      'bodyTemplate.reportEncode: is "KOI-9" but encoding is "UTF-8": the gateway encodes as the body asks, so make them the same',
    ]);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.bodyTemplate.reportCsvDelimiter = ';')))), [
      'bodyTemplate.reportCsvDelimiter: is ";" but delimiter is ",": the gateway writes the one the body asks for, so make them the same',
    ]);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.bodyTemplate.reportFormat = 'PDF')))), ['bodyTemplate.reportFormat: is "PDF" but format is "CSV": make them the same']);
    // The format in another case, a delimiter that is not text, an alias of the encoding: all agree.
    const agreeing = parseReportDefinition(shipped((d) => Object.assign(d.bodyTemplate, { reportFormat: 'csv', reportCsvDelimiter: 44, reportEncode: 'utf8' })), FILE);
    assert.deepEqual([agreeing.format, agreeing.delimiter, agreeing.encoding], ['CSV', ',', 'UTF-8']);
    // Fields that are not text are the provider's business: nothing to compare.
    parseReportDefinition(shipped((d) => Object.assign(d.bodyTemplate, { reportFormat: 7, reportCsvDelimiter: [';'], reportEncode: 5 })), FILE);
    // A placeholder says only that it is one, not that it disagrees.
    assert.deepEqual(linesOf(errorOf(shipped((d) => Object.assign(d.bodyTemplate, { reportEncode: FILL_ME, reportFormat: `x${FILL_ME}` })))), [
      `bodyTemplate.reportEncode: still the placeholder ${FILL_ME} from \`reports infer-schema\`: fill it in`,
      `bodyTemplate.reportFormat: still the placeholder ${FILL_ME} from \`reports infer-schema\`: fill it in`,
    ]);
  });

  it('placeholders are listed even beside a field of the wrong type, which stops the other checks', () => {
    assert.deepEqual(linesOf(errorOf(shipped((d) => { d.reportIdentifier = FILL_ME; d.lookback = 'two'; }))), [
      'lookback: must be a number, not the string "two"',
      `reportIdentifier: still the placeholder ${FILL_ME} from \`reports infer-schema\`: fill it in`,
    ]);
  });

  it('a placeholder in an array, and only the placeholder line where the field also fails its own check', () => {
    assert.deepEqual(linesOf(errorOf(shipped((d) => { d.schedule.timeZone = FILL_ME; d.bodyTemplate.inputReportParameters[1].name = FILL_ME; }))), [
      `schedule.timeZone: still the placeholder ${FILL_ME} from \`reports infer-schema\`: fill it in`,
      `bodyTemplate.inputReportParameters[1].name: still the placeholder ${FILL_ME} from \`reports infer-schema\`: fill it in`,
    ]);
  });

  it('the sum column: decimal and bigint load, another kind is refused by name; minHistory may equal historyWeeks', () => {
    for (const sumColumn of ['amount', 'transaction_id']) assert.equal(parseReportDefinition(shipped((d) => (d.volume = { sumColumn })), FILE).volume.sumColumn, sumColumn);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.volume = { sumColumn: 'created_date' })))), [
      'volume.sumColumn: "created_date" is a timestamp column: the sum needs a decimal or bigint column',
    ]);
    assert.equal(parseReportDefinition(shipped((d) => (d.volume = { historyWeeks: 3, minHistory: 3 })), FILE).volume.minHistory, 3);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.volume = { historyWeeks: 2, minHistory: 3 })))), [
      'volume.minHistory: is 3 but historyWeeks is 2: the check could never have enough history',
    ]);
  });

  it('"connections" names every feed of the report; "connection" is a list of one; both, an empty list or a repeat are refused', () => {
    assert.deepEqual(parseReportDefinition(shipped((d) => (d.connections = ['acme', 'beta', 'gamma'])), FILE).connections, ['acme', 'beta', 'gamma']);
    assert.deepEqual(parseReportDefinition(shipped((d) => (d.connection = 'acme')), FILE).connections, ['acme']);
    assert.equal('connection' in parseReportDefinition(shipped((d) => (d.connection = 'acme')), FILE), false, 'one shape for every reader');
    assert.deepEqual(linesOf(errorOf(shipped((d) => ((d.connection = 'acme'), (d.connections = ['beta']))))), [
      'connection: give "connection" (one) or "connections" (a list), not both: move it into "connections"',
    ]);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.connections = [])))), ['connections: must name at least one connection']);
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.connections = ['acme', 'acme'])))), ['connections[1]: "acme" is listed twice']);
  });

  it('defaults a definition leaves out: enabled volume check, the default connection, a fresh skipDates array each time', () => {
    const a = parseReportDefinition(shipped((d) => delete d.volume), FILE);
    const b = parseReportDefinition(shipped((d) => (d.volume = {})), FILE);
    assert.deepEqual([a.volume.enabled, b.volume.enabled, a.connections], [true, true, ['default']]);
    assert.notEqual(a.volume.skipDates, b.volume.skipDates);
    assert.notEqual(a.volume.skipDates, VOLUME_DEFAULTS.skipDates);
    const written = { enabled: true, historyWeeks: 4, minHistory: 3, lowRatio: 0.5, highRatio: 2, minRowsDifference: 10, minSumDifference: 0, skipDates: [] };
    assert.deepEqual([a.volume, b.volume, VOLUME_DEFAULTS], [written, written, written]);
  });

  it('an id that would not name a Glue table, and a value of the wrong type anywhere, are refused as configuration errors', () => {
    for (const id of ['Payouts', '1payouts', 'payouts-2', '_payouts']) {
      assert.deepEqual(linesOf(errorOf(shipped((d) => (d.id = id)))).filter((l) => l.startsWith('id:')), ['id: must be lower snake_case: it names the Glue table and S3 prefixes'], id);
    }
    assert.deepEqual(linesOf(errorOf(shipped((d) => (d.description = null)))), ['description: must be a string in quotes, not null']);
    // A null in the body is the provider's business, and no placeholder.
    assert.equal(parseReportDefinition(shipped((d) => (d.bodyTemplate.filters = null)), FILE).bodyTemplate.filters, null);
  });
});
