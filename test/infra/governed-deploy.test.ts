import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CfnResource, Stack, TagManager } from 'aws-cdk-lib';
import { AwsSolutionsChecks, PCIDSS321Checks } from 'cdk-nag';
import { loadEnvironments, readEnvironmentSources } from '../../lib/environment/environments.js';
import { EVERY_CHANNEL_KIND } from '../helpers/alarm-channels.js';
import { CHAT_GUARDRAIL_POLICY } from '../../lib/constructs/alarm-channels/alarm-chat.js';
import { addCompliancePacks } from '../../lib/policies/compliance.js';
import { EGRESS_OUTPUT } from '../../lib/constructs/egress.js';
import { VPC_ACCESS_ACTIONS } from '../../lib/constructs/pipeline-function.js';
import { unpinnedServiceGrants, walkDeliveryPaths } from './delivery-paths.js';
import { projectPath } from '../../lib/constructs/pipeline-function.js';
import { logicalIdOf, testConfig, synthPipeline, type Cfn, type SynthesizedPipeline } from './helpers.js';
import { acknowledgementsOf, recordAcknowledgementUse } from './nag.js';

/**
 * Issue 19, read off the synthesized templates: a fixed egress address for the fetch function (a created NAT and
 * Elastic IP, the user's allocations, the user's VPC), a permissions boundary on every role, the user's tags on every
 * taggable resource, and alarms in chat. Three syntheses with the compliance packs (a finding fails the synthesis),
 * shared by every test; the options switched off are checked on the shipped environments in stack.test.ts.
 */

const used = recordAcknowledgementUse();
const BOUNDARY = 'arn:aws:iam::123456789012:policy/org/paynet-boundary';
const ALLOCATIONS = ['eipalloc-0123456789abcdef0', 'eipalloc-0fedcba9876543210'];
const SUBNETS = ['subnet-0123456789abcdef0', 'subnet-0fedcba9876543210'];
const TEAMS = {
  teamId: '74361522-da01-538d-aa2e-ac7918c6bb92',
  channelId: '19%3ab6ef35dc342d56ba5654e6fc6d25a071%40thread.tacv2',
  tenantId: '11111111-2222-3333-4444-555555555555',
};

// The trial of the issue, as a new user makes it: one more file in an environments folder, no code edited.
const folder = mkdtempSync(join(tmpdir(), 'environments-'));
after(() => rmSync(folder, { recursive: true, force: true }));
writeFileSync(
  join(folder, 'trial.json'),
  JSON.stringify(
    {
      name: 'trial',
      gateway: { endpointUrl: 'https://gateway.test/paynet-ui/services/v2/rpt-engine' },
      secret: { name: 'paynet-reports/trial/gateway' },
      alarmEmails: ['ops@merchant.test'],
      network: { staticEgressIp: true },
      permissionsBoundaryArn: BOUNDARY,
      tags: { 'cost-center': 'payments-42', owner: 'data-team' },
      alarmChat: { slack: [{ workspaceId: 'T012ABCDE', channelId: 'C0123ABCD' }] },
      // The paging services too: cdk-nag and the compliance packs see their HTTPS subscriptions.
      alarmChannels: EVERY_CHANNEL_KIND.filter((c) => c.kind === 'pagerduty' || c.kind === 'opsgenie'),
    },
    null,
    2,
  ),
);
const [trialConfig] = loadEnvironments(readEnvironmentSources(folder));
const trial = synthPipeline(trialConfig!, addCompliancePacks);
// The user's own addresses, one NAT gateway per zone; Teams; destroy (CDK's auto-delete provider has a role too).
const allocated = synthPipeline(
  testConfig({
    network: { elasticIpAllocationIds: ALLOCATIONS },
    permissionsBoundaryArn: BOUNDARY,
    removalPolicy: 'destroy',
    alarmChat: { teams: [TEAMS] },
  }),
  addCompliancePacks,
);
// The user's VPC, and a gateway on another port than 443.
const existing = synthPipeline(
  testConfig({
    network: { vpcId: 'vpc-0123456789abcdef0', subnetIds: SUBNETS },
    gateway: { endpointUrl: 'https://gateway.test:8443/paynet-ui/services/v2/rpt-engine' },
  }),
  addCompliancePacks,
);

