import { Annotations, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { EnvironmentConfig } from './environment/environments.js';
import type { ReportDefinition } from '../functions/core/definitions/report-definition.js';
import { DEFAULT_CONNECTION } from '../functions/core/connections/connection.js';
import type { AlarmChat } from './constructs/alarm-channels/alarm-chat.js';
import { AlarmChannels } from './constructs/alarm-channels/alarm-channels.js';
import { isShippedPlaceholder } from './environment/placeholder-hosts.js';
import { unusedConnections, unusedConnectionWarning } from './environment/unused-connections.js';
import { Alarms } from './constructs/alarms.js';
import { Analysts } from './constructs/analysts.js';
import { Catalog } from './constructs/catalog.js';
import { Credentials } from './constructs/credentials.js';
import { PipelineDashboard } from './constructs/dashboard.js';
import { Egress, egressSettings } from './constructs/egress.js';
import { Fetch, type FetchProps } from './constructs/fetch.js';
import { Freshness } from './constructs/freshness.js';
import { applyGovernance } from './policies/governance.js';
import { Lake } from './constructs/lake.js';
import { Parse } from './constructs/parse.js';
import { ReportShards } from './constructs/report-shards.js';

export interface ReportsPipelineStackProps extends StackProps {
  readonly config: EnvironmentConfig;
  readonly reports: readonly ReportDefinition[];
  /** Handler modules; default functions/fetch-report/handler.ts, functions/parse-report/handler.ts, functions/check-freshness/handler.ts. */
  readonly entries?: { readonly fetch?: string; readonly parse?: string; readonly freshness?: string };
}

export { stackName } from '../functions/core/naming.js';
import { stackName } from '../functions/core/naming.js';

/** The settings the fetch and the parse function take alike from the environment. */
type FunctionDefaults = Pick<FetchProps, 'environment' | 'key' | 'logLevel' | 'logRetention' | 'removalPolicy'>;

/**
 * One environment of the pipeline: lake, credentials, fetch, parse, catalog, alarms and dashboard; opt in, a fixed
 * egress address for the fetch function and alarms in chat; in a governed account, tags and a permissions boundary.
 */
export class ReportsPipelineStack extends Stack {
  /** The environment the stack was built from: the Control Tower exemptions that depend on a setting read it. */
  readonly config: EnvironmentConfig;
  readonly lake: Lake;
  readonly credentials: Credentials;
  readonly fetch: Fetch;
  readonly parse: Parse;
  readonly freshness: Freshness;
  readonly catalog: Catalog;
  readonly alarms: Alarms;
  readonly dashboard: PipelineDashboard;
  readonly analysts: Analysts;
  /** With a `network` setting: the VPC, NAT and security group the fetch function calls the gateway from. */
  readonly egress?: Egress;
  /** Who hears the alarms: every entry of `alarmChannels`, subscribed to the alarm topic. */
  readonly alarmChannels: AlarmChannels;
  /** With Slack or Teams channels: their configurations, subscribed to the alarm topic. */
  readonly alarmChat?: AlarmChat;
  /** The nested stacks holding each report's schedule, table and saved queries (lib/constructs/report-shards.ts). */
  readonly reportShards: ReportShards;

  constructor(scope: Construct, id: string, props: ReportsPipelineStackProps) {
    const { config: c, reports } = props;
    super(scope, id, {
      stackName: stackName(c.name),
      description: `paynet-reports (${c.name}): gateway transaction reports to Parquet for Athena`,
      terminationProtection: c.terminationProtection,
      // Without account and region the stack is environment-agnostic: `cdk synth` needs no credentials.
      env: c.account || c.region ? { account: c.account, region: c.region } : undefined,
      ...props,
    });
    this.config = c;
    applyGovernance(this, { environment: c.name, permissionsBoundaryArn: c.permissionsBoundaryArn, tags: c.tags });

    // Retained, except when the create itself rolls back: CloudFormation applies plain Retain to a failed first
    // deploy too, and the retry then fails on the named buckets, secret and database that "already exist".
    const removalPolicy = c.removalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
    const logRetention = c.logRetentionDays as logs.RetentionDays; // validated against the allowed values
    this.warnOfPlaceholderEndpoint(c);
    this.warnOfUnusedConnections(c, reports);

    this.lake = this.addLake(c, removalPolicy);
    this.credentials = new Credentials(this, 'Credentials', {
      environment: c.name,
      connections: c.connections.map((k) => ({ connection: k.name, secretName: k.secret.name, mode: k.secret.mode, existingKeyArn: k.secret.kmsKeyArn })),
      removalPolicy,
    });
    this.egress = this.addEgress(c, logRetention, removalPolicy);

    this.reportShards = new ReportShards(this, 'Reports');
    const functionDefaults = { environment: c.name, key: this.lake.key, logLevel: c.logLevel, logRetention, removalPolicy };
    this.fetch = this.addFetch(props, functionDefaults);
    this.parse = this.addParse(props, functionDefaults);
    this.freshness = new Freshness(this, 'Freshness', {
      ...functionDefaults,
      timeout: Duration.minutes(1),
      memorySize: 256,
      grace: Duration.hours(c.freshnessGraceHours),
      curatedBucket: this.lake.curatedBucket,
      schedulesEnabled: c.schedulesEnabled,
      scheduleGroup: this.fetch.scheduleGroup,
      entry: props.entries?.freshness,
    });
    this.catalog = this.addCatalog(c, reports, removalPolicy);
    this.analysts = this.addAnalysts(c);

    const deadLetterQueues = {
      schedule: this.fetch.scheduleDeadLetterQueue,
      'scheduled-runs': this.fetch.queues.deadLetterQueue,
      'fetch-failures': this.fetch.failedRunsQueue,
      parse: this.parse.deadLetterQueue,
      'freshness-check': this.freshness.deadLetterQueue,
    };
    this.alarms = this.addAlarms(c, deadLetterQueues);
    this.freshness.alarmWhenNotRunning(this.alarms.topic);
    this.alarmChannels = new AlarmChannels(this, 'AlarmChannels', { environment: c.name, topic: this.alarms.topic, channels: c.alarmChannels });
    this.alarmChat = this.alarmChannels.chat;
    this.dashboard = this.addDashboard(c, reports, deadLetterQueues);

    this.addOutputs(deadLetterQueues);
  }

  /** One warning per connection still on the shipped placeholder host, naming where its URL is set. */
  private warnOfPlaceholderEndpoint(c: EnvironmentConfig): void {
    const placeholders = c.connections.filter((k) => isShippedPlaceholder(k.gateway.endpointUrl));
    for (const k of placeholders) {
      const isDefault = k.name === DEFAULT_CONNECTION;
      const field = isDefault ? 'gateway.endpointUrl' : `connections.${k.name}.gateway.endpointUrl`;
      // The default connection's warning keeps the id it had before connections (an acknowledgement may name it).
      Annotations.of(this).addWarningV2(
        isDefault ? 'paynet-reports:placeholderEndpoint' : `paynet-reports:placeholderEndpoint:${k.name}`,
        `${field} of "${c.name}" (connection "${k.name}") is the shipped placeholder; set the provider's URL in config/environments/${c.name}.json before deploying.`,
      );
    }
  }

  /** One warning per connection no report names: it is still deployed (lib/environment/unused-connections.ts). */
  private warnOfUnusedConnections(c: EnvironmentConfig, reports: readonly ReportDefinition[]): void {
    const unused = unusedConnections(c.connections.map((k) => k.name), reports.flatMap((r) => r.connections));
    for (const name of unused) {
      Annotations.of(this).addWarningV2(`paynet-reports:unusedConnection:${name}`, `${unusedConnectionWarning(c.name, name)}.`);
    }
  }

  private addLake(c: EnvironmentConfig, removalPolicy: RemovalPolicy): Lake {
    return new Lake(this, 'Lake', {
      environment: c.name,
      removalPolicy,
      rawTransitionAfter: Duration.days(c.raw.transitionAfterDays),
      rawStorageClass:
        c.raw.storageClass === 'INFREQUENT_ACCESS' ? s3.StorageClass.INFREQUENT_ACCESS : s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
      rawNoncurrentVersionExpiration: Duration.days(c.raw.noncurrentVersionExpirationDays),
      curatedNoncurrentVersionExpiration: Duration.days(c.curated.noncurrentVersionExpirationDays),
      resultsExpiration: Duration.days(c.athena.resultsExpirationDays),
      accessLogsExpiration: Duration.days(c.logRetentionDays),
      rawObjectLock: c.raw.objectLock,
    });
  }

  private addEgress(c: EnvironmentConfig, logRetention: logs.RetentionDays, removalPolicy: RemovalPolicy): Egress | undefined {
    const settings = egressSettings(c.network);
    if (!settings) return undefined;
    // AWS's APIs on 443, and every connection's gateway on the port its URL names.
    const gatewayPorts = c.connections.map((k) => Number(new URL(k.gateway.endpointUrl).port || 443));
    return new Egress(this, 'Egress', { environment: c.name, settings, ports: [443, ...gatewayPorts], key: this.lake.key, logRetention, removalPolicy });
  }

  private addFetch(props: ReportsPipelineStackProps, functionDefaults: FunctionDefaults): Fetch {
    const { config: c, reports } = props;
    return new Fetch(this, 'Fetch', {
      ...functionDefaults,
      reports: reports.map((r) => ({ id: r.id, cron: r.schedule.cron, timeZone: r.schedule.timeZone, lookback: r.lookback, connections: r.connections })),
      connections: c.connections.map((k) => ({
        name: k.name,
        endpointUrl: k.gateway.endpointUrl,
        secretName: k.secret.name,
        maxConcurrentRequests: k.maxConcurrentRequests,
      })),
      projectionStart: c.athena.projectionStart,
      credentials: this.credentials,
      rawBucket: this.lake.rawBucket,
      schedulesEnabled: c.schedulesEnabled,
      timeout: Duration.seconds(c.fetch.timeoutSeconds),
      memorySize: c.fetch.memoryMb,
      reservedConcurrency: c.fetch.reservedConcurrency ?? undefined,
      entry: props.entries?.fetch,
      egress: this.egress,
      scopeOfReport: (id) => this.reportShards.of(id),
    });
  }

  private addParse(props: ReportsPipelineStackProps, functionDefaults: FunctionDefaults): Parse {
    const c = props.config;
    return new Parse(this, 'Parse', {
      ...functionDefaults,
      rawBucket: this.lake.rawBucket,
      curatedBucket: this.lake.curatedBucket,
      timeout: Duration.seconds(c.parse.timeoutSeconds),
      memorySize: c.parse.memoryMb,
      reservedConcurrency: c.parse.reservedConcurrency ?? undefined,
      entry: props.entries?.parse,
    });
  }

  private addCatalog(c: EnvironmentConfig, reports: readonly ReportDefinition[], removalPolicy: RemovalPolicy): Catalog {
    return new Catalog(this, 'Catalog', {
      environment: c.name,
      reports,
      curatedBucket: this.lake.curatedBucket,
      resultsBucket: this.lake.resultsBucket,
      key: this.lake.key,
      bytesScannedCutoffPerQuery: c.athena.bytesScannedCutoffPerQuery,
      projectionStart: c.athena.projectionStart,
      removalPolicy,
      scopeOfReport: (id) => this.reportShards.of(id),
    });
  }

  private addAnalysts(c: EnvironmentConfig): Analysts {
    return new Analysts(this, 'Analysts', {
      environment: c.name,
      databaseName: this.catalog.database.databaseName,
      database: this.catalog.database,
      workGroupName: this.catalog.workGroup.ref,
      curatedBucket: this.lake.curatedBucket,
      resultsBucket: this.lake.resultsBucket,
      key: this.lake.key,
      roleArns: c.analystRoleArns,
    });
  }

  private addAlarms(c: EnvironmentConfig, deadLetterQueues: Record<string, sqs.IQueue>): Alarms {
    return new Alarms(this, 'Alarms', {
      environment: c.name,
      fetchFunction: this.fetch.function.function,
      parseFunction: this.parse.function.function,
      freshnessFunction: this.freshness.function.function,
      deadLetterQueues,
      connections: c.connections.map((k) => k.name),
      key: this.lake.key,
    });
  }

  private addDashboard(c: EnvironmentConfig, reports: readonly ReportDefinition[], deadLetterQueues: Record<string, sqs.IQueue>): PipelineDashboard {
    return new PipelineDashboard(this, 'Dashboard', {
      environment: c.name,
      fetchFunction: this.fetch.function.function,
      parseFunction: this.parse.function.function,
      parseQueue: this.parse.queue,
      deadLetterQueues,
      connectionQueues: this.fetch.queues.queues,
      // One entry per feed: a report over three connections is in each connection's lines.
      reports: reports.flatMap((r) => r.connections.map((connection) => ({ id: r.id, connection }))),
      parseLogGroup: this.parse.function.logGroup,
    });
  }

  /**
   * Two Availability Zones of the region as tokens (Fn::GetAZs), whatever the environment says of account and region:
   * CDK would look them up for an environment with both, and `cdk synth` would need credentials. Only the VPC of
   * lib/constructs/egress.ts asks.
   */
  override get availabilityZones(): string[] {
    return [Fn.select(0, Fn.getAzs()), Fn.select(1, Fn.getAzs())];
  }

  /**
   * What an operator needs after `cdk deploy` (README, "Deploy"): where to put the secret, which function a
   * backfill invokes, where the data and the queries are. Shown by the CLI and in the CloudFormation console.
   */
  private addOutputs(deadLetterQueues: Record<string, sqs.IQueue>): void {
    const outputs: Record<string, { value: string; description: string }> = {
      FetchFunctionName: {
        value: this.fetch.function.function.functionName,
        description: 'The fetch function: `npm run reports -- backfill --deployed --function-name <this>`',
      },
      ParseFunctionName: { value: this.parse.function.function.functionName, description: 'The parse function (its logs say why a load failed)' },
      ...this.secretOutputs(),
      RawBucketName: { value: this.lake.rawBucket.bucketName, description: 'Raw reports as received (raw/<report>/dt=<date>/...)' },
      CuratedBucketName: { value: this.lake.curatedBucket.bucketName, description: 'Parquet tables, rejected rows and load manifests' },
      AthenaResultsBucketName: { value: this.lake.resultsBucket.bucketName, description: 'Athena query results (expire)' },
      GlueDatabaseName: { value: this.catalog.database.databaseName, description: 'One table per report' },
      AthenaWorkGroupName: { value: this.catalog.workGroup.ref, description: 'Run queries in this workgroup (it enforces encrypted results and a scan limit)' },
      AlarmTopicArn: { value: this.alarms.topic.topicArn, description: 'Alarms are published here; subscribe more endpoints as needed' },
      DashboardName: { value: this.dashboard.dashboard.dashboardName, description: 'CloudWatch dashboard of this environment' },
      AnalystPolicyArn: {
        value: this.analysts.policy.managedPolicyArn,
        description: "Everything querying needs: attach it to the analysts' IAM role (or analystRoleArns), or by name to an SSO permission set",
      },
      AnalystPolicyName: { value: this.analysts.policy.managedPolicyName, description: 'The analysts\' policy by name, as an SSO permission set refers to it' },
      ScheduleGroupName: { value: this.fetch.scheduleGroup.scheduleGroupName, description: 'EventBridge Scheduler group holding one schedule per report and the freshness check' },
    };
    // Only with a network setting: what to give a gateway that allow-lists addresses (`reports status` prints it).
    if (this.egress) outputs.EgressIps = this.egress.output;
    // One per dead-letter queue, so `reports status` finds them all by name (DeadLetters<Name>QueueUrl).
    for (const [name, queue] of Object.entries(deadLetterQueues)) {
      outputs[`DeadLetters${pascalCase(name)}QueueUrl`] = { value: queue.queueUrl, description: `The ${name} dead-letter queue (alarm dead-letters-${name})` };
    }
    for (const [id, o] of Object.entries(outputs)) new CfnOutput(this, id, o);
  }

  /**
   * Where each connection's credentials go: GatewaySecretArn and GatewaySecretName are the connection `default`'s
   * (the names they had before connections, which `reports status` and scripts read), GatewaySecret<Name>Arn and
   * GatewaySecret<Name>Name each other's (payouts-eu: GatewaySecretPayoutsEuName).
   */
  private secretOutputs(): Record<string, { value: string; description: string }> {
    const outputs: Record<string, { value: string; description: string }> = {};
    for (const { connection, secret, secretName } of this.credentials.secrets.values()) {
      const infix = connection === DEFAULT_CONNECTION ? '' : pascalCase(connection);
      const taken = Object.entries(outputs).find(([id]) => id === `GatewaySecret${infix}Arn`);
      if (taken) throw new Error(`Connections "${connection}" and another name the same outputs (GatewaySecret${infix}Arn): rename one (${taken[1].description}).`);
      outputs[`GatewaySecret${infix}Arn`] = {
        value: secret.secretArn,
        description: `Put the gateway credentials JSON of connection "${connection}" here (aws secretsmanager put-secret-value)`,
      };
      outputs[`GatewaySecret${infix}Name`] = { value: secretName, description: `The gateway credentials secret of connection "${connection}", by name` };
    }
    return outputs;
  }
}

/** "fetch-failures" -> "FetchFailures", "eu2" -> "Eu2": an output id holds letters and digits only. */
export const pascalCase = (name: string): string => name.replace(/(^|-)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
