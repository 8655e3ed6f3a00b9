import { type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct, type IConstruct } from 'constructs';
import { PREFIX } from '../../functions/core/lake/s3-keys.js';
import { RESULTS_PREFIX } from './catalog.js';

export interface AnalystsProps {
  readonly environment: string;
  readonly databaseName: string;
  /** The database construct, when in this stack: names the table wildcard cdk-nag reports. */
  readonly database?: IConstruct;
  readonly workGroupName: string;
  /** Read under tables/ and manifests/ (the `loads` table) only: rejects are for operators. */
  readonly curatedBucket: s3.IBucket;
  /** The workgroup's result location, athena/ (lib/constructs/catalog.ts). */
  readonly resultsBucket: s3.IBucket;
  /** Encrypts the curated data and the query results. */
  readonly key: kms.IKey;
  /** IAM roles the policy is attached to (config analystRoleArns). */
  readonly roleArns: readonly string[];
}

/** The policy's name: a permission set refers to a customer managed policy by name, the same in every account. */
export const analystPolicyName = (environment: string): string => `paynet-reports-${environment}-analysts`;

/** Where the workgroup writes results (lib/constructs/catalog.ts `outputLocation`). */
const TABLES_PREFIX = PREFIX.tables;

/**
 * What querying the environment's tables needs, and nothing more, as one customer managed policy: run and read
 * queries in the environment's workgroup and read its saved queries; read the Glue database and its tables; read
 * the Parquet under tables/; read and write the query results; and use the lake key only through S3 and Athena.
 * The data is SSE-KMS, so without the key statement an analyst who is not an administrator gets "Access denied"
 * from every query. Attached to the roles in `analystRoleArns`; an SSO permission set refers to it by name.
 */
export class Analysts extends Construct {
  readonly policy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: AnalystsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const arn = (service: string, resource: string) => `arn:${stack.partition}:${service}:${stack.region}:${stack.account}:${resource}`;
    const db = props.databaseName;

    this.policy = new iam.ManagedPolicy(this, 'Policy', {
      managedPolicyName: analystPolicyName(props.environment),
      description: `paynet-reports ${props.environment}: query the report tables with Athena (workgroup ${props.workGroupName})`,
      statements: [
        new iam.PolicyStatement({
          sid: 'QueriesInTheWorkgroup',
          actions: [
            'athena:StartQueryExecution',
            'athena:StopQueryExecution',
            'athena:GetQueryExecution',
            'athena:BatchGetQueryExecution',
            'athena:ListQueryExecutions',
            'athena:GetQueryResults',
            'athena:GetQueryResultsStream',
            'athena:GetQueryRuntimeStatistics',
            'athena:GetWorkGroup',
            'athena:GetNamedQuery',
            'athena:BatchGetNamedQuery',
            'athena:ListNamedQueries',
          ],
          resources: [arn('athena', `workgroup/${props.workGroupName}`)],
        }),
        new iam.PolicyStatement({
          sid: 'BrowseTheCatalogInAthena',
          actions: ['athena:GetDataCatalog', 'athena:ListDatabases', 'athena:GetDatabase', 'athena:ListTableMetadata', 'athena:GetTableMetadata'],
          resources: [arn('athena', 'datacatalog/AwsDataCatalog')],
        }),
        new iam.PolicyStatement({
          sid: 'ReadTheDatabaseAndItsTables',
          actions: ['glue:GetDatabase', 'glue:GetDatabases', 'glue:GetTable', 'glue:GetTables', 'glue:GetPartition', 'glue:GetPartitions', 'glue:BatchGetPartition'],
          resources: [arn('glue', 'catalog'), arn('glue', `database/${db}`), arn('glue', `table/${db}/*`)],
        }),
        new iam.PolicyStatement({
          sid: 'ReadTheTables',
          actions: ['s3:GetObject'],
          // manifests/: the `loads` table, which providers a day's numbers include (functions/core/lake/loads-table.ts).
          resources: [props.curatedBucket.arnForObjects(`${TABLES_PREFIX}*`), props.curatedBucket.arnForObjects(`${PREFIX.manifests}*`)],
        }),
        new iam.PolicyStatement({
          sid: 'ListTheTables',
          actions: ['s3:ListBucket'],
          resources: [props.curatedBucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': [`${TABLES_PREFIX}*`, `${PREFIX.manifests}*`] } },
        }),
        new iam.PolicyStatement({
          sid: 'ReadAndWriteQueryResults',
          actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
          resources: [props.resultsBucket.arnForObjects(`${RESULTS_PREFIX}*`)],
        }),
        new iam.PolicyStatement({
          sid: 'ListQueryResults',
          actions: ['s3:ListBucket', 's3:ListBucketMultipartUploads'],
          resources: [props.resultsBucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': [`${RESULTS_PREFIX}*`] } },
        }),
        new iam.PolicyStatement({
          sid: 'LocateTheBuckets',
          actions: ['s3:GetBucketLocation'],
          resources: [props.curatedBucket.bucketArn, props.resultsBucket.bucketArn],
        }),
        new iam.PolicyStatement({
          sid: 'UseTheLakeKeyThroughS3AndAthenaOnly',
          actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
          resources: [props.key.keyArn],
          conditions: { StringEquals: { 'kms:ViaService': [`s3.${stack.region}.amazonaws.com`, `athena.${stack.region}.amazonaws.com`] } },
        }),
      ],
    });

    props.roleArns.forEach((roleArn, i) => {
      // mutable: the policy names the role (AWS::IAM::ManagedPolicy Roles); the role itself is not changed otherwise.
      this.policy.attachToRole(iam.Role.fromRoleArn(this, `AnalystRole${i}`, roleArn, { mutable: true }));
    });
    this.acknowledgeWildcards(props);
  }

  /** cdk-nag names each wildcard resource (AwsSolutions-IAM5): acknowledge exactly those three. */
  private acknowledgeWildcards(props: AnalystsProps): void {
    const stack = Stack.of(this);
    const logicalId = (c: IConstruct) => stack.resolve((c.node.defaultChild as CfnElement).logicalId) as string;
    const findings: Array<[string, string]> = [
      [`<${logicalId(props.curatedBucket)}.Arn>/${TABLES_PREFIX}*`, 'Reads every Parquet file of every report table: S3 object permissions are per key, so the tables/ prefix is the narrowest grant.'],
      [`<${logicalId(props.curatedBucket)}.Arn>/${PREFIX.manifests}*`, 'Reads every load manifest, the loads table: S3 object permissions are per key, so the manifests/ prefix is the narrowest grant.'],
      [`<${logicalId(props.resultsBucket)}.Arn>/${RESULTS_PREFIX}*`, "Reads and writes the workgroup's query results: Athena names each result file by query id, so the athena/ prefix is the narrowest grant."],
    ];
    if (props.database) {
      findings.push([
        `arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:table/<${logicalId(props.database)}>/*`,
        'Glue read on every table of this environment\'s database (one per report, added with the catalog): a table ARN per report would go stale with each new report.',
      ]);
    }
    for (const [resource, reason] of findings) Validations.of(this.policy).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason });
  }
}
