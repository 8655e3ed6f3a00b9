import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { App } from 'aws-cdk-lib';
import { loadCatalog, REPORTS_DIR, REPORTS_DIR_VARIABLE } from '../../functions/core/definitions/catalog-files.js';
import { projectPath } from '../../lib/bundling/project.js';
import { ENVIRONMENTS_DIR, ENVIRONMENTS_DIR_VARIABLE, loadEnvironments, type EnvironmentConfig } from '../../lib/environment/environments.js';
import { QUERIES_DIR_VARIABLE } from '../../lib/saved-queries/saved-queries.js';
import { ReportsPipelineStack, stackName } from '../../lib/reports-pipeline-stack.js';
import { skipWithoutTool, toolInstalled } from '../helpers/required-tools.js';
import { ISSUE_SCALE, useScaleFixtures } from '../helpers/scale-fixtures.js';
import { parseReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { EVERY_CHANNEL_KIND } from '../helpers/alarm-channels.js';
import { FIXTURE_ENTRY, testConfig } from './helpers.js';

/**
 * Issue 44: every template as AWS's resource schemas read it, through cfn-lint (its bundled schemas), not our own
 * walkers: each shipped environment (config/environments/*.json over the shipped catalog) and the 500-report fleet
 * of issue 32, each parent with every nested stack (the report shards). An error or a warning fails, but for the
 * findings test/infra/cfn-lint-ignores.json lists by rule, resource type and path with the reason and AWS's page.
 * Warnings count too: cfn-lint's warnings are faults a deploy may hit (an unused parameter, a hard-coded zone), and
 * the only ones today are CDK's redundant DependsOn (W3005), ignored by resource type.
 * The handlers are the fixture's (as the other infra tests bundle them): only the code's S3 key differs from a real
 * synth. One synthesis of each, linted together by two cfn-lint processes, keeps the file to ~50 s of CPU.
 */

interface Finding {
  Rule: { Id: string };
  Level: 'Error' | 'Warning' | 'Informational';
  Filename: string;
  Location: { Path: Array<string | number> };
  Message: string;
}
interface Ignore {
  rule: string;
  resourceType: string;
  path: string;
  why: string;
  reference: string;
}
type TemplateJson = { Resources: Record<string, { Type: string }> };

const IGNORES = (JSON.parse(readFileSync(projectPath('test/infra/cfn-lint-ignores.json'), 'utf8')) as { ignores: Ignore[] }).ignores;
const ROOT = mkdtempSync(join(tmpdir(), 'paynet-cfn-lint-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

/** Synthesizes one stack per environment, as bin/app.ts does, into `dir`; returns every template file it wrote. */
function synthesize(dir: string, environments: readonly EnvironmentConfig[], reports = loadCatalog().reports): string[] {
  const app = new App({ outdir: dir });
  for (const config of environments) {
    new ReportsPipelineStack(app, stackName(config.name), { config, reports, entries: { fetch: FIXTURE_ENTRY, parse: FIXTURE_ENTRY, freshness: FIXTURE_ENTRY } });
  }
  app.synth();
  return readdirSync(dir)
    .filter((f) => f.endsWith('.template.json'))
    .map((f) => join(dir, f));
}

/** The shipped environments over the shipped catalog and queries, whatever this shell points the folders at. */
function synthesizeShipped(): { files: string[]; environments: EnvironmentConfig[] } {
  process.env[REPORTS_DIR_VARIABLE] = REPORTS_DIR;
  process.env[ENVIRONMENTS_DIR_VARIABLE] = ENVIRONMENTS_DIR;
  process.env[QUERIES_DIR_VARIABLE] = projectPath('queries');
  const environments = loadEnvironments();
  return { files: synthesize(join(ROOT, 'shipped'), environments), environments };
}

/**
 * Every option a governed account may set, which the shipped files leave off: every alarm channel kind (PagerDuty's
 * and Opsgenie's subscriptions from a Secrets Manager dynamic reference, the chat configurations), a fixed egress
 * address, a permissions boundary, tags, and a report over two connections (two feeds, the `connection` enum).
 */
function synthesizeGoverned(): { files: string[]; environments: EnvironmentConfig[] } {
  const config = testConfig({
    name: 'governed',
    alarmChannels: EVERY_CHANNEL_KIND,
    alarmEmails: [],
    network: { staticEgressIp: true },
    permissionsBoundaryArn: 'arn:aws:iam::123456789012:policy/org/paynet-boundary',
    tags: { 'cost-center': 'payments-42' },
    connections: { acme: { gateway: { endpointUrl: 'https://reports.acme.test/paynet-ui/services/v2/rpt-engine' }, secret: { name: 'paynet-reports/governed/acme' } } },
  });
  const shipped = JSON.parse(readFileSync(join(REPORTS_DIR, 'transactions.json'), 'utf8')) as Record<string, unknown>;
  const overBoth = parseReportDefinition({ ...shipped, connections: ['default', 'acme'] }, 'test: the shipped report over two connections');
  return { files: synthesize(join(ROOT, 'governed'), [config], [overBoth]), environments: [config] };
}

async function synthesizeFleet(): Promise<{ files: string[]; environments: EnvironmentConfig[] }> {
  await useScaleFixtures(join(ROOT, 'fleet-fixtures'), ISSUE_SCALE);
  const environments = loadEnvironments();
  return { files: synthesize(join(ROOT, 'fleet'), environments), environments };
}

/**
 * A template of planted faults beside findings the ignores cover, so the ignores are shown narrow: an unknown
 * property on the dashboard (same rule and type as the Tags lag, another path) and a redundant DependsOn on a
 * topic (same rule as CDK's, another type) must be reported; the dashboard's Tags and the function's DependsOn not.
 */
function writePlanted(): string {
  const file = join(ROOT, 'planted', 'planted.template.json');
  mkdirSync(join(ROOT, 'planted'), { recursive: true });
  const template = {
    Resources: {
      Role: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: { Version: '2012-10-17', Statement: [] } } },
      Board: { Type: 'AWS::CloudWatch::Dashboard', Properties: { DashboardBody: '{}', Tags: [{ Key: 'a', Value: 'b' }], Bogus: 1 } },
      Fn: {
        Type: 'AWS::Lambda::Function',
        DependsOn: ['Role'],
        Properties: { Runtime: 'nodejs24.x', Handler: 'index.handler', Code: { ZipFile: 'x' }, Role: { 'Fn::GetAtt': ['Role', 'Arn'] } },
      },
      Topic: { Type: 'AWS::SNS::Topic', DependsOn: ['Role'], Properties: { DisplayName: { 'Fn::GetAtt': ['Role', 'RoleId'] } } },
    },
  };
  writeFileSync(file, JSON.stringify(template, null, 1));
  return file;
}

/** Every finding of cfn-lint over `files` in one process; a run that prints no JSON (a crash) fails with its stderr. */
async function cfnLintOne(files: readonly string[], regions: readonly string[]): Promise<Finding[]> {
  const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve, reject) => {
    const child = execFile('cfn-lint', ['--format', 'json', '--regions', ...regions, '--', ...files], { maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ stdout, stderr, code: child.exitCode });
    });
  });
  try {
    return JSON.parse(stdout) as Finding[];
  } catch {
    throw new Error(`cfn-lint exited ${code} without its JSON report:\n${stderr.slice(-3000)}`);
  }
}

