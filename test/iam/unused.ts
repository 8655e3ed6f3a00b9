import type { Cfn } from '../infra/helpers.js';
import type { IamCheck } from './actions.js';
import type { RoleDocuments } from './policies.js';

/**
 * What a role's own policies allow that none of its recorded or derived requests used: each Allow statement's
 * action and resource, kept when no check of the role has a matching action on a matching resource (IAM's globs: `*`
 * and `?`, actions case-insensitive). A listing for docs/deploy.md, where each entry has its reason or is removed;
 * whether a request is allowed is iam-simulate's to say, not this.
 */

export interface UnusedGrant {
  role: string;
  action: string;
  resource: string;
}

const glob = (pattern: string, flags = '') => new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, flags);

export function unusedGrants(role: RoleDocuments, checks: readonly IamCheck[]): UnusedGrant[] {
  const unused: UnusedGrant[] = [];
  for (const { policy } of role.identityPolicies) {
    for (const s of (policy.Statement ?? []) as Cfn[]) {
      if (s.Effect !== 'Allow') continue;
      for (const action of [s.Action].flat() as string[]) {
        for (const resource of [s.Resource].flat() as string[]) {
          const used = checks.some((c) => glob(action, 'i').test(c.action) && glob(resource).test(c.resource));
          if (!used && !unused.some((u) => u.action === action && u.resource === resource)) unused.push({ role: role.logicalId, action, resource });
        }
      }
    }
  }
  return unused;
}
