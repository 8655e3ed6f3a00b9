import type { RemovalPolicy } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { DEFAULT_PROJECTION_START, DT_FORMAT, projectionRange } from '../../functions/core/lake/partition-projection.js';
import { PREFIX, tableLocationTemplate, tablePrefix } from '../../functions/core/lake/s3-keys.js';
import { LOADS_COLUMNS, LOADS_PARTITION_KEYS, LOADS_TABLE, loadsLocationTemplate, REPORT_KEY } from '../../functions/core/lake/loads-table.js';
import { CONNECTION_KEY, glueColumns, PARTITION_KEY, PARTITION_KEYS } from '../../functions/core/definitions/table-schema.js';
import { refuseWhatTrinoCannotParse } from '../saved-queries/saved-query-grammar.js';
import { readReportQueries } from '../saved-queries/saved-queries.js';

/** Where the workgroup writes query results in the results bucket (the analysts' policy grants this prefix). */
export const RESULTS_PREFIX = 'athena/';

export interface CatalogProps {
  readonly environment: string;
  /** One Glue table per report, columns generated from its definition. */
  readonly reports: readonly ReportDefinition[];
  readonly curatedBucket: s3.IBucket;
  readonly resultsBucket: s3.IBucket;
  /** Encrypts query results (SSE-KMS). */
  readonly key: kms.IKey;
  /** Athena cancels a query of this workgroup once it has scanned this many bytes. */
  readonly bytesScannedCutoffPerQuery: number;
  readonly removalPolicy: RemovalPolicy;
  /** Root of the saved queries, one folder per report (queries/<report>/*.sql); default queriesRoot(). */
  readonly queriesDir?: string;
  /** First date partition projection enumerates (yyyy-MM-dd); default DEFAULT_PROJECTION_START. */
  readonly projectionStart?: string;
  /** Where a report's table and saved queries go: its shard (lib/constructs/report-shards.ts). Default: this construct. */
  readonly scopeOfReport?: (reportId: string) => Construct;
}

/** Glue database name: Athena wants lower case letters, digits and underscores. */
export const databaseName = (environment: string): string => `paynet_reports_${environment.replace(/-/g, '_')}`;
export const workGroupName = (environment: string): string => `paynet-reports-${environment}`;

export { QUERIES_DIR_VARIABLE, queriesRoot, readNamedQueries, readReportQueries, type NamedQuerySource } from '../saved-queries/saved-queries.js';

/**
 * The query side: a Glue database with one Parquet table per report over curated/tables/<report>/, every feed of
 * the report in it, partitioned by connection and dt with partition projection; a `loads` table over the load manifests; an Athena workgroup that enforces encrypted results
 * and a scan limit; and the shared analyst queries as named queries.
 */
export class Catalog extends Construct {
  readonly database: glue.Database;
  readonly tables: Record<string, glue.S3Table> = {};
  readonly workGroup: athena.CfnWorkGroup;
  readonly namedQueries: athena.CfnNamedQuery[] = [];
  /** The load manifests as a table: report, connection, window, outcome, rows (functions/core/lake/loads-table.ts). */
  readonly loadsTable: glue.S3Table;

