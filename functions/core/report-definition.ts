import { z } from 'zod';
import { assertTemplate } from './body-template.js';
import { ConfigurationError } from './errors.js';
import { parseWindowSize } from './window.js';

/**
 * A report definition (DESIGN.md "Report definition"): what to ask the gateway for, when, and the
 * column schema its CSV must have. One file per report under config/reports/.
 */

const athenaName = z
  .string()
  .regex(/^[a-z][a-z0-9_]*$/, 'must be lower snake_case (a-z, 0-9, _; starting with a letter) for Athena');

const DECIMAL = /^decimal\((\d+),\s*(\d+)\)$/;

/** Column types as DESIGN.md writes them: string, bigint, decimal(p,s), timestamp, date. */
export type ColumnKind = 'string' | 'bigint' | 'decimal' | 'timestamp' | 'date';

export const columnSchema = z
  .object({
    header: z.string().min(1).describe('The header name in the CSV, exactly as the gateway writes it'),
    name: athenaName.describe('The Athena/Parquet column name'),
    type: z
      .string()
      .regex(/^(string|bigint|timestamp|date|decimal\(\d+,\s*\d+\))$/, 'must be string, bigint, decimal(p,s), timestamp or date')
      .describe('string | bigint | decimal(p,s) | timestamp | date'),
    pattern: z.string().optional().describe('Input pattern for timestamp and date, tokens yyyy MM dd HH mm ss'),
    nullable: z.boolean().default(false).describe('Whether an empty value is a null (true) or a rejected row (false)'),
    description: z.string().optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const dec = DECIMAL.exec(c.type);
    if (dec) {
      const [p, s] = [Number(dec[1]), Number(dec[2])];
      if (p < 1 || p > 18) ctx.addIssue({ code: 'custom', message: 'decimal precision must be 1 to 18 (INT64-backed)', path: ['type'] });
      if (s > p) ctx.addIssue({ code: 'custom', message: 'decimal scale must not exceed precision', path: ['type'] });
    }
    const needs = c.type === 'timestamp' ? ['yyyy', 'MM', 'dd', 'HH', 'mm', 'ss'] : c.type === 'date' ? ['yyyy', 'MM', 'dd'] : null;
    if (needs && !c.pattern) ctx.addIssue({ code: 'custom', message: `a ${c.type} column needs an input pattern`, path: ['pattern'] });
    if (needs && c.pattern && !needs.every((t) => c.pattern!.includes(t))) {
      ctx.addIssue({ code: 'custom', message: `must contain ${needs.join(', ')}`, path: ['pattern'] });
    }
    if (!needs && c.pattern) ctx.addIssue({ code: 'custom', message: 'only timestamp and date columns take a pattern', path: ['pattern'] });
  })
  .transform((c) => {
    const dec = DECIMAL.exec(c.type);
    const kind = (dec ? 'decimal' : c.type) as ColumnKind;
    return { ...c, kind, precision: dec ? Number(dec[1]) : undefined, scale: dec ? Number(dec[2]) : undefined };
  });

export const reportDefinitionSchema = z
  .object({
    $schema: z.string().optional(),
    id: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be lower snake_case: it names the Glue table and S3 prefixes'),
    description: z.string().optional(),
    reportIdentifier: z.string().min(1),
    format: z.enum(['CSV', 'PDF']).default('CSV'),
    encoding: z.string().min(1).default('UTF-8'),
    delimiter: z.string().length(1).default(','),
    schedule: z
      .object({
        cron: z.string().min(1).describe('EventBridge Scheduler cron expression, e.g. "cron(15 3 * * ? *)"'),
        timeZone: z.string().min(1).describe('IANA time zone of the schedule and of the report windows'),
      })
      .strict(),
    window: z
      .string()
      .default('P1D')
      .refine((w) => { try { parseWindowSize(w); return true; } catch { return false; } }, 'must be "P<n>D" or "PT<n>H"'),
    lookback: z.number().int().min(0).max(31).default(0).describe('Also re-fetch this many windows before the current one'),
    rejects: z.object({ maxShare: z.number().min(0).max(1).default(0) }).strict().default({ maxShare: 0 }),
    bodyTemplate: z.record(z.string(), z.unknown()),
    columns: z.array(columnSchema).min(1),
  })
  .strict()
  .superRefine((d, ctx) => {
    const seen = new Set<string>();
    d.columns.forEach((c, i) => {
      if (seen.has(c.name)) ctx.addIssue({ code: 'custom', message: `duplicate column name "${c.name}"`, path: ['columns', i, 'name'] });
      seen.add(c.name);
    });
    if (d.columns.some((c) => c.name === 'dt')) {
      ctx.addIssue({ code: 'custom', message: '"dt" is the partition column; pick another name', path: ['columns'] });
    }
  });

export type ReportDefinition = z.output<typeof reportDefinitionSchema>;
export type ColumnDefinition = z.output<typeof columnSchema>;

/** Validates a parsed definition; the error names the file, the report and every bad field. */
export function parseReportDefinition(raw: unknown, file: string): ReportDefinition {
  const parsed = reportDefinitionSchema.safeParse(raw);
  const id = (raw as { id?: unknown } | null)?.id;
  const report = typeof id === 'string' ? `report "${id}"` : 'report (no id)';
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const path = i.path.length ? i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(root)';
      return `  ${path}: ${i.message}`;
    });
    throw new ConfigurationError(`${file}: ${report} is invalid:\n${lines.join('\n')}`);
  }
  assertTemplate(parsed.data.bodyTemplate, `${file}: ${report}, bodyTemplate`);
  return parsed.data;
}
