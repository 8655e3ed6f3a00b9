import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startRecording, recordedRequests, type RecordedRequest } from './recorder.js';
import { shippedEnvironment, testConfig } from '../infra/helpers.js';
import { checksOf, type IamCheck } from './actions.js';
import { driveFunctions } from './drive-functions.js';
import { evaluate, type Caller } from './evaluate.js';
import { FUNCTION_CALLERS, stackWorld, type StackWorld } from './stack-world.js';
import { analystQuery, athenaMappers } from './athena.js';
import { deniedRequests } from './denied.js';
import { serviceRequests } from './service-paths.js';
import { driveOperator } from './drive-cli.js';
import { OPERATOR } from './stack-world.js';
import { unusedGrants, type UnusedGrant } from './unused.js';
import { readFileSync } from 'node:fs';
import { projectPath } from '../../lib/constructs/pipeline-function.js';

/**
 * Issue 44, item 2: every permission the pipeline uses, proved by an IAM evaluator that is not ours
 * (@cloud-copilot/iam-simulate). The functions run as Lambda runs them, with the environment variables of each
 * synthesized environment, and every AWS request they make is recorded (recorder.ts, drive-functions.ts); each is
 * mapped to what AWS checks for it (actions.ts) and evaluated against the resolved template's policies: the role's
 * own, the permissions boundary of docs/policies/permissions-boundary.json where the environment sets one, the
 * target's resource policy, and in `network` mode the S3 gateway endpoint's policy. Recorded live in this run, so
 * the recording cannot go stale.
 */

startRecording();

const BOUNDARY_ARN = 'arn:aws:iam::123456789012:policy/org/paynet-boundary';
const worlds: StackWorld[] = [
  stackWorld('integration', shippedEnvironment('integration')),
  stackWorld('production', shippedEnvironment('production')),
  // A governed account: the boundary on every role, the fetch function in a VPC behind the S3 gateway endpoint, two connections.
  stackWorld(
    'governed',
    testConfig({
      network: { staticEgressIp: true },
      permissionsBoundaryArn: BOUNDARY_ARN,
      connections: { 'acme-eu': { gateway: { endpointUrl: 'https://acme.test/paynet-ui/services/v2/rpt-engine' }, secret: { name: 'paynet-reports/test/acme-eu' } } },
    }),
    BOUNDARY_ARN,
  ),
];
const recorded = new Map<string, RecordedRequest[]>();
/** Every check evaluated for a role of the stack, by environment and role: what the role's grants are held against. */
const checksOfRole = new Map<string, IamCheck[]>();
const noteChecks = (world: StackWorld, caller: Caller, checks: IamCheck[]) => {
  if (!caller.roleId) return;
  const key = `${world.name} ${caller.roleId}`;
  checksOfRole.set(key, [...(checksOfRole.get(key) ?? []), ...checks]);
};

/** A failed check as the failure names it: the environment, the caller, the request, the action and what decided. */
async function problemsOf(world: StackWorld, caller: Caller, checks: IamCheck[], expectAllowed: boolean): Promise<string[]> {
  if (expectAllowed) noteChecks(world, caller, checks);
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const check of checks) {
    const key = JSON.stringify([check.action, check.resource, check.context]);
    if (seen.has(key)) continue;
    seen.add(key);
    const verdict = await evaluate(caller, check, world.policies.resourcePolicyOf(check.resource));
    // A simulation that could not run (a policy or request iam-simulate refuses) proves nothing either way.
    if (verdict.allowed !== expectAllowed || verdict.result === 'error') {
      const context = Object.keys(check.context).length ? ` ${JSON.stringify(check.context)}` : '';
      problems.push(`${world.name}: ${caller.name}, ${check.why}: ${check.action} on ${check.resource}${context} is ${verdict.result}${verdict.reasons.length ? `: ${verdict.reasons.join('; ')}` : ''}`);
    }
  }
  return problems;
}

