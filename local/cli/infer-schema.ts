import { createReadStream } from 'node:fs';
import { basename, extname } from 'node:path';
import { snakeCase } from '../../functions/core/lake/athena-names.js';
import { inferReportDefinition } from '../../functions/core/definitions/infer-schema.js';

/**
 * `reports infer-schema <file>`: a proposed report definition from a sample CSV, on stdout (so it can be
 * redirected into config/reports/); the notes and what to do next on stderr.
 */

export interface InferSchemaCommandOptions {
  encoding?: string;
  delimiter?: string;
  id?: string;
}

export async function runInferSchemaCommand(file: string, opts: InferSchemaCommandOptions): Promise<void> {
  const { definition, notes } = await inferReportDefinition(createReadStream(file), {
    encoding: opts.encoding,
    delimiter: opts.delimiter,
    id: opts.id ?? snakeCase(basename(file, extname(file))),
    source: file,
  });
  console.log(JSON.stringify(definition, null, 2));
  for (const note of notes) console.error(`note: ${note}`);
  console.error('Fill in every "REPLACE_ME" and save it as config/reports/<id>.json: every file there is a report. Then try it: npm start -- --report <id> (docs/add-a-report.md).');
}
