import { writeFile } from 'node:fs/promises';
import * as z from 'zod';
import { CONNECTION_NAME } from '../../functions/core/connections/connection.js';
import { alarmChannelSchema, CHANNEL_KINDS, channelEntrySchema } from './alarm-channels.js';
import { environmentSchema, LOG_RETENTION_DAYS } from './environments.js';
import { LOG_LEVELS } from './log-levels.js';

/**
 * The JSON Schema of an environment file (config/environments/*.json), generated from the zod validator so the two
 * cannot disagree: editors complete `connections`, `gateway`, `secret` and the rest with it. As for the report
 * definitions' (functions/core/definitions/json-schema.ts), the validator stays the authority: the cross-field rules
 * (the top-level gateway and secret go together, a secret belongs to one connection, the network forms) are checked
 * at load only.
 */
export function environmentJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(environmentSchema, {
    // Input side: fields with defaults are optional in a file, and the connections are as written, not as merged.
    io: 'input',
    // Draft 7 is what VS Code's and JetBrains' JSON support understand best.
    target: 'draft-07',
    override: (ctx) => {
      // Refined values say nothing to an editor: offer what the validator accepts.
      const fields = environmentSchema.in.shape;
      if (ctx.zodSchema === fields.logLevel.def.innerType) ctx.jsonSchema.enum = [...LOG_LEVELS];
      if (ctx.zodSchema === fields.logRetentionDays.def.innerType) ctx.jsonSchema.enum = [...LOG_RETENTION_DAYS];
      if (ctx.zodSchema === fields.connections.def.innerType) ctx.jsonSchema.propertyNames = { type: 'string', pattern: CONNECTION_NAME.source };
      // An entry is read by its kind first (lib/environment/alarm-channels.ts): show editors each kind's fields.
      if (ctx.zodSchema === alarmChannelSchema) {
        for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
        ctx.jsonSchema.oneOf = CHANNEL_KINDS.map((kind) => {
          const { $schema: _, ...entry } = z.toJSONSchema(channelEntrySchema(kind), { io: 'input', target: 'draft-07' }) as Record<string, unknown>;
          return entry;
        });
      }
    },
  }) as Record<string, unknown>;
}

/** The committed file's exact text: stable key order, two-space indent, final newline. */
export const environmentJsonSchemaText = (): string => `${JSON.stringify(environmentJsonSchema(), null, 2)}\n`;

/** Regenerates the schema file (the `reports json-schema` command writes config/environment.schema.json). */
export async function writeEnvironmentJsonSchema(path: string): Promise<void> {
  await writeFile(path, environmentJsonSchemaText(), 'utf8');
}
