import { writeReportDefinitionJsonSchema } from '../../functions/core/definitions/json-schema.js';
import { writeEnvironmentJsonSchema } from '../../lib/environment/json-schema.js';

/** `reports json-schema`: regenerates the JSON Schemas editors complete report and environment files with, from the validators. */

export const SCHEMA_FILES = { reportDefinition: 'config/report-definition.schema.json', environment: 'config/environment.schema.json' } as const;

export async function runJsonSchemaCommand(): Promise<void> {
  await writeReportDefinitionJsonSchema(SCHEMA_FILES.reportDefinition);
  console.log(`Wrote ${SCHEMA_FILES.reportDefinition}`);
  await writeEnvironmentJsonSchema(SCHEMA_FILES.environment);
  console.log(`Wrote ${SCHEMA_FILES.environment}`);
}
