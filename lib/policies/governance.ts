import { Aspects, CfnResource, TagManager, Tags, type IAspect, type Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
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
  const tags = { project: NAME_PREFIX, environment: props.environment, ...props.tags };
  for (const [key, value] of Object.entries(tags)) Tags.of(stack).add(key, value);
  Aspects.of(stack).add(new TagCdkHelpers(tags));
  Aspects.of(stack).add(new KeyGrantsForAwsServicesOnly());
  if (props.permissionsBoundaryArn) {
    iam.PermissionsBoundary.of(stack).apply(iam.ManagedPolicy.fromManagedPolicyArn(stack, 'PermissionsBoundary', props.permissionsBoundaryArn));
  }
}

/**
 * CDK's own helper providers (the default-security-group cleaner, the bucket emptier) write their role and function as
 * plain CfnResources, which Tags.of does not reach: they relied on the stack's tags, which CloudFormation passes on
 * only to some resource types and only `cdk deploy` sets, so an SCP requiring a tag at creation refused them. The
 * tags go into their template here.
 */
class TagCdkHelpers implements IAspect {
  constructor(private readonly tags: Readonly<Record<string, string>>) {}

  visit(node: IConstruct): void {
    if (!CfnResource.isCfnResource(node) || TagManager.isTaggable(node) || TagManager.isTaggableV2(node)) return;
    if (node.cfnResourceType !== 'AWS::IAM::Role' && node.cfnResourceType !== 'AWS::Lambda::Function') return;
    node.addPropertyOverride(
      'Tags',
      Object.entries(this.tags).map(([Key, Value]) => ({ Key, Value })),
    );
  }
}
