import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks, PCIDSS321Checks } from 'cdk-nag';
import { ControlTowerChecks } from '../control-tower/checks.js';

/**
 * The rule packs every synthesis runs (CDK policy-validation plugins): cdk-nag's AWS Solutions and PCI DSS 3.2.1
 * packs, and AWS Control Tower's proactive controls (lib/control-tower/checks.ts). A finding fails the synthesis;
 * cdk-nag's acknowledgements live on the construct they concern, each with its reason, Control Tower's exemptions in
 * one list (lib/control-tower/exemptions.ts).
 */
export function addCompliancePacks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new PCIDSS321Checks(app, { verbose: true }), new ControlTowerChecks());
}
