import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { build } from 'esbuild';
import type * as CatalogFiles from '../../functions/core/definitions/catalog-files.js';
import { esbuildOptions } from '../../lib/bundling/bundling.js';

/**
 * The catalog in a Lambda bundle (functions/core/definitions/catalog-files.ts): the module is bundled with the
 * deploy's own esbuild settings (lib/bundling/bundling.ts), and the bundle reads the sources from the file beside
 * it, not from any folder. test/infra/bundles.test.ts checks the same for the handlers' whole bundles at synth.
 */

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Runs `read` with PAYNET_REPORTS_DIR set to `dir`, then puts back what was there. */
function withReportsDir<T>(dir: string, read: () => T): T {
  const saved = process.env.PAYNET_REPORTS_DIR;
  process.env.PAYNET_REPORTS_DIR = dir;
  try {
    return read();
  } finally {
    if (saved === undefined) delete process.env.PAYNET_REPORTS_DIR;
    else process.env.PAYNET_REPORTS_DIR = saved;
  }
}

const MODULE = fileURLToPath(new URL('../../functions/core/definitions/catalog-files.ts', import.meta.url));

/** catalog-files.ts built as the deploy builds a handler entry, into a folder of its own. */
async function bundled(withCatalog: boolean): Promise<{ dir: string; module: typeof CatalogFiles }> {
  const dir = mkdtempSync(join(tmpdir(), 'paynet-bundle-'));
  dirs.push(dir);
  const outfile = join(dir, 'index.mjs');
  await build({ ...esbuildOptions(MODULE, outfile, withCatalog), logLevel: 'silent' });
  return { dir, module: await import(`${pathToFileURL(outfile).href}?${dirs.length}`) };
}

describe('the catalog in a bundle', () => {
  it('reads report-catalog.json beside index.mjs, not the reports folder', async () => {
    const sources = [{ file: 'config/reports/payouts.json', raw: { id: 'payouts' } }, { file: 'config/reports/x.json', problem: 'not JSON' }];
    const { dir, module } = await bundled(true);
    writeFileSync(join(dir, 'report-catalog.json'), JSON.stringify(sources));
    assert.deepEqual(withReportsDir(join(dir, 'no such folder'), () => module.reportSources()), sources);
  });

  it('an entry built without the flag reads the folder, as an extra entry of a bundle would', async () => {
    const { dir, module } = await bundled(false);
    writeFileSync(join(dir, 'report-catalog.json'), '[]');
    writeFileSync(join(dir, 'payouts.json'), JSON.stringify({ id: 'payouts' }));
    const files = withReportsDir(dir, () => module.reportSources().map((source: { file: string }) => source.file.split('/').pop()));
    assert.deepEqual(files, ['payouts.json', 'report-catalog.json']);
  });
});
