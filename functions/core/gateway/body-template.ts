import { ConfigurationError } from '../errors.js';
import { addSeconds, formatWithPattern, type ReportWindow } from '../time/window.js';

/**
 * Report body templates are the JSON the provider's support hands over, with placeholders in string values:
 *   {{window.start:PATTERN}}  the window's first instant, e.g. {{window.start:yyyy-MM-dd HH:mm:ss}}
 *   {{window.end:PATTERN}}    the window's end (exclusive), same patterns
 *   {{window.last:PATTERN}}   the window's last second (end minus one second), for inclusive "to" inputs
 * PATTERN tokens: yyyy MM dd HH mm ss; other characters are copied.
 */
const PLACEHOLDER = /\{\{\s*window\.(start|end|last)\s*:\s*([^}]*?)\s*\}\}/g;

const lastSecond = (w: ReportWindow) => addSeconds(w.end, -1);

function renderString(s: string, w: ReportWindow): string {
  return s.replace(PLACEHOLDER, (_m, which: string, pattern: string) => {
    const t = which === 'start' ? w.start : which === 'end' ? w.end : lastSecond(w);
    return formatWithPattern(t, pattern);
  });
}

function renderValue(v: unknown, w: ReportWindow): unknown {
  if (typeof v === 'string') return renderString(v, w);
  if (Array.isArray(v)) return v.map((x) => renderValue(x, w));
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, renderValue(x, w)]));
  }
  return v;
}

/** Renders the template for one window; the result is what the client sends as compact JSON. */
export function renderBody(template: unknown, window: ReportWindow): unknown {
  return renderValue(template, window);
}

/** A bad placeholder and where it sits in the template, e.g. ['inputReportParameters', 0, 'value']. */
export interface BadPlaceholder {
  path: Array<string | number>;
  placeholder: string;
}

/** A pattern without any token renders the same text for every window: always a typo, never intended. */
const PATTERN_TOKEN = /yyyy|MM|dd|HH|mm|ss/;

function isGoodPlaceholder(text: string): boolean {
  const m = new RegExp(`^${PLACEHOLDER.source}$`).exec(text);
  // The pattern's group always takes part in a match, if only as "".
  return m !== null && PATTERN_TOKEN.test(m[2]!);
}

/**
 * Placeholders that do not match the documented form, found at load time instead of at the gateway,
 * with their path so the configuration error can point at the field.
 */
export function findBadPlaceholderPaths(template: unknown): BadPlaceholder[] {
  const bad: BadPlaceholder[] = [];
  const visit = (v: unknown, path: Array<string | number>) => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(/\{\{[^}]*\}\}/g)) {
        if (!isGoodPlaceholder(m[0])) bad.push({ path, placeholder: m[0] });
      }
      // An unclosed "{{window.start:yyyy}" would otherwise reach the gateway as literal text.
      const rest = v.replace(/\{\{[^}]*\}\}/g, '');
      const open = rest.indexOf('{{');
      if (open >= 0) bad.push({ path, placeholder: rest.slice(open, open + 40) });
    } else if (Array.isArray(v)) v.forEach((x, i) => visit(x, [...path, i]));
    else if (
      v &&
      // Stryker disable next-line ConditionalExpression: a number or true has no entries, so visiting it finds nothing either way
      typeof v === 'object'
    ) {
      Object.entries(v).forEach(([k, x]) => visit(x, [...path, k]));
    }
  };
  visit(template, []);
  return bad;
}

/** Placeholders that do not match the documented form. */
export function findBadPlaceholders(template: unknown): string[] {
  return findBadPlaceholderPaths(template).map((b) => b.placeholder);
}

/** The advice every bad-placeholder message ends with. */
export const PLACEHOLDER_HELP =
  'use {{window.start:PATTERN}}, {{window.end:PATTERN}} or {{window.last:PATTERN}} with tokens yyyy MM dd HH mm ss';

export function assertTemplate(template: unknown, where: string): void {
  const bad = findBadPlaceholders(template);
  if (bad.length) {
    throw new ConfigurationError(
      `${where}: unknown placeholder(s) ${bad.join(', ')}; ${PLACEHOLDER_HELP}.`,
    );
  }
}
