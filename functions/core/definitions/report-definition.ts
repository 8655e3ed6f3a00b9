import iconv from 'iconv-lite';
import * as z from 'zod';
import { findBadPlaceholderPaths, PLACEHOLDER_HELP } from '../gateway/body-template.js';
import { DEFAULT_PERIOD_TO, PERIOD_TO_NAMES, PERIOD_TO_READINGS, periodProblem } from './period-check.js';
import { refusalWording } from './refusal-wording.js';
import { ConfigurationError } from '../errors.js';
import { connectionName, DEFAULT_CONNECTION } from '../connections/connection.js';
import { scheduleExpressionProblems } from '../time/schedule-expression.js';
import { PATTERN_HELP, patternProblem } from '../csv/value-parsers.js';
import { parseWindowSize } from '../time/window.js';

/**
 * A report definition (docs/architecture.md, "Report definition"): what to ask the gateway for, when, and the
 * column schema its CSV must have. One file per report under config/reports/.
 */

const athenaName = z
  .string()
  .regex(/^[a-z][a-z0-9_]*$/, 'must be lower snake_case (a-z, 0-9, _; starting with a letter) for Athena');

/**
 * What `reports infer-schema` writes where a sample CSV cannot tell (the gateway's report id, the time zone).
 * A definition still holding it does not load, so a proposal cannot reach production half filled.
 */
export const FILL_ME = 'REPLACE_ME';

const isTimeZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
    // Stryker disable next-line BlockStatement: an empty catch returns undefined, which the caller reads as false, as it reads the false returned here
  } catch {
    return false;
  }
};

/** The regex shows in the JSON Schema; parseWindowSize (hours must divide a day) stays the authority. */
const WINDOW_SHAPE = /^(P[1-9]\d*D|PT[1-9]\d*H)$/;

/** The shape the JSON Schema shows editors; scheduleExpressionProblems (ranges, the ? rule) is the authority. */
const SCHEDULE_EXPRESSION = /^(cron\(\S+( \S+){5}\)|rate\([1-9]\d* (minute|minutes|hour|hours|day|days)\))$/;

/** Two names of one encoding ("windows-1251", "cp1251"): iconv-lite resolves aliases to one codec. */
const sameEncoding = (a: string, b: string): boolean => {
  try {
    return iconv.getCodec(a) === iconv.getCodec(b);
    // Stryker disable next-line BlockStatement: an empty catch returns undefined, which the caller reads as false, as it reads the false returned here
  } catch {
    return false;
  }
};

/** Paths of string values still holding FILL_ME, anywhere in the raw definition. */
function fillMePaths(v: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof v === 'string') return v.includes(FILL_ME) ? [path] : [];
  if (Array.isArray(v)) return v.flatMap((x, i) => fillMePaths(x, [...path, i]));
  // Stryker disable next-line ConditionalExpression: Object.entries of a number or a boolean is [], so the typeof check only saves the call
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => fillMePaths(x, [...path, k]));
  return [];
}

/**
 * The column kinds: the one list of them. Every table keyed by a kind (how a definition spells it, below; how a
 * value is typed and buffered, row-group-buffer.ts; its Parquet, Glue and DuckDB types and its aggregate,
 * table-schema.ts; the encoder's column buffer, parquet/encoder.ts; the inferrer, infer-column-type.ts; the
 * simulator's values, local/simulator/definition-rows.ts) is `satisfies Record<ColumnKind, …>`, so a kind added
 * here without its entries fails to compile at each of them (test/unit/variant-exhaustiveness.test.ts).
 */
export const COLUMN_KINDS = ['string', 'bigint', 'decimal', 'timestamp', 'date', 'boolean'] as const;
export type ColumnKind = (typeof COLUMN_KINDS)[number];

