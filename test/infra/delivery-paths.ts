import type { Cfn } from './helpers.js';

/**
 * Every path on which an AWS service delivers into a resource of the stack, found by walking a synthesized
 * template (not listed by hand), and what each receiving side's policies say about it. A delivery fails at run
 * time, silently, when the receiving resource's policy or its KMS key policy does not let the service in:
 * CloudFormation deploys such a stack happily. The checks read the policies as IAM does for these cases: an
 * Allow for the service principal (or, for role-based delivery, for the role) on an action matching the one the
 * service performs, and no Deny that would apply other than the TLS-only deny (services deliver over TLS).
 */

export type PathKind =
  | 'alarm-to-topic'
  | 's3-notification-to-queue'
  | 'scheduler-to-queue'
  | 'scheduler-to-function'
  | 'scheduler-to-dead-letter-queue'
  | 'queue-to-function'
  | 'lambda-failure-to-queue'
  | 'logs-to-log-group';

export interface DeliveryPath {
  kind: PathKind;
  /** Who delivers: a service principal, or a role the service assumes. */
  from: string;
  /** Logical id of the receiving resource. */
  to: string;
  /** Why this path does not work, empty when it does. */
  problems: string[];
}

type Template = { Resources: Record<string, { Type: string; Properties?: Cfn }> };
type Statement = { Effect: 'Allow' | 'Deny'; Principal?: Cfn; Action?: string | string[]; Resource?: Cfn; Condition?: Cfn };

/** Renders intrinsic functions to comparable strings: {Ref: X} -> "${X}", Fn::GetAtt -> "${X.Attr}", Fn::Join joined. */
export function render(value: Cfn): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    if ('Ref' in value) return `\${${value.Ref}}`;
    if ('Fn::GetAtt' in value) return `\${${[value['Fn::GetAtt']].flat().join('.')}}`;
    if ('Fn::Join' in value) return (value['Fn::Join'][1] as Cfn[]).map(render).join(value['Fn::Join'][0]);
  }
  return JSON.stringify(value);
}

/** The logical id an ARN-valued expression points at ({Ref: X} or {Fn::GetAtt: [X, 'Arn']}), if any. */
function targetId(value: Cfn): string | undefined {
  if (value && typeof value === 'object') {
    if ('Ref' in value) return value.Ref;
    if ('Fn::GetAtt' in value) return [value['Fn::GetAtt']].flat()[0];
  }
  return undefined;
}

