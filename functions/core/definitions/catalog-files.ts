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
 * Lambda bundles have no folder: lib/bundling/bundling.ts reads it at synth and hands the sources to esbuild as the
 * constant below (`define`), so a bundle holds the definitions as object literals, as a JSON import would,
 * and its cold start does no file I/O for them. A definition change changes the bundle, hence a deploy.
 */
declare const __PAYNET_REPORT_SOURCES__: ReportSource[];
/**
 * A literal `true` in the bundles: esbuild folds the test below and drops the folder reader (and the JSON
 * error locator) from them. The sources themselves cannot serve as the test: esbuild hoists a large
 * define into a variable, which it does not fold.
 */
declare const __PAYNET_CATALOG_BUNDLED__: true | undefined;

/** The names esbuild replaces in the bundles (lib/bundling/bundling.ts). */
export const BUNDLED_SOURCES_CONSTANT = '__PAYNET_REPORT_SOURCES__';
export const BUNDLED_FLAG_CONSTANT = '__PAYNET_CATALOG_BUNDLED__';

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
  return typeof __PAYNET_CATALOG_BUNDLED__ === 'undefined' ? readReportSources() : __PAYNET_REPORT_SOURCES__;
}

export const loadCatalog = (): ReportCatalog => ReportCatalog.fromSources(reportSources());
