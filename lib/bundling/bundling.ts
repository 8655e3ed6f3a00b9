import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions, Metafile } from 'esbuild';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { BUNDLED_CATALOG_FILE, BUNDLED_FLAG_CONSTANT, readReportSources, reportsDir } from '../../functions/core/definitions/catalog-files.js';
import { PROJECT_ROOT, projectPath } from './project.js';

/**
 * How a Lambda bundle is built, in one place. The stack hands these settings to NodejsFunction
 * (`nodejsBundling`, which runs the esbuild CLI); the bundle tests and the bundle benchmark build with
 * esbuild's API from the same settings (`buildLambdaBundle`). test/infra/bundles.test.ts checks that both
 * produce the same bytes, so what is tested and measured is what is deployed.
 */

/** A bundle: its handler module and any further modules that must sit beside it. */
export interface LambdaBundle {
  /** Module exporting `handler`; becomes index.mjs. */
  readonly entry: string;
  /**
   * Further entry points, bundled with the same settings next to index.mjs, by output name (".mjs" is
   * appended): modules loaded at run time by path, such as a worker thread's script.
   */
  readonly extraEntries?: Readonly<Record<string, string>>;
}

/** The pipeline's functions. The stack uses these unless a test or `-c handlerEntry` substitutes an entry. */
export const LAMBDA_BUNDLES = {
  fetch: { entry: projectPath('functions/fetch-report/handler.ts') },
  parse: {
    entry: projectPath('functions/parse-report/handler.ts'),
    // encoder-thread.ts starts the Parquet encoder from ./parquet-worker.mjs beside the bundle (new URL(...,
    // import.meta.url)); in a single-file bundle the converter would silently run inline.
    extraEntries: { 'parquet-worker': projectPath('functions/core/parquet/parquet-worker.ts') },
  },
  // The freshness check (lib/constructs/freshness.ts): the catalog names the reports it watches.
  freshness: { entry: projectPath('functions/check-freshness/handler.ts') },
} as const satisfies Record<string, LambdaBundle>;

export type BundleName = keyof typeof LAMBDA_BUNDLES;

/**
 * iconv-lite's double-byte tables (Shift_JIS, GBK, Big5, EUC-KR: ~400 KB of minified bundle): iconv-lite
 * require()s them lazily, only when such an encoding is first decoded. Left out of the bundle and copied
 * beside it, they cost nothing at cold start, and require('./tables/x.json') (the bundle's createRequire
 * shim, relative to index.mjs) still finds them when a report uses one. Single-byte encodings such as
 * windows-1251 are generated code, not tables, and stay in the bundle.
 */
const ICONV_TABLES = {
  external: './tables/*',
  // The iconv-lite the functions' code resolves (and esbuild bundles), wherever npm placed it.
  from: join(relative(PROJECT_ROOT, dirname(createRequire(projectPath('functions/core/csv/records.ts')).resolve('iconv-lite/package.json'))), 'encodings/tables'),
  to: 'tables',
} as const;

/** Files copied next to every bundle (paths relative to the project root and to the bundle). */
export const FILES_BESIDE_BUNDLE: ReadonlyArray<{ readonly from: string; readonly to: string }> = [{ from: ICONV_TABLES.from, to: ICONV_TABLES.to }];

/** NODE_OPTIONS of every function: stack traces point into the TypeScript sources through the bundled source maps. */
export const LAMBDA_NODE_OPTIONS = '--enable-source-maps';

