import type { Cfn } from '../infra/helpers.js';
import type { IamCheck } from './actions.js';
import type { Caller } from './evaluate.js';
import { SAMPLE } from './resolve.js';
import type { StackWorld } from './stack-world.js';

/**
 * The requests AWS services make on the stack's behalf, found by walking the template (every alarm, schedule,
 * notification, event source and failure destination it has, none listed by hand): CloudWatch publishing each
 * alarm to the alarm topic and using the topic's key (AWS's SNS guide, "Enable compatibility between event sources
 * from AWS services and encrypted topics": kms:GenerateDataKey* and kms:Decrypt for cloudwatch.amazonaws.com), S3
 * sending its notifications to the parse queue with the queue's key, the Scheduler's roles sending each run to its
 * FIFO queue (and a failed one to the dead-letter queue) or invoking a function, Lambda polling a queue and sending a
 * failed invocation to its destination as the function's role. SQS calls KMS for a role with kms:ViaService and the
 * queue's ARN as encryption context; a service principal calls KMS itself, with the source it acts for.
 */

export interface ServiceRequest {
  path: string;
  caller: Caller;
  check: IamCheck;
}

const { account, region } = SAMPLE;
const targetId = (v: Cfn): string | undefined => (v && typeof v === 'object' ? (v.Ref ?? [v['Fn::GetAtt']].flat()[0]) : undefined);

export function serviceRequests(world: StackWorld): ServiceRequest[] {
  const { resources, resolve, arnOf } = world.template;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const keyOf = (id: string) => (resources[id]?.Properties?.KmsMasterKeyId ? String(resolve(resources[id]!.Properties!.KmsMasterKeyId)) : undefined);
  const service = (name: string): Caller => ({ name, principal: name, identityPolicies: [] });
  const out: ServiceRequest[] = [];
  const add = (path: string, caller: Caller, action: string, resource: string, context: IamCheck['context'] = {}) =>
    out.push({ path, caller, check: { action, resource, context, why: path } });

  /** A role sending to a queue: SendMessage, and SQS using the queue's key for it. */
  const roleSends = (path: string, caller: Caller, queueId: string) => {
    add(path, caller, 'sqs:SendMessage', arnOf(queueId));
    const key = keyOf(queueId);
    const viaSqs = { 'kms:ViaService': `sqs.${region}.amazonaws.com`, 'kms:CallerAccount': account, 'kms:EncryptionContext:aws:sqs:arn': arnOf(queueId) };
    if (key) for (const action of ['kms:GenerateDataKey', 'kms:Decrypt']) add(`${path}: SQS uses the queue's key`, caller, action, key, viaSqs);
  };

  for (const [alarmId, alarm] of ofType('AWS::CloudWatch::Alarm')) {
    const name = alarm.Properties?.AlarmName !== undefined ? String(resolve(alarm.Properties.AlarmName)) : alarmId;
    const source = { 'aws:SourceArn': `arn:aws:cloudwatch:${region}:${account}:alarm:${name}`, 'aws:SourceAccount': account };
    const topics = [alarm.Properties?.AlarmActions, alarm.Properties?.OKActions, alarm.Properties?.InsufficientDataActions].flat().map(targetId);
    for (const topicId of new Set(topics.filter((id): id is string => resources[id ?? '']?.Type === 'AWS::SNS::Topic'))) {
      const path = `CloudWatch alarm ${name} -> ${topicId}`;
      add(path, service('cloudwatch.amazonaws.com'), 'sns:Publish', arnOf(topicId), source);
      const key = keyOf(topicId);
      // AWS documents no source context on CloudWatch's KMS requests: the key must allow them with none.
      if (key) for (const action of ['kms:GenerateDataKey', 'kms:Decrypt']) add(`${path}: the topic's key`, service('cloudwatch.amazonaws.com'), action, key, {});
    }
  }
  for (const [, n] of ofType('Custom::S3BucketNotifications')) {
    const bucketId = targetId(n.Properties?.BucketName)!;
    for (const q of n.Properties?.NotificationConfiguration?.QueueConfigurations ?? []) {
      const queueId = targetId(q.QueueArn)!;
      const path = `S3 notification ${bucketId} -> ${queueId}`;
      const source = { 'aws:SourceArn': arnOf(bucketId), 'aws:SourceAccount': account };
      add(path, service('s3.amazonaws.com'), 'sqs:SendMessage', arnOf(queueId), source);
      const key = keyOf(queueId);
      if (key) for (const action of ['kms:GenerateDataKey', 'kms:Decrypt']) add(`${path}: the queue's key`, service('s3.amazonaws.com'), action, key, source);
    }
  }
  for (const [scheduleId, schedule] of ofType('AWS::Scheduler::Schedule')) {
    const target = schedule.Properties!.Target;
    const caller = world.roleCaller(targetId(target.RoleArn)!, 'scheduler');
    const targetRef = targetId(target.Arn)!;
    if (resources[targetRef]?.Type === 'AWS::Lambda::Function') add(`Scheduler ${scheduleId} -> ${targetRef}`, caller, 'lambda:InvokeFunction', arnOf(targetRef));
    else roleSends(`Scheduler ${scheduleId} -> ${targetRef}`, caller, targetRef);
    const dlq = targetId(target.DeadLetterConfig?.Arn);
    if (dlq) roleSends(`Scheduler ${scheduleId} -> dead letters ${dlq}`, caller, dlq);
  }
  const functionRole = (fnRef: Cfn) => world.roleCaller(targetId(resources[targetId(fnRef)!]!.Properties!.Role)!, `lambda for ${targetId(fnRef)}`);
  for (const [mappingId, mapping] of ofType('AWS::Lambda::EventSourceMapping')) {
    const queueId = targetId(mapping.Properties?.EventSourceArn)!;
    const caller = functionRole(mapping.Properties!.FunctionName);
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes']) add(`Lambda polls ${queueId} (${mappingId})`, caller, action, arnOf(queueId));
    const key = keyOf(queueId);
    const viaSqs = { 'kms:ViaService': `sqs.${region}.amazonaws.com`, 'kms:CallerAccount': account, 'kms:EncryptionContext:aws:sqs:arn': arnOf(queueId) };
    if (key) add(`Lambda polls ${queueId}: SQS decrypts with the queue's key`, caller, 'kms:Decrypt', key, viaSqs);
  }
  for (const [, config] of ofType('AWS::Lambda::EventInvokeConfig')) {
    const destination = targetId(config.Properties?.DestinationConfig?.OnFailure?.Destination);
    if (destination) roleSends(`Lambda failure destination ${destination}`, functionRole(config.Properties!.FunctionName), destination);
  }
  return out;
}
