import { getDenialReasons, runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import type { IamCheck } from './actions.js';
import type { NamedPolicy } from './policies.js';
import { SAMPLE } from './resolve.js';

/**
 * One IAM check evaluated by @cloud-copilot/iam-simulate (AGPL-3.0, a devDependency of the tests only): the caller's
 * identity policies, its permissions boundary, the target's resource policy and, for a function in the VPC, the S3
 * gateway endpoint's policy. Requests reach AWS over TLS 1.2 or newer, as the SDK sends them, which the stack's
 * TLS-only denies read. The verdict names what decided it.
 */

export interface Caller {
  /** How a failure names the caller: "fetch (FetchRole3CDE281A)". */
  name: string;
  /** The role's logical id, when the caller is a role of the stack. */
  roleId?: string;
  /** A role's ARN, or a service principal ("cloudwatch.amazonaws.com"). */
  principal: string;
  identityPolicies: NamedPolicy[];
  boundary?: NamedPolicy;
  /** Policies of the VPC endpoint S3 requests pass through. */
  s3Endpoint?: NamedPolicy;
}

export interface Verdict {
  allowed: boolean;
  result: string;
  /** What denied or was missing, in words: the policy and the statement. */
  reasons: string[];
}

export async function evaluate(caller: Caller, check: IamCheck, resourcePolicy: NamedPolicy | undefined): Promise<Verdict> {
  const isService = !caller.principal.startsWith('arn:');
  const simulation: Simulation = {
    request: {
      principal: caller.principal,
      action: check.action,
      resource: { resource: check.resource, accountId: SAMPLE.account },
      contextVariables: {
        'aws:SecureTransport': 'true',
        's3:TlsVersion': '1.3',
        ...(isService ? {} : { 'aws:PrincipalArn': caller.principal, 'aws:PrincipalAccount': SAMPLE.account }),
        ...check.context,
      },
    },
    identityPolicies: caller.identityPolicies,
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(resourcePolicy ? { resourcePolicy: resourcePolicy.policy } : {}),
    ...(caller.boundary ? { permissionBoundaryPolicies: [caller.boundary] } : {}),
    ...(caller.s3Endpoint && check.action.startsWith('s3:') ? { vpcEndpointPolicies: [caller.s3Endpoint] } : {}),
  };
  const response = await runSimulation(simulation, {});
  if (response.resultType === 'error') return { allowed: false, result: 'error', reasons: [JSON.stringify(response.errors)] };
  const results = response.resultType === 'single' ? [response.result] : response.results;
  const reasons = results.flatMap((r) =>
    getDenialReasons(r.analysis).map((d) => {
      const named = 'policyIdentifier' in d ? d.policyIdentifier : 'identifier' in d ? d.identifier : undefined;
      const policy =
        d.policyType === 'resource'
          ? resourcePolicy?.name
          : d.policyType === 'pb'
            ? `(the permissions boundary) ${caller.boundary?.name}`
            : (named ?? (d.policyType === 'identity' ? caller.identityPolicies.map((p) => p.name).join(', ') : undefined));
      const statement = d.denialType === 'Explicit' ? ` statement ${d.statementId ?? `#${d.statementIndex}`}` : ': no statement allows it';
      return `${d.denialType.toLowerCase()} deny by ${d.policyType}${policy ? ` ${policy}` : ''}${statement}`;
    }),
  );
  return { allowed: response.overallResult === 'Allowed', result: response.overallResult, reasons };
}
