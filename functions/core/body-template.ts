import { ConfigurationError } from './errors.js';
import { formatWithPattern, type ReportWindow } from './window.js';

/**
 * Report body templates are the JSON the provider's support hands over, with placeholders in string values:
 *   {{window.start:PATTERN}}  the window's first instant, e.g. {{window.start:yyyy-MM-dd HH:mm:ss}}
 *   {{window.end:PATTERN}}    the window's end (exclusive), same patterns
 *   {{window.last:PATTERN}}   the window's last second (end minus one second), for inclusive "to" inputs
 * PATTERN tokens: yyyy MM dd HH mm ss; other characters are copied.
 */
const PLACEHOLDER = /\{\{\s*window\.(start|end|last)\s*:\s*([^}]*?)\s*\}\}/g;

function lastSecond(w: ReportWindow) {
  const ms = Date.UTC(w.end.year, w.end.month - 1, w.end.day, w.end.hour, w.end.minute, w.end.second) - 1000;
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

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

/** Placeholders that do not match the documented form, found at load time instead of at the gateway. */
export function findBadPlaceholders(template: unknown): string[] {
  const bad: string[] = [];
  const visit = (v: unknown) => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(/\{\{[^}]*\}\}/g)) {
        if (!new RegExp(PLACEHOLDER.source).test(m[0])) bad.push(m[0]);
      }
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(template);
  return bad;
}

export function assertTemplate(template: unknown, where: string): void {
  const bad = findBadPlaceholders(template);
  if (bad.length) {
    throw new ConfigurationError(
      `${where}: unknown placeholder(s) ${bad.join(', ')}; use {{window.start:PATTERN}}, {{window.end:PATTERN}} or {{window.last:PATTERN}} with tokens yyyy MM dd HH mm ss.`,
    );
  }
}