type Resource = { Type: string; Properties: Cfn; DependsOn?: string[] };
const resourcesOf = (p: SynthesizedPipeline) => p.template.toJSON().Resources as Record<string, Resource>;
const ofType = (p: SynthesizedPipeline, type: string) => Object.entries(resourcesOf(p)).filter(([, r]) => r.Type === type);
const count = (p: SynthesizedPipeline, type: string) => ofType(p, type).length;
const outputs = (p: SynthesizedPipeline) => p.template.toJSON().Outputs as Record<string, { Value: Cfn; Description: string }>;
const fetchFunction = (p: SynthesizedPipeline) => resourcesOf(p)[logicalIdOf(p.stack, p.stack.fetch.function.function)]!;
const refOf = (v: Cfn): string => {
  assert.ok(v && typeof v === 'object' && typeof v.Ref === 'string', `a Ref: ${JSON.stringify(v)}`);
  return v.Ref as string;
};

/** Where a subnet's 0.0.0.0/0 goes: its route table's default route, read through the association. */
function defaultRouteOf(p: SynthesizedPipeline, subnetId: string): Cfn {
  const association = ofType(p, 'AWS::EC2::SubnetRouteTableAssociation').find(([, a]) => refOf(a.Properties.SubnetId) === subnetId);
  assert.ok(association, `${subnetId} has a route table`);
  const table = refOf(association[1].Properties.RouteTableId);
  const routes = ofType(p, 'AWS::EC2::Route').filter(([, r]) => refOf(r.Properties.RouteTableId) === table && r.Properties.DestinationCidrBlock === '0.0.0.0/0');
  assert.equal(routes.length, 1, `${subnetId}: one default route`);
  return routes[0]![1].Properties;
}

/**
 * Each subnet of the fetch function routes 0.0.0.0/0 to a NAT gateway that sits in a subnet routed to the VPC's
 * internet gateway; returns each NAT gateway's AllocationId, in the order of the function's subnets.
 */
function natAllocationsOfFetch(p: SynthesizedPipeline): Cfn[] {
  const subnets = (fetchFunction(p).Properties.VpcConfig.SubnetIds as Cfn[]).map(refOf);
  assert.equal(subnets.length, 2, 'two subnets, two Availability Zones');
  const [[igw]] = ofType(p, 'AWS::EC2::InternetGateway') as [[string, Resource]];
  return subnets.map((subnet) => {
    const route = defaultRouteOf(p, subnet);
    assert.equal(route.GatewayId, undefined, `${subnet} is private: no route to the internet gateway`);
    const nat = resourcesOf(p)[refOf(route.NatGatewayId)]!;
    assert.equal(nat.Type, 'AWS::EC2::NatGateway');
    assert.deepEqual(defaultRouteOf(p, refOf(nat.Properties.SubnetId)).GatewayId, { Ref: igw }, "the NAT gateway's subnet reaches the internet");
    return nat.Properties.AllocationId;
  });
}

/**
 * Whether an endpoint policy allows a principal's request, as IAM evaluates one: an Allow statement for any principal
 * ("*") naming the action and the resource, whose conditions all hold; only ArnEquals on aws:PrincipalArn is known
 * here, any other condition counts as not met (so an unknown form shows as a refusal, never as a grant).
 */
function endpointAllows(statements: Cfn[], principalArn: Cfn, action: string, resource: Cfn): boolean {
  const same = (a: Cfn, b: Cfn) => JSON.stringify(a) === JSON.stringify(b);
  return statements.some(
    (st) =>
      st.Effect === 'Allow' &&
      (st.Principal === '*' || same(st.Principal, { AWS: '*' })) &&
      ([st.Action].flat() as string[]).includes(action) &&
      [st.Resource].flat().some((r: Cfn) => same(r, resource)) &&
      Object.entries((st.Condition ?? {}) as Record<string, Record<string, Cfn>>).every(
        ([operator, keys]) =>
          operator === 'ArnEquals' && Object.entries(keys).every(([key, v]) => key === 'aws:PrincipalArn' && [v].flat().some((x: Cfn) => same(x, principalArn))),
      ),
  );
}

/** A resource's tags as a map, from either form CloudFormation takes (a Key/Value list or a map). */
function tagMap(tags: Cfn): Record<string, string> {
  if (Array.isArray(tags)) return Object.fromEntries(tags.map((t: { Key: string; Value: string }) => [t.Key, t.Value]));
  return { ...(tags as Record<string, string>) };
}