/** The esbuild settings, as esbuild's API spells them (the banner as the JavaScript banner's text). */
export const BUNDLE_SETTINGS = {
  platform: 'node',
  // The Lambda runtime (NODEJS_24_X in pipeline-function.ts): no syntax is lowered for older engines.
  target: 'node24',
  // ESM: the project is ESM and some dependencies (hyparquet) ship only ESM.
  format: 'esm',
  // Prefer the ES-module build of dual packages: it tree-shakes.
  mainFields: ['module', 'main'],
  // CommonJS dependencies bundled into ESM still call require(): give them one (it also loads the iconv tables).
  banner: "import { createRequire as __pipelineCreateRequire } from 'node:module'; const require = __pipelineCreateRequire(import.meta.url);",
  minify: true,
  // Error classes name themselves from their constructor (new.target.name): minifying names would garble them.
  keepNames: true,
  sourcemap: true,
  // The map points at the sources without embedding them: no source text in the package, a smaller map to read at start.
  sourcesContent: false,
  // Everything else is bundled, the AWS SDK included: the lockfile's SDK, the version the tests ran with, is
  // the one deployed (the runtime's copy is whatever version Lambda ships that month, and CommonJS only).
  external: [ICONV_TABLES.external],
  tsconfig: projectPath('tsconfig.json'),
  logLevel: 'warning',
} as const satisfies Omit<BuildOptions, 'banner'> & { banner: string };

/**
 * The report catalog the bundles carry: config/reports/*.json read at synth (bin/app.ts has validated the same
 * files before any bundling), written once per folder and process as JSON to a file inside the project (so a
 * bundling container, which mounts the project, sees it too), named by its content. The hooks copy it beside
 * index.mjs as BUNDLED_CATALOG_FILE; only the flag travels as a `define`. Never the sources themselves: esbuild
 * gets its defines on its command line, and Linux caps one argument at 128 KiB (`spawnSync E2BIG` at ~55 reports).
 */
export function catalogFile(): string {
  const dir = reportsDir();
  let file = catalogFiles.get(dir);
  if (!file) {
    const sources = readReportSources(dir);
    // Validated as a whole, as at cold start: a bundle never carries a catalog that would not load.
    ReportCatalog.fromSources(sources);
    const json = JSON.stringify(sources);
    const cache = projectPath(['node_modules', '.cache', 'paynet-reports'].join('/'));
    file = join(cache, `catalog-${createHash('sha256').update(json).digest('hex').slice(0, 16)}.json`);
    mkdirSync(cache, { recursive: true });
    // Written whole, then renamed: a synth in another process may be reading the same name.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, json);
    renameSync(partial, file);
    catalogFiles.set(dir, file);
  }
  return file;
}
const catalogFiles = new Map<string, string>();

/** The handler entries' one define: tells catalog-files.ts it is bundled (the catalog is the file beside it). */
export const CATALOG_FLAG_DEFINE: Readonly<Record<string, string>> = { [BUNDLED_FLAG_CONSTANT]: 'true' };

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The esbuild command line for one entry with BUNDLE_SETTINGS (CDK runs the CLI, so the hooks do too). */
function esbuildArgs(entry: string, outfile: string, tsconfig: string): string[] {
  const s = BUNDLE_SETTINGS;
  return [
    '--bundle',
    entry,
    `--outfile=${outfile}`,
    `--platform=${s.platform}`,
    `--target=${s.target}`,
    `--format=${s.format}`,
    ...(s.minify ? ['--minify'] : []),
    ...(s.keepNames ? ['--keep-names'] : []),
    ...(s.sourcemap ? ['--sourcemap'] : []),
    `--sources-content=${s.sourcesContent}`,
    ...s.external.map((e) => `--external:${e}`),
    `--tsconfig=${tsconfig}`,
    `--banner:js=${s.banner}`,
    `--main-fields=${s.mainFields.join(',')}`,
    `--log-level=${s.logLevel}`,
  ];
}

/**
 * The commands that complete a bundle after CDK's esbuild run wrote index.mjs: the extra entries, then the
 * files beside it. `inputDir` is the project root (local bundling) or its mount in a bundling container.
 */
