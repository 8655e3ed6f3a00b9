import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDefinitionText } from './definition-json.js';
import { ConfigurationError } from '../errors.js';
import { ReportCatalog, type ReportSource } from './catalog.js';

/**
 * Where the report catalog comes from: every *.json of config/reports/ is a report; no code lists them. The
 * loader lives with the code and config/ holds only data, so the handlers read the catalog through this module
 * and never import config/ (eslint.config.js holds them to it).
 *
 * On a laptop, in the tests and in `cdk synth` the folder is read when the catalog is first asked for. The
 * Lambda bundles have no folder: lib/bundling/bundling.ts reads it at synth and writes the sources as JSON beside
 * each bundle's index.mjs (BUNDLED_CATALOG_FILE), which the handler reads once at cold start. A file, not a
 * constant compiled in: esbuild's command line carried such a constant, and Linux caps one argument at 128 KiB
 * (~55 reports). A definition change changes the bundle's files, hence its asset hash and a deploy.
 */
/**
 * A literal `true` in the bundles (esbuild's `define`, a few bytes whatever the catalog's size): esbuild folds
 * the test below and drops the folder reader (and the JSON error locator) from them.
 */
declare const __PAYNET_CATALOG_BUNDLED__: true | undefined;

/** The name esbuild replaces in the bundles (lib/bundling/bundling.ts). */
export const BUNDLED_FLAG_CONSTANT = '__PAYNET_CATALOG_BUNDLED__';

/** The file beside a bundle's index.mjs holding the catalog's sources, as readReportSources returns them. */
export const BUNDLED_CATALOG_FILE = 'report-catalog.json';

/** config/reports/, where the shipped definitions live (a path from this file, not an import). */
export const REPORTS_DIR = fileURLToPath(new URL('../../../config/reports/', import.meta.url));

/**
 * Another folder of definitions instead of config/reports/, for every command, the synth and the bundles built by
 * it. The test suite points it at test/fixtures/reports/ (test/helpers/fixture-reports.ts), so the tests do
 * not depend on which reports a deployment ships.
 */
export const REPORTS_DIR_VARIABLE = 'PAYNET_REPORTS_DIR';

/** The folder the catalog is read from: PAYNET_REPORTS_DIR when set, else config/reports/. */
export const reportsDir = (): string => process.env[REPORTS_DIR_VARIABLE] || REPORTS_DIR;

/**
 * Every *.json of `dir`, in file-name order, parsed; a file that is not JSON carries its problem (line and
 * column) to the catalog, which reports it with the others. Files are named as the user knows them:
 * config/reports/<name>.json.
 */
export function readReportSources(dir: string = reportsDir()): ReportSource[] {
  const label = resolve(dir) === resolve(REPORTS_DIR) ? 'config/reports' : relative(process.cwd(), dir) || '.';
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f): ReportSource => {
      const file = `${label}/${f}`;
      try {
        return { file, raw: parseDefinitionText(readFileSync(join(dir, f), 'utf8'), file) };
      } catch (e) {
        if (e instanceof ConfigurationError) return { file, problem: e.message };
        throw e;
      }
    });
}

/** The sources a bundle was built with, else the folder's. */
export function reportSources(): ReportSource[] {
  return typeof __PAYNET_CATALOG_BUNDLED__ === 'undefined' ? readReportSources() : readBundledSources();
}

/** In a bundle, import.meta.url is index.mjs's: the catalog file sits beside it. Validated at synth as a whole. */
function readBundledSources(): ReportSource[] {
  return JSON.parse(readFileSync(new URL(`./${BUNDLED_CATALOG_FILE}`, import.meta.url), 'utf8')) as ReportSource[];
}

export const loadCatalog = (): ReportCatalog => ReportCatalog.fromSources(reportSources());
