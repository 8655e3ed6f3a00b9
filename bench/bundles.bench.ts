import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Metafile } from 'esbuild';
import { buildLambdaBundle, esbuildOptions, LAMBDA_BUNDLES, LAMBDA_NODE_OPTIONS, type BuiltBundle, type BundleName } from '../lib/bundling/bundling.js';
import { PROJECT_ROOT } from '../lib/bundling/project.js';

/**
 * The Lambda bundles (issue 5): each bundle's size and its handler module's load time in a cold node
 * process. The bundles are built exactly as the stack builds them (lib/bundling/bundling.ts, the settings
 * NodejsFunction gets; test/infra/bundles.test.ts proves the bytes are the same), into a temporary
 * directory outside the repository.
 *
 * Load time: `await import('./index.mjs')` timed inside a fresh `node` whose working directory is the
 * bundle, with the functions' NODE_OPTIONS (--enable-source-maps, which reads the source map at load);
 * the median of BENCH_LOAD_RUNS (default 7) after one unmeasured run, bundles interleaved. The same
 * measurement of an empty module is the floor (Node's own start of the module loader). It is this
 * machine's CPU, not Lambda's: the init phase in Lambda runs on Graviton at the function's CPU share.
 */

const KiB = 1024;
const TARGETS: Record<BundleName, { sizeKiB: number }> = { fetch: { sizeKiB: 500 }, parse: { sizeKiB: 1024 }, freshness: { sizeKiB: 500 } };
const LOAD_TARGET_MS = 150;

const pad = (s: string, n: number) => s.padEnd(n);
const kib = (bytes: number) => `${Math.round(bytes / KiB).toLocaleString('en')} KiB`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Milliseconds to import `module` (relative to `cwd`) in a new node process, measured inside it. */
function loadTime(cwd: string, module: string): Promise<number> {
  const script = `const t = performance.now(); await import(${JSON.stringify(module)}); console.log(performance.now() - t);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_OPTIONS: LAMBDA_NODE_OPTIONS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(out.trim().split('\n').at(-1));
      if (code !== 0 || !Number.isFinite(ms)) reject(new Error(`loading ${module} in ${cwd} failed (exit ${code}):\n${err.slice(-2000)}`));
      else resolve(ms);
    });
  });
}

/** Milliseconds to require() the AWS SDK clients the functions use, as CommonJS from node_modules (the form the Lambda runtime ships). */
function runtimeSdkLoadTime(): Promise<number> {
  const script = "const t = performance.now(); require('@aws-sdk/client-s3'); require('@aws-sdk/client-secrets-manager'); console.log(performance.now() - t);";
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(Number(out.trim())));
  });
}

const dirBytes = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((sum, e) => sum + (e.isDirectory() ? dirBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size), 0);

/** The packages (or project folders) contributing most to one output, in bytes of minified output. */
function largestContributors(metafile: Metafile, top: number): string {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint);
  const byPackage = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const path = relative(PROJECT_ROOT, join(process.cwd(), input));
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path.slice(path.lastIndexOf('node_modules/')));
    const key = m ? m[1]! : path.split('/').slice(0, 2).join('/');
    byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
  }
  return [...byPackage]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${k} ${kib(v)}`)
    .join(', ');
}

/** Size of the handler module with the AWS SDK left to the runtime: a reference for the choice to bundle it. */
async function sizeWithRuntimeSdk(entry: string): Promise<number> {
  const { build } = await import('esbuild');
  const options = esbuildOptions(entry, 'index.mjs');
  const result = await build({ ...options, external: [...(options.external ?? []), '@aws-sdk/*', '@smithy/*'], write: false, metafile: true });
  return result.outputFiles.filter((f) => f.path.endsWith('.mjs')).reduce((sum, f) => sum + f.contents.byteLength, 0);
}

export async function runBundlesBench(options: { loadRuns?: number } = {}): Promise<boolean> {
  const runs = options.loadRuns ?? 7;
  const root = mkdtempSync(join(tmpdir(), 'paynet-bundles-bench-'));
  try {
    const names = Object.keys(LAMBDA_BUNDLES) as BundleName[];
    const built = {} as Record<BundleName, BuiltBundle>;
    for (const name of names) built[name] = await buildLambdaBundle(LAMBDA_BUNDLES[name], join(root, name));
    writeFileSync(join(root, 'empty.mjs'), 'export const handler = async () => {};\n');

    const samples: Record<string, number[]> = { empty: [] };
    for (const name of names) samples[name] = [];
    for (let i = 0; i <= runs; i++) {
      // Run 0 warms the file cache and is not kept; then the bundles take turns, so drift hits all alike.
      const empty = await loadTime(root, './empty.mjs');
      if (i > 0) samples.empty!.push(empty);
      for (const name of names) {
        const ms = await loadTime(built[name].dir, './index.mjs');
        if (i > 0) samples[name]!.push(ms);
      }
    }
    const sdk: number[] = [];
    for (let i = 0; i < runs; i++) sdk.push(await runtimeSdkLoadTime());

    console.log(`\nLambda bundles (lib/bundling/bundling.ts settings; load: median of ${runs} cold node processes, NODE_OPTIONS=${LAMBDA_NODE_OPTIONS})\n`);
    console.log(`${pad('bundle', 8)}${pad('index.mjs', 12)}${pad('size target', 20)}${pad('load ms', 10)}${pad('load target', 20)}beside index.mjs (not loaded at start)`);
    let allPass = true;
    for (const name of names) {
      const b = built[name];
      const size = b.outputs['index.mjs']!.bytes;
      const load = median(samples[name]!);
      const sizeOk = size <= TARGETS[name].sizeKiB * KiB;
      const loadOk = load <= LOAD_TARGET_MS;
      allPass &&= sizeOk && loadOk;
      const extras = Object.entries(b.outputs)
        .filter(([f]) => f !== 'index.mjs')
        .map(([f, o]) => `${f} ${kib(o.bytes)}`);
      const beside = [...extras, `tables/ ${kib(dirBytes(join(b.dir, 'tables')))}`, `source maps ${kib(readdirSync(b.dir).filter((f) => f.endsWith('.map')).reduce((s, f) => s + statSync(join(b.dir, f)).size, 0))}`];
      console.log(
        `${pad(name, 8)}${pad(kib(size), 12)}${pad(`<= ${TARGETS[name].sizeKiB} KiB ${sizeOk ? 'PASS' : 'MISS'}`, 20)}` +
          `${pad(load.toFixed(1), 10)}${pad(`<= ${LOAD_TARGET_MS} ms ${loadOk ? 'PASS' : 'MISS'}`, 20)}${beside.join(', ')}`,
      );
    }
    console.log(`${pad('empty module (reference, same measurement)', 50)}${median(samples.empty!).toFixed(1)} ms`);

    console.log('\nlargest contributors to index.mjs:');
    for (const name of names) console.log(`  ${pad(name, 6)}${largestContributors(built[name].outputs['index.mjs']!.metafile, 8)}`);

    console.log('\nreference, the AWS SDK left to the Lambda runtime instead of bundled (not what the stack does; see README, "What `cdk deploy` uploads"):');
    for (const name of names) console.log(`  ${pad(name, 6)}index.mjs would be ${kib(await sizeWithRuntimeSdk(LAMBDA_BUNDLES[name].entry))}`);
    console.log(`  the runtime's SDK is CommonJS: require() of the S3 and Secrets Manager clients from node_modules takes ${median(sdk).toFixed(1)} ms (median of ${runs}) on top`);
    return allPass;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
