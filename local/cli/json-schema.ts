import { writeReportDefinitionJsonSchema } from '../../functions/core/definitions/json-schema.js';

/** `reports json-schema`: regenerates the JSON Schema editors complete report files with, from the validator. */

const SCHEMA_FILE = 'config/report-definition.schema.json';

export async function runJsonSchemaCommand(): Promise<void> {
  await writeReportDefinitionJsonSchema(SCHEMA_FILE);
  console.log(`Wrote ${SCHEMA_FILE}`);
}