function afterBundlingCommands(bundle: LambdaBundle, inputDir: string, outputDir: string): string[] {
  const local = resolve(inputDir) === resolve(PROJECT_ROOT);
  // Locally the project's own esbuild (the one CDK found; its bin is the native executable, or a node script
  // with a shebang where the platform has none); in CDK's bundling image, the one on its PATH.
  const esbuild = local ? [createRequire(import.meta.url).resolve('esbuild/bin/esbuild')] : ['esbuild'];
  const inInput = (file: string) => join(inputDir, relative(PROJECT_ROOT, file));
  const commands = Object.entries(bundle.extraEntries ?? {}).map(([name, entry]) =>
    [...esbuild, ...esbuildArgs(inInput(entry), join(outputDir, `${name}.mjs`), inInput(BUNDLE_SETTINGS.tsconfig))].map(shellQuote).join(' '),
  );
  for (const file of FILES_BESIDE_BUNDLE) {
    commands.push(`cp -R ${shellQuote(join(inputDir, file.from))} ${shellQuote(join(outputDir, file.to))}`);
  }
  commands.push(`cp ${shellQuote(inInput(catalogFile()))} ${shellQuote(join(outputDir, BUNDLED_CATALOG_FILE))}`);
  return commands;
}

/** BUNDLE_SETTINGS as NodejsFunction's bundling options, the extra entries and files added by a hook. */
export function nodejsBundling(bundle: LambdaBundle): nodejs.BundlingOptions {
  const s = BUNDLE_SETTINGS;
  return {
    format: nodejs.OutputFormat.ESM,
    target: s.target,
    mainFields: [...s.mainFields],
    banner: s.banner,
    minify: s.minify,
    keepNames: s.keepNames,
    sourceMap: s.sourcemap,
    sourceMapMode: nodejs.SourceMapMode.DEFAULT,
    sourcesContent: s.sourcesContent,
    // The SDK is bundled (see BUNDLE_SETTINGS.external): bundleAwsSDK keeps CDK from adding @aws-sdk/* to the externals.
    bundleAwsSDK: true,
    externalModules: [...s.external],
    define: { ...CATALOG_FLAG_DEFINE },
    tsconfig: s.tsconfig,
    logLevel: nodejs.LogLevel.WARNING,
    forceDockerBundling: false,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir, outputDir) => afterBundlingCommands(bundle, inputDir, outputDir),
    },
  };
}

/**
 * esbuild API options for one entry of a bundle, from BUNDLE_SETTINGS. The catalog flag is defined for the
 * handler entry only, as NodejsFunction defines it (its `define` does not reach the extra entries).
 */
export function esbuildOptions(entry: string, outfile: string, withCatalog = true): BuildOptions {
  const { banner, ...settings } = BUNDLE_SETTINGS;
  return {
    ...settings,
    mainFields: [...settings.mainFields],
    external: [...settings.external],
    banner: { js: banner },
    ...(withCatalog ? { define: { ...CATALOG_FLAG_DEFINE } } : {}),
    entryPoints: [entry],
    outfile,
    bundle: true,
  };
}

export interface BuiltBundle {
  dir: string;
  /** index.mjs and each extra entry's file, by output file name. */
  outputs: Record<string, { bytes: number; metafile: Metafile }>;
}

/**
 * Builds a bundle the way the stack does, into `dir` (created if missing): index.mjs, the extra entries, the
 * files beside it, the catalog. For the bundle tests and the benchmark; the stack goes through NodejsFunction.
 */
export async function buildLambdaBundle(bundle: LambdaBundle, dir: string): Promise<BuiltBundle> {
  const { build } = await import('esbuild');
  mkdirSync(dir, { recursive: true });
  const entries: Array<[string, string]> = [['index.mjs', bundle.entry], ...Object.entries(bundle.extraEntries ?? {}).map(([n, e]): [string, string] => [`${n}.mjs`, e])];
  const outputs: BuiltBundle['outputs'] = {};
  for (const [file, entry] of entries) {
    const { metafile } = await build({ ...esbuildOptions(entry, join(dir, file), file === 'index.mjs'), metafile: true });
    const output = Object.entries(metafile.outputs).find(([path]) => path.endsWith(file));
    outputs[file] = { bytes: output?.[1].bytes ?? 0, metafile };
  }
  for (const file of FILES_BESIDE_BUNDLE) copyTree(projectPath(file.from), join(dir, file.to));
  copyFileSync(catalogFile(), join(dir, BUNDLED_CATALOG_FILE));
  return { dir, outputs };
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isDirectory()) copyTree(join(from, entry.name), join(to, entry.name));
    else copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}
