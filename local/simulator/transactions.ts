import { createHash } from 'node:crypto';
import type { LocalDateTime, ReportWindow } from '../../functions/core/time/window.js';

/**
 * The simulator's sample report rows: deterministic pseudo-random transactions for one login and window.
 *
 * Same (login, window, rowsPerDay) ⇒ same rows, because every random choice comes from a PRNG seeded with a
 * SHA-256 of login and window; nothing reads the clock or Math.random. Rows come out one at a time
 * (`transactionRows`) so the server can stream millions of them without holding them all.
 *
 * Rules the spec leaves open, fixed here (the README quotes them):
 * - Row count: round(rowsPerDay × window length / 1 day).
 * - Created_date: rows are in ascending time order, spread evenly over [dateFrom, dateTo) (row i falls in the
 *   i-th of n equal slices), so every value is inside the half-open window.
 * - Date_of_report: the window start's date, DD.MM.YYYY (the gateway's "report date" is not documented;
 *   using the start makes it a pure function of the request).
 * - Transaction_id: 2^32 + serial for most rows, where serial = Created_date in Unix seconds × 1000 + row
 *   index mod 1000, so ids are unique across windows as long as fewer than 1000 rows share one second.
 *   Two hard-case rows use 2^53 + 2·serial + 1 (odd, so not representable as a double) and 2^62 + serial.
 * - Every report with at least HARD_CASE_COUNT rows contains every hard case of HARD_CASES once, at rows
 *   spread over the report; shorter reports contain the first n hard cases.
 * - Merchant names and descriptions stay within windows-1251's repertoire, so the same rows encode in both
 *   UTF-8 and windows-1251 without loss.
 */

/**
 * The spec's sample columns with their types and patterns: a catalog report of exactly this shape gets
 * these business-like rows; any other gets rows generated from its columns (definition-rows.ts).
 */
export const SAMPLE_COLUMNS = [
  ['Merchant_Name', 'string'],
  ['Transaction_id', 'bigint'],
  ['Merchant_OID', 'string'],
  ['Created_date', 'timestamp', 'yyyy-MM-dd HH:mm:ss'],
  ['Amount', 'decimal(18,3)'],
  ['Currency', 'string'],
  ['Transaction_type', 'string'],
  ['Order_description', 'string'],
  ['Date_of_report', 'date', 'dd.MM.yyyy'],
] as const satisfies ReadonlyArray<readonly [header: string, type: string, pattern?: string]>;

/** The sample report's header row, in order. */
export const REPORT_HEADER = SAMPLE_COLUMNS.map(([header]) => header);

/** Whether a definition's columns are the spec's sample columns (header, type, pattern), in order. */
export function hasSampleColumns(columns: ReadonlyArray<{ header: string; type: string; pattern?: string }>): boolean {
  return (
    columns.length === SAMPLE_COLUMNS.length &&
    columns.every((c, i) => c.header === SAMPLE_COLUMNS[i]![0] && c.type.replace(/\s/g, '') === SAMPLE_COLUMNS[i]![1] && c.pattern === (SAMPLE_COLUMNS[i] as readonly string[])[2])
  );
}

/** Column positions, for readers of `string[]` rows. */
export const COL = Object.fromEntries(REPORT_HEADER.map((h, i) => [h, i])) as Record<(typeof REPORT_HEADER)[number], number>;

const MERCHANTS = [
  'Acme Online Store',
  'Blue Sky Travel Ltd.',
  'ООО «Ромашка»',
  'ИП Сидоров А.В.',
  'Bakery "Mueller & Sons"',
  'Магазин «Книги» №7',
  'Globex, Inc.',
] as const;

export const CURRENCIES = ['RUB', 'RUB', 'RUB', 'USD', 'EUR', 'KZT'] as const;

export const POSITIVE_TYPES = ['SALE', 'SALE', 'SALE', 'SALE', 'CAPTURE', 'PREAUTH'] as const;
export const NEGATIVE_TYPES = ['REFUND', 'REFUND', 'CHARGEBACK', 'REVERSAL'] as const;

/** What a hard case forces on its row; everything else stays random. */
interface HardCase {
  what: string;
  merchant?: string;
  description?: string;
  type?: string;
  negative?: boolean;
  id?: (serial: bigint) => bigint;
}

/** The cases real files have and parsers get wrong. Exported so tests can check each one appears. */
export const HARD_CASES: readonly HardCase[] = [
  { what: 'comma in a value', description: 'Order 17, 18 and 19' },
  { what: 'double quotes in a value', description: 'Gift box "Premium", size "XL"' },
  { what: 'LF in a value', description: 'First line\nsecond line' },
  { what: 'CR in a value', description: 'First line\rsecond line' },
  { what: 'CRLF in a value', description: 'First line\r\nsecond line' },
  { what: 'empty description', description: '' },
  { what: 'Cyrillic merchant name with «»', merchant: 'ООО «Ромашка»' },
  { what: 'merchant name with № and €', merchant: 'ИП Петров №5 «Евро€»' },
  { what: 'Cyrillic description with ; and "', description: 'Оплата заказа №42; «срочно», "VIP" € 10' },
  { what: 'refund (negative amount)', type: 'REFUND', negative: true },
  { what: 'chargeback (negative amount)', type: 'CHARGEBACK', negative: true },
  { what: 'id above 2^53', id: (s) => 2n ** 53n + 2n * s + 1n },
  { what: 'id above 2^62', id: (s) => 2n ** 62n + s },
];

