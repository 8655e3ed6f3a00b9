import { createHash } from 'node:crypto';
import { NestedStack } from 'aws-cdk-lib';
import { Construct } from 'constructs';

/**
 * How many nested stacks the per-report resources (schedule, Glue table, saved queries) are spread over. Fixed for
 * good: a report's shard is a function of its id and of this number alone, so adding or removing a report touches
 * only its own shard, and changing the number would move most reports between stacks (a Glue table keeps its name,
 * so the new stack's create would meet the old one's table). 16 shards hold ~500 reports at ~32 each, a few
 * thousand before any one nears CloudFormation's 500 resources or 1 MB (docs/deploy.md, "Hundreds of reports").
 */
export const REPORT_SHARD_COUNT = 16;

/** The shard of a report: the first four bytes of its id's SHA-256, modulo the count. Never depends on other reports. */
export function shardOf(reportId: string): number {
  return createHash('sha256').update(reportId).digest().readUInt32BE(0) % REPORT_SHARD_COUNT;
}

/** The construct id of a shard's nested stack: Shard00 ... Shard15 (its logical id in the parent derives from it). */
export const shardId = (shard: number): string => `Shard${String(shard).padStart(2, '0')}`;

/**
 * The nested stacks holding the per-report resources, created as reports land in them: a shard without a report
 * has no stack (CloudFormation refuses a template without resources). Everything else of the environment stays in
 * the parent, so the parent's resource count does not grow with the catalog. References from a shard to the
 * parent's resources (queues, the scheduler role, the database, the bucket) become the nested stack's parameters,
 * which CDK wires; one `cdk deploy` deploys the parent and its shards.
 */
export class ReportShards extends Construct {
  private readonly stacks = new Map<number, NestedStack>();

  /** The nested stack a report's resources go in. */
  of(reportId: string): NestedStack {
    const shard = shardOf(reportId);
    let stack = this.stacks.get(shard);
    if (!stack) {
      stack = new NestedStack(this, shardId(shard), {
        description: `paynet-reports: per-report schedules, tables and saved queries, shard ${shard} of ${REPORT_SHARD_COUNT}`,
      });
      this.stacks.set(shard, stack);
    }
    return stack;
  }

  /** The shards that hold a report, in shard order. */
  get nestedStacks(): NestedStack[] {
    return [...this.stacks.entries()].sort(([a], [b]) => a - b).map(([, s]) => s);
  }
}
