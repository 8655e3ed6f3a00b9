import { readFileSync } from 'node:fs';
import type { EnvironmentConfig } from '../../lib/environment/environments.js';
import { projectPath } from '../../lib/constructs/pipeline-function.js';
import { stackName } from '../../lib/reports-pipeline-stack.js';
import { logicalIdOf, synthPipeline, type SynthesizedPipeline } from '../infra/helpers.js';
import type { Caller } from './evaluate.js';
import { stackPolicies, type NamedPolicy, type StackPolicies } from './policies.js';
import { resolveTemplate, type ResolvedTemplate } from './resolve.js';

/**
 * One environment as the IAM test reads it: synthesized once, resolved for the sample account and region, its
 * policies indexed, and its callers (the functions' roles) with what iam-simulate needs of each.
 */

/** The permissions boundary docs/deploy.md recommends for governed accounts: the one file the docs and this test read. */
export const BOUNDARY_FILE = 'docs/policies/permissions-boundary.json';
export const BOUNDARY: NamedPolicy = { name: BOUNDARY_FILE, policy: JSON.parse(readFileSync(projectPath(BOUNDARY_FILE), 'utf8')) };

/** The policy docs/deploy.md gives the person who runs the deployed commands, beside the analysts' policy. */
export const OPERATOR_FILE = 'docs/policies/operator.json';
export const OPERATOR: Caller = {
  name: `operator (${OPERATOR_FILE} and the analysts' policy)`,
  principal: 'arn:aws:iam::123456789012:role/payments-operator',
  identityPolicies: [{ name: OPERATOR_FILE, policy: JSON.parse(readFileSync(projectPath(OPERATOR_FILE), 'utf8')) }],
};

export const FUNCTION_CALLERS = ['fetch', 'parse', 'freshness'] as const;
export type FunctionCaller = (typeof FUNCTION_CALLERS)[number];

export interface StackWorld {
  name: string;
  synthesized: SynthesizedPipeline;
  template: ResolvedTemplate;
  policies: StackPolicies;
  /** The logical id of each function of the stack. */
  functionIds: Record<FunctionCaller, string>;
  caller(name: FunctionCaller): Caller;
  /** A role of the stack by logical id, as a caller. */
  roleCaller(roleId: string, name?: string): Caller;
  /** An analysts' role with the stack's analysts' policy attached (docs/deploy.md, step 9). */
  analyst: Caller;
}

/** The role `analystRoleArns` would name; any role with the policy is the same to IAM. */
export const ANALYST_ROLE_ARN = 'arn:aws:iam::123456789012:role/finance-analysts';

export function stackWorld(name: string, config: EnvironmentConfig, boundaryArn?: string): StackWorld {
  const synthesized = synthPipeline(config);
  const { stack } = synthesized;
  const template = resolveTemplate(synthesized.template.toJSON() as never, stackName(config.name));
  const policies = stackPolicies(template);
  const functionIds: Record<FunctionCaller, string> = {
    fetch: logicalIdOf(stack, stack.fetch.function.function),
    parse: logicalIdOf(stack, stack.parse.function.function),
    freshness: logicalIdOf(stack, stack.freshness.function.function),
  };
  const roleCaller = (roleId: string, callerName = roleId): Caller => {
    const role = policies.roles.get(roleId);
    if (!role) throw new Error(`${roleId} is not a role of ${name}`);
    if (role.boundaryArn && role.boundaryArn !== boundaryArn) throw new Error(`${roleId} has the boundary ${role.boundaryArn}, not the test's ${boundaryArn}`);
    return {
      name: `${callerName} (${roleId})`,
      roleId,
      principal: role.arn,
      identityPolicies: role.identityPolicies,
      ...(role.boundaryArn ? { boundary: BOUNDARY } : {}),
    };
  };
  const [analystPolicyId, analystPolicy] = Object.entries(template.resources).find(([, r]) => r.Type === 'AWS::IAM::ManagedPolicy')!;
  return {
    name,
    analyst: { name: 'analyst (finance-analysts)', principal: ANALYST_ROLE_ARN, identityPolicies: [{ name: analystPolicyId, policy: template.resolve(analystPolicy.Properties!.PolicyDocument) }] },
    synthesized,
    template,
    policies,
    functionIds,
    roleCaller,
    caller: (callerName) => {
      const fn = policies.functions.get(functionIds[callerName])!;
      return { ...roleCaller(fn.role, callerName), ...(fn.inVpc && policies.s3EndpointPolicy ? { s3Endpoint: policies.s3EndpointPolicy } : {}) };
    },
  };
}
