import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../lib/bundling/project.js';
import { FEED_SCALE, ISSUE_SCALE, useScaleFixtures, type ScaleShape } from '../test/helpers/scale-fixtures.js';

/**
 * `cdk synth` of the whole app as a user runs it (issue 32): `npx cdk synth --quiet` in the project, bin/app.ts
 * as the CLI's child with the real bundles and the compliance packs, over generated catalogs of 1, 50 and 500
 * reports (10 connections, 30 reports with three saved queries; fewer where the catalog is smaller) pointed at
 * through PAYNET_REPORTS_DIR, PAYNET_ENVIRONMENTS_DIR and PAYNET_QUERIES_DIR. Wall time, CPU (user + sys of the
 * CLI and the app, from /usr/bin/time) and peak RSS (the largest process), and every template's resources and
 * bytes against CloudFormation's 500 and 1 MB. Targets at 500 reports: 60 s wall, 2 GB peak. Then 500 feeds (issue 45):
 * 50 reports, each over all 10 connections, held to the same targets. BENCH_SYNTH=feeds runs that size alone.
 */

const TARGETS = { wallS: 60, peakMb: 2048, resources: 500, templateBytes: 1_000_000 } as const;
const SIZES: Array<{ label: string; shape: ScaleShape; atTarget: boolean }> = [
  ...[1, 50, ISSUE_SCALE.reports].map((reports) => ({ label: `${reports} report(s)`, shape: shapeOfReports(reports), atTarget: reports === ISSUE_SCALE.reports })),
  { label: `${FEED_SCALE.reports * FEED_SCALE.connectionsPerReport!} feeds (${FEED_SCALE.reports} reports x ${FEED_SCALE.connectionsPerReport} connections)`, shape: FEED_SCALE, atTarget: true },
];

interface SynthRun {
  wallS: number;
  cpuS?: number;
  peakMb?: number;
  templates: Array<{ file: string; resources: number; bytes: number }>;
}

function shapeOfReports(reports: number): ScaleShape {
  return {
    reports,
    connections: Math.min(ISSUE_SCALE.connections, reports),
    withQueries: Math.min(ISSUE_SCALE.withQueries, reports),
  };
}

/** /usr/bin/time -v's figures: user and system seconds, maximum resident set in KiB. */
function timeFigures(stderr: string): { cpuS?: number; peakMb?: number } {
  const field = (name: string) => Number(new RegExp(`${name}: ([\\d.]+)`).exec(stderr)?.[1]);
  const cpu = field('User time \\(seconds\\)') + field('System time \\(seconds\\)');
  const rss = field('Maximum resident set size \\(kbytes\\)');
  return { cpuS: Number.isFinite(cpu) ? cpu : undefined, peakMb: Number.isFinite(rss) ? rss / 1024 : undefined };
}

async function synthOnce(dir: string, shape: ScaleShape): Promise<SynthRun> {
  const reports = shape.reports;
  const folders = await useScaleFixtures(join(dir, 'fixtures'), shape);
  const out = join(dir, 'cdk.out');
  const hasTime = existsSync('/usr/bin/time');
  const cdk = ['npx', 'cdk', 'synth', '--quiet', '--output', out];
  const env = { ...process.env, PAYNET_REPORTS_DIR: folders.reports, PAYNET_ENVIRONMENTS_DIR: folders.environments, PAYNET_QUERIES_DIR: folders.queries };
  const started = performance.now();
  const stderr = await new Promise<string>((resolve, reject) => {
    const child = spawn(hasTime ? '/usr/bin/time' : cdk[0]!, hasTime ? ['-v', ...cdk] : cdk.slice(1), { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(err) : reject(new Error(`cdk synth of ${reports} reports failed (exit ${code}):\n${err.slice(-3000)}`))));
  });
  const wallS = (performance.now() - started) / 1000;
  const templates = readdirSync(out)
    .filter((f) => f.endsWith('.template.json'))
    .map((file) => ({
      file,
      resources: Object.keys((JSON.parse(readFileSync(join(out, file), 'utf8')) as { Resources: object }).Resources).length,
      bytes: statSync(join(out, file)).size,
    }));
  return { wallS, ...(hasTime ? timeFigures(stderr) : {}), templates };
}

const fmt = (n: number | undefined, digits: number, unit: string) => (n === undefined ? 'n/a' : `${n.toFixed(digits)} ${unit}`);

function report(label: string, atTarget: boolean, run: SynthRun): boolean {
  const parent = run.templates.find((t) => !t.file.includes('.nested.'))!;
  const shards = run.templates.filter((t) => t !== parent);
  const largest = run.templates.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const most = run.templates.reduce((a, b) => (b.resources > a.resources ? b : a));
  const total = run.templates.reduce((n, t) => n + t.resources, 0);
  const withinQuotas = run.templates.every((t) => t.resources <= TARGETS.resources && t.bytes <= TARGETS.templateBytes);
  const timeOk = !atTarget || run.wallS <= TARGETS.wallS;
  const memoryOk = !atTarget || run.peakMb === undefined || run.peakMb <= TARGETS.peakMb;
  const mark = (ok: boolean) => (ok ? 'ok' : 'MISS');
  console.log(`\n${label}:`);
  console.log(
    `  wall ${fmt(run.wallS, 1, 's')}${atTarget ? ` (target <= ${TARGETS.wallS} s: ${mark(timeOk)})` : ''}, CPU ${fmt(run.cpuS, 1, 's')}, ` +
      `peak RSS ${fmt(run.peakMb, 0, 'MB')}${atTarget ? ` (target <= ${TARGETS.peakMb} MB: ${mark(memoryOk)})` : ''}`,
  );
  console.log(`  parent: ${parent.resources} resources, ${Math.round(parent.bytes / 1024)} KB; ${shards.length} shard(s), ${total} resources in all`);
  console.log(
    `  most resources: ${most.resources} (${most.file}); largest template: ${Math.round(largest.bytes / 1024)} KB (${largest.file}); ` +
      `quotas ${TARGETS.resources} resources and 1 MB each: ${mark(withinQuotas)}`,
  );
  return withinQuotas && timeOk && memoryOk;
}

export async function runSynthBench(): Promise<boolean> {
  console.log('cdk synth of the whole app (npx cdk synth --quiet, real bundles, compliance packs), generated catalogs over 10 connections');
  let pass = true;
  const sizes = process.env.BENCH_SYNTH === 'feeds' ? SIZES.slice(-1) : SIZES;
  for (const { label, shape, atTarget } of sizes) {
    const dir = mkdtempSync(join(tmpdir(), `paynet-synth-bench-${shape.reports}-`));
    try {
      pass = report(label, atTarget, await synthOnce(dir, shape)) && pass;
    } catch (e) {
      // A synth that fails (a quota CDK checks itself, an E2BIG) is this size's figure: say why, go on to the next.
      const why = String((e as Error).message).split('\n').find((l) => /«|E2BIG|Error/.test(l)) ?? (e as Error).message;
      console.log(`\n${label}: MISS, cdk synth failed: ${why.slice(0, 400)}`);
      pass = false;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return pass;
}