/** How a definition writes a column of one kind, and which of the column's options the kind takes. */
interface KindSyntax {
  /** The whole `type` text (anchored); decimal's groups capture precision and scale. */
  spelling: RegExp;
  /** How the help and the JSON Schema write it. */
  written: string;
  examples: readonly string[];
  /** Whether the column needs an input `pattern` (timestamp, date). */
  pattern: boolean;
  /** Whether the column may name its true and false tokens (`values`). */
  values: boolean;
}

export const COLUMN_SYNTAX = {
  string: { spelling: /^string$/, written: 'string', examples: ['string'], pattern: false, values: false },
  bigint: { spelling: /^bigint$/, written: 'bigint', examples: ['bigint'], pattern: false, values: false },
  decimal: { spelling: /^decimal\((\d+),\s*(\d+)\)$/, written: 'decimal(p,s)', examples: ['decimal(18,2)'], pattern: false, values: false },
  timestamp: { spelling: /^timestamp$/, written: 'timestamp', examples: ['timestamp'], pattern: true, values: false },
  date: { spelling: /^date$/, written: 'date', examples: ['date'], pattern: true, values: false },
  boolean: { spelling: /^boolean$/, written: 'boolean', examples: ['boolean'], pattern: false, values: true },
} as const satisfies Record<ColumnKind, KindSyntax>;

/** The kind a definition's `type` text spells, or undefined. */
export const kindOfType = (type: string): ColumnKind | undefined => COLUMN_KINDS.find((k) => COLUMN_SYNTAX[k].spelling.test(type));

/** The kinds that take an option, for messages and the JSON Schema. */
export const kindsTaking = (option: 'pattern' | 'values'): ColumnKind[] => COLUMN_KINDS.filter((k) => COLUMN_SYNTAX[k][option]);

const TYPE_SPELLING = new RegExp(`^(${COLUMN_KINDS.map((k) => COLUMN_SYNTAX[k].spelling.source.slice(1, -1)).join('|')})$`);
const typesWritten = COLUMN_KINDS.map((k) => COLUMN_SYNTAX[k].written);
// Stryker disable next-line StringLiteral: joining one word, or none, uses no separator
const list = (words: readonly string[], last: 'or' | 'and') => (words.length > 1 ? `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}` : words.join(''));
const or = (words: readonly string[]) => list(words, 'or');
const and = (words: readonly string[]) => list(words, 'and');

/** What other SQL dialects call a type this definition spells otherwise: the word a newcomer tries first. */
const SPELLED_HERE: Record<string, string> = {
  int: 'bigint', integer: 'bigint', long: 'bigint', smallint: 'bigint', tinyint: 'bigint', number: 'bigint or decimal(p,s)',
  numeric: 'decimal(p,s)', money: 'decimal(18,2)', float: 'decimal(p,s) (money is never a float)', double: 'decimal(p,s) (money is never a float)',
  real: 'decimal(p,s) (money is never a float)', varchar: 'string', text: 'string', char: 'string', bool: 'boolean', datetime: 'timestamp',
};