/**
 * cfn-lint over `files`, split by size over two processes where there are two cores: it reads one template at a time
 * on one thread (~25 s of CPU for the fleet's), and the test runner leaves the second core idle.
 */
async function cfnLint(files: readonly string[], regions: readonly string[]): Promise<Finding[]> {
  const groups: string[][] = Array.from({ length: Math.min(2, availableParallelism()) }, () => []);
  const sizes = groups.map(() => 0);
  for (const file of [...files].sort((a, b) => statSync(b).size - statSync(a).size)) {
    const smallest = sizes.indexOf(Math.min(...sizes));
    groups[smallest]!.push(file);
    sizes[smallest]! += statSync(file).size;
  }
  return (await Promise.all(groups.filter((g) => g.length).map((g) => cfnLintOne(g, regions)))).flat();
}

const templateCache = new Map<string, TemplateJson>();
const templateOf = (file: string) => templateCache.get(file) ?? templateCache.set(file, JSON.parse(readFileSync(file, 'utf8')) as TemplateJson).get(file)!;

/** The ignore entry covering a finding: same rule, the resource's type, and a path under the resource starting with the entry's. */
function ignoreOf(f: Finding): Ignore | undefined {
  const [section, id, ...rest] = f.Location.Path;
  if (section !== 'Resources' || typeof id !== 'string') return undefined;
  const type = templateOf(f.Filename).Resources[id]?.Type;
  const path = rest.join('/');
  return IGNORES.find((i) => i.rule === f.Rule.Id && i.resourceType === type && (path === i.path || path.startsWith(`${i.path}/`)));
}

