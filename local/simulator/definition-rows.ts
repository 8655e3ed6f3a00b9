import { createHash } from 'node:crypto';
import iconv from 'iconv-lite';
import type { ColumnDefinition, ColumnKind, ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { BOOLEAN_TOKENS, compilePattern, formatWithCompiledPattern } from '../../functions/core/csv/value-parsers.js';
import type { LocalDateTime, ReportWindow } from '../../functions/core/time/window.js';
import { CURRENCIES, NEGATIVE_TYPES, POSITIVE_TYPES, rowCount, sfc32, STATUSES } from './transactions.js';

/**
 * Rows for ANY report definition, from its columns alone: what the simulator answers for a report of the
 * catalog that is not the spec's sample (whose rows transactions.ts writes with its own business rules).
 *
 * Deterministic: same (report id, login, window, rowsPerDay) ⇒ same rows (a PRNG seeded with a SHA-256 of
 * them; no clock, no Math.random). Row count: round(rowsPerDay × window length / 1 day), as for the sample.
 *
 * Every value is one the definition reads back exactly: decimals with exactly `scale` fractional digits and
 * at most precision − scale integer digits, timestamps and dates inside the window and formatted with the
 * column's own pattern (truncated to its precision: no seconds in "HH:mm"), text representable in the
 * report's encoding. The hard cases real data has are spread over the report, one per row, each column
 * taking its own k-th case (cycling): for text the report's delimiter, double quotes, LF, CR and CRLF,
 * non-ASCII (Cyrillic, «», №, €, when the encoding has them), leading and trailing spaces; for bigint
 * ±2^53+1, 2^63−1 and −2^63; for decimals the largest and smallest values the type holds, negatives and
 * zero; for timestamps the window's first and last instants; for booleans every token the column reads, in
 * upper, lower and mixed case; empty values in nullable columns.
 *
 * Values stay plausible for what a text column holds, by its name or header (CODE_COLUMNS): a currency column
 * holds currency codes whatever it is called after a rename, and takes no hard case (a real one never holds a
 * delimiter). Declared `keys` stay unique within the window: a key column takes each hard case at most once,
 * and a row whose key repeats an earlier one gets a serial instead, so a demo run is never FLAGGED by data the
 * simulator made up.
 */

type Gen = (rand: () => number, row: number, at: number) => string;

interface ColumnPlan {
  /** Ordinary values. */
  value: Gen;
  /** Hard cases, taken in turn by the hard-case rows. */
  hard: readonly string[];
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const wallMs = (t: LocalDateTime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);

/** Whether the encoding writes `s` and reads back the same text. */
const representable = (s: string, encoding: string) => iconv.decode(iconv.encode(s, encoding), encoding) === s;

const WORDS = ['Acme Online Store', 'Globex, Inc.', 'Blue Sky Travel Ltd.', 'Order #', 'Subscription', 'Tickets', 'SALE', 'REFUND'] as const;
const NON_ASCII_WORDS = ['ООО «Ромашка»', 'Оплата заказа №', 'Магазин «Книги»', 'Café Müller'] as const;

/** Text columns that hold codes from a short list, known by a word of their name or header (English or Russian). */
const CODE_COLUMNS: ReadonlyArray<[words: readonly string[], values: readonly string[]]> = [
  [['currency', 'ccy', 'curr', 'валюта'], CURRENCIES],
  [['status', 'state', 'статус'], STATUSES],
  [['type', 'тип'], [...POSITIVE_TYPES, ...NEGATIVE_TYPES]],
  [['country', 'страна'], ['RU', 'KZ', 'AM', 'DE', 'US']],
];

const wordsOf = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u);

function codePlan(column: ColumnDefinition): ColumnPlan | undefined {
  const words = new Set([...wordsOf(column.name), ...wordsOf(column.header)]);
  const values = CODE_COLUMNS.find(([names]) => names.some((w) => words.has(w)))?.[1];
  return values && { value: (rand) => values[Math.floor(rand() * values.length)]!, hard: [] };
}

function textPlan(delimiter: string, encoding: string): ColumnPlan {
  const fits = (s: string) => representable(s, encoding);
  const words = [...WORDS, ...NON_ASCII_WORDS].filter(fits);
  const hard = [
    `before${delimiter}after`,
    'Gift box "Premium", size "XL"',
    'First line\nsecond line',
    'First line\rsecond line',
    'First line\r\nsecond line',
    'ИП Петров №5 «Евро€»',
    `Оплата заказа №42${delimiter} «срочно», "VIP" € 10`,
    '  leading and trailing spaces  ',
    'Ünïcödé ß ø',
    `"${delimiter}\n"`,
  ].filter(fits);
  return {
    value: (rand, row) => `${words[Math.floor(rand() * words.length)]} ${row + 1}`,
    hard,
  };
}

const INT64_MAX = 2n ** 63n - 1n;

function bigintPlan(): ColumnPlan {
  return {
    // 2^32 + serial: above 32 bits, unique per row and window.
    value: (rand, row, at) => (2n ** 32n + BigInt(Math.floor(at / 1000)) * 1000n + BigInt(row % 1000)).toString(),
    hard: [(2n ** 53n + 1n).toString(), INT64_MAX.toString(), (-(2n ** 63n)).toString(), (-(2n ** 53n) - 1n).toString(), '0', '-1'],
  };
}

function decimalPlan(precision: number, scale: number): ColumnPlan {
  const intDigits = precision - scale;
  const frac = (digits: string) => (scale > 0 ? `.${digits}` : '');
  const nines = (n: number) => '9'.repeat(n);
  const max = `${intDigits > 0 ? nines(intDigits) : '0'}${frac(nines(scale))}`;
  const smallest = scale > 0 ? `0.${'0'.repeat(scale - 1)}1` : '1';
  return {
    value: (rand) => {
      const whole = Math.floor(rand() * 10 ** Math.min(intDigits, 7));
      const cents = scale > 0 ? pad(Math.floor(rand() * 10 ** Math.min(scale, 6)), Math.min(scale, 6)).padEnd(scale, '0') : '';
      const negative = rand() < 0.12 && (whole > 0 || /[1-9]/.test(cents));
      return `${negative ? '-' : ''}${whole}${frac(cents)}`;
    },
    hard: [max, `-${max}`, `-${smallest}`, `0${frac('0'.repeat(scale))}`, smallest],
  };
}

/** The pattern's smallest step in ms: 60 000 without seconds, 1 000 without milliseconds, else 1. */
const stepMs = (p: ReturnType<typeof compilePattern>) => (p.at.ss === -1 ? 60_000 : p.at.SSS === -1 ? 1_000 : 1);

function timePlan(column: ColumnDefinition, window: ReportWindow, kind: 'timestamp' | 'date'): ColumnPlan {
  const p = compilePattern(column.pattern!, kind);
  const step = kind === 'date' ? 86_400_000 : stepMs(p);
  const start = wallMs(window.start);
  const end = wallMs(window.end);
  const format = (ms: number) => formatWithCompiledPattern(Math.floor(ms / step) * step, p);
  // A window shorter than the step (PT1H with dates) still has its start.
  const last = Math.max(start, end - step);
  return { value: (_rand, _row, at) => format(at), hard: [format(start), format(last)] };
}

/** A boolean column's tokens (its own `values`, else the defaults), as written and in other cases. */
function booleanPlan(column: ColumnDefinition): ColumnPlan {
  const tokens = column.values ?? BOOLEAN_TOKENS;
  const all = [...tokens.true, ...tokens.false];
  const mixed = (t: string) => t.charAt(0).toUpperCase() + t.slice(1).toLowerCase();
  return {
    value: (rand) => all[Math.floor(rand() * all.length)]!,
    hard: [...new Set(all.flatMap((t) => [t, t.toUpperCase(), t.toLowerCase(), mixed(t)]))],
  };
}

/** Per kind, the simulator's values for a column of it. */
const PLANS = {
  string: (column, report) => codePlan(column) ?? textPlan(report.delimiter, report.encoding),
  bigint: () => bigintPlan(),
  decimal: (column) => decimalPlan(column.precision!, column.scale!),
  timestamp: (column, _report, window) => timePlan(column, window, 'timestamp'),
  date: (column, _report, window) => timePlan(column, window, 'date'),
  boolean: (column) => booleanPlan(column),
} satisfies Record<ColumnKind, (column: ColumnDefinition, report: ReportDefinition, window: ReportWindow) => ColumnPlan>;

function planFor(column: ColumnDefinition, report: ReportDefinition, window: ReportWindow): ColumnPlan {
  const plan = PLANS[column.kind](column, report, window);
  return column.nullable ? { value: plan.value, hard: [...plan.hard, ''] } : plan;
}

/**
 * Keeps the declared key unique in a window: the key's first column that can hold a serial (text, bigint, a decimal
 * with room) takes one when the row's key repeats an earlier one. Keys made only of dates, times and booleans
 * cannot be kept unique and are left as generated.
 */
function uniqueKeys(report: ReportDefinition): ((row: string[], i: number) => string[]) | undefined {
  const keyIndexes = (report.keys ?? []).map((k) => report.columns.findIndex((c) => c.name === k)).filter((i) => i >= 0);
  const serialAt = keyIndexes.find((i) => {
    const c = report.columns[i]!;
    return c.kind === 'string' || c.kind === 'bigint' || (c.kind === 'decimal' && c.precision! - c.scale! >= 10);
  });
  if (serialAt === undefined) return undefined;
  const column = report.columns[serialAt]!;
  const serial = (i: number) =>
    column.kind === 'string' ? `K${i + 1}` : column.kind === 'bigint' ? String(2 ** 40 + i) : `${i + 1}${column.scale ? `.${'0'.repeat(column.scale)}` : ''}`;
  const seen = new Set<string>();
  return (row, i) => {
    const key = () => JSON.stringify(keyIndexes.map((c) => row[c]));
    if (seen.has(key())) row[serialAt] = serial(i);
    seen.add(key());
    return row;
  };
}

/** The rows of one window, one at a time (the server streams them). */
export function* definitionRows(report: ReportDefinition, login: string, window: ReportWindow, rowsPerDay: number): Generator<string[]> {
  const key = `${report.id}\n${login}\n${JSON.stringify(window)}`;
  const rand = sfc32(createHash('sha256').update(key).digest());
  const plans = report.columns.map((c) => planFor(c, report, window));
  const isKey = report.columns.map((c) => report.keys?.includes(c.name) ?? false);
  const unique = uniqueKeys(report);
  const n = rowCount(window, rowsPerDay);
  const cases = Math.max(0, ...plans.map((p) => p.hard.length));
  // Hard case k sits at row floor(k·n/cases): spread over the report, every one present when n ≥ cases.
  const hardAt = new Map<number, number>();
  for (let k = 0; k < cases && k < n; k++) hardAt.set(n >= cases ? Math.floor((k * n) / cases) : k, k);
  const start = wallMs(window.start);
  const span = wallMs(window.end) - start;

  for (let i = 0; i < n; i++) {
    // Row i lies in [i·span/n, (i+1)·span/n): ascending and inside the half-open window.
    const at = start + Math.floor((i * span) / n) + Math.floor(rand() * Math.max(1, Math.floor(span / n)));
    const k = hardAt.get(i);
    const row = plans.map((plan, c) => {
      // A key column takes each of its hard cases once: cycling them would repeat a key.
      if (k !== undefined && plan.hard.length && (!isKey[c] || k < plan.hard.length)) return plan.hard[k % plan.hard.length]!;
      // Now and then an empty value where the column allows it.
      if (report.columns[c]!.nullable && rand() < 0.05) return '';
      return plan.value(rand, i, at);
    });
    yield unique ? unique(row, i) : row;
  }
}

/** The schemaDrift fault for any report: the first header renamed and a column added at the end. */
export function driftedDefinitionHeader(report: ReportDefinition): string[] {
  const headers = report.columns.map((c) => c.header);
  return [`${headers[0]}_renamed`, ...headers.slice(1), 'Drift_extra_column'];
}

export function driftDefinitionRow(row: string[]): string[] {
  return [...row, 'extra'];
}
