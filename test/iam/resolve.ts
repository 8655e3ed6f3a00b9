import type { Cfn } from '../infra/helpers.js';

/**
 * A synthesized template read as CloudFormation would create it in one sample account and region: every Ref,
 * Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split and Fn::GetAZs replaced by the value it would have, so the
 * IAM policies become documents an evaluator can read. A resource without a name of its own gets one shaped like
 * CloudFormation's (stack name, logical id, a random suffix), so a policy matching on names is read as in AWS; a
 * secret's ARN gets the six random characters Secrets Manager appends.
 */

export const SAMPLE = { account: '123456789012', region: 'eu-central-1', partition: 'aws' } as const;
const { account, region } = SAMPLE;

export type Resources = Record<string, { Type: string; Properties?: Cfn }>;

export interface ResolvedTemplate {
  resources: Resources;
  /** The value of an expression of the template. */
  resolve(value: Cfn): Cfn;
  /** A resource's ARN, by logical id. */
  arnOf(logicalId: string): string;
}

const SECRET_SUFFIX = 'AbCdEf';

export function resolveTemplate(template: { Resources: Resources }, stackName: string): ResolvedTemplate {
  const resources = template.Resources;
  const pseudo: Record<string, Cfn> = {
    'AWS::AccountId': account,
    'AWS::Region': region,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': stackName,
    'AWS::StackId': `arn:aws:cloudformation:${region}:${account}:stack/${stackName}/00000000-0000-0000-0000-000000000000`,
    'AWS::NoValue': undefined,
  };
  const props = (id: string) => resources[id]?.Properties ?? {};
  /** CloudFormation's name for a resource without one: the stack's name, the logical id and a random suffix. */
  const generated = (id: string, max = 64) => `${stackName}-${id.slice(0, Math.max(1, max - stackName.length - 14))}-1A2B3C4D5E6F`;
  const named = (id: string, prop: string) => (props(id)[prop] !== undefined ? String(resolve(props(id)[prop])) : generated(id));

  function nameOf(id: string): string {
    const type = resources[id]?.Type;
    switch (type) {
      case 'AWS::S3::Bucket':
        return (props(id).BucketName !== undefined ? named(id, 'BucketName') : generated(id, 63)).toLowerCase();
      case 'AWS::SQS::Queue':
        return props(id).QueueName !== undefined ? named(id, 'QueueName') : `${generated(id)}${props(id).FifoQueue ? '.fifo' : ''}`;
      case 'AWS::SNS::Topic':
        return named(id, 'TopicName');
      case 'AWS::Lambda::Function':
        return named(id, 'FunctionName');
      case 'AWS::IAM::Role':
        return named(id, 'RoleName');
      case 'AWS::IAM::ManagedPolicy':
        return named(id, 'ManagedPolicyName');
      case 'AWS::Logs::LogGroup':
        return named(id, 'LogGroupName');
      case 'AWS::SecretsManager::Secret':
        return named(id, 'Name');
      case 'AWS::Athena::WorkGroup':
      case 'AWS::Scheduler::ScheduleGroup':
      case 'AWS::Scheduler::Schedule':
        return named(id, 'Name');
      case 'AWS::Glue::Database':
        return props(id).DatabaseInput?.Name !== undefined ? String(resolve(props(id).DatabaseInput.Name)) : id;
      case 'AWS::Glue::Table':
        return props(id).TableInput?.Name !== undefined ? String(resolve(props(id).TableInput.Name)) : id;
      default:
        return id;
    }
  }

  function arnOf(id: string): string {
    const type = resources[id]?.Type;
    const name = nameOf(id);
    switch (type) {
      case 'AWS::S3::Bucket':
        return `arn:aws:s3:::${name}`;
      case 'AWS::SQS::Queue':
        return `arn:aws:sqs:${region}:${account}:${name}`;
      case 'AWS::SNS::Topic':
        return `arn:aws:sns:${region}:${account}:${name}`;
      case 'AWS::KMS::Key':
        return `arn:aws:kms:${region}:${account}:key/${keyIdOf(id)}`;
      case 'AWS::Lambda::Function':
        return `arn:aws:lambda:${region}:${account}:function:${name}`;
      case 'AWS::IAM::Role':
        return `arn:aws:iam::${account}:role/${name}`;
      case 'AWS::IAM::ManagedPolicy':
        return `arn:aws:iam::${account}:policy/${name}`;
      case 'AWS::Logs::LogGroup':
        return `arn:aws:logs:${region}:${account}:log-group:${name}:*`;
      case 'AWS::SecretsManager::Secret':
        return `arn:aws:secretsmanager:${region}:${account}:secret:${name}-${SECRET_SUFFIX}`;
      case 'AWS::Athena::WorkGroup':
        return `arn:aws:athena:${region}:${account}:workgroup/${name}`;
      case 'AWS::Scheduler::ScheduleGroup':
        return `arn:aws:scheduler:${region}:${account}:schedule-group/${name}`;
      default:
        return `arn:aws:cloudformation:${region}:${account}:resource/${id}`;
    }
  }

  /** A key id of the right shape (a UUID), stable per logical id. */
  function keyIdOf(id: string): string {
    const hex = Buffer.from(id).toString('hex').padEnd(32, '0').slice(0, 32);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  }

  function ref(id: string): Cfn {
    if (id in pseudo) return pseudo[id];
    const type = resources[id]?.Type;
    if (!type) throw new Error(`Ref to ${id}, which is not a resource or pseudo parameter of the template`);
    switch (type) {
      case 'AWS::SQS::Queue':
        return `https://sqs.${region}.amazonaws.com/${account}/${nameOf(id)}`;
      case 'AWS::SNS::Topic':
      case 'AWS::SecretsManager::Secret':
      case 'AWS::IAM::ManagedPolicy':
        return arnOf(id);
      case 'AWS::KMS::Key':
        return keyIdOf(id);
      default:
        return nameOf(id);
    }
  }

  function getAtt(id: string, attribute: string): Cfn {
    if (attribute === 'Arn' || attribute === 'TopicArn' || attribute === 'QueueArn') return arnOf(id);
    if (attribute === 'QueueName' || attribute === 'TopicName' || attribute === 'Name') return nameOf(id);
    if (attribute === 'QueueUrl') return ref(id);
    if (attribute === 'KeyId') return keyIdOf(id);
    return `${id}.${attribute}`;
  }

  function sub(text: string, vars: Record<string, Cfn> = {}): string {
    return text.replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
      if (name in vars) return String(resolve(vars[name]));
      if (name in pseudo || !name.includes('.')) return String(ref(name));
      const [id, ...attr] = name.split('.');
      return String(getAtt(id!, attr.join('.')));
    });
  }

  function resolve(value: Cfn): Cfn {
    if (Array.isArray(value)) return value.map(resolve);
    if (!value || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const [key] = keys as [string];
      const arg = value[key];
      switch (key) {
        case 'Ref':
          return ref(arg);
        case 'Fn::GetAtt': {
          const [id, ...attr] = Array.isArray(arg) ? arg : String(arg).split('.');
          return getAtt(id, attr.join('.'));
        }
        case 'Fn::Join':
          return (resolve(arg[1]) as Cfn[]).join(arg[0]);
        case 'Fn::Sub':
          return Array.isArray(arg) ? sub(arg[0], arg[1]) : sub(arg);
        case 'Fn::Select':
          return (resolve(arg[1]) as Cfn[])[Number(resolve(arg[0]))];
        case 'Fn::Split':
          return String(resolve(arg[1])).split(arg[0]);
        case 'Fn::GetAZs':
          return [`${region}a`, `${region}b`, `${region}c`];
      }
      if (key.startsWith('Fn::')) throw new Error(`${key} is not resolved by test/iam/resolve.ts: add it`);
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
  }

  return { resources, resolve, arnOf };
}