/** The type message: the case rule when only the case is wrong, the usual spelling of another dialect's word. */
function typeProblem(type: string): string {
  const lower = type.trim().toLowerCase();
  if (TYPE_SPELLING.test(lower)) return `${JSON.stringify(type)}: types are written in lower case: ${JSON.stringify(lower)}`;
  const word = lower.replace(/\(.*$/, '');
  const instead = Object.hasOwn(SPELLED_HERE, word) ? `; for ${JSON.stringify(type)} write ${SPELLED_HERE[word]}` : '';
  return `${JSON.stringify(type)}: must be ${or(typesWritten)} (lower case)${instead}`;
}

/**
 * A boolean column's tokens (`values`), compared without regard to case. Without it a boolean column reads
 * BOOLEAN_TOKENS (value-parsers.ts): true/false, 1/0, yes/no.
 */
const booleanValuesSchema = z
  .object({
    true: z.array(z.string().min(1, 'an empty value is a null (or a rejected row), never a token')).min(1).describe('The texts that mean true'),
    false: z.array(z.string().min(1, 'an empty value is a null (or a rejected row), never a token')).min(1).describe('The texts that mean false'),
  })
  .strict()
  .superRefine((v, ctx) => {
    const trues = new Set(v.true.map((t) => t.toLowerCase()));
    v.false.forEach((t, i) => {
      if (trues.has(t.toLowerCase())) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(t)} is listed as true and as false (tokens are compared without regard to case)`, path: ['false', i] });
    });
  })
  .meta({
    description: 'For a boolean column: the texts that mean true and false, compared without regard to case (default: true/1/yes and false/0/no)',
    examples: [{ true: ['Y'], false: ['N'] }],
  });

export const columnSchema = z
  .object({
    header: z.string().min(1).describe('The header name in the CSV, exactly as the gateway writes it'),
    name: athenaName.describe('The Athena/Parquet column name'),
    type: z
      .string()
      .regex(TYPE_SPELLING, { error: (issue) => typeProblem(String(issue.input)) })
      // examples feed editor completion through the generated JSON Schema.
      .meta({
        description: typesWritten.join(' | '),
        examples: COLUMN_KINDS.flatMap((k) => COLUMN_SYNTAX[k].examples),
      }),
    pattern: z
      .string()
      .optional()
      .meta({
        description: `Input pattern for timestamp and date columns; ${PATTERN_HELP}`,
        examples: ['yyyy-MM-dd HH:mm:ss', 'dd.MM.yyyy HH:mm', "yyyy-MM-dd'T'HH:mm:ss.SSS", 'yyyy-MM-dd', 'dd.MM.yyyy', 'dd/MM/yyyy', 'MM/dd/yyyy', 'yyyyMMdd'],
      }),
    values: booleanValuesSchema.optional(),
    nullable: z.boolean().default(false).describe('Whether an empty value is a null (true) or a rejected row (false)'),
    description: z.string().optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const kind = kindOfType(c.type);
    if (!kind) return; // the regex spoke
    const dec = COLUMN_SYNTAX.decimal.spelling.exec(c.type);
    if (dec) {
      const [p, s] = [Number(dec[1]), Number(dec[2])];
      if (p < 1 || p > 18) ctx.addIssue({ code: 'custom', message: 'decimal precision must be 1 to 18 (INT64-backed)', path: ['type'] });
      if (s > p) ctx.addIssue({ code: 'custom', message: 'decimal scale must not exceed precision', path: ['type'] });
    }
    const timeKind = kind === 'timestamp' || kind === 'date' ? kind : null;
    if (COLUMN_SYNTAX[kind].pattern && !c.pattern) ctx.addIssue({ code: 'custom', message: `a ${c.type} column needs an input pattern; ${PATTERN_HELP}`, path: ['pattern'] });
    const problem = timeKind && c.pattern ? patternProblem(c.pattern, timeKind) : null;
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['pattern'] });
    if (!COLUMN_SYNTAX[kind].pattern && c.pattern) ctx.addIssue({ code: 'custom', message: `only ${and(kindsTaking('pattern'))} columns take a pattern`, path: ['pattern'] });
    if (!COLUMN_SYNTAX[kind].values && c.values) ctx.addIssue({ code: 'custom', message: `only ${and(kindsTaking('values'))} columns take values`, path: ['values'] });
  })
  .transform((c) => {
    const dec = COLUMN_SYNTAX.decimal.spelling.exec(c.type);
    // The regex above admits only spellings of a kind.
    const kind = kindOfType(c.type)!;
    return { ...c, kind, precision: dec ? Number(dec[1]) : undefined, scale: dec ? Number(dec[2]) : undefined };
  });

/** YYYY-MM-DD that names a real calendar day. */
const calendarDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'is not a real calendar date');

/**
 * The volume check's settings (functions/core/quality/volume-band.ts does the arithmetic; docs/add-a-report.md says why
 * these defaults). Written out in full so a definition without "volume" gets exactly these.
 */
export const VOLUME_DEFAULTS: Readonly<{
  enabled: boolean;
  historyWeeks: number;
  minHistory: number;
  lowRatio: number;
  highRatio: number;
  minRowsDifference: number;
  minSumDifference: number;
  skipDates: readonly string[];
}> = {
  enabled: true,
  historyWeeks: 4,
  minHistory: 3,
  lowRatio: 0.5,
  highRatio: 2,
  minRowsDifference: 10,
  minSumDifference: 0,
  skipDates: [],
};

const volumeSchema = z
  .object({
    enabled: z.boolean().default(VOLUME_DEFAULTS.enabled).describe('Check each window\'s volume against the same weekday (hour of the week) of earlier weeks'),
    historyWeeks: z
      .number()
      .int()
      .min(1)
      .max(26)
      .default(VOLUME_DEFAULTS.historyWeeks)
      .describe('How many earlier weeks of the same weekday (or hour of the week) make the expected band'),
    minHistory: z
      .number()
      .int()
      .min(1)
      .max(26)
      .default(VOLUME_DEFAULTS.minHistory)
      .describe('Fewest loaded history windows needed to judge; with fewer nothing is flagged and the manifest says why'),
    lowRatio: z
      .number()
      .gt(0)
      .lt(1)
      .default(VOLUME_DEFAULTS.lowRatio)
      .describe('Below median x lowRatio is "volume low"'),
    highRatio: z
      .number()
      .gt(1)
      .default(VOLUME_DEFAULTS.highRatio)
      .describe('Above median x highRatio is "volume high"'),
    minRowsDifference: z
      .number()
      .int()
      .min(0)
      .default(VOLUME_DEFAULTS.minRowsDifference)
      .describe('A window within this many rows of the median is never flagged, so tiny counts do not cry wolf'),
    sumColumn: athenaName.optional().describe('A decimal or bigint column whose sum per window is checked like the row count (e.g. "amount")'),
    minSumDifference: z
      .number()
      .min(0)
      .default(VOLUME_DEFAULTS.minSumDifference)
      .describe('A sum within this much of the median (in the column\'s units) is never flagged'),
    skipDates: z
      .array(calendarDate)
      // A new array per definition: a default object would be shared by every report that omits it.
      .default(() => [])
      .meta({
        description: 'Dates (YYYY-MM-DD, the window\'s date) neither judged nor used as history: public holidays, a known outage',
        examples: [['2026-01-01', '2026-01-02']],
      }),
  })
  .strict();

export const reportDefinitionSchema = z
  .object({
    $schema: z.string().optional().describe('Path of the JSON Schema, for editors: "../report-definition.schema.json"'),
    id: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, 'must be lower snake_case: it names the Glue table and S3 prefixes')
      .describe('Lower snake_case id: names the Glue table and the S3 prefixes'),
    description: z.string().optional(),
    reportIdentifier: z.string().min(1).describe("The gateway's reportIdentifier, from the provider's support"),
    connections: z
      .array(connectionName)
      .min(1, 'must name at least one connection')
      .optional()
      .meta({
        description:
          'The connections (gateway and login) this report is fetched over, each defined in every config/environments/*.json under "connections": one feed per connection, all landing in the one table (column "connection"). Absent: ["default"] (the top-level gateway and secret)',
        examples: [['acme', 'beta', 'gamma'], ['default']],
      }),
    connection: connectionName.optional().meta({
      description: 'One connection: the same as "connections": ["<name>"]. Give "connection" or "connections", not both',
      examples: ['default', 'acme-pay'],
    }),
    format: z.enum(['CSV', 'PDF']).default('CSV'),
    encoding: z
      .string()
      .min(1)
      .refine((e) => iconv.encodingExists(e), 'is not an encoding this pipeline can decode (for example "UTF-8" or "windows-1251")')
      .default('UTF-8')
      .meta({ description: 'Character encoding of the CSV the gateway returns', examples: ['UTF-8', 'windows-1251'] }),
    delimiter: z.string().length(1).default(',').meta({ description: 'CSV field delimiter', examples: [',', ';', '\t', '|'] }),
    schedule: z
      .object({
        cron: z
          .string()
          .superRefine((e, ctx) => {
            for (const message of scheduleExpressionProblems(e)) ctx.addIssue({ code: 'custom', message });
          })
          // For editors only (the JSON Schema); the check above says what is wrong.
          .meta({ pattern: SCHEDULE_EXPRESSION.source })
          .describe('EventBridge Scheduler cron expression, e.g. "cron(15 3 * * ? *)"'),
        timeZone: z
          .string()
          .refine(isTimeZone, 'must be an IANA time zone, for example "Europe/Moscow" or "UTC"')
          .meta({ description: 'IANA time zone of the schedule and of the report windows', examples: ['Europe/Moscow', 'UTC'] }),
      })
      .strict(),
    window: z
      .string()
      .regex(WINDOW_SHAPE, 'must be "P<n>D" (days) or "PT<n>H" (hours dividing 24)')
      // Only a well-shaped window gets this second message; the regex already spoke for the others.
      .refine(
        // Stryker disable next-line BlockStatement: an empty catch returns undefined, which refine reads as a failure, as it reads false
        (w) => { try { return !WINDOW_SHAPE.test(w) || Boolean(parseWindowSize(w)); } catch { return false; } },
        'hours must divide 24 (PT1H, PT2H, PT3H, PT4H, PT6H, PT8H, PT12H, PT24H)',
      )
      .default('P1D')
      .meta({ description: 'Length of one report window: whole days (P1D) or hours dividing a day (PT1H)', examples: ['P1D', 'PT1H'] }),
    periodTo: z
      .enum(PERIOD_TO_NAMES)
      .default(DEFAULT_PERIOD_TO)
      .describe(
        `How the provider reads a period's "to" written without a time (docs/add-a-report.md, "The period a body asks for"): ` +
          Object.entries(PERIOD_TO_READINGS).map(([r, m]) => `${r}: ${m}`).join('; '),
      ),
    lookback: z.number().int().min(0).max(31).default(0).describe('Also re-fetch this many windows before the current one'),
    rejects: z.object({ maxShare: z.number().min(0).max(1).default(0) }).strict().default({ maxShare: 0 }),
    keys: z
      .array(athenaName)
      .min(1)
      .optional()
      .meta({
        description:
          'Column names (the Athena names) that identify a row: rows repeating a key within one window are counted in the load manifest, and more than none is a finding (the rows are still written)',
        examples: [['transaction_id']],
      }),
    volume: volumeSchema
      .default(() => ({ ...VOLUME_DEFAULTS, skipDates: [] }))
      .describe('The volume check: rows written (and volume.sumColumn\'s sum) of each window against the same weekday, or hour of the week, of earlier weeks'),
    bodyTemplate: z
      .record(z.string(), z.unknown())
      .superRefine((t, ctx) => {
        for (const b of findBadPlaceholderPaths(t)) {
          ctx.addIssue({ code: 'custom', message: `unknown placeholder ${b.placeholder}; ${PLACEHOLDER_HELP}`, path: b.path });
        }
      })
      .describe("The JSON body exactly as the provider's support hands it over, with {{window.start:PATTERN}} placeholders"),
    columns: z.array(columnSchema).min(1).describe('The CSV columns in header order'),
  })
  .strict()
  .superRefine((d, ctx) => {
    const seen = new Set<string>();
    d.columns.forEach((c, i) => {
      if (seen.has(c.name)) ctx.addIssue({ code: 'custom', message: `duplicate column name "${c.name}"`, path: ['columns', i, 'name'] });
      seen.add(c.name);
      // The partition columns (table-schema.ts PARTITION_KEYS, which imports this file's types).
      if (c.name === 'dt' || c.name === 'connection') ctx.addIssue({ code: 'custom', message: `"${c.name}" is a partition column; pick another name`, path: ['columns', i, 'name'] });
    });
    checkConnections(d, ctx);
    checkBodyAgreement(d, ctx);
    checkQualityColumns(d, ctx);
    const period = periodProblem(d.bodyTemplate, d.window, d.periodTo);
    if (period) ctx.addIssue({ code: 'custom', message: period.message, path: ['bodyTemplate', ...period.path] });
  })
  // Runs even when other fields failed (`when`), so a half-filled proposal lists every placeholder at once.
  .superRefine(
    (d, ctx) => {
      for (const path of fillMePaths(d)) {
        ctx.addIssue({ code: 'custom', message: `still the placeholder ${FILL_ME} from \`reports infer-schema\`: fill it in`, path, params: { fillMe: true } });
      }
    },
    { when: () => true },
  )
  // One shape for every reader: the connections, in the order the definition names them.
  .transform(({ connection, connections, ...d }) => ({ ...d, connections: connections ?? [connection ?? DEFAULT_CONNECTION] }))
  .meta({ title: 'Report definition', description: 'One report the pipeline fetches, its schedule and its column schema (docs/architecture.md, "Report definition")' });

/** `connection` is the one-connection spelling of `connections`: both at once would leave the reader guessing. */
function checkConnections(d: { connection?: string; connections?: string[] }, ctx: z.core.$RefinementCtx): void {
  if (d.connection !== undefined && d.connections !== undefined) {
    ctx.addIssue({ code: 'custom', message: 'give "connection" (one) or "connections" (a list), not both: move it into "connections"', path: ['connection'] });
  }
  (d.connections ?? []).forEach((c, i) => {
    if (d.connections!.indexOf(c) !== i) ctx.addIssue({ code: 'custom', message: `"${c}" is listed twice`, path: ['connections', i] });
  });
}

/**
 * The body tells the gateway which delimiter, encoding and format to write; the definition tells the parser
 * which to read. When the body carries them they must agree, or every file would be refused as malformed.
 */
function checkBodyAgreement(
  d: { delimiter: string; encoding: string; format: string; bodyTemplate: Record<string, unknown> },
  ctx: z.core.$RefinementCtx,
): void {
  const body = d.bodyTemplate;
  const at = (field: string) => ['bodyTemplate', field];
  if (typeof body.reportCsvDelimiter === 'string' && body.reportCsvDelimiter !== d.delimiter) {
    ctx.addIssue({
      code: 'custom',
      message: `is ${JSON.stringify(body.reportCsvDelimiter)} but delimiter is ${JSON.stringify(d.delimiter)}: the gateway writes the one the body asks for, so make them the same`,
      path: at('reportCsvDelimiter'),
    });
  }
  if (typeof body.reportEncode === 'string' && !body.reportEncode.includes(FILL_ME) && !sameEncoding(body.reportEncode, d.encoding)) {
    ctx.addIssue({
      code: 'custom',
      message: `is ${JSON.stringify(body.reportEncode)} but encoding is ${JSON.stringify(d.encoding)}: the gateway encodes as the body asks, so make them the same`,
      path: at('reportEncode'),
    });
  }
  if (typeof body.reportFormat === 'string' && !body.reportFormat.includes(FILL_ME) && body.reportFormat.toUpperCase() !== d.format) {
    ctx.addIssue({
      code: 'custom',
      message: `is ${JSON.stringify(body.reportFormat)} but format is ${JSON.stringify(d.format)}: make them the same`,
      path: at('reportFormat'),
    });
  }
}

/**
 * The data checks name columns: keys must exist, be distinct and never empty (a row without its key cannot be
 * told apart from another), the sum column must hold numbers, and enough history must be asked for.
 */
function checkQualityColumns(
  d: { columns: ReadonlyArray<{ name: string; kind: ColumnKind; nullable: boolean }>; keys?: string[]; volume: { sumColumn?: string; minHistory: number; historyWeeks: number } },
  ctx: z.core.$RefinementCtx,
): void {
  const byName = new Map(d.columns.map((c) => [c.name, c]));
  const names = [...byName.keys()].join(', ');
  (d.keys ?? []).forEach((k, i) => {
    const c = byName.get(k);
    if (!c) ctx.addIssue({ code: 'custom', message: `"${k}" is not a column name (the columns are ${names})`, path: ['keys', i] });
    else if (c.nullable) ctx.addIssue({ code: 'custom', message: `"${k}" is nullable: a key column must always have a value`, path: ['keys', i] });
    if (d.keys!.indexOf(k) !== i) ctx.addIssue({ code: 'custom', message: `"${k}" is listed twice`, path: ['keys', i] });
  });
  const sum = d.volume.sumColumn;
  if (sum !== undefined) {
    const c = byName.get(sum);
    if (!c) ctx.addIssue({ code: 'custom', message: `"${sum}" is not a column name (the columns are ${names})`, path: ['volume', 'sumColumn'] });
    // A column whose type was refused has no kind: its own line says what to write, and the sum is judged once it loads.
    else if (c.kind !== undefined && c.kind !== 'decimal' && c.kind !== 'bigint') {
      ctx.addIssue({ code: 'custom', message: `"${sum}" is a ${c.kind} column: the sum needs a decimal or bigint column`, path: ['volume', 'sumColumn'] });
    }
  }
  if (d.volume.minHistory > d.volume.historyWeeks) {
    ctx.addIssue({
      code: 'custom',
      message: `is ${d.volume.minHistory} but historyWeeks is ${d.volume.historyWeeks}: the check could never have enough history`,
      path: ['volume', 'minHistory'],
    });
  }
}

export type ReportDefinition = z.output<typeof reportDefinitionSchema>;
export type ColumnDefinition = z.output<typeof columnSchema>;
/** A definition as written in a config file: defaults may be left out. */
export type ReportDefinitionInput = z.input<typeof reportDefinitionSchema>;

/**
 * A column's field said with the column's name, which the user looks for, before its index, which an editor's JSON
 * path shows: `column "amount" (columns[6].type)`. Undefined when the path is not inside a column.
 */
function withColumnName(raw: unknown, path: readonly PropertyKey[]): string | undefined {
  const [first, index, ...rest] = path;
  if (first !== 'columns' || typeof index !== 'number') return undefined;
  const column = (raw as { columns?: unknown[] } | null)?.columns?.[index] as { name?: unknown; header?: unknown } | undefined;
  const name = typeof column?.name === 'string' ? column.name : typeof column?.header === 'string' ? column.header : undefined;
  const json = `columns[${index}]${rest.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}`;
  return name === undefined ? json : `column ${JSON.stringify(name)} (${json})`;
}

/** Validates a parsed definition; the error names the file, the report and every bad field. */
export function parseReportDefinition(raw: unknown, file: string): ReportDefinition {
  // Our words where the schema has none of its own (refusal-wording.ts), never zod's.
  const parsed = reportDefinitionSchema.safeParse(raw, { error: refusalWording });
  const id = (raw as { id?: unknown } | null)?.id;
  const report = typeof id === 'string' ? `report "${id}"` : 'report (no id)';
  if (!parsed.success) {
    const pathOf = (i: z.core.$ZodIssue) => withColumnName(raw, i.path) ??
      // Stryker disable next-line Regex: a path outside the columns starts with a key of the definition, so its only leading dot is the first character
      (i.path.length ? i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(root)');
    // Stryker disable next-line ConditionalExpression: only the placeholder refinement's custom issues carry params.fillMe
    const isFillMe = (i: z.core.$ZodIssue) => i.code === 'custom' && i.params?.fillMe === true;
    // "REPLACE_ME is not an IANA time zone" beside "still the placeholder" says the same thing twice.
    const placeholders = new Set(parsed.error.issues.filter(isFillMe).map(pathOf));
    const lines = parsed.error.issues
      .filter((i) => isFillMe(i) || !placeholders.has(pathOf(i)))
      .map((i) => `  ${pathOf(i)}: ${i.message}`);
    throw new ConfigurationError(`${file}: ${report} is invalid:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