export const HARD_CASE_COUNT = HARD_CASES.length;

const DESCRIPTIONS = [
  (n: number) => `Order #${n}`,
  (n: number) => `Subscription, month ${(n % 12) + 1}`,
  (n: number) => `Оплата заказа №${n}`,
  (n: number) => `Tickets x${(n % 4) + 1}`,
  () => '',
] as const;

/** sfc32: a small, fast, well-distributed 32-bit PRNG; plenty for test data and trivially seedable. */
export function sfc32(seed: Buffer): () => number {
  let a = seed.readUInt32LE(0);
  let b = seed.readUInt32LE(4);
  let c = seed.readUInt32LE(8);
  let d = seed.readUInt32LE(12);
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // mix the seed in before the first draw
  return next;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const epochSeconds = (t: LocalDateTime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second) / 1000;

/** "YYYY-MM-DD HH:MM:SS" of a wall-clock time held as Unix seconds (UTC arithmetic: no zone involved). */
function formatCreated(seconds: number): string {
  const d = new Date(seconds * 1000);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** Thousandths as a decimal with exactly 3 fractional digits, never through a float. */
function formatAmount(thousandths: number): string {
  const sign = thousandths < 0 ? '-' : '';
  const abs = Math.abs(thousandths);
  return `${sign}${Math.floor(abs / 1000)}.${pad(abs % 1000, 3)}`;
}

const windowKey = (w: ReportWindow) => `${formatCreated(epochSeconds(w.start))}|${formatCreated(epochSeconds(w.end))}`;

/** How many rows a window gets: proportional to its length. */
export function rowCount(window: ReportWindow, rowsPerDay: number): number {
  const span = epochSeconds(window.end) - epochSeconds(window.start);
  return span <= 0 ? 0 : Math.round((rowsPerDay * span) / 86_400);
}

/** Which hard case (if any) row i of n carries. */
function hardCaseIndexes(n: number): Map<number, number> {
  const at = new Map<number, number>();
  for (let k = 0; k < HARD_CASE_COUNT && k < n; k++) {
    at.set(n >= HARD_CASE_COUNT ? Math.floor((k * n) / HARD_CASE_COUNT) : k, k);
  }
  return at;
}

/** The rows, one at a time, in Created_date order. */
export function* transactionRows(login: string, window: ReportWindow, rowsPerDay: number): Generator<string[]> {
  const seed = createHash('sha256').update(`${login}\n${windowKey(window)}`).digest();
  const rand = sfc32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

  const start = epochSeconds(window.start);
  const span = epochSeconds(window.end) - start;
  const n = rowCount(window, rowsPerDay);
  const hard = hardCaseIndexes(n);
  const reportDate = `${pad(window.start.day)}.${pad(window.start.month)}.${pad(window.start.year, 4)}`;

  for (let i = 0; i < n; i++) {
    // Row i lies in [i·span/n, (i+1)·span/n): ascending and inside the half-open window.
    const lo = Math.floor((i * span) / n);
    const hi = Math.floor(((i + 1) * span) / n);
    const created = start + lo + Math.floor(rand() * Math.max(1, hi - lo));
    const serial = BigInt(created) * 1000n + BigInt(i % 1000);

    const h = hard.has(i) ? HARD_CASES[hard.get(i)!]! : undefined;
    const negative = h?.negative ?? rand() < 0.12;
    const type = h?.type ?? (negative ? pick(NEGATIVE_TYPES) : pick(POSITIVE_TYPES));
    // Mostly everyday sums, now and then a large one; whole thousandths.
    const magnitude = rand() < 0.05 ? 1 + Math.floor(rand() * 2_000_000_000) : 1 + Math.floor(rand() * 5_000_000);
    const merchant = h?.merchant ?? pick(MERCHANTS);
    const oid = `ORD${Math.floor(rand() * 2 ** 32).toString(36).toUpperCase().padStart(7, '0')}${pad(i % 100)}`;
    const currency = pick(CURRENCIES);
    const description = h?.description ?? pick(DESCRIPTIONS)(10_000 + Math.floor(rand() * 90_000));
    const id = h?.id ? h.id(serial) : 2n ** 32n + serial;

    yield [
      merchant,
      id.toString(),
      oid,
      formatCreated(created),
      formatAmount(negative ? -magnitude : magnitude),
      currency,
      type,
      description,
      reportDate,
    ];
  }
}

/** All rows of a window at once: for tests and property tests. */
export function generateTransactions(login: string, window: ReportWindow, rowsPerDay: number): string[][] {
  return [...transactionRows(login, window, rowsPerDay)];
}

/**
 * The `schemaDrift` fault's version of the report: Merchant_OID renamed to Merchant_Order_ID and a
 * Transaction_status column added after Transaction_type, with rows to match.
 */
export const DRIFTED_HEADER = [
  'Merchant_Name',
  'Transaction_id',
  'Merchant_Order_ID',
  'Created_date',
  'Amount',
  'Currency',
  'Transaction_type',
  'Transaction_status',
  'Order_description',
  'Date_of_report',
] as const;

export const STATUSES = ['APPROVED', 'APPROVED', 'APPROVED', 'APPROVED', 'DECLINED', 'FILTERED', 'ERROR'] as const;

export function driftRow(row: string[]): string[] {
  const status = STATUSES[Number(BigInt(row[COL.Transaction_id]!) % BigInt(STATUSES.length))]!;
  const out = [...row];
  out.splice(COL.Transaction_type + 1, 0, status);
  return out;
}
