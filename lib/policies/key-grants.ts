import type { IAspect } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { IConstruct } from 'constructs';

/**
 * Every KMS key of the stack refuses kms:CreateGrant unless an AWS service asks for its own use (Lambda, say, when a
 * function's configuration is encrypted): a grant is a second way to use a key that its policy does not show. This is
 * Control Tower's CT.KMS.PR.3, in the exact shape its rule accepts: Deny, Principal "*", Resource "*", and only
 * BoolIfExists on kms:GrantIsForAWSResource and aws:PrincipalIsAWSService, both "false". No service this stack uses
 * creates grants on a caller's behalf outside those conditions (S3, SQS, SNS, Secrets Manager and CloudWatch Logs call
 * the key directly), so nothing the pipeline does is refused.
 */
export class KeyGrantsForAwsServicesOnly implements IAspect {
  visit(node: IConstruct): void {
    if (!(node instanceof kms.Key)) return;
    node.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'DenyGrantsExceptForAwsServices',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['kms:CreateGrant'],
        resources: ['*'], // in a key policy "*" means this key
        conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
      }),
    );
  }
}
