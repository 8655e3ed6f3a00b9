import { App, Stack } from 'aws-cdk-lib';
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
  template: Template;
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
    entries: { fetch: FIXTURE_ENTRY, parse: FIXTURE_ENTRY },
  });
  configure?.(app);
  return { app, stack, template: Template.fromStack(stack) };
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