  constructor(scope: Construct, id: string, props: CatalogProps) {
    super(scope, id);
    this.database = new glue.Database(this, 'Database', {
      databaseName: databaseName(props.environment),
      description: `paynet-reports ${props.environment}: one table per gateway report`,
      removalPolicy: props.removalPolicy,
    });

    const [start, end] = projectionRange(props.projectionStart ?? DEFAULT_PROJECTION_START).split(',') as [string, string];
    const scopeOf = props.scopeOfReport ?? (() => this);
    for (const report of props.reports) {
      const prefix = tablePrefix(report.id);
      // The L2 S3Table (aws-cdk-lib 2.276) renders partition projection itself; only the location template is ours.
      this.tables[report.id] = new glue.S3Table(scopeOf(report.id), `Table-${report.id}`, {
        database: this.database,
        tableName: report.id,
        description: report.description ?? `Gateway report ${report.id}`,
        storage: glue.S3TableStorage.fromBucket(props.curatedBucket),
        s3Prefix: prefix,
        dataFormat: glue.DataFormat.PARQUET,
        // The same function generates the Parquet schema the parse function writes: no second copy of the columns.
        columns: glueColumns(report.columns).map(toGlueColumn),
        partitionKeys: PARTITION_KEYS.map(toGlueColumn),
        // Partition projection: Athena computes the connection=.../dt=... partitions itself, so no crawler and no MSCK REPAIR. The
        // range ends a day past today in UTC, so a window east of UTC is visible the moment it loads
        // (functions/core/lake/partition-projection.ts).
        partitionProjection: {
          // The feeds' connections: Athena reads connection=<name>/ of exactly these, so a query over every provider is
          // one table, and a connection added to the definition appears with the next deploy.
          [CONNECTION_KEY]: glue.PartitionProjectionConfiguration.enum({ values: [...report.connections] }),
          [PARTITION_KEY]: glue.PartitionProjectionConfiguration.date({
            min: start,
            max: end,
            format: DT_FORMAT,
          }),
        },
        parameters: {
          'storage.location.template': `s3://${props.curatedBucket.bucketName}/${tableLocationTemplate(report.id)}`,
        },
        // The data is SSE-KMS on the bucket, which S3 decrypts transparently; the flag is for client-side encryption.
        hasEncryptedData: false,
      });
    }

    this.loadsTable = loadsTable(this, { ...props, database: this.database }, start, end);

    this.workGroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: workGroupName(props.environment),
      description: `paynet-reports ${props.environment}: analysts' queries over the report tables`,
      state: 'ENABLED',
      // Dropping the workgroup (stack deletion, rename) also drops its saved queries and history instead of failing.
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        // Clients cannot override the output location or turn encryption off.
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: props.bytesScannedCutoffPerQuery,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: props.resultsBucket.s3UrlForObject(RESULTS_PREFIX),
          encryptionConfiguration: { encryptionOption: 'SSE_KMS', kmsKey: props.key.keyArn },
        },
      },
    });

    const saved = props.reports.flatMap((r) => readReportQueries(r, props.queriesDir).map((query) => ({ report: r.id, ...query })));
    // Athena engine v3 is Trino: a query only DuckDB parses (x::varchar, QUALIFY) stops the synthesis, every such file named.
    refuseWhatTrinoCannotParse(saved);
    for (const q of saved) {
      this.namedQueries.push(
        // Named <report>/<file>: two reports may each have a daily_totals.
        new athena.CfnNamedQuery(scopeOf(q.report), `Query-${q.report}-${q.name}`, {
          name: `${q.report}/${q.name}`,
          description: q.description,
          database: this.database.databaseName,
          workGroup: this.workGroup.ref, // the Ref also orders creation after the workgroup
          queryString: q.sql,
        }),
      );
    }
  }
}

/**
 * The `loads` table (functions/core/lake/loads-table.ts): the load manifests as rows, every feed of every report,
 * report, connection and dt projected as the report tables' partitions are. One table, not one per report: a
 * coverage question across reports is one query.
 */
function loadsTable(scope: Construct, props: CatalogProps & { database: glue.Database }, start: string, end: string): glue.S3Table {
  return new glue.S3Table(scope, 'LoadsTable', {
    database: props.database,
    tableName: LOADS_TABLE,
    description: 'One row per load attempt of a window of a feed (report, connection): outcome, window, rows. Which providers a day includes.',
    storage: glue.S3TableStorage.fromBucket(props.curatedBucket),
    s3Prefix: PREFIX.manifests,
    dataFormat: glue.DataFormat.JSON,
    columns: LOADS_COLUMNS.map((c) => toGlueColumn({ name: c.name, type: c.athena })),
    partitionKeys: LOADS_PARTITION_KEYS.map((name) => toGlueColumn({ name, type: 'string' })),
    partitionProjection: {
      [REPORT_KEY]: glue.PartitionProjectionConfiguration.enum({ values: props.reports.map((r) => r.id) }),
      [CONNECTION_KEY]: glue.PartitionProjectionConfiguration.enum({ values: [...new Set(props.reports.flatMap((r) => r.connections))] }),
      [PARTITION_KEY]: glue.PartitionProjectionConfiguration.date({ min: start, max: end, format: DT_FORMAT }),
    },
    // The manifest's `finishedAt` is the column `finishedat`: the OpenX JSON SerDe (DataFormat.JSON) matches keys
    // without regard to case unless its own `case.insensitive` property is set false, which this table does not.
    parameters: { 'storage.location.template': `s3://${props.curatedBucket.bucketName}/${loadsLocationTemplate()}` },
    hasEncryptedData: false,
  });
}

/** Athena type strings (from table-schema.ts) as Glue columns; all of them are primitive types. */
function toGlueColumn(c: { name: string; type: string; comment?: string }): glue.Column {
  return { name: c.name, type: { inputString: c.type, isPrimitive: true }, comment: c.comment };
}
