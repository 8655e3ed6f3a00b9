import type { IamCheck } from './actions.js';
import type { Caller } from './evaluate.js';
import { SAMPLE } from './resolve.js';
import type { StackWorld } from './stack-world.js';

/**
 * Requests that must be refused, one per boundary between the roles: each function outside its own bucket, prefix
 * and secret, and the analysts anywhere but reading tables and writing query results. Each is evaluated as the
 * allowed requests are (the role's policies, the boundary, the target's resource policy); allowed, it fails the test.
 */

export interface DeniedRequest {
  caller: Caller;
  check: IamCheck;
}

const { account, region } = SAMPLE;

export function deniedRequests(world: StackWorld): DeniedRequest[] {
  const { stack } = world.synthesized;
  const bucket = (b: { bucketName: string }) => String(world.template.resolve(stack.resolve(b.bucketName)));
  const raw = bucket(stack.lake.rawBucket);
  const curated = bucket(stack.lake.curatedBucket);
  const [secret] = [...world.policies.secrets.values()];
  const object = (b: string, key: string) => `arn:aws:s3:::${b}/${key}`;
  const rawFile = object(raw, 'raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv');
  const table = object(curated, 'tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet');
  const lakeKey = world.policies.bucketKeyOf(curated)!;
  const check = (action: string, resource: string, why: string, context: IamCheck['context'] = {}): IamCheck => ({ action, resource, context, why });
  const secretRead = check('secretsmanager:GetSecretValue', secret!.arn, 'reads the gateway secret');
  const [fetch, parse, freshness, analyst] = [world.caller('fetch'), world.caller('parse'), world.caller('freshness'), world.analyst];
  return [
    { caller: parse, check: secretRead },
    ...(secret!.keyArn
      ? [
          {
            caller: parse,
            check: check('kms:Decrypt', secret!.keyArn, 'decrypts with the credentials key through Secrets Manager', {
              'kms:ViaService': `secretsmanager.${region}.amazonaws.com`,
              'kms:CallerAccount': account,
              'kms:EncryptionContext:SecretARN': secret!.arn,
            }),
          },
        ]
      : []),
    { caller: freshness, check: secretRead },
    { caller: analyst, check: secretRead },
    { caller: fetch, check: check('secretsmanager:GetSecretValue', `arn:aws:secretsmanager:${region}:${account}:secret:other-application/database-AbCdEf`, "reads another application's secret") },
    { caller: fetch, check: check('s3:GetObject', table, 'reads a curated table') },
    { caller: fetch, check: check('s3:GetObject', rawFile, 'reads a raw file back') },
    { caller: freshness, check: check('s3:GetObject', rawFile, 'reads a raw file') },
    { caller: freshness, check: check('s3:PutObject', object(curated, 'manifests/transactions/connection=default/dt=2026-11-20/x.json'), 'writes a manifest') },
    { caller: parse, check: check('s3:PutObject', rawFile, 'writes a raw file') },
    { caller: parse, check: check('s3:DeleteObject', table, 'deletes a table file') },
    { caller: analyst, check: check('s3:GetObject', rawFile, 'reads a raw file') },
    { caller: analyst, check: check('s3:GetObject', object(curated, 'rejected/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv'), 'reads rejected rows') },
    { caller: analyst, check: check('s3:PutObject', table, 'writes a table file') },
    { caller: analyst, check: check('s3:DeleteObject', table, 'deletes a table file') },
    { caller: analyst, check: check('glue:UpdateTable', `arn:aws:glue:${region}:${account}:table/${database(world)}/transactions`, 'changes a table') },
    { caller: analyst, check: check('kms:Decrypt', lakeKey, 'decrypts with the lake key outside S3 and Athena', { 'kms:CallerAccount': account }) },
  ];
}

const database = (world: StackWorld) =>
  String(world.template.resolve(Object.values(world.template.resources).find((r) => r.Type === 'AWS::Glue::Database')!.Properties!.DatabaseInput.Name));