/** Every resource of the stack CDK can tag (an L1 with a tag manager), by logical id, with its template tags. */
function taggableResources(p: SynthesizedPipeline): Array<{ id: string; type: string; tags: Record<string, string> }> {
  // The report shards' resources from the whole template, the shards' own AWS::CloudFormation::Stack from the parent's.
  const resources = { ...resourcesOf(p), ...(p.parent.toJSON() as { Resources: Record<string, Resource> }).Resources };
  return p.stack.node
    .findAll()
    .filter((c): c is CfnResource => CfnResource.isCfnResource(c))
    .flatMap((c) => {
      const manager = TagManager.isTaggable(c) ? c.tags : TagManager.isTaggableV2(c) ? c.cdkTagManager : undefined;
      if (!manager) return [];
      const id = Stack.of(c).resolve(c.logicalId) as string;
      // The manager names the L1 property ("tags"); the template spells it as CloudFormation does ("Tags").
      const property = manager.tagPropertyName.charAt(0).toUpperCase() + manager.tagPropertyName.slice(1);
      return [{ id, type: c.cfnResourceType, tags: tagMap(resources[id]?.Properties?.[property] ?? []) }];
    });
}

describe('a new environment file, as a new user writes it: static IP, boundary, two tags, a Slack channel', () => {
  const p = trial;

  it('synthesizes as PaynetReports-<name> from the file alone', () => {
    assert.equal(p.stack.stackName, 'PaynetReports-trial');
  });

  it("puts the fetch function in private subnets routed to a NAT gateway with the stack's Elastic IP, and outputs that IP", () => {
    for (const [type, n] of Object.entries({
      'AWS::EC2::VPC': 1,
      'AWS::EC2::Subnet': 4,
      'AWS::EC2::NatGateway': 1,
      'AWS::EC2::EIP': 1,
      'AWS::EC2::InternetGateway': 1,
      'AWS::EC2::SecurityGroup': 1,
      'AWS::EC2::VPCEndpoint': 1,
      'AWS::EC2::FlowLog': 1,
    })) {
      assert.equal(count(p, type), n, type);
    }
    const [[eipId]] = ofType(p, 'AWS::EC2::EIP') as [[string, Resource]];
    // One shared NAT gateway: both zones' subnets leave from the one address.
    assert.deepEqual(natAllocationsOfFetch(p), [
      { 'Fn::GetAtt': [eipId, 'AllocationId'] },
      { 'Fn::GetAtt': [eipId, 'AllocationId'] },
    ]);
    assert.deepEqual(outputs(p).EgressIps, { Value: { 'Fn::GetAtt': [eipId, 'PublicIp'] }, Description: EGRESS_OUTPUT.createdDescription });
  });

  it('keeps the parse function out of the VPC: it calls S3 and SQS only', () => {
    const parse = resourcesOf(p)[logicalIdOf(p.stack, p.stack.parse.function.function)]!;
    assert.equal(parse.Properties.VpcConfig, undefined);
    const inVpc = ofType(p, 'AWS::Lambda::Function').filter(([, f]) => f.Properties.VpcConfig);
    assert.deepEqual(inVpc.map(([id]) => id), [logicalIdOf(p.stack, p.stack.fetch.function.function)]);
  });

  it('lets the function out on HTTPS only, and in on nothing', () => {
    const [[sgId, sg]] = ofType(p, 'AWS::EC2::SecurityGroup') as [[string, Resource]];
    assert.deepEqual(fetchFunction(p).Properties.VpcConfig.SecurityGroupIds, [{ 'Fn::GetAtt': [sgId, 'GroupId'] }]);
    assert.deepEqual(
      sg.Properties.SecurityGroupEgress.map((r: Cfn) => [r.IpProtocol, r.FromPort, r.ToPort, r.CidrIp]),
      [['tcp', 443, 443, '0.0.0.0/0']],
    );
    assert.equal(sg.Properties.SecurityGroupIngress, undefined);
    assert.equal(count(p, 'AWS::EC2::SecurityGroupIngress'), 0);
    // The VPC's default security group is emptied, so nothing placed in it by mistake talks.
    assert.equal(count(p, 'Custom::VpcRestrictDefaultSG'), 1);
  });

  it('sends the raw upload through a free S3 endpoint that allows exactly the writes the fetch role has', () => {
    const [[, endpoint]] = ofType(p, 'AWS::EC2::VPCEndpoint') as [[string, Resource]];
    assert.equal(endpoint.Properties.VpcEndpointType, 'Gateway');
    const subnets = (fetchFunction(p).Properties.VpcConfig.SubnetIds as Cfn[]).map(refOf);
    const tables = subnets.map(
      (s) => ofType(p, 'AWS::EC2::SubnetRouteTableAssociation').find(([, a]) => refOf(a.Properties.SubnetId) === s)![1].Properties.RouteTableId,
    );
    assert.deepEqual(endpoint.Properties.RouteTableIds, tables);
    const roleId = logicalIdOf(p.stack, p.stack.fetch.function.role);
    const roleS3 = ofType(p, 'AWS::IAM::Policy')
      .filter(([, pol]) => JSON.stringify(pol.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap(([, pol]) => pol.Properties.PolicyDocument.Statement as Cfn[])
      .filter((st) => [st.Action].flat().some((a: string) => a.startsWith('s3:')));
    const endpointStatements = endpoint.Properties.PolicyDocument.Statement as Cfn[];
    assert.deepEqual(
      endpointStatements.map((st) => ({ Action: st.Action, Resource: st.Resource })),
      roleS3.map((st) => ({ Action: st.Action, Resource: st.Resource })),
    );
    // Gateway endpoints match the caller by aws:PrincipalArn (the role behind the function's session), under Principal "*".
    const fetchRole = { 'Fn::GetAtt': [roleId, 'Arn'] };
    const parseRole = { 'Fn::GetAtt': [logicalIdOf(p.stack, p.stack.parse.function.role), 'Arn'] };
    for (const st of roleS3) {
      for (const action of [st.Action].flat() as string[]) {
        for (const resource of [st.Resource].flat()) {
          assert.ok(endpointAllows(endpointStatements, fetchRole, action, resource), `the fetch role's ${action} passes the endpoint`);
          assert.ok(!endpointAllows(endpointStatements, parseRole, action, resource), `another role's ${action} does not`);
        }
      }
    }
    assert.ok(!endpointAllows(endpointStatements, fetchRole, 's3:GetObject', [roleS3[0].Resource].flat()[0]), 'nor a read of the fetch role');
  });

  it('logs every flow into an encrypted log group with the retention, through a role only flow logs of this account may assume', () => {
    const [[, flowLog]] = ofType(p, 'AWS::EC2::FlowLog') as [[string, Resource]];
    assert.equal(flowLog.Properties.TrafficType, 'ALL');
    const group = resourcesOf(p)[refOf(flowLog.Properties.LogGroupName)]!;
    assert.equal(group.Type, 'AWS::Logs::LogGroup');
    assert.deepEqual(group.Properties.KmsKeyId, { 'Fn::GetAtt': [logicalIdOf(p.stack, p.stack.lake.key), 'Arn'] });
    assert.equal(group.Properties.RetentionInDays, trialConfig!.logRetentionDays);
    const role = resourcesOf(p)[flowLog.Properties.DeliverLogsPermissionArn['Fn::GetAtt'][0]]!;
    const [trust] = role.Properties.AssumeRolePolicyDocument.Statement as Cfn[];
    assert.deepEqual(trust.Principal, { Service: 'vpc-flow-logs.amazonaws.com' });
    assert.deepEqual(Object.keys(trust.Condition).sort(), ['ArnLike', 'StringEquals']);
  });

  it('lets Lambda manage the network interfaces until the function is gone: the statement is in a policy the function depends on', () => {
    const roleId = logicalIdOf(p.stack, p.stack.fetch.function.role);
    const [[policyId, policy]] = ofType(p, 'AWS::IAM::Policy').filter(([, pol]) => JSON.stringify(pol.Properties.Roles) === JSON.stringify([{ Ref: roleId }])) as [
      [string, Resource],
    ];
    const eni = (policy.Properties.PolicyDocument.Statement as Cfn[]).find((st) => [st.Action].flat().includes('ec2:CreateNetworkInterface'));
    assert.deepEqual(eni, { Action: [...VPC_ACCESS_ACTIONS], Effect: 'Allow', Resource: '*' });
    assert.ok(fetchFunction(p).DependsOn?.includes(policyId), 'deleted after the function, so Lambda can still release the interfaces');
    assert.ok(
      (fetchFunction(p).DependsOn ?? []).some((d) => resourcesOf(p)[d]?.Type === 'AWS::EC2::Route'),
      'created after the NAT route: a first invocation finds the way out',
    );
    // No role may manage interfaces but the fetch role, and "*" stays for X-Ray, these actions and the freshness check's reads only.
    for (const [, pol] of ofType(p, 'AWS::IAM::Policy')) {
      for (const st of pol.Properties.PolicyDocument.Statement as Cfn[]) {
        const actions: string[] = [st.Action].flat();
        if (st.Resource === '*') {
          assert.ok(actions.every((a) => a.startsWith('xray:') || (VPC_ACCESS_ACTIONS as readonly string[]).includes(a)), actions.join(','));
        }
        if (actions.includes('ec2:CreateNetworkInterface')) assert.deepEqual(pol.Properties.Roles, [{ Ref: roleId }]);
      }
    }
  });

  it('gives every IAM role the permissions boundary, the helper functions of CDK included', () => {
    const roles = ofType(p, 'AWS::IAM::Role');
    const ids = roles.map(([id]) => id);
    for (const helper of [/^BucketNotificationsHandler/, /^CustomVpcRestrictDefaultSGCustomResourceProviderRole/, /^AlarmChatRole/, /^EgressFlowLogRole/]) {
      assert.ok(ids.some((id) => helper.test(id)), `${helper} among ${ids.join(', ')}`);
    }
    for (const [id, role] of roles) assert.equal(role.Properties.PermissionsBoundary, BOUNDARY, id);
    assert.equal(count(p, 'AWS::IAM::User'), 0);
  });

  it('puts the two tags, and project and environment, on every taggable resource and on the stack', () => {
    const taggable = taggableResources(p);
    assert.ok(taggable.length >= 40, `${taggable.length} taggable resources`);
    const expected = { 'cost-center': 'payments-42', owner: 'data-team', project: 'paynet-reports', environment: 'trial' };
    for (const r of taggable) {
      for (const [k, v] of Object.entries(expected)) assert.equal(r.tags[k], v, `${r.type} ${r.id}: tag ${k}`);
    }
    // Every role and function in the template itself, CDK's helper providers' (the default-security-group cleaner) too:
    // an SCP requiring a tag at creation sees the request's tags, which stack-level propagation may not supply.
    const helpers = ofType(p, 'AWS::IAM::Role').concat(ofType(p, 'AWS::Lambda::Function'));
    assert.ok(helpers.some(([id]) => /^CustomVpcRestrictDefaultSG/.test(id)), 'the cleaner is among them');
    for (const [id, r] of helpers) {
      for (const [k, v] of Object.entries(expected)) assert.equal(tagMap(r.Properties.Tags ?? [])[k], v, `${r.Type} ${id}: tag ${k}`);
    }
    // The stack's own tags: CloudFormation passes them on to what the template cannot tag.
    const artifact = p.app.synth().getStackByName(p.stack.stackName);
    for (const [k, v] of Object.entries(expected)) assert.equal(artifact.tags[k], v, `stack tag ${k}`);
  });

  it('subscribes the alarm topic to the Slack channel, with a read-only guardrail and a read-only role', () => {
    const [[, slack]] = ofType(p, 'AWS::Chatbot::SlackChannelConfiguration') as [[string, Resource]];
    assert.deepEqual(slack.Properties.SnsTopicArns, [{ Ref: logicalIdOf(p.stack, p.stack.alarms.topic) }]);
    assert.equal(slack.Properties.SlackWorkspaceId, 'T012ABCDE');
    assert.equal(slack.Properties.SlackChannelId, 'C0123ABCD');
    assert.equal(slack.Properties.UserRoleRequired, false);
    const readOnly = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:iam::aws:policy/${CHAT_GUARDRAIL_POLICY}`]] };
    assert.deepEqual(slack.Properties.GuardrailPolicies, [readOnly], 'without a guardrail the service applies AdministratorAccess');
    const role = resourcesOf(p)[slack.Properties.IamRoleArn['Fn::GetAtt'][0]]!;
    assert.deepEqual(role.Properties.AssumeRolePolicyDocument.Statement[0].Principal, { Service: 'chatbot.amazonaws.com' });
    assert.deepEqual(role.Properties.ManagedPolicyArns, [readOnly]);
    assert.equal(ofType(p, 'AWS::IAM::Policy').filter(([, pol]) => JSON.stringify(pol.Properties.Roles).includes(slack.Properties.IamRoleArn['Fn::GetAtt'][0])).length, 0);
  });

  it('lets nothing of ours publish to the alarm topic: chat gets CloudWatch alarm notifications only, which it renders natively', () => {
    // A custom message would have to follow the chat service's custom-notification schema to be shown; no role of the
    // stack holds sns:Publish, and the topic policy allows CloudWatch alarms of this stack only (lib/constructs/alarms.ts).
    for (const [id, pol] of [...ofType(p, 'AWS::IAM::Policy'), ...ofType(p, 'AWS::IAM::ManagedPolicy')]) {
      assert.ok(!JSON.stringify(pol.Properties.PolicyDocument).includes('sns:Publish'), id);
    }
    const [[, topicPolicy]] = ofType(p, 'AWS::SNS::TopicPolicy') as [[string, Resource]];
    const publishers = (topicPolicy.Properties.PolicyDocument.Statement as Cfn[]).filter((st) => st.Effect === 'Allow' && [st.Action].flat().includes('sns:Publish'));
    assert.deepEqual(publishers.map((st) => st.Principal), [{ Service: 'cloudwatch.amazonaws.com' }]);
  });
});

describe("the user's own Elastic IPs (one NAT gateway per zone) and a Teams channel", () => {
  const p = allocated;

  it('routes each zone through its own NAT gateway holding one of the given allocations, and outputs the allocation ids', () => {
    assert.equal(count(p, 'AWS::EC2::EIP'), 0, 'no address allocated by the stack: they would go with it');
    assert.equal(count(p, 'AWS::EC2::NatGateway'), 2);
    assert.deepEqual(natAllocationsOfFetch(p), ALLOCATIONS);
    assert.deepEqual(outputs(p).EgressIps, { Value: ALLOCATIONS.join(','), Description: EGRESS_OUTPUT.allocatedDescription });
    assert.match(EGRESS_OUTPUT.allocatedDescription, /aws ec2 describe-addresses --allocation-ids/);
  });

  it('subscribes the alarm topic to the Teams channel through the L1, with the guardrail and the shared role', () => {
    const [[, teams]] = ofType(p, 'AWS::Chatbot::MicrosoftTeamsChannelConfiguration') as [[string, Resource]];
    assert.deepEqual(teams.Properties.SnsTopicArns, [{ Ref: logicalIdOf(p.stack, p.stack.alarms.topic) }]);
    assert.equal(teams.Properties.TeamId, TEAMS.teamId);
    assert.equal(teams.Properties.TeamsChannelId, TEAMS.channelId);
    assert.equal(teams.Properties.TeamsTenantId, TEAMS.tenantId);
    assert.deepEqual(teams.Properties.IamRoleArn, { 'Fn::GetAtt': [logicalIdOf(p.stack, p.stack.alarmChat!.role), 'Arn'] });
    assert.equal(teams.Properties.GuardrailPolicies.length, 1);
    assert.equal(count(p, 'AWS::Chatbot::SlackChannelConfiguration'), 0);
  });

  it("puts the boundary on CDK's auto-delete provider role too (removalPolicy destroy)", () => {
    const roles = ofType(p, 'AWS::IAM::Role');
    assert.ok(roles.some(([id]) => /^CustomS3AutoDeleteObjectsCustomResourceProviderRole/.test(id)));
    for (const [id, role] of roles) assert.equal(role.Properties.PermissionsBoundary, BOUNDARY, id);
  });
});

describe("the user's VPC and subnets, already routed through their NAT", () => {
  const p = existing;

  it('creates no network, puts the function in the given subnets, and outputs the VPC whose NAT the provider allow-lists', () => {
    for (const type of ['AWS::EC2::VPC', 'AWS::EC2::Subnet', 'AWS::EC2::NatGateway', 'AWS::EC2::EIP', 'AWS::EC2::Route', 'AWS::EC2::VPCEndpoint', 'AWS::EC2::FlowLog']) {
      assert.equal(count(p, type), 0, type);
    }
    assert.deepEqual(fetchFunction(p).Properties.VpcConfig.SubnetIds, SUBNETS);
    const [[, sg]] = ofType(p, 'AWS::EC2::SecurityGroup') as [[string, Resource]];
    assert.equal(sg.Properties.VpcId, 'vpc-0123456789abcdef0');
    assert.deepEqual(outputs(p).EgressIps, { Value: 'vpc-0123456789abcdef0', Description: EGRESS_OUTPUT.existingDescription });
  });

  it("opens the gateway's own port beside 443 when its URL names one", () => {
    const [[, sg]] = ofType(p, 'AWS::EC2::SecurityGroup') as [[string, Resource]];
    assert.deepEqual(sg.Properties.SecurityGroupEgress.map((r: Cfn) => [r.FromPort, r.ToPort, r.CidrIp]), [
      [443, 443, '0.0.0.0/0'],
      [8443, 8443, '0.0.0.0/0'],
    ]);
  });

  it('adds no chat, no boundary and no tags beyond the stack\'s when those are not set', () => {
    assert.equal(count(p, 'AWS::Chatbot::SlackChannelConfiguration') + count(p, 'AWS::Chatbot::MicrosoftTeamsChannelConfiguration'), 0);
    for (const [id, role] of ofType(p, 'AWS::IAM::Role')) assert.equal(role.Properties.PermissionsBoundary, undefined, id);
    for (const r of taggableResources(p)) assert.deepEqual(Object.keys(r.tags).filter((k) => !['project', 'environment', 'Name'].includes(k)), [], r.id);
  });
});

describe('delivery paths with the options on', () => {
  for (const [name, p] of [
    ['static IP, boundary, tags, Slack', trial],
    ['own Elastic IPs, Teams, destroy', allocated],
    ['existing VPC', existing],
  ] as const) {
    it(`${name}: every service still delivers, the flow log's group included, and no service grant is unpinned`, () => {
      const json = p.template.toJSON() as Parameters<typeof walkDeliveryPaths>[0];
      const paths = walkDeliveryPaths(json);
      const broken = paths.filter((x) => x.problems.length).map((x) => `${x.kind} ${x.from} -> ${x.to}: ${x.problems.join('; ')}`);
      assert.deepEqual(broken, []);
      const groups = ofType(p, 'AWS::Logs::LogGroup').length;
      assert.equal(paths.filter((x) => x.kind === 'logs-to-log-group').length, groups, 'every log group, encrypted');
      // In a VPC the fetch function has its daily keep-alive beside the freshness check (lib/constructs/fetch.ts).
      assert.equal(paths.filter((x) => x.kind === 'scheduler-to-function').length, 2, 'the freshness check and the keep-alive');
      assert.deepEqual(unpinnedServiceGrants(json), []);
    });
  }
});

describe('cdk-nag: AWS Solutions and PCI DSS 3.2.1 with the options on', () => {
  const variants: Array<[string, SynthesizedPipeline]> = [
    ['static IP, boundary, tags, Slack', trial],
    ['own Elastic IPs, Teams, destroy', allocated],
    ['existing VPC', existing],
  ];
  for (const [name, p] of variants) {
    it(`finds nothing unacknowledged: ${name}`, () => {
      for (const pack of [new AwsSolutionsChecks(), new PCIDSS321Checks()]) {
        const report = pack.validateScope(p.app);
        const findings = report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
        assert.deepEqual(findings, [], `${pack.readPackName}: ${findings.join('\n')}`);
      }
    });
  }

  it('claims no "LambdaInsideVPC" for a function in a VPC, and every acknowledgement suppresses a finding', () => {
    for (const [, p] of variants) {
      assert.deepEqual(acknowledgementsOf(p.stack.fetch.function.function).map((a) => a.id), [], 'the fetch function is in a VPC');
      assert.deepEqual(acknowledgementsOf(p.stack.parse.function.function).map((a) => a.id), ['PCI.DSS.321-LambdaInsideVPC'], 'the parse function is not');
      for (const c of p.app.node.findAll()) {
        // The packs' findings only: CDK acknowledges CloudFormation validation rules of its own (FlowLog: F3002).
        for (const a of acknowledgementsOf(c).filter((x) => /^(AwsSolutions|PCI\.DSS\.321)-/.test(x.id))) {
          assert.ok(typeof a.reason === 'string' && a.reason.length >= 40, `${c.node.path} ${a.id}: the reason says why`);
          assert.ok(used.has(`${c.node.path} ${a.id}`), `${c.node.path} ${a.id} suppresses nothing: remove it`);
        }
      }
    }
  });
});

/**
 * docs/deploy.md's lists for a restricted deployment role and a permissions boundary, held to what the templates need:
 * a grant or a resource added to the stack and not to the page fails here, named.
 */
describe('docs/deploy.md "Governed accounts" against the templates', () => {
  const deploy = readFileSync(projectPath('docs/deploy.md'), 'utf8');
  const paragraph = (start: string, end: string) => deploy.slice(deploy.indexOf(start), deploy.indexOf(end, deploy.indexOf(start)));
  const boundary = paragraph('**Permissions boundary.**', '**Tags.**');
  const deploymentRole = paragraph('**What a restricted deployment role or an SCP must allow.**', '**A function in a VPC after a long pause.**');
  // How the boundary paragraph names a service whose actions it allows as a whole; EC2 actions are named one by one.
  const SERVICE_NAMES: Record<string, string> = {
    s3: 'S3',
    kms: 'KMS',
    sqs: 'SQS',
    secretsmanager: 'Secrets Manager',
    xray: 'X-Ray',
    logs: 'CloudWatch Logs',
    cloudwatch: 'CloudWatch',
    lambda: 'Lambda',
  };

  /** Every action an IAM policy of the stack grants a role: the policies attached to roles, and roles' inline ones. */
  function grantedActions(p: SynthesizedPipeline): Set<string> {
    const documents = [
      ...ofType(p, 'AWS::IAM::Policy').map(([, pol]) => pol.Properties.PolicyDocument),
      ...ofType(p, 'AWS::IAM::Role').flatMap(([, role]) => ((role.Properties.Policies ?? []) as Cfn[]).map((pol) => pol.PolicyDocument)),
    ];
    return new Set(documents.flatMap((d: Cfn) => (d.Statement as Cfn[]).filter((s) => s.Effect === 'Allow').flatMap((s) => [s.Action].flat() as string[])));
  }

  it('names, in the permissions-boundary paragraph, every action a role of the stack is granted', () => {
    for (const p of [trial, allocated]) {
      for (const action of grantedActions(p)) {
        const service = action.split(':')[0]!;
        if (service === 'ec2') assert.ok(boundary.includes(`\`${action}\``), `${action} in the boundary paragraph`);
        else assert.ok(SERVICE_NAMES[service] && boundary.includes(SERVICE_NAMES[service]), `${service} (${action}) in the boundary paragraph`);
      }
    }
  });

  it('names, for a deployment role, the create action of every EC2 resource and what Lambda checks for a function in a VPC', () => {
    const create: Record<string, string> = {
      'AWS::EC2::VPC': 'ec2:CreateVpc',
      'AWS::EC2::Subnet': 'ec2:CreateSubnet',
      'AWS::EC2::RouteTable': 'ec2:CreateRouteTable',
      'AWS::EC2::Route': 'ec2:CreateRoute',
      'AWS::EC2::InternetGateway': 'ec2:CreateInternetGateway',
      'AWS::EC2::VPCGatewayAttachment': 'ec2:AttachInternetGateway',
      'AWS::EC2::EIP': 'ec2:AllocateAddress',
      'AWS::EC2::NatGateway': 'ec2:CreateNatGateway',
      'AWS::EC2::SecurityGroup': 'ec2:CreateSecurityGroup',
      'AWS::EC2::VPCEndpoint': 'ec2:CreateVpcEndpoint',
      'AWS::EC2::FlowLog': 'ec2:CreateFlowLogs',
    };
    const types = new Set(Object.values(resourcesOf(trial)).map((r) => r.Type).filter((t) => t.startsWith('AWS::EC2::')));
    for (const type of types) {
      if (type === 'AWS::EC2::SubnetRouteTableAssociation') continue; // part of creating the route table's routes
      assert.ok(create[type], `${type}: which action creates it?`);
      assert.ok(deploymentRole.includes(`\`${create[type]}\``), `${create[type]} (${type}) in the deployment-role list`);
    }
    assert.ok(ofType(trial, 'AWS::Lambda::Function').some(([, f]) => f.Properties.VpcConfig), 'a function in the VPC');
    for (const action of ['ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs', 'ec2:DescribeNetworkInterfaces']) {
      assert.ok(deploymentRole.includes(`\`${action}\``), `${action} in the deployment-role list`);
    }
  });
});