const line = (f: Finding) => `${f.Rule.Id} ${f.Level} ${f.Filename.slice(ROOT.length + 1)} ${f.Location.Path.join('/')}: ${f.Message}`;
const perRule = (findings: readonly Finding[]) => Object.fromEntries([...new Set(findings.map((f) => f.Rule.Id))].sort().map((r) => [r, findings.filter((f) => f.Rule.Id === r).length]));
const nestedStacks = (file: string) => Object.values(templateOf(file).Resources).filter((r) => r.Type === 'AWS::CloudFormation::Stack').length;

let linted: { shipped: string[]; shippedEnvironments: number; governed: string[]; fleet: string[]; planted: string; findings: Finding[] } | undefined;

before(async () => {
  if (!toolInstalled('cfn-lint')) return;
  const shipped = synthesizeShipped();
  const governed = synthesizeGoverned();
  const fleet = await synthesizeFleet();
  const planted = writePlanted();
  // The environments' own regions (a stack without one is region-agnostic: cfn-lint's default, us-east-1, reads it).
  const regions = [...new Set([...shipped.environments, ...governed.environments, ...fleet.environments].map((c) => c.region ?? 'us-east-1'))];
  const findings = await cfnLint([...shipped.files, ...governed.files, ...fleet.files, planted], regions);
  linted = { shipped: shipped.files, shippedEnvironments: shipped.environments.length, governed: governed.files, fleet: fleet.files, planted, findings };
});

describe('cfn-lint over every template, with AWS resource schemas', () => {
  it('finds no error and no warning in any template of the shipped environments, the every-option one or the 500-report fleet, but the ignored ones', (t) => {
    if (skipWithoutTool(t, 'cfn-lint')) return;
    const ours = linted!.findings.filter((f) => f.Filename !== linted!.planted);
    t.diagnostic(`findings per rule, before the ignores: ${JSON.stringify(perRule(ours))}`);
    const left = ours.filter((f) => !ignoreOf(f));
    t.diagnostic(`after: ${JSON.stringify(perRule(left))}`);
    assert.deepEqual(left.map(line), []);
  });

  it('lints each parent template and every nested stack it holds (the report shards)', (t) => {
    if (skipWithoutTool(t, 'cfn-lint')) return;
    for (const [name, files] of [['shipped', linted!.shipped], ['governed', linted!.governed], ['fleet', linted!.fleet]] as const) {
      const parents = files.filter((f) => !f.endsWith('.nested.template.json'));
      const nested = parents.reduce((n, f) => n + nestedStacks(f), 0);
      t.diagnostic(`${name}: ${parents.length} parent template(s), ${nested} nested`);
      assert.ok(nested >= parents.length, `${name}: every environment has at least one report shard`);
      assert.equal(files.length, parents.length + nested, `${name}: one template file per stack`);
    }
    const shippedFiles = readdirSync(ENVIRONMENTS_DIR).filter((f) => f.endsWith('.json'));
    assert.equal(linted!.shippedEnvironments, shippedFiles.length, 'one stack per config/environments/*.json');
    assert.equal(linted!.shipped.filter((f) => !f.endsWith('.nested.template.json')).length, shippedFiles.length);
  });

  it('ignores a finding only by its rule, resource type and path: planted faults beside the ignored findings fail', (t) => {
    if (skipWithoutTool(t, 'cfn-lint')) return;
    const planted = linted!.findings.filter((f) => f.Filename === linted!.planted);
    const reported = planted.filter((f) => !ignoreOf(f)).map((f) => `${f.Rule.Id} ${f.Location.Path.join('/')}`);
    const ignored = planted.filter((f) => ignoreOf(f)).map((f) => `${f.Rule.Id} ${f.Location.Path.join('/')}`);
    assert.deepEqual(reported.sort(), ['E3002 Resources/Board/Properties/Bogus', 'W3005 Resources/Topic/DependsOn/0']);
    assert.deepEqual(ignored.sort(), ['E3002 Resources/Board/Properties/Tags', 'W3005 Resources/Fn/DependsOn/0']);
  });

  it('keeps no ignore that no longer matches a finding of the shipped or fleet templates, and says why for each', (t) => {
    if (skipWithoutTool(t, 'cfn-lint')) return;
    const used = new Set(linted!.findings.filter((f) => f.Filename !== linted!.planted).map(ignoreOf));
    for (const i of IGNORES) {
      assert.ok(used.has(i), `${i.rule} on ${i.resourceType} ${i.path} matches nothing any more: remove it from test/infra/cfn-lint-ignores.json`);
      assert.match(i.reference, /^https:\/\/docs\.aws\.amazon\.com\//, `${i.rule} on ${i.resourceType}: AWS's page beside it`);
      assert.ok(i.why.length > 20, `${i.rule} on ${i.resourceType}: the reason`);
    }
  });
});
