import { athenaColumnNames, snakeCase } from '../lake/athena-names.js';
import { readCsvSample, type CsvInput, type CsvSampleOptions } from '../csv/sample.js';
import { inferColumnType } from './infer-column-type.js';
import { FILL_ME, type ReportDefinitionInput } from './report-definition.js';

/**
 * `reports infer-schema FILE.csv`: a report definition proposed from a sample CSV. The columns come from
 * the file; what a file cannot tell (the gateway's report id, the time zone, the body the provider's
 * support hands over) is left as FILL_ME, which parseReportDefinition refuses, so a proposal cannot be
 * deployed unfinished. Pure: bytes in, a plain object out.
 */

export type { CsvInput } from '../csv/sample.js';

export interface InferOptions extends CsvSampleOptions {
  /** The report id (for example the file's base name); made lower snake_case. FILL_ME when not given. */
  id?: string;
  /** Where the sample came from, for the proposal's description. */
  source?: string;
}

export interface InferredReport {
  /** Ready to print as JSON into config/reports/<id>.json once the FILL_ME fields are filled. */
  definition: ReportDefinitionInput;
  /** What the reviewer should check: placeholders, nullability, ambiguous or refused types. */
  notes: string[];
}

/** A header that names money: whole-number samples there are worth a second look. */
const MONEY = /amount|sum|price|total|fee|commission|сумм|комисс|цена|стоим/i;

/** The provider's sample request body (the sample definition, config/reports/transactions.json), with the window as placeholders. */
function sampleBodyTemplate(encoding: string, delimiter: string): Record<string, unknown> {
  return {
    reportIdentifier: FILL_ME,
    reportEncode: encoding,
    reportName: FILL_ME,
    reportCsvDelimiter: delimiter,
    reportFormat: 'CSV',
    configurationReportParameters: [],
    inputReportParameters: [
      { type: 'INPUT_TEXT', name: 'dateFrom', value: '{{window.start:yyyy-MM-dd HH:mm:ss}}' },
      { type: 'INPUT_TEXT', name: 'dateTo', value: '{{window.end:yyyy-MM-dd HH:mm:ss}}' },
    ],
    outputReportParameters: [],
    filters: {
      gates: [], companies: [], projects: [], endpoints: [], merchants: [],
      processors: [], managers: [], resellers: [], currencies: [],
    },
  };
}

export async function inferReportDefinition(input: CsvInput, options: InferOptions = {}): Promise<InferredReport> {
  const sample = await readCsvSample(input, options);
  const notes = [...sample.notes];
  const id = options.id === undefined ? FILL_ME : snakeCase(options.id).replace(/^(?=\d)/, 'r_') || FILL_ME;

  notes.push(
    `Fill every ${FILL_ME}: ${id === FILL_ME ? 'id, ' : ''}reportIdentifier and schedule.timeZone; replace bodyTemplate ` +
      "(the spec's sample body) with the JSON the provider's support gave for this report, with the window placeholders in it.",
  );
  if (sample.bom) notes.push('The sample starts with a UTF-8 byte-order mark; the definition says UTF-8.');
  notes.push(`Read ${sample.rows.length} data row(s), delimiter ${JSON.stringify(sample.delimiter)}, encoding ${sample.encoding}.`);

  const names = athenaColumnNames(sample.header);
  const columns = sample.header.map((header, i) => {
    const { name, note: nameNote } = names[i]!;
    const inferred = inferColumnType(sample.rows.map((r) => r[i] ?? ''));
    const label = `column ${JSON.stringify(header)}`;
    if (header === '') notes.push(`${label} (position ${i + 1}): the header is empty; a definition needs one, so the CSV cannot be described as it is`);
    if (nameNote) notes.push(`${label}: ${nameNote}`);
    if (sample.header.indexOf(header) !== i) notes.push(`${label}: the header appears more than once in the sample; check that the report really repeats it`);
    for (const n of inferred.notes) notes.push(`${label}: ${n}`);
    if (inferred.type === 'bigint' && MONEY.test(header)) {
      notes.push(`${label}: every value is whole; if it is money, use decimal(18,2) so a later "10.50" is not rejected`);
    }
    return {
      header,
      name,
      type: inferred.type,
      ...(inferred.pattern === undefined ? {} : { pattern: inferred.pattern }),
      nullable: inferred.nullable,
    };
  });

  const definition: ReportDefinitionInput = {
    // Relative to config/reports/, where the proposal is meant to be saved.
    $schema: '../report-definition.schema.json',
    id,
    description: `Proposed by reports infer-schema from ${options.source ?? 'a sample CSV'}; review the types.`,
    reportIdentifier: FILL_ME,
    format: 'CSV',
    encoding: sample.encoding,
    delimiter: sample.delimiter,
    // 03:15 daily like the shipped report: late enough for the gateway to have closed the day.
    schedule: { cron: 'cron(15 3 * * ? *)', timeZone: FILL_ME },
    window: 'P1D',
    // Transaction statuses change after the fact (docs/architecture.md, "Report definition"): re-fetch the two days before too.
    lookback: 2,
    rejects: { maxShare: 0 },
    bodyTemplate: sampleBodyTemplate(sample.encoding, sample.delimiter),
    columns,
  };
  return { definition, notes };
}
