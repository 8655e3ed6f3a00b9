import { Validations } from 'aws-cdk-lib';
import { NagPack } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/**
 * Which acknowledgements suppressed a finding: cdk-nag checks them in NagPack#isAcknowledged, which this wraps.
 * Call it before the packs run (a synthesis with lib/policies/compliance.ts's packs, or validateScope); each test file runs in
 * its own process, so the wrapper stays in that file.
 */
export function recordAcknowledgementUse(): Set<string> {
  const used = new Set<string>();
  const proto = NagPack.prototype as unknown as { isAcknowledged(resource: IConstruct, ruleId: string): boolean };
  const original = proto.isAcknowledged;
  proto.isAcknowledged = function (resource, ruleId) {
    const hit = original.call(this, resource, ruleId);
    for (let c: IConstruct | undefined = resource; hit && c; c = c.node.scope) {
      if (acknowledgementsOf(c).some((a) => a.id === ruleId)) used.add(`${c.node.path} ${ruleId}`);
    }
    return hit;
  };
  return used;
}

/** The acknowledgements made on one construct (Validations.of(c).acknowledge), with their reasons. */
export function acknowledgementsOf(c: IConstruct): Array<{ id: string; reason: unknown }> {
  return c.node.metadata
    .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
    .flatMap((m) => Object.entries(m.data as Record<string, unknown>).map(([k, reason]) => ({ id: k.replace(/^annotation::/i, ''), reason })));
}
