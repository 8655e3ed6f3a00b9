import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { App } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { loadEnvironments } from '../../lib/environment/environments.js';
import { addCompliancePacks } from '../../lib/policies/compliance.js';
import { REPORT_SHARD_COUNT, shardOf } from '../../lib/constructs/report-shards.js';
import { ReportsPipelineStack, stackName } from '../../lib/reports-pipeline-stack.js';
import { ISSUE_SCALE, scaleReportId, useScaleFixtures, type ScaleShape } from '../helpers/scale-fixtures.js';
import { FIXTURE_ENTRY, type Cfn } from './helpers.js';

/**
 * Issue 32: an environment of hundreds of reports synthesizes (the catalog no longer travels on esbuild's command
 * line), every template (the parent and each report shard, lib/constructs/report-shards.ts) stays within
 * CloudFormation's quotas, and adding a report changes only that report's resources.
 */

/** CloudFormation's documented quotas: resources, template bytes through S3, parameters and outputs per stack. */
const QUOTA = { resources: 500, bytes: 1_000_000, parameters: 200, outputs: 200 } as const;

type TemplateJson = { Resources: Record<string, { Type: string; Properties?: Cfn; DependsOn?: string[] }>; Parameters?: Cfn; Outputs?: Cfn };
interface Synthesized {
  stack: ReportsPipelineStack;
  /** Every template the assembly holds, by file name: the parent's and each nested stack's. */
  templates: Map<string, { json: TemplateJson; bytes: number }>;
}