before(async () => {
  for (const world of worlds) {
    const start = recordedRequests().length;
    const variables = (id: string) => world.policies.functions.get(id)!.variables;
    const { rawBucket, curatedBucket } = world.synthesized.stack.lake;
    await driveFunctions(
      { fetch: variables(world.functionIds.fetch), parse: variables(world.functionIds.parse), freshness: variables(world.functionIds.freshness) },
      { raw: world.template.resolve(world.synthesized.stack.resolve(rawBucket.bucketName)), curated: world.template.resolve(world.synthesized.stack.resolve(curatedBucket.bucketName)) },
    );
    // The deployed commands read an environment file: the shipped environments only.
    if (world.name !== 'governed') await driveOperator(world);
    recorded.set(world.name, recordedRequests().slice(start));
  }
});

describe('every AWS request of the functions, evaluated by iam-simulate', () => {
  it('records requests of each function in each environment', (t) => {
    for (const world of worlds) {
      const requests = recorded.get(world.name)!;
      const counts = FUNCTION_CALLERS.map((c) => `${c} ${requests.filter((r) => r.caller === c).length}`);
      if (process.env.IAM_DEBUG) for (const r of requests) t.diagnostic(`${r.caller} ${r.service} ${r.operation} ${JSON.stringify(r.input).slice(0, 200)}`);
      t.diagnostic(`${world.name}: ${counts.join(', ')} requests recorded`);
      for (const caller of FUNCTION_CALLERS) assert.ok(requests.some((r) => r.caller === caller), `${world.name}: the ${caller} function made no AWS request`);
    }
  });

  it('allows every one of them, in every shipped environment and in a governed one', async () => {
    const problems: string[] = [];
    for (const world of worlds) {
      const requests = recorded.get(world.name)!;
      for (const callerName of FUNCTION_CALLERS) {
        const checks = requests.filter((r) => r.caller === callerName).flatMap((r) => checksOf(r, world.policies));
        problems.push(...(await problemsOf(world, world.caller(callerName), checks, true)));
      }
    }
    assert.deepEqual(problems, []);
  });
});

describe("the analysts' queries, evaluated by iam-simulate", () => {
  it('allows a query in the workgroup: Athena reading the catalog, the tables and the lake key, writing and reading the result', async () => {
    const problems: string[] = [];
    for (const world of worlds) {
      const athena = athenaMappers(world.template, world.policies.bucketKeyOf);
      const checks = analystQuery(world.template).flatMap((r) => checksOf(r, world.policies, athena));
      assert.ok(checks.some((c) => c.action === 'glue:GetTable') && checks.some((c) => c.action === 'kms:Decrypt'), 'the query reads the catalog and decrypts');
      problems.push(...(await problemsOf(world, world.analyst, checks, true)));
    }
    assert.deepEqual(problems, []);
  });
});

describe('requests no role may make, evaluated by iam-simulate', () => {
  it('denies each: a role reading a bucket or a secret it does not need, the analysts writing anything or reading raw files', async (t) => {
    const problems: string[] = [];
    for (const world of worlds) {
      const denied = deniedRequests(world);
      if (world.name === 'production') t.diagnostic(`${denied.length} denied requests, each in every environment: ${denied.map((d) => `${d.caller.name.split(' ')[0]} ${d.check.why}`).join('; ')}`);
      for (const { caller, check } of denied) problems.push(...(await problemsOf(world, caller, [check], false)));
    }
    assert.deepEqual(problems, []);
  });
});

describe("AWS services' own paths into the stack, evaluated by iam-simulate", () => {
  it('allows CloudWatch to the alarm topic and its key, S3 to the parse queue, the Scheduler to each queue and function, Lambda to its queues', async (t) => {
    const problems: string[] = [];
    for (const world of worlds) {
      const requests = serviceRequests(world);
      const paths = new Set(requests.map((r) => r.path.split(':')[0]!.split(' ')[0]));
      assert.deepEqual([...paths].sort(), ['CloudWatch', 'Lambda', 'S3', 'Scheduler'], `${world.name}: every kind of path is found`);
      t.diagnostic(`${world.name}: ${requests.length} checks over ${new Set(requests.map((r) => r.path)).size} service paths`);
      for (const { caller, check } of requests) problems.push(...(await problemsOf(world, caller, [check], true)));
    }
    assert.deepEqual(problems, []);
  });
});

