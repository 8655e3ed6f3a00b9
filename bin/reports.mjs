#!/usr/bin/env node
// @ts-check
/**
 * `npm start` and the other `reports` scripts: bin/reports.ts, compiled once to JavaScript with esbuild (the
 * compiler tsx runs) and then run by plain node. Under tsx every run pays for its loader: on Node 20 a hooks
 * thread with its own V8 isolate (~35 MB resident for the whole run) through which every import of the
 * command (the AWS SDK alone is hundreds of modules) is resolved, one message round trip each.
 *
 * The compiled modules live in node_modules/.cache/paynet-reports-pipeline/cli/<checkout>/ (bin/cli-cache.mjs: one
 * directory per checkout, as checkouts may share node_modules): the project's own code
 * bundled (lazy imports kept as chunks), packages left as imports (but dt-sql-parser, which plain node
 * cannot load: see `bundleUnloadable`). They are rebuilt when any source they were built from (or
 * package.json, tsconfig.json, this file) is newer than the build, so an edit is picked up by the next run. Each source file keeps its own `import.meta.url`, so paths it derives from
 * it (config/reports/, queries/, worker scripts) are the same as under tsx.
 *
 * `node --import tsx bin/reports.ts` runs the same command without this step (the tests do).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliCacheDir } from './cli-cache.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = cliCacheDir(root);
const currentFile = join(cacheDir, 'current.json');
/** Inputs of every build beside those esbuild reports: they change how the sources compile. */
const alwaysChecked = [fileURLToPath(import.meta.url), join(root, 'bin', 'cli-cache.mjs'), join(root, 'package.json'), join(root, 'tsconfig.json')];

/** @typedef {{ dir: string, builtAt: number, inputs: string[] }} Current */

/** Packages bundled into the command (see `bundleUnloadable`): what every run loads before its first request. */
const startupPackages = /^(@aws-sdk|@smithy|@aws-crypto|@aws-lambda-powertools)\/|^(zod|commander)(\/|$)/;

/** The build in use, if every file it came from is older than it. @returns {Current | undefined} */
function freshBuild() {
  /** @type {Current} */
  let current;
  try {
    current = JSON.parse(readFileSync(currentFile, 'utf8'));
  } catch {
    return undefined;
  }
  if (!existsSync(join(cacheDir, current.dir, 'reports.mjs'))) return undefined;
  for (const file of [...alwaysChecked, ...current.inputs]) {
    try {
      if (statSync(file).mtimeMs > current.builtAt) return undefined;
    } catch {
      return undefined; // a source was removed or renamed
    }
  }
  return current;
}

/** Compiles bin/reports.ts into a new directory and makes it the current build. @returns {Promise<Current>} */
async function rebuild() {
  const { build, transform } = await import('esbuild');
  const builtAt = Date.now();
  const dir = `build-${builtAt}-${process.pid}`;
  const tsconfigRaw = readFileSync(join(root, 'tsconfig.json'), 'utf8');
  /** @type {import('esbuild').Plugin} */
  const ownImportMetaUrl = {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        // As an expression only (define), never inside a string; the inline map chains to the bundle's.
        const out = await transform(await readFile(args.path, 'utf8'), {
          loader: 'ts',
          format: 'esm',
          target: 'node20',
          sourcefile: args.path,
          sourcemap: 'inline',
          tsconfigRaw,
          define: { 'import.meta.url': JSON.stringify(pathToFileURL(args.path).href) },
        });
        return { contents: out.code, loader: 'js' };
      });
    },
  };
  /**
   * Packages stay imports, except two kinds, which are bundled into the chunks that use them:
   * - those plain node cannot load: dt-sql-parser's build (the saved-query check, lib/saved-queries/saved-query-grammar.ts)
   *   is ES modules with extensionless and directory imports, so it is bundled into that module's lazy chunk. Its own
   *   dependencies (antlr4ng, antlr4-c3) load as they are.
   * - the AWS SDK (and Powertools, zod, commander) with everything they import: every `npm start` loads them
   *   before its first request, and from node_modules that is ~300 files to find, read and (CommonJS) scan for
   *   their exports, ~0.1 s of the start-up's wall time. Bundled, as the Lambda functions have them, they are a
   *   few chunks read once. Their `require` of node's modules goes through the banner's createRequire.
   * @type {import('esbuild').Plugin}
   */
  const bundleUnloadable = {
    name: 'bundle-unloadable-packages',
    setup(b) {
      b.onResolve({ filter: /^dt-sql-parser(\/|$)/ }, (args) => ({ path: createRequire(args.importer).resolve(args.path) }));
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:') || builtinModules.includes(args.path.split('/')[0])) return { external: true };
        const fromBundled = /[\\/]node_modules[\\/]/.test(args.importer) && !/[\\/]node_modules[\\/]dt-sql-parser[\\/]/.test(args.importer);
        // Undefined: esbuild resolves it and bundles it.
        return fromBundled || startupPackages.test(args.path) ? undefined : { external: true };
      });
    },
  };
  const result = await build({
    absWorkingDir: root,
    entryPoints: { reports: join(root, 'bin', 'reports.ts') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    // Stack traces need the mappings, not the sources (they are on disk): node reads every loaded chunk's map.
    sourcesContent: false,
    outdir: join(cacheDir, dir),
    // .mjs: under node_modules, no package.json says "type": "module".
    outExtension: { '.js': '.mjs' },
    // For the bundled packages' require() of node's own modules (esbuild's shim calls the `require` in scope).
    banner: { js: "import { createRequire as __reportsCreateRequire } from 'node:module'; const require = __reportsCreateRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'error',
    plugins: [ownImportMetaUrl, bundleUnloadable],
  });
  const inputs = Object.keys(result.metafile.inputs).map((f) => resolve(root, f));
  /** @type {Current} */
  const current = { dir, builtAt, inputs };
  // Written aside and renamed: a run starting meanwhile reads the old build or the new one, never half of one.
  const partial = `${currentFile}.${process.pid}`;
  writeFileSync(partial, JSON.stringify(current));
  renameSync(partial, currentFile);
  // Earlier builds, once a day old: a command started from one (a simulator left running) may still load a
  // lazy chunk from it.
  for (const old of readdirSync(cacheDir)) {
    if (!old.startsWith('build-') || old === dir) continue;
    const at = Number(old.split('-')[1]);
    if (at < builtAt - 86_400_000) rmSync(join(cacheDir, old), { recursive: true, force: true });
  }
  return current;
}

mkdirSync(cacheDir, { recursive: true });
const current = freshBuild() ?? (await rebuild());
// Stack traces point into the TypeScript sources.
process.setSourceMapsEnabled(true);
await import(pathToFileURL(join(cacheDir, current.dir, 'reports.mjs')).href);
