import type { Cfn } from '../infra/helpers.js';
import type { ResolvedTemplate } from './resolve.js';

/**
 * The IAM policies of a resolved template (resolve.ts), as an evaluator wants them: per role its identity policies
 * and its permissions boundary's ARN; per resource (bucket, queue, topic, key, secret) its resource policy; the S3
 * gateway endpoint's policy for a function in the VPC. Nothing here decides anything: iam-simulate does.
 */

export interface NamedPolicy {
  name: string;
  policy: Cfn;
}

export interface RoleDocuments {
  logicalId: string;
  arn: string;
  identityPolicies: NamedPolicy[];
  /** AWS managed policies attached by ARN: their text is AWS's, named here so a reader sees them. */
  awsManaged: string[];
  boundaryArn?: string;
}

export interface StackPolicies {
  roles: Map<string, RoleDocuments>;
  /** The resource policy guarding a resource (or an object of a bucket), by the resource's ARN. */
  resourcePolicyOf(arn: string): NamedPolicy | undefined;
  /** The KMS key (ARN) an SSE-KMS bucket encrypts with, by bucket name. */
  bucketKeyOf(bucket: string): string | undefined;
  /** A function's role (logical id) and its resolved environment variables, by the function's logical id. */
  functions: Map<string, { role: string; variables: Record<string, string>; inVpc: boolean }>;
  /** The policy of the S3 gateway endpoint of the stack's VPC, if it has one. */
  s3EndpointPolicy?: NamedPolicy;
  /** Logical id of a resource by its ARN. */
  idOfArn(arn: string): string | undefined;
  /** The stack's secrets by name: their ARN and the key (ARN) that encrypts them, when a key of the stack does. */
  secrets: Map<string, { arn: string; keyArn?: string }>;
}

const targetId = (v: Cfn): string | undefined => (v && typeof v === 'object' ? (v.Ref ?? [v['Fn::GetAtt']].flat()[0]) : undefined);

export function stackPolicies(t: ResolvedTemplate): StackPolicies {
  const entries = Object.entries(t.resources);
  const ofType = (type: string) => entries.filter(([, r]) => r.Type === type);
  const roles = new Map<string, RoleDocuments>();
  for (const [id, role] of ofType('AWS::IAM::Role')) {
    const p = role.Properties ?? {};
    const inline = ((p.Policies ?? []) as Cfn[]).map((x) => ({ name: `${id} inline ${x.PolicyName}`, policy: t.resolve(x.PolicyDocument) }));
    const managed = ((p.ManagedPolicyArns ?? []) as Cfn[]).map((a) => ({ ref: targetId(a), arn: String(t.resolve(a)) }));
    roles.set(id, {
      logicalId: id,
      arn: t.arnOf(id),
      identityPolicies: [
        ...inline,
        ...managed.filter((m) => m.ref && t.resources[m.ref]).map((m) => ({ name: m.ref!, policy: t.resolve(t.resources[m.ref!]!.Properties!.PolicyDocument) })),
      ],
      awsManaged: managed.filter((m) => !m.ref || !t.resources[m.ref]).map((m) => m.arn),
      ...(p.PermissionsBoundary ? { boundaryArn: String(t.resolve(p.PermissionsBoundary)) } : {}),
    });
  }
  for (const [id, policy] of [...ofType('AWS::IAM::Policy'), ...ofType('AWS::IAM::ManagedPolicy')]) {
    for (const r of (policy.Properties?.Roles ?? []) as Cfn[]) {
      const role = roles.get(targetId(r) ?? '');
      if (role && !role.identityPolicies.some((x) => x.name === id)) role.identityPolicies.push({ name: id, policy: t.resolve(policy.Properties!.PolicyDocument) });
    }
  }

  const byArn = new Map<string, string>();
  for (const [id] of entries) byArn.set(t.arnOf(id), id);
  const attached = new Map<string, NamedPolicy>();
  const attach = (type: string, listProp: string, docProp: string) => {
    for (const [id, r] of ofType(type)) {
      for (const target of [r.Properties?.[listProp]].flat() as Cfn[]) attached.set(targetId(target)!, { name: id, policy: t.resolve(r.Properties![docProp]) });
    }
  };
  attach('AWS::S3::BucketPolicy', 'Bucket', 'PolicyDocument');
  attach('AWS::SQS::QueuePolicy', 'Queues', 'PolicyDocument');
  attach('AWS::SNS::TopicPolicy', 'Topics', 'PolicyDocument');
  attach('AWS::SecretsManager::ResourcePolicy', 'SecretId', 'ResourcePolicy');
  for (const [id, key] of ofType('AWS::KMS::Key')) attached.set(id, { name: `${id} key policy`, policy: t.resolve(key.Properties!.KeyPolicy) });

  const bucketNames = new Map(ofType('AWS::S3::Bucket').map(([id]) => [t.arnOf(id).replace('arn:aws:s3:::', ''), id]));
  const idOfArn = (arn: string): string | undefined => {
    const s3 = /^arn:aws:s3:::([^/]+)/.exec(arn);
    return s3 ? bucketNames.get(s3[1]!) : byArn.get(arn);
  };

  const functions = new Map<string, { role: string; variables: Record<string, string>; inVpc: boolean }>();
  for (const [id, fn] of ofType('AWS::Lambda::Function')) {
    functions.set(id, { role: targetId(fn.Properties?.Role)!, variables: t.resolve(fn.Properties?.Environment?.Variables ?? {}), inVpc: Boolean(fn.Properties?.VpcConfig) });
  }
  const endpoint = ofType('AWS::EC2::VPCEndpoint').find(([, e]) => String(t.resolve(e.Properties?.ServiceName)).endsWith('.s3') && e.Properties?.PolicyDocument);

  return {
    roles,
    resourcePolicyOf: (arn) => attached.get(idOfArn(arn) ?? ''),
    bucketKeyOf: (bucket) => {
      const id = bucketNames.get(bucket);
      const sse = id && t.resources[id]!.Properties?.BucketEncryption?.ServerSideEncryptionConfiguration?.[0]?.ServerSideEncryptionByDefault;
      return sse?.SSEAlgorithm === 'aws:kms' ? String(t.resolve(sse.KMSMasterKeyID)) : undefined;
    },
    functions,
    ...(endpoint ? { s3EndpointPolicy: { name: `${endpoint[0]} (S3 gateway endpoint)`, policy: t.resolve(endpoint[1].Properties!.PolicyDocument) } } : {}),
    idOfArn,
    secrets: new Map(
      ofType('AWS::SecretsManager::Secret').map(([id, r]) => [
        String(t.resolve(r.Properties?.Name ?? id)),
        { arn: t.arnOf(id), ...(r.Properties?.KmsKeyId ? { keyArn: String(t.resolve(r.Properties.KmsKeyId)) } : {}) },
      ]),
    ),
  };
}
