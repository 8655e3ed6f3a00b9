import { App, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { environmentOf, parseEnvironment, readEnvironmentSource, type EnvironmentConfig } from '../../lib/environment/environments.js';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { projectPath } from '../../lib/constructs/pipeline-function.js';
import { ReportsPipelineStack, stackName } from '../../lib/reports-pipeline-stack.js';

/** Bundled in place of the real handlers, so the infrastructure tests need only the local esbuild. */
export const FIXTURE_ENTRY = projectPath('test/infra/fixtures/noop-handler.ts');

/** A valid environment with test values; `overrides` replace top-level fields. */
export function testConfig(overrides: Record<string, unknown> = {}): EnvironmentConfig {
  return parseEnvironment(
    {
      name: 'test',
      gateway: { endpointUrl: 'https://gateway.test/paynet-ui/services/v2/rpt-engine' },
      secret: { name: 'paynet-reports/test/gateway' },
      alarmEmails: ['ops@merchant.test'],
      ...overrides,
    },
    'test config',
  );
}

/**
 * A shipped environment, read from its own file: tests name the files they mean (explicit sources), so an
 * environment a user adds to config/environments/ changes no test.
 */
export function shippedEnvironment(name: 'integration' | 'production'): EnvironmentConfig {
  const file = `config/environments/${name}.json`;
  return environmentOf(readEnvironmentSource(projectPath(file), file));
}

/**
 * Logical ids of the gateway secret and its key in every stack deployed before connections (paths
 * Credentials/Secret and Credentials/Key): a changed id would replace the named secret, so they never change.
 */
export const CREDENTIALS_IDS = { secret: 'CredentialsSecret40F8BB41', key: 'CredentialsKey849F44B7' } as const;

/** An empty stack in a fresh app, for one construct. */
export function emptyStack(): Stack {
  return new Stack(new App(), 'Test');
}

export interface SynthesizedPipeline {
  app: App;
  stack: ReportsPipelineStack;
  /** The environment as one template: the parent with its report shards inlined (wholeTemplate). */
  template: Template;
  /** The parent stack's own template, nested stacks as AWS::CloudFormation::Stack resources. */
  parent: Template;
}

/** The parent stack and each nested stack under it (the report shards), each with its template. */
export function everyTemplate(stack: Stack): Array<{ stack: Stack; template: Template }> {
  const nested = stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c));
  return [stack, ...nested].map((s) => ({ stack: s, template: Template.fromStack(s) }));
}

/**
 * What a deploy makes of a stack and its nested stacks, as one template: each nested stack's resources in place of
 * its AWS::CloudFormation::Stack resource, every Ref to one of its parameters replaced by the value the parent
 * passes, and the nested stack's DependsOn added to each of its resources (CloudFormation creates them after).
 * The template-walking checks (delivery paths, the first deploy) then read references across stacks as they
 * resolve, and a parameter the parent forgot to pass shows as a Ref to nothing.
 */
export function wholeTemplate(stack: Stack): Template {
  const json = structuredClone(Template.fromStack(stack).toJSON()) as { Resources: Record<string, Cfn> };
  const children = stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c) && c.nestedStackParent === stack);
  for (const nested of children) {
    const resourceId = stack.resolve(nested.nestedStackResource!.logicalId) as string;
    const { Properties, DependsOn = [] } = json.Resources[resourceId];
    delete json.Resources[resourceId];
    const inlined = wholeTemplate(nested).toJSON() as { Resources: Record<string, Cfn> };
    const parameters = (Properties?.Parameters ?? {}) as Record<string, Cfn>;
    const substitute = (v: Cfn): Cfn =>
      Array.isArray(v) ? v.map(substitute) : v && typeof v === 'object' ? ('Ref' in v && v.Ref in parameters ? parameters[v.Ref] : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x)]))) : v;
    for (const [id, r] of Object.entries(inlined.Resources)) {
      if (id in json.Resources) throw new Error(`${id} is in the parent and in ${nested.node.path}`);
      json.Resources[id] = { ...substitute(r), ...(DependsOn.length ? { DependsOn: [...new Set([...(r.DependsOn ?? []), ...DependsOn])] } : {}) };
    }
  }
  return Template.fromJSON(json);
}

/**
 * The whole pipeline stack with the fixture handler, over the fixture catalog unless `reports` says otherwise. Each
 * call synthesizes (and bundles) once: call it once per test file and share the result, the suite runs on two cores.
 */
export function synthPipeline(
  config: EnvironmentConfig,
  configure?: (app: App) => void,
  reports: readonly ReportDefinition[] = loadCatalog().reports,
): SynthesizedPipeline {
  const app = new App();
  const stack = new ReportsPipelineStack(app, stackName(config.name), {
    config,
    reports,
    entries: { fetch: FIXTURE_ENTRY, parse: FIXTURE_ENTRY, freshness: FIXTURE_ENTRY },
  });
  configure?.(app);
  return { app, stack, template: wholeTemplate(stack), parent: Template.fromStack(stack) };
}

/**
 * Synthesized CloudFormation, read by path in assertions. Templates are untyped JSON and a wrong path
 * fails the assertion anyway, so one explicit alias here instead of a cast at every read.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Cfn = any;

type Resources = Record<string, { Type: string; Properties?: Cfn; DeletionPolicy?: string; Metadata?: Cfn }>;

/** Resources of one type, by logical id. */
export function resourcesOf(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** The logical id of a construct's CloudFormation resource. */
export function logicalIdOf(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.resolve((construct.node.defaultChild as { logicalId: string }).logicalId) as string;
}
