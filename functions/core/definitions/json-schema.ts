import { writeFile } from 'node:fs/promises';
import * as z from 'zod';
import { COLUMN_SYNTAX, columnSchema, kindsTaking, reportDefinitionSchema } from './report-definition.js';

/**
 * The JSON Schema of a report definition file, generated from the zod validator so the two cannot disagree.
 * It exists for editors: config/reports/*.json point at it with "$schema" and get completion and hover text.
 * The validator stays the authority: refinements (decimal precision, duplicate names, placeholders) are not
 * expressible here and are only checked at load.
 */
export function reportDefinitionJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(reportDefinitionSchema, {
    // Input side: fields with defaults are optional in a file.
    io: 'input',
    // Draft 7 is what VS Code's and JetBrains' JSON support understand best.
    target: 'draft-07',
    override: (ctx) => {
      // The one cross-field rule an editor can show while typing: the kinds that need a pattern (timestamp, date).
      if (ctx.zodSchema === columnSchema) {
        ctx.jsonSchema.if = { properties: { type: { enum: kindsTaking('pattern').map((k) => COLUMN_SYNTAX[k].written) } }, required: ['type'] };
        ctx.jsonSchema.then = { required: ['pattern'] };
      }
    },
  }) as Record<string, unknown>;
}

/** The committed file's exact text: stable key order, two-space indent, final newline. */
export const reportDefinitionJsonSchemaText = (): string => `${JSON.stringify(reportDefinitionJsonSchema(), null, 2)}\n`;

/** Regenerates the schema file (the `reports json-schema` command; the default path is config/report-definition.schema.json). */
export async function writeReportDefinitionJsonSchema(path: string): Promise<void> {
  // Stryker disable next-line StringLiteral: writeFile writes a string as UTF-8 when the encoding is empty too
  await writeFile(path, reportDefinitionJsonSchemaText(), 'utf8');
}
