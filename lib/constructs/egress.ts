import { Fn, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { EnvironmentConfig } from '../environment/environments.js';
import { INLINE_POLICY_REASON } from './pipeline-function.js';

/**
 * Where the fetch function's requests leave AWS from, out of an environment's `network` (lib/environment/environments.ts):
 * - `created`: a VPC of the stack's own with a NAT gateway per address; `allocationIds` are the user's Elastic IPs
 *   (they outlive the stack), else the stack allocates one.
 * - `existing`: the user's VPC and private subnets, already routed through their NAT.
 */
export type EgressSettings =
  | { readonly kind: 'created'; readonly allocationIds?: readonly string[] }
  | { readonly kind: 'existing'; readonly vpcId: string; readonly subnetIds: readonly string[] };

/** The settings of a validated `network` (its three forms exclude each other: lib/environment/environments.ts); undefined: none. */
export function egressSettings(network: EnvironmentConfig['network']): EgressSettings | undefined {
  if (!network) return undefined;
  if (network.vpcId && network.subnetIds) return { kind: 'existing', vpcId: network.vpcId, subnetIds: network.subnetIds };
  if (network.elasticIpAllocationIds) return { kind: 'created', allocationIds: network.elasticIpAllocationIds };
  return network.staticEgressIp ? { kind: 'created' } : undefined;
}

export interface EgressProps {
  readonly environment: string;
  readonly settings: EgressSettings;
  /** TCP ports the function connects to: 443 (AWS APIs) and the gateway's, when its URL names another. */
  readonly ports: readonly number[];
  /** Encrypts the flow log's log group (the environment's data key, which lets CloudWatch Logs in). */
  readonly key: kms.IKey;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/** The three values of the EgressIps output, told apart by their form (local/cli/status.ts reads them). */
export const EGRESS_OUTPUT = {
  /** Created addresses: "3.120.1.2" or "3.120.1.2,18.196.3.4" (Fn::GetAtt of each EIP's PublicIp). */
  createdDescription: 'The public IPv4 address(es) the fetch function calls the gateway from: give them to the provider to allow-list',
  /** The user's allocations: "eipalloc-…,eipalloc-…"; their addresses are not known at synth. */
  allocatedDescription:
    "The Elastic IP allocations the fetch function calls the gateway from; their addresses: aws ec2 describe-addresses --allocation-ids <these> --query 'Addresses[].PublicIp'",
  /** The user's VPC: "vpc-…"; the addresses are those of whatever NAT its subnets route through. */
  existingDescription:
    "The VPC the fetch function runs in: it calls the gateway from the public address(es) of the NAT its subnets route 0.0.0.0/0 through (aws ec2 describe-nat-gateways --filter Name=vpc-id,Values=<this> --query 'NatGateways[].NatGatewayAddresses[].PublicIp')",
} as const;

/**
 * A fixed egress address for the fetch function, for gateways that accept allow-listed IPv4 addresses only: private
 * subnets routed to a NAT gateway with an Elastic IP, a security group that lets out only HTTPS (and the gateway's
 * port), and, in a VPC the stack creates, a free S3 gateway endpoint and a flow log. Only the fetch function goes in:
 * the parse function calls S3 and SQS only, and outside a VPC it needs no NAT.
 *
 * The S3 endpoint keeps the raw file's upload off the NAT gateway, which bills every GB it processes: through the NAT
 * a report would be billed twice (in from the gateway, out to S3). Secrets Manager and X-Ray go through the NAT: a few
 * small calls a day cost less there than interface endpoints' hourly charge per Availability Zone. DNS goes to the VPC
 * resolver, which security groups do not filter.
 */
export class Egress extends Construct {
  readonly vpc: ec2.IVpc;
  /** Where the function's network interfaces go. */
  readonly subnets: ec2.ISubnet[];
  readonly securityGroup: ec2.SecurityGroup;
  /** In a created VPC: S3 traffic of the private subnets, with a policy the fetch construct fills (lib/constructs/fetch.ts). */
  readonly s3Endpoint?: ec2.GatewayVpcEndpoint;
  /** The EgressIps output: the addresses, the allocations or the VPC (EGRESS_OUTPUT says which is which). */
  readonly output: { readonly value: string; readonly description: string };

  constructor(scope: Construct, id: string, props: EgressProps) {
    super(scope, id);
    const { settings } = props;

    if (settings.kind === 'existing') {
      // No lookup (Vpc.fromLookup needs credentials at synth): the ids as given; the subnets' routes are the user's. The
      // one zone only satisfies fromVpcAttributes (it divides listed subnets among zones): the function's subnets are
      // given explicitly below, so no zone is ever read.
      this.vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: settings.vpcId, availabilityZones: [Fn.select(0, Fn.getAzs())] });
      this.subnets = settings.subnetIds.map((subnetId) => ec2.Subnet.fromSubnetId(this, subnetId, subnetId));
      this.output = { value: settings.vpcId, description: EGRESS_OUTPUT.existingDescription };
    } else {
      const vpc = this.createVpc(settings.allocationIds, props);
      this.vpc = vpc;
      this.subnets = vpc.privateSubnets;
      this.s3Endpoint = vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3, subnets: [{ subnets: vpc.privateSubnets }] });
      this.output = settings.allocationIds
        ? { value: settings.allocationIds.join(','), description: EGRESS_OUTPUT.allocatedDescription }
        : { value: Fn.join(',', this.createdAddresses(vpc)), description: EGRESS_OUTPUT.createdDescription };
    }

    this.securityGroup = new ec2.SecurityGroup(this, 'Fetch', {
      vpc: this.vpc,
      description: `paynet-reports ${props.environment}: the fetch function, HTTPS out only, nothing in`,
      allowAllOutbound: false,
    });
    for (const port of new Set(props.ports)) {
      this.securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(port), port === 443 ? 'HTTPS: the gateway and AWS APIs' : 'HTTPS: the gateway (its URL names this port)');
    }
  }

  /**
   * Two Availability Zones (Lambda wants a subnet in more than one), one NAT gateway per address: a single address
   * by default, shared by both zones (a zone outage stops the fetch until it ends; the next run's lookback catches
   * up), or one per zone with two allocations. A /24 is plenty: Lambda shares one network interface per subnet and
   * security group among its instances.
   */
  private createVpc(allocationIds: readonly string[] | undefined, props: EgressProps): ec2.Vpc {
    const flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
      encryptionKey: props.key,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // The flow-logs service may assume it for this account's flow logs only (confused-deputy protection).
    const { account, region, partition } = Stack.of(this);
    const flowLogRole = new iam.Role(this, 'FlowLogRole', {
      assumedBy: new iam.ServicePrincipal('vpc-flow-logs.amazonaws.com').withConditions({
        StringEquals: { 'aws:SourceAccount': account },
        ArnLike: { 'aws:SourceArn': `arn:${partition}:ec2:${region}:${account}:vpc-flow-log/*` },
      }),
      description: `paynet-reports ${props.environment}: VPC flow logs into their log group`,
    });
    Validations.of(flowLogRole).acknowledge({ id: 'PCI.DSS.321-IAMNoInlinePolicy', reason: INLINE_POLICY_REASON });
    const vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr('10.0.0.0/24'),
      maxAzs: 2,
      natGateways: allocationIds?.length ?? 1,
      natGatewayProvider: ec2.NatProvider.gateway(allocationIds ? { eipAllocationIds: [...allocationIds] } : {}),
      subnetConfiguration: [
        // The NAT gateways' subnets: their addresses are the Elastic IPs associated explicitly, nothing else runs there.
        { name: 'nat', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 28, mapPublicIpOnLaunch: false },
        { name: 'fetch', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 26 },
      ],
      // The default security group is nobody's: no rules at all, so nothing placed in it by mistake talks.
      restrictDefaultSecurityGroup: true,
      // Every connection accepted or rejected, in the environment's encrypted log group (PCI DSS 10; AwsSolutions-VPC7).
      flowLogs: { All: { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup, flowLogRole), trafficType: ec2.FlowLogTrafficType.ALL } },
    });
    for (const subnet of vpc.publicSubnets) {
      Validations.of(subnet).acknowledge({
        id: 'PCI.DSS.321-VPCNoUnrestrictedRouteToIGW',
        reason:
          "The NAT gateway's subnet: its 0.0.0.0/0 route to the internet gateway is how the fetch function reaches the " +
          'gateway from a fixed address. Nothing else runs there, nothing gets a public IP, and the function itself sits in a private subnet.',
      });
    }
    return vpc;
  }

  /** The Elastic IPs CDK created for the NAT gateways (PublicSubnet.addNatGateway names them EIP). */
  private createdAddresses(vpc: ec2.Vpc): string[] {
    const eips = vpc.publicSubnets.flatMap((s) => {
      const eip = s.node.tryFindChild('EIP');
      return eip instanceof ec2.CfnEIP ? [eip] : [];
    });
    if (!eips.length) throw new Error(`${this.node.path}: no Elastic IP found beside the NAT gateway; aws-cdk-lib changed how it creates them`);
    return eips.map((e) => e.attrPublicIp);
  }
}
