import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks, PCIDSS321Checks } from 'cdk-nag';

/**
 * The rule packs every synthesis runs (cdk-nag 3: CDK policy-validation plugins). A finding fails the
 * synthesis; acknowledgements live on the construct they concern, each with its reason.
 */
export function addCompliancePacks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new PCIDSS321Checks(app, { verbose: true }));
}
