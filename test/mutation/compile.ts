import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Stryker's build step, run inside its sandbox after it has written the instrumented sources: every TypeScript
 * file becomes a JavaScript file beside it, so each test process runs on plain Node. Under tsx every process
 * paid about 0.1 s of CPU to start the loader and more to look up each import's transform: half the CPU of a
 * typical unit test file, and mutation testing starts one such process per mutant and test file. Each file is
 * transformed alone (no bundling), so the `.js` specifiers the sources already write resolve to the new files
 * and `import.meta.url` keeps pointing where it did.
 */
const FOLDERS = ['bin', 'config', 'functions', 'lib', 'local', 'test'];

function typescriptFiles(folder: string): string[] {
  const names = readdirSync(folder, { recursive: true, encoding: 'utf8' });
  return names.filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts')).map((name) => join(folder, name));
}

await build({
  entryPoints: FOLDERS.flatMap(typescriptFiles),
  outdir: '.',
  outbase: '.',
  format: 'esm',
  platform: 'node',
  // node20.10 keeps `with { type: 'json' }`: an older target drops the attribute and Node refuses the import.
  target: 'node20.10',
  sourcemap: false,
  logLevel: 'warning',
});
