import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import type { Construct } from 'constructs';
import { INLINE_POLICY_REASON } from '../constructs/pipeline-function.js';

/**
 * EventBridge Scheduler's targets and roles as the stack's schedules use them: each role may be assumed only by
 * schedules of this account, and each target grants its role the one action it calls on its one resource, narrower
 * than CDK's own targets.
 */

/** A role for schedules: only the Scheduler of this account may assume it (confused-deputy protection). */
export function schedulerRole(scope: Construct, id: string, description: string): iam.Role {
  const role = new iam.Role(scope, id, {
    assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com').withConditions({ StringEquals: { 'aws:SourceAccount': Stack.of(scope).account } }),
    description,
  });
  Validations.of(role).acknowledge({ id: 'PCI.DSS.321-IAMNoInlinePolicy', reason: INLINE_POLICY_REASON });
  return role;
}

/** The Scheduler's Lambda target, granting its role lambda:InvokeFunction on the function itself and not on its versions (CDK's adds "<arn>:*"). */
export class FunctionTarget extends targets.LambdaInvoke {
  private readonly fn: lambda.IFunction;

  constructor(fn: lambda.IFunction, props: targets.ScheduleTargetBaseProps) {
    super(fn, props);
    this.fn = fn;
  }

  protected override addTargetActionToRole(role: iam.IRole): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.fn.functionArn] }));
  }
}

/**
 * The Scheduler's SQS target, granting its role sqs:SendMessage on the queue and nothing more: CDK's own adds
 * kms:GenerateDataKey* for the queue's key, a wildcard where sending needs two exact actions, which the role
 * gets once for all queues (lib/constructs/fetch.ts).
 */
export class FifoQueueTarget extends targets.SqsSendMessage {
  private readonly destination: sqs.IQueue;

  constructor(queue: sqs.IQueue, props: targets.SqsSendMessageProps) {
    super(queue, props);
    this.destination = queue;
  }

  protected override addTargetActionToRole(role: iam.IRole): void {
    this.destination.grant(role, 'sqs:SendMessage');
  }
}
