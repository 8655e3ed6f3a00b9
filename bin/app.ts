#!/usr/bin/env node
import { resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { loadConfiguration } from '../lib/environment/configuration.js';
import { isPipelineError } from '../functions/core/errors.js';
import { addCompliancePacks } from '../lib/policies/compliance.js';
import { ReportsPipelineStack, stackName } from '../lib/reports-pipeline-stack.js';

/**
 * The CDK app: one stack per config/environments/<name>.json (PaynetReports-<name>), checked by
 * cdk-nag's AWS Solutions and PCI DSS 3.2.1 packs and AWS Control Tower's proactive controls on every synthesis.
 *
 * Context:
 *   -c handlerEntry=<file>   bundle this module for every function instead of the real handlers (an offline
 *                            check of the infrastructure alone, e.g. test/infra/fixtures/noop-handler.ts).
 *   -c environments=a,b      synthesize only these environments.
 */
const app = new App();
const override = app.node.tryGetContext('handlerEntry') as string | undefined;
const only = (app.node.tryGetContext('environments') as string | undefined)?.split(',').map((s) => s.trim());
const entries = override ? { fetch: resolve(override), parse: resolve(override), freshness: resolve(override) } : undefined;
/**
 * A broken catalog or environment (file, field) or a saved query Athena cannot parse (file, line, column) stops
 * the synthesis with its message instead of a stack trace.
 */
function orExit<T>(step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (!isPipelineError(e)) throw e;
    console.error(`${e.code}: ${e.message}`);
    process.exit(1);
  }
}
// Every definition and every config/environments/*.json (a new environment is a new file, no edit here), each
// report's connection defined by every environment whichever of them this synthesis builds: every problem at once.
const { catalog, environments } = orExit(() => loadConfiguration());
const reports = catalog.reports;

for (const config of environments) {
  if (only && !only.includes(config.name)) continue;
  orExit(() => new ReportsPipelineStack(app, stackName(config.name), { config, reports, entries }));
}
addCompliancePacks(app);
app.synth();
