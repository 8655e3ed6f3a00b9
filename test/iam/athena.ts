import type { IamCheck } from './actions.js';
import type { RecordedRequest } from './recorder.js';
import { SAMPLE } from './resolve.js';
import type { ResolvedTemplate } from './resolve.js';

/**
 * What AWS checks when someone queries through Athena: Athena reads the Glue catalog, lists and reads the table's
 * files in S3, and writes and reads the result file, each as the caller (AWS's Athena guide, "Access to Amazon S3"
 * and "Fine-grained access to databases and tables": glue:GetDatabase and glue:GetTable on the catalog, the database
 * and the table; s3:GetBucketLocation, s3:ListBucket and s3:GetObject on the data; s3:PutObject and s3:GetObject on
 * the results location), and S3 calls KMS for the SSE-KMS objects of both buckets. The names come from the template:
 * the workgroup's result location, each table's location template.
 */

const { account, region } = SAMPLE;
type Input = Record<string, unknown>;

/** s3://bucket/prefix -> [bucket, prefix]. */
const s3Location = (url: string) => /^s3:\/\/([^/]+)\/(.*)$/.exec(url)!.slice(1) as [string, string];

export function athenaMappers(t: ResolvedTemplate, keyOfBucket: (bucket: string) => string | undefined) {
  const ofType = (type: string) => Object.entries(t.resources).filter(([, r]) => r.Type === type);
  const [workGroupId, workGroup] = ofType('AWS::Athena::WorkGroup')[0]!;
  const workGroupArn = t.arnOf(workGroupId);
  const [resultsBucket, resultsPrefix] = s3Location(String(t.resolve(workGroup.Properties!.WorkGroupConfiguration.ResultConfiguration.OutputLocation)));
  const tables = new Map(
    ofType('AWS::Glue::Table').map(([, r]) => {
      const input = t.resolve(r.Properties!.TableInput);
      return [String(input.Name), { database: String(t.resolve(r.Properties!.DatabaseName)), location: String(input.Parameters['storage.location.template']) }];
    }),
  );
  const viaS3 = (bucket: string, action: string, why: string): IamCheck[] => {
    const key = keyOfBucket(bucket);
    const context = { 'kms:ViaService': `s3.${region}.amazonaws.com`, 'kms:CallerAccount': account, 'kms:EncryptionContext:aws:s3:arn': `arn:aws:s3:::${bucket}` };
    return key ? [{ action, resource: key, context, why: `${why}: S3 uses the bucket's key` }] : [];
  };
  const resultFile = (id: string) => `arn:aws:s3:::${resultsBucket}/${resultsPrefix}${id}.csv`;

  const start = (i: Input): IamCheck[] => {
    const names = [...String(i.QueryString).matchAll(/FROM\s+"?([a-z0-9_]+)"?/gi)].map((m) => m[1]!);
    const dt = /"?dt"?\s*=\s*'([\d-]+)'/.exec(String(i.QueryString))?.[1] ?? '2026-11-20';
    const checks: IamCheck[] = [{ action: 'athena:StartQueryExecution', resource: `arn:aws:athena:${region}:${account}:workgroup/${i.WorkGroup}`, context: {}, why: 'the query' }];
    for (const name of names) {
      const table = tables.get(name);
      if (!table) throw new Error(`the query reads ${name}, which is no Glue table of the stack`);
      const catalog = `arn:aws:glue:${region}:${account}:catalog`;
      const database = `arn:aws:glue:${region}:${account}:database/${table.database}`;
      for (const resource of [catalog, database]) checks.push({ action: 'glue:GetDatabase', resource, context: {}, why: `Athena reads database ${table.database}` });
      for (const resource of [catalog, database, `arn:aws:glue:${region}:${account}:table/${table.database}/${name}`]) {
        checks.push({ action: 'glue:GetTable', resource, context: {}, why: `Athena reads table ${name}` });
      }
      // Partition projection fills the location template: one feed's partition of the queried day.
      const partition: Record<string, string> = { dt, connection: 'default', report: 'transactions' };
      const [bucket, template] = s3Location(table.location.replace(/\$\{([a-z_]+)\}/g, (_, key: string) => partition[key] ?? key));
      checks.push(
        { action: 's3:GetBucketLocation', resource: `arn:aws:s3:::${bucket}`, context: {}, why: `Athena locates the data of ${name}` },
        { action: 's3:ListBucket', resource: `arn:aws:s3:::${bucket}`, context: { 's3:prefix': template }, why: `Athena lists ${name}'s files of dt=${dt}` },
        { action: 's3:GetObject', resource: `arn:aws:s3:::${bucket}/${template}part`, context: {}, why: `Athena reads ${name}'s files` },
        ...viaS3(bucket, 'kms:Decrypt', `Athena reads ${name}'s files`),
      );
    }
    checks.push(
      { action: 's3:GetBucketLocation', resource: `arn:aws:s3:::${resultsBucket}`, context: {}, why: 'Athena locates the results bucket' },
      { action: 's3:PutObject', resource: resultFile('query-id'), context: {}, why: 'Athena writes the result file' },
      ...viaS3(resultsBucket, 'kms:GenerateDataKey', 'Athena writes the result file'),
    );
    return checks;
  };

  return {
    'athena StartQueryExecution': start,
    'athena GetQueryExecution': (): IamCheck[] => [{ action: 'athena:GetQueryExecution', resource: workGroupArn, context: {}, why: '' }],
    'athena GetQueryResults': (i: Input): IamCheck[] => [
      { action: 'athena:GetQueryResults', resource: workGroupArn, context: {}, why: '' },
      { action: 's3:GetObject', resource: resultFile(String(i.QueryExecutionId)), context: {}, why: 'Athena reads the result file' },
      ...viaS3(resultsBucket, 'kms:Decrypt', 'Athena reads the result file'),
    ],
  };
}

/** An analyst's query as the Athena console or `aws athena` sends it: start it in the workgroup, wait, read the result. */
export function analystQuery(t: ResolvedTemplate): RecordedRequest[] {
  const workGroup = t.resolve(Object.values(t.resources).find((r) => r.Type === 'AWS::Athena::WorkGroup')!.Properties!.Name);
  const database = t.resolve(Object.values(t.resources).find((r) => r.Type === 'AWS::Glue::Database')!.Properties!.DatabaseInput.Name);
  const request = (operation: string, input: Input): RecordedRequest => ({ caller: 'analyst', service: 'athena', operation, input, outcome: 'ok' });
  return [
    request('StartQueryExecution', {
      WorkGroup: workGroup,
      QueryExecutionContext: { Database: database },
      QueryString: `SELECT dt, count(*) FROM "transactions" WHERE "dt" = '2026-11-20' GROUP BY dt`,
    }),
    request('GetQueryExecution', { QueryExecutionId: 'query-id' }),
    request('GetQueryResults', { QueryExecutionId: 'query-id' }),
    // The coverage question, over the load manifests (the `loads` table): which providers a day includes.
    request('StartQueryExecution', {
      WorkGroup: workGroup,
      QueryExecutionContext: { Database: database },
      QueryString: `SELECT connection, outcome FROM "loads" WHERE report = 'transactions' AND "dt" = '2026-11-20'`,
    }),
  ];
}