const ROOT = mkdtempSync(join(tmpdir(), 'paynet-report-shards-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

/** Writes the fixtures of `shape` and synthesizes the environment as `cdk synth` does, the compliance packs included. */
async function synthesize(name: string, shape: ScaleShape, options: { realBundles?: boolean; configure?: (stack: ReportsPipelineStack) => void } = {}): Promise<Synthesized> {
  await useScaleFixtures(join(ROOT, name), shape);
  const [config] = loadEnvironments();
  const app = new App({ outdir: join(ROOT, name, 'cdk.out') });
  const entries = options.realBundles ? undefined : { fetch: FIXTURE_ENTRY, parse: FIXTURE_ENTRY };
  const stack = new ReportsPipelineStack(app, stackName(config!.name), { config: config!, reports: loadCatalog().reports, entries });
  options.configure?.(stack);
  addCompliancePacks(app);
  const dir = app.synth().directory;
  const templates = new Map(
    readdirSync(dir)
      .filter((f) => f.endsWith('.template.json'))
      .map((f) => [f, { json: JSON.parse(readFileSync(join(dir, f), 'utf8')) as TemplateJson, bytes: statSync(join(dir, f)).size }]),
  );
  return { stack, templates };
}

const NESTED = /\.nested\.template\.json$/;
const ofType = (json: TemplateJson, type: string) => Object.values(json.Resources).filter((r) => r.Type === type);
const countAll = (s: Synthesized, type: string) => [...s.templates.values()].reduce((n, t) => n + ofType(t.json, type).length, 0);
/** The reports' schedules: those that send a run to a connection queue (the freshness check's schedule is the environment's). */
const reportSchedules = (json: TemplateJson) => ofType(json, 'AWS::Scheduler::Schedule').filter((r) => JSON.stringify(r).includes('SqsParameters'));
const countReportSchedules = (s: Synthesized) => [...s.templates.values()].reduce((n, t) => n + reportSchedules(t.json).length, 0);

function assertWithinQuotas(s: Synthesized): void {
  assert.ok(s.templates.size >= 2, 'the parent and at least one shard');
  for (const [file, { json, bytes }] of s.templates) {
    assert.ok(Object.keys(json.Resources).length <= QUOTA.resources, `${file}: ${Object.keys(json.Resources).length} resources`);
    assert.ok(bytes <= QUOTA.bytes, `${file}: ${bytes} bytes`);
    assert.ok(Object.keys(json.Parameters ?? {}).length <= QUOTA.parameters, `${file}: parameters`);
    assert.ok(Object.keys(json.Outputs ?? {}).length <= QUOTA.outputs, `${file}: outputs`);
  }
}

/** The parent's template (the one file that is not a nested stack's). */
const parentOf = (s: Synthesized): TemplateJson => [...s.templates].find(([f]) => !NESTED.test(f))![1].json;

describe('hundreds of reports in one environment', () => {
  it('synthesizes 120 reports over 4 connections with the real bundles, past the ~55 where the catalog hit E2BIG', async () => {
    const s = await synthesize('real-120', { reports: 120, connections: 4, withQueries: 5 }, { realBundles: true });
    assertWithinQuotas(s);
    // A table per report, and the one loads table of the environment; a coverage query per report besides the files.
    assert.equal(countAll(s, 'AWS::Glue::Table'), 120 + 1);
    assert.equal(countReportSchedules(s), 120);
    assert.equal(countAll(s, 'AWS::Athena::NamedQuery'), 15 + 120);
  });

  it(`holds ${ISSUE_SCALE.reports} reports over ${ISSUE_SCALE.connections} connections, ${ISSUE_SCALE.withQueries} with three saved queries, to the quotas`, async () => {
    const s = await synthesize('issue-scale', ISSUE_SCALE);
    assertWithinQuotas(s);
    const parent = parentOf(s);
    // The parent holds nothing per report: one nested stack per shard, whatever the catalog's size; its one table is loads.
    assert.equal(ofType(parent, 'AWS::Athena::NamedQuery').length, 0);
    assert.deepEqual(ofType(parent, 'AWS::Glue::Table').map((t) => (t.Properties as { TableInput: { Name: string } }).TableInput.Name), ['loads']);
    assert.equal(reportSchedules(parent).length, 0, 'no report schedule in the parent');
    assert.equal(ofType(parent, 'AWS::CloudFormation::Stack').length, REPORT_SHARD_COUNT);
    assert.equal(countAll(s, 'AWS::Glue::Table'), ISSUE_SCALE.reports + 1, 'one Glue table per report, and loads');
    assert.equal(countReportSchedules(s), ISSUE_SCALE.reports);
    assert.equal(countAll(s, 'AWS::Athena::NamedQuery'), ISSUE_SCALE.withQueries * 3 + ISSUE_SCALE.reports);
    // Each report's resources sit in the shard its id hashes to.
    for (const [reportId, table] of Object.entries(s.stack.catalog.tables)) {
      assert.equal(table.stack, s.stack.reportShards.of(reportId), reportId);
    }
  });

  it("changes only the added report's resources, its shard's template and the functions' catalog: every other logical id stays", async () => {
    const before = await synthesize('n', { reports: 40, connections: 3, withQueries: 2 });
    const added = await synthesize('n-plus-1', { reports: 41, connections: 3, withQueries: 2 });
    const newId = scaleReportId(40);
    const files = (s: Synthesized) => [...s.templates.keys()].sort();
    const newFiles = files(added).filter((f) => !before.templates.has(f));
    // At most the new report's shard is new (it held no report before); no shard disappears.
    assert.ok(newFiles.length <= 1, newFiles.join());
    assert.deepEqual(files(before).filter((f) => !added.templates.has(f)), []);

    const differing = files(before).filter((f) => JSON.stringify(before.templates.get(f)!.json) !== JSON.stringify(added.templates.get(f)!.json));
    const nestedDiffering = differing.filter((f) => NESTED.test(f));
    assert.equal(nestedDiffering.length + newFiles.length, 1, `one shard changes: ${[...nestedDiffering, ...newFiles].join()}`);
    if (nestedDiffering.length) {
      const [file] = nestedDiffering as [string];
      const [was, is] = [before.templates.get(file)!.json.Resources, added.templates.get(file)!.json.Resources];
      // The shard keeps every resource as it was and gains the new report's schedule and table.
      for (const [id, r] of Object.entries(was)) assert.deepEqual(is[id], r, id);
      const gained = Object.keys(is).filter((id) => !(id in was));
      assert.deepEqual(gained.map((id) => is[id]!.Type).sort(), ['AWS::Athena::NamedQuery', 'AWS::Glue::Table', 'AWS::Scheduler::Schedule']);
      for (const id of gained) assert.match(id, new RegExp(newId), id);
    }

    // The parent: the same logical ids (a new shard's stack aside), the same resources but the functions' code (the
    // catalog file is in their bundles) and the changed shard's nested stack (its template's hash).
    const [was, is] = [parentOf(before).Resources, parentOf(added).Resources];
    const newStacks = Object.keys(is).filter((id) => !(id in was));
    assert.deepEqual(newStacks.map((id) => is[id]!.Type), newFiles.length ? ['AWS::CloudFormation::Stack'] : []);
    assert.deepEqual(Object.keys(was).filter((id) => !(id in is)), []);
    // The dashboard may name its reports (its widgets are lib/constructs/dashboard.ts's business): its id stays.
    const changed = Object.keys(was).filter((id) => JSON.stringify(was[id]) !== JSON.stringify(is[id]) && was[id]!.Type !== 'AWS::CloudWatch::Dashboard');
    // Three functions carry the catalog: fetch, parse and the freshness check; the loads table projects every report id.
    const expected = ['AWS::Glue::Table', 'AWS::Lambda::Function', 'AWS::Lambda::Function', 'AWS::Lambda::Function', ...(nestedDiffering.length ? ['AWS::CloudFormation::Stack'] : [])];
    assert.deepEqual(changed.map((id) => was[id]!.Type).sort(), expected.sort(), changed.join());
    for (const id of changed.filter((id) => was[id]!.Type === 'AWS::Lambda::Function')) {
      assert.deepEqual({ ...was[id]!.Properties, Code: undefined }, { ...is[id]!.Properties, Code: undefined }, `${id}: only its code`);
    }
  });

  it('places a report by its id alone, into a fixed number of shards', () => {
    assert.equal(shardOf('transactions'), shardOf('transactions'));
    const shards = new Set(Array.from({ length: 200 }, (_, i) => shardOf(scaleReportId(i))));
    assert.equal(shards.size, REPORT_SHARD_COUNT, 'two hundred ids reach every shard');
    for (const s of shards) assert.ok(Number.isInteger(s) && s >= 0 && s < REPORT_SHARD_COUNT);
  });

  it("runs the compliance packs on the shards' resources too: a finding in a nested stack fails the synthesis", async () => {
    const unencrypted = (stack: ReportsPipelineStack) => {
      new sqs.Queue(stack.reportShards.of(scaleReportId(0)), 'Unencrypted', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    };
    await assert.rejects(
      synthesize('nag', { reports: 1, connections: 1, withQueries: 0 }, { configure: unencrypted }),
      (e: unknown) => e instanceof Error && /Validation failed/.test(e.message),
    );
    const report = readFileSync(join(ROOT, 'nag', 'cdk.out', 'validation-report.json'), 'utf8');
    assert.match(report, /Reports\/Shard\d\d\/Unencrypted\/Resource/);
  });
});