const globMatch = (pattern: string, action: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i').test(action);

const actionsOf = (s: Statement) => [s.Action ?? []].flat();
const covers = (s: Statement, action: string) => actionsOf(s).some((a) => globMatch(a, action));

function servicesOf(principal: Cfn): string[] {
  if (!principal || typeof principal !== 'object' || !('Service' in principal)) return [];
  return [principal.Service].flat().map(render);
}

function isTlsOnlyDeny(s: Statement): boolean {
  return s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false';
}

/**
 * The request context a delivering service presents: condition key -> value, rendered like the template
 * (render), e.g. {"aws:SourceArn": "${LakeRaw.Arn}", "aws:SourceAccount": "${AWS::AccountId}"}.
 */
export type RequestContext = Record<string, string>;

/** The condition operators the stack's resource policies use, evaluated as IAM does (ARN and String "Like" are globs). */
const OPERATORS: Record<string, (actual: string, expected: string) => boolean> = {
  StringEquals: (a, e) => a === e,
  StringLike: (a, e) => globMatch(e, a),
  ArnEquals: (a, e) => a === e,
  ArnLike: (a, e) => globMatch(e, a),
};

/**
 * Whether a statement's Condition block holds for the context: every operator, every key (a key the context lacks
 * does not match, as in IAM); an operator outside OPERATORS is a problem of its own, not a silent pass.
 */
export function conditionsHold(condition: Cfn, context: RequestContext): boolean {
  for (const [operator, keys] of Object.entries(condition ?? {})) {
    const test = OPERATORS[operator];
    if (!test) throw new Error(`condition operator ${operator} is not evaluated by this walk: add it to OPERATORS`);
    for (const [key, expected] of Object.entries(keys as Record<string, Cfn>)) {
      const actual = context[key];
      if (actual === undefined || ![expected].flat().some((e: Cfn) => test(actual, render(e)))) return false;
    }
  }
  return true;
}

/** What a resource-based policy (topic, queue, key) says to a service principal, with its request context, about each action. */
function serviceProblems(statements: Statement[], service: RegExp, actions: string[], what: string, context: RequestContext): string[] {
  const problems: string[] = [];
  for (const action of actions) {
    const matching = statements.filter((s) => s.Effect === 'Allow' && servicesOf(s.Principal).some((p) => service.test(p)) && covers(s, action));
    if (!matching.length) problems.push(`${what} does not allow ${service.source.replace(/[\^$\\]/g, '')} to ${action}`);
    else if (!matching.some((s) => conditionsHold(s.Condition, context))) {
      problems.push(`${what} allows ${action} only under conditions this delivery does not meet (${JSON.stringify(context)}): ${JSON.stringify(matching.map((s) => s.Condition))}`);
    }
    const denied = statements.find((s) => s.Effect === 'Deny' && !isTlsOnlyDeny(s) && covers(s, action) && conditionsHold(s.Condition, context));
    if (denied) problems.push(`${what} denies ${action}: ${JSON.stringify(denied)}`);
  }
  return problems;
}

export function walkDeliveryPaths(template: Template): DeliveryPath[] {
  const resources = template.Resources;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const statementsOf = (doc: Cfn): Statement[] => (doc?.Statement ?? []) as Statement[];
  const keyPolicy = (keyId: string | undefined): Statement[] | undefined =>
    keyId && resources[keyId]?.Type === 'AWS::KMS::Key' ? statementsOf(resources[keyId]!.Properties?.KeyPolicy) : undefined;
  const attachedPolicy = (policyType: string, listProp: string, id: string): Statement[] | undefined => {
    const found = ofType(policyType).filter(([, p]) => ([p.Properties?.[listProp]].flat() as Cfn[]).some((t) => targetId(t) === id));
    return found.length ? found.flatMap(([, p]) => statementsOf(p.Properties?.PolicyDocument)) : undefined;
  };

  /** KMS use by a service principal, checked on the key policy of the key that encrypts the receiver. */
  const keyProblems = (keyRef: Cfn, service: RegExp, actions: string[], receiver: string, context: RequestContext): string[] => {
    if (keyRef === undefined) return [];
    const keyId = targetId(keyRef);
    const policy = keyPolicy(keyId);
    if (!policy) return [`${receiver} is encrypted with a key outside the stack (${render(keyRef)}): cannot check its policy`];
    return serviceProblems(policy, service, actions, `key policy of ${keyId}`, context);
  };
  const account = '${AWS::AccountId}';

  /** Role-based delivery: the role's policies allow the action on the target, and on its key (which delegates to IAM). */
  const roleProblems = (roleId: string | undefined, action: string, targetRef: string, keyRef: Cfn, kmsActions: string[]): string[] => {
    if (!roleId) return ['no role'];
    const statements = attachedPolicy('AWS::IAM::Policy', 'Roles', roleId) ?? [];
    const allows = (a: string, target: string) =>
      statements.some((s) => s.Effect === 'Allow' && covers(s, a) && [s.Resource].flat().some((r) => targetId(r) === target || render(r).includes(target)));
    const problems = allows(action, targetRef) ? [] : [`role ${roleId} may not ${action} on ${targetRef}`];
    const keyId = targetId(keyRef);
    if (keyId) {
      for (const a of kmsActions) if (!allows(a, keyId)) problems.push(`role ${roleId} may not ${a} with key ${keyId}`);
      const delegates = (keyPolicy(keyId) ?? []).some(
        (s) => s.Effect === 'Allow' && /:root$/.test(render(s.Principal?.AWS ?? '')) && kmsActions.every((a) => covers(s, a)),
      );
      if (!delegates) problems.push(`key policy of ${keyId} does not let IAM policies of the account grant ${kmsActions.join(', ')}`);
    }
    return problems;
  };

  const paths: DeliveryPath[] = [];
  const queueKey = (queueId: string) => resources[queueId]?.Properties?.KmsMasterKeyId;

  // CloudWatch alarm actions publishing to a topic of the stack.
  for (const [alarmId, alarm] of ofType('AWS::CloudWatch::Alarm')) {
    const actions = [...(alarm.Properties?.AlarmActions ?? []), ...(alarm.Properties?.OKActions ?? []), ...(alarm.Properties?.InsufficientDataActions ?? [])];
    for (const topicId of new Set(actions.map(targetId).filter((id): id is string => resources[id ?? '']?.Type === 'AWS::SNS::Topic'))) {
      const service = /^cloudwatch\.amazonaws\.com$/;
      const topicPolicy = attachedPolicy('AWS::SNS::TopicPolicy', 'Topics', topicId);
      const context = {
        'aws:SourceAccount': account,
        'aws:SourceArn': `arn:\${AWS::Partition}:cloudwatch:\${AWS::Region}:${account}:alarm:${render(alarm.Properties?.AlarmName ?? `\${${alarmId}}`)}`,
      };
      const problems = [
        // No topic policy: SNS's default one allows the account's services. A topic policy replaces it.
        ...(topicPolicy ? serviceProblems(topicPolicy, service, ['sns:Publish'], `topic policy of ${topicId}`, context) : []),
        ...keyProblems(resources[topicId]!.Properties?.KmsMasterKeyId, service, ['kms:Decrypt', 'kms:GenerateDataKey'], topicId, context),
      ];
      paths.push({ kind: 'alarm-to-topic', from: `cloudwatch.amazonaws.com (${alarmId})`, to: topicId, problems });
    }
  }

  // S3 event notifications into a queue (CDK writes them through Custom::S3BucketNotifications).
  for (const [, n] of ofType('Custom::S3BucketNotifications')) {
    for (const q of n.Properties?.NotificationConfiguration?.QueueConfigurations ?? []) {
      const queueId = targetId(q.QueueArn)!;
      const service = /^s3\.amazonaws\.com$/;
      const queuePolicy = attachedPolicy('AWS::SQS::QueuePolicy', 'Queues', queueId) ?? [];
      // S3 presents the notifying bucket's ARN and the account that owns it.
      const context = { 'aws:SourceArn': `\${${targetId(n.Properties?.BucketName)}.Arn}`, 'aws:SourceAccount': account };
      paths.push({
        kind: 's3-notification-to-queue',
        from: `s3.amazonaws.com (${render(n.Properties?.BucketName)})`,
        to: queueId,
        problems: [
          ...serviceProblems(queuePolicy, service, ['sqs:SendMessage'], `queue policy of ${queueId}`, context),
          ...keyProblems(queueKey(queueId), service, ['kms:GenerateDataKey', 'kms:Decrypt'], queueId, context),
        ],
      });
    }
  }

  // EventBridge Scheduler sending to its target queue and, when that fails, to the dead-letter queue, as its role.
  for (const [scheduleId, schedule] of ofType('AWS::Scheduler::Schedule')) {
    const target = schedule.Properties?.Target ?? {};
    const roleId = targetId(target.RoleArn);
    const trust = roleId ? statementsOf(resources[roleId]?.Properties?.AssumeRolePolicyDocument) : [];
    const trustProblems = trust.some((s) => s.Effect === 'Allow' && servicesOf(s.Principal).includes('scheduler.amazonaws.com') && covers(s, 'sts:AssumeRole'))
      ? []
      : [`role ${roleId} cannot be assumed by scheduler.amazonaws.com`];
    const queueId = targetId(target.Arn)!;
    const queue = resources[queueId];
    // The freshness check: the Scheduler invokes the function itself, as its role.
    if (queue?.Type === 'AWS::Lambda::Function') {
      paths.push({
        kind: 'scheduler-to-function',
        from: `scheduler.amazonaws.com as ${roleId} (${scheduleId})`,
        to: queueId,
        problems: [...trustProblems, ...roleProblems(roleId, 'lambda:InvokeFunction', queueId, undefined, [])],
      });
      continue;
    }
    const fifoProblems =
      queue?.Type !== 'AWS::SQS::Queue'
        ? [`the target ${queueId} is not a queue of the stack`]
        : queue.Properties?.FifoQueue && !target.SqsParameters?.MessageGroupId
          ? ['a FIFO queue target needs SqsParameters.MessageGroupId']
          : queue.Properties?.FifoQueue && !queue.Properties?.ContentBasedDeduplication
            ? [`the Scheduler sends to FIFO queue ${queueId} only with content-based deduplication`]
            : [];
    paths.push({
      kind: 'scheduler-to-queue',
      from: `scheduler.amazonaws.com as ${roleId} (${scheduleId})`,
      to: queueId,
      problems: [...trustProblems, ...fifoProblems, ...roleProblems(roleId, 'sqs:SendMessage', queueId, queueKey(queueId), ['kms:GenerateDataKey', 'kms:Decrypt'])],
    });
    const dlqId = targetId(target.DeadLetterConfig?.Arn);
    if (dlqId) {
      paths.push({
        kind: 'scheduler-to-dead-letter-queue',
        from: `scheduler.amazonaws.com as ${roleId} (${scheduleId})`,
        to: dlqId,
        problems: [...trustProblems, ...roleProblems(roleId, 'sqs:SendMessage', dlqId, queueKey(dlqId), ['kms:GenerateDataKey', 'kms:Decrypt'])],
      });
    }
  }

  // Lambda's poller reading a queue for a function, as the function's role: receive, delete, decrypt.
  for (const [mappingId, mapping] of ofType('AWS::Lambda::EventSourceMapping')) {
    const queueId = targetId(mapping.Properties?.EventSourceArn);
    if (!queueId || resources[queueId]?.Type !== 'AWS::SQS::Queue') continue;
    const fnId = targetId(mapping.Properties?.FunctionName)!;
    const roleId = targetId(resources[fnId]?.Properties?.Role);
    const [first, ...more] = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'].map((a) => roleProblems(roleId, a, queueId, queueKey(queueId), ['kms:Decrypt']));
    paths.push({ kind: 'queue-to-function', from: `lambda.amazonaws.com as ${roleId} (${mappingId})`, to: fnId, problems: [...new Set([...first!, ...more.flat()])] });
  }

  // Lambda asynchronous invocations: a failed event goes to the on-failure destination as the function's role.
  for (const [, config] of ofType('AWS::Lambda::EventInvokeConfig')) {
    const fnId = targetId(config.Properties?.FunctionName)!;
    const destination = targetId(config.Properties?.DestinationConfig?.OnFailure?.Destination);
    if (!destination) continue;
    const roleId = targetId(resources[fnId]?.Properties?.Role);
    paths.push({
      kind: 'lambda-failure-to-queue',
      from: `lambda.amazonaws.com as ${roleId} (${fnId})`,
      to: destination,
      problems: roleProblems(roleId, 'sqs:SendMessage', destination, queueKey(destination), ['kms:GenerateDataKey', 'kms:Decrypt']),
    });
  }

  // CloudWatch Logs writing a log group encrypted with a key of the stack.
  for (const [groupId, group] of ofType('AWS::Logs::LogGroup')) {
    if (group.Properties?.KmsKeyId === undefined) continue;
    paths.push({
      kind: 'logs-to-log-group',
      from: 'logs.<region>.amazonaws.com',
      to: groupId,
      problems: keyProblems(group.Properties.KmsKeyId, /^logs\.(\$\{AWS::Region\}|[a-z0-9-]+)\.amazonaws\.com$/, ['kms:Encrypt', 'kms:Decrypt', 'kms:GenerateDataKey'], groupId, {
        // CloudWatch Logs names the log group in the encryption context of every call it makes with the key.
        'kms:EncryptionContext:aws:logs:arn': `arn:\${AWS::Partition}:logs:\${AWS::Region}:${account}:log-group:\${${groupId}}`,
      }),
    });
  }
  return paths;
}

/** Condition keys that tie a service principal's access to resources or accounts of this stack. */
const PINNING_KEYS = [/^aws:SourceArn$/, /^aws:SourceAccount$/, /^kms:EncryptionContext:/, /^kms:ViaService$/];

/**
 * The one grant left unpinned, as AWS writes it: the statement AWS's SNS guide gives a service publishing to an
 * encrypted topic has no condition, and CloudWatch's KMS requests are not documented to carry a source
 * (lib/constructs/alarms.ts, allowCloudWatchToUseKey); a condition they lack would drop every alarm silently.
 */
export const AS_AWS_WRITES_IT = /: cloudwatch\.amazonaws\.com kms:GenerateDataKey\*, kms:Decrypt$/;

/**
 * Allow statements for a service principal, in the resource policies of the stack (key, queue, topic and bucket
 * policies), that no condition ties to a source: any resource of that service, in any account, may use them.
 */
export function unpinnedServiceGrants(template: Template): string[] {
  const found: string[] = [];
  for (const [id, r] of Object.entries(template.Resources)) {
    const doc =
      r.Type === 'AWS::KMS::Key' ? r.Properties?.KeyPolicy : ['AWS::SQS::QueuePolicy', 'AWS::SNS::TopicPolicy', 'AWS::S3::BucketPolicy'].includes(r.Type) ? r.Properties?.PolicyDocument : undefined;
    for (const s of (doc?.Statement ?? []) as Statement[]) {
      if (s.Effect !== 'Allow' || !servicesOf(s.Principal).length) continue;
      const keys = Object.values(s.Condition ?? {}).flatMap((k) => Object.keys(k as object));
      const grant = `${id}: ${servicesOf(s.Principal).join(', ')} ${actionsOf(s).join(', ')}`;
      if (!keys.some((k) => PINNING_KEYS.some((p) => p.test(k))) && !AS_AWS_WRITES_IT.test(grant)) found.push(grant);
    }
  }
  return found;
}
