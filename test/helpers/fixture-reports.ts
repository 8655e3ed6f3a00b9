import { fileURLToPath } from 'node:url';
import { REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';

/**
 * Tests that need a particular report use the definitions of test/fixtures/reports/, never the shipped
 * config/reports/ and queries/: importing this module points the catalog (the commands, the handlers, the synth and the
 * bundles built by it) at the fixtures, so adding or removing a shipped definition cannot break such a test.
 * Import it before anything that loads the catalog; each test file runs in its own process.
 */
export const FIXTURE_REPORTS_DIR = fileURLToPath(new URL('../fixtures/reports/', import.meta.url));

/** Their saved queries: test/fixtures/queries/<report>/*.sql (lib/constructs/catalog.ts reads PAYNET_QUERIES_DIR). */
export const FIXTURE_QUERIES_DIR = fileURLToPath(new URL('../fixtures/queries/', import.meta.url));

process.env[REPORTS_DIR_VARIABLE] = FIXTURE_REPORTS_DIR;
process.env.PAYNET_QUERIES_DIR = FIXTURE_QUERIES_DIR;
