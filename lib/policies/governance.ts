import { Aspects, Tags, type Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { NAME_PREFIX } from '../../functions/core/naming.js';
import { KeyGrantsForAwsServicesOnly } from './key-grants.js';

export interface GovernanceProps {
  readonly environment: string;
  /** A managed policy every IAM role of the stack gets as its permissions boundary. */
  readonly permissionsBoundaryArn?: string;
  /** Tags besides `project` and `environment`, on every taggable resource and on the stack. */
  readonly tags: Readonly<Record<string, string>>;
}

/**
 * What a governed AWS organisation asks of every stack (docs/deploy.md, "Governed accounts"): tags on every resource,
 * a permissions boundary on every role, and KMS grants for AWS services only on every key (lib/policies/key-grants.ts). Both act on the whole stack, CDK's own helper functions included (the
 * bucket-notification handler, the auto-delete-objects provider, the default-security-group restriction), so a role
 * added later needs nothing to comply.
 *
 * The boundary is an aspect on every AWS::IAM::Role (and User) resource, L1 ones included, which is what CDK's helper
 * providers create. Tags go on every resource CDK can tag, and on the stack itself: CloudFormation passes stack tags
 * on to each resource it creates, which reaches those the template cannot tag (a tag-on-create SCP sees them too).
 */
export function applyGovernance(stack: Stack, props: GovernanceProps): void {
  Tags.of(stack).add('project', NAME_PREFIX);
  Tags.of(stack).add('environment', props.environment);
  for (const [key, value] of Object.entries(props.tags)) Tags.of(stack).add(key, value);
  Aspects.of(stack).add(new KeyGrantsForAwsServicesOnly());
  if (props.permissionsBoundaryArn) {
    iam.PermissionsBoundary.of(stack).apply(iam.ManagedPolicy.fromManagedPolicyArn(stack, 'PermissionsBoundary', props.permissionsBoundaryArn));
  }
}
