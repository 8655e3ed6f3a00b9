import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread from its script. A built script (.js/.mjs, the Lambda bundles) starts as is. A
 * TypeScript source (`npm start`, tests, under tsx) is first compiled to one JavaScript module with esbuild
 * (the compiler tsx itself runs), its packages left as imports, into node_modules/.cache: the worker then
 * runs plain JavaScript. Runtime support rather than pipeline logic, and it drives build tooling: so not in the
 * pure core (functions/core/), which starts its encoder through it (encoder-thread.ts), as the local lake does.
 * Compiled scripts are recorded by their source's absolute path, so checkouts sharing node_modules keep apart.
 *
 * Why not register tsx in the worker, as before: on Node 20 each registration of loader hooks starts a
 * hooks thread of its own, with its own V8 isolate, and every import of the worker (hyparquet-writer,
 * s3rver and their dependencies) is resolved through it. Measured per worker: ~21 MB more resident, and
 * the CPU of loading tsx and resolving through it, for a thread that runs one small module graph.
 */

/** Compiled scripts of this process, by source URL: a worker started per report compiles once. */
const compiled = new Map<string, URL>();

export function startWorkerScript(url: URL, options: WorkerOptions): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  const script = compiledScript(url);
  // Stack traces from the worker point into the TypeScript sources (the script carries its source map).
  const bootstrap = `process.setSourceMapsEnabled(true); import(${JSON.stringify(script.href)});`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * The worker script `name`.{js,mjs,ts} beside the module at `base` (its import.meta.url), preferring a built
 * one; undefined when there is none, or no file URL to look beside (a CommonJS bundle).
 */
export function scriptBeside(name: string, base: string | undefined): URL | undefined {
  for (const ext of ['js', 'mjs', 'ts']) {
    try {
      const url = new URL(`./${name}.${ext}`, base);
      if (url.protocol === 'file:' && existsSync(fileURLToPath(url))) return url;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** What a compiled script was built from: reused while no input is newer than the build. */
interface BuildRecord {
  file: string;
  builtAt: number;
  inputs: string[];
}

function compiledScript(url: URL): URL {
  const known = compiled.get(url.href);
  if (known) return known;
  const source = fileURLToPath(url);
  const require = createRequire(import.meta.url);
  // A computed name: bundlers must not pull esbuild into a Lambda bundle (which never compiles anything).
  const esbuildName = 'esbuild';
  // Beside the project's packages, so the script's imports of them resolve as the project's sources' do.
  const modules = dirname(dirname(require.resolve(`${esbuildName}/package.json`)));
  const dir = join(modules, '.cache', 'paynet-reports-pipeline', 'workers');
  const recordFile = join(dir, `${basename(source, '.ts')}-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.json`);
  // Every process start would otherwise run esbuild (~90 ms for the lake's worker) just to find the cached file.
  const script = pathToFileURL(freshBuild(recordFile)?.file ?? build(source, dir, recordFile, require(esbuildName) as typeof import('esbuild')));
  compiled.set(url.href, script);
  return script;
}

function freshBuild(recordFile: string): BuildRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(recordFile, 'utf8')) as BuildRecord;
    if (!existsSync(record.file)) return undefined;
    return record.inputs.every((input) => statSync(input).mtimeMs <= record.builtAt) ? record : undefined;
  } catch {
    return undefined; // no record, or an input was removed or renamed
  }
}

function build(source: string, dir: string, recordFile: string, esbuild: typeof import('esbuild')): string {
  const builtAt = Date.now();
  const out = esbuild.buildSync({
    entryPoints: [source],
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = out.outputFiles[0]!.contents;
  const file = join(dir, `${basename(source, '.ts')}-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  mkdirSync(dir, { recursive: true });
  // Written aside and renamed: another process starting the same worker never reads a half-written file.
  const writeAtomically = (path: string, content: string | Uint8Array) => {
    const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, content);
    renameSync(partial, path);
  };
  if (!existsSync(file)) writeAtomically(file, code);
  const inputs = Object.keys(out.metafile!.inputs).map((input) => resolve(input));
  writeAtomically(recordFile, JSON.stringify({ file, builtAt, inputs } satisfies BuildRecord));
  return file;
}