describe("the operator's deployed commands (status, backfill --deployed, alarms test, reparse --environment), evaluated by iam-simulate", () => {
  it("allows each of their requests under docs/policies/operator.json and the analysts' policy, in each shipped environment", async (t) => {
    const problems: string[] = [];
    for (const world of worlds.filter((w) => w.name !== 'governed')) {
      const requests = recorded.get(world.name)!.filter((r) => r.caller === 'operator');
      const operations = new Set(requests.map((r) => `${r.service} ${r.operation}`));
      t.diagnostic(`${world.name}: operator ${requests.length} requests, ${operations.size} operations: ${[...operations].sort().join(', ')}`);
      for (const expected of ['cloudformation DescribeStacks', 'lambda Invoke', 'athena StartQueryExecution', 's3 ListObjectVersions']) assert.ok(operations.has(expected), `${world.name}: ${expected}`);
      const athena = athenaMappers(world.template, world.policies.bucketKeyOf);
      const checks = requests.flatMap((r) => checksOf(r, world.policies, athena));
      const caller = { ...OPERATOR, identityPolicies: [...OPERATOR.identityPolicies, ...world.analyst.identityPolicies] };
      problems.push(...(await problemsOf(world, caller, checks, true)));
    }
    assert.deepEqual(problems, []);
  });
});

describe('the permissions boundary of docs/policies/permissions-boundary.json', () => {
  it("allows every action any role of the governed environment is granted, CDK's helper roles included", async () => {
    const world = worlds.find((w) => w.name === 'governed')!;
    const problems: string[] = [];
    const bounded = [...world.policies.roles.values()].filter((r) => r.boundaryArn);
    assert.equal(bounded.length, world.policies.roles.size, 'every role has the boundary');
    for (const role of bounded) {
      const checks = role.identityPolicies.flatMap(({ policy }) =>
        ((policy.Statement ?? []) as Array<{ Effect: string; Action: string | string[]; Resource: string | string[]; Condition?: unknown }>)
          // A conditional grant is held by the requests that meet its condition, above.
          .filter((st) => st.Effect === 'Allow' && !st.Condition)
          .flatMap((st) => [st.Action].flat().flatMap((action) => [st.Resource].flat().map((resource): IamCheck => ({ action, resource, context: {}, why: 'granted by its own policy' })))),
      );
      // The target's resource policy too: a KMS key allows nothing its key policy does not delegate.
      for (const check of checks) {
        const verdict = await evaluate(world.roleCaller(role.logicalId), check, world.policies.resourcePolicyOf(check.resource));
        if (!verdict.allowed) problems.push(`${role.logicalId}: ${check.action} on ${check.resource} is ${verdict.result}: ${verdict.reasons.join('; ')}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});

/** A role as docs/deploy.md names it: its construct's logical id without CDK's hash ("FetchRole"). */
const roleName = (logicalId: string) => logicalId.replace(/[0-9A-F]{8}$/, '');

describe('what each role may do that no recorded request uses', () => {
  it('is listed in docs/deploy.md, per role, with its reason', (t) => {
    const unused = new Map<string, UnusedGrant>();
    for (const world of worlds) {
      for (const [key, checks] of checksOfRole) {
        const [name, roleId] = key.split(' ') as [string, string];
        if (name !== world.name) continue;
        for (const u of unusedGrants(world.policies.roles.get(roleId)!, checks)) unused.set(`${roleName(u.role)} ${u.action}`, u);
      }
    }
    const lines = [...unused.keys()].sort();
    t.diagnostic(`allowed but unused, over every environment: ${lines.join('; ')}`);
    const deploy = readFileSync(projectPath('docs/deploy.md'), 'utf8');
    const section = deploy.slice(deploy.indexOf('### Granted but not called'));
    const rows = section.split('\n').filter((l) => l.startsWith('| `'));
    const missing = lines.filter((l) => {
      const [role, action] = l.split(' ');
      return !rows.some((r) => r.startsWith(`| \`${role}\``) && r.includes(`\`${action}\``));
    });
    assert.deepEqual(missing, [], 'each in the table of docs/deploy.md "Granted but not called", in its role\'s row');
  });
});
