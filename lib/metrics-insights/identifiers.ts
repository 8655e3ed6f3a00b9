import { RESERVED_KEYWORDS } from './reserved-keywords.js';

/**
 * How a Metrics Insights query names things, as AWS's page "Metrics Insights query components and syntax" ("What needs
 * quotation marks or escape characters?") rules: a namespace, metric name or label key that is a reserved keyword
 * (./reserved-keywords.ts, any case) or holds anything but letters, digits and underscores goes in double quotes, a
 * quote inside it escaped with a backslash; a label value always goes in single quotes. Every query and drop-down
 * entry the stack writes (lib/metrics.ts, lib/constructs/dashboard/) names its identifiers through here.
 *
 * Only what needs quotes gets them, so the queries read as AWS's examples do; the page allows quoting any identifier,
 * so a word AWS adds to the list later only needs the list updated, and the grammar test refuses the old form.
 */

const RESERVED = new Set(RESERVED_KEYWORDS.map((w) => w.toUpperCase()));

/** A word Metrics Insights reserves, in any case. */
export const isReserved = (word: string): boolean => RESERVED.has(word.toUpperCase());

/** Letters, digits and underscores, not starting with a digit: the only names that may go unquoted. */
const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Either quote and backslashes escaped with a backslash, as the page shows for `Bytes"Input"`. */
const escapedName = (text: string): string => text.replace(/["'\\]/g, (c) => `\\${c}`);

/** A namespace, metric name or label key as a query names it: `"connection"`, `"AWS/EC2"`, `report`. */
export function identifier(name: string): string {
  if (name.length === 0) throw new Error('A Metrics Insights identifier cannot be empty.');
  return PLAIN.test(name) && !isReserved(name) ? name : `"${escapedName(name)}"`;
}

/** What goes between a label value's single quotes: its single quotes and backslashes escaped with a backslash. */
export const labelValueText = (value: string): string => value.replace(/['\\]/g, (c) => `\\${c}`);

/** A label value as a query compares it: `'acme'`. */
export const labelValue = (value: string): string => `'${labelValueText(value)}'`;

/** `key = 'value'` (or `!=`), the key quoted when it must be. */
export const condition = (key: string, operator: '=' | '!=', value: string): string => `${identifier(key)} ${operator} ${labelValue(value)}`;
