import { basename, dirname, join } from 'node:path';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import {
  CfnElement,
  NestedStack,
  Stack,
  type IPolicyValidationContextBeta1,
  type IPolicyValidationPluginBeta1,
  type PolicyValidationPluginReportBeta1,
  type PolicyViolationBeta1,
} from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { EnvironmentConfig } from '../environment/environments.js';
import { CONTROL_TOWER_EXEMPTIONS, type Exemption, type ExemptionContext } from './exemptions.js';
import { controlTowerRules, resourceTypesOf, rulesNotApplying } from './rule-selection.js';

/** One resource a Control Tower control refuses, named as the exemption list and a reader name it. */
export interface ControlFinding {
  /** The control's id as Control Tower lists it: CT.KMS.PR.3. */
  readonly control: string;
  /** The construct path under the environment's stack (Lake/Raw/Resource), or the logical id where none maps. */
  readonly resource: string;
  /** The environment's stack (PaynetReports-production). */
  readonly stack: string;
  readonly logicalId: string;
  /** The template file, in the cloud assembly. */
  readonly template: string;
  readonly description: string;
  readonly fix: string;
}

/** What one validation found: the findings no exemption covers, and those it does with the exemption that did. */
export interface ControlTowerResult {
  /** The templates cfn-guard read: each stack's and each of its nested stacks'. */
  readonly templates: string[];
  readonly findings: ControlFinding[];
  readonly exempted: Array<{ finding: ControlFinding; exemption: Exemption }>;
}

/**
 * AWS Control Tower's proactive controls (CloudFormation Hooks in a governed account) run at synth as cfn-guard rules
 * (@cdklabs/cdk-validator-cfnguard ships them and the cfn-guard binary), over each stack and every nested stack under
 * it: CDK hands a plugin the stack templates only, and the report shards are nested stacks. A finding fails the
 * synthesis unless lib/control-tower/exemptions.ts holds an exemption for its control and resource.
 */
export class ControlTowerChecks implements IPolicyValidationPluginBeta1 {
  readonly name = 'control-tower';
  readonly version: string;

  constructor(private readonly exemptions: readonly Exemption[] = CONTROL_TOWER_EXEMPTIONS) {
    this.version = guardFor([]).version ?? '0.0.0';
  }

  validate(context: IPolicyValidationContextBeta1): PolicyValidationPluginReportBeta1 {
    const result = runControlTower(context.appConstruct, context.templatePaths, this.exemptions);
    return {
      success: result.findings.length === 0,
      violations: result.findings.map(asViolation),
      metadata: { exempted: String(result.exempted.length) },
    };
  }
}

/**
 * The validator with Control Tower's rules less those named. cfn-guard's JSON report grows with the templates and
 * their findings: past Node's 1 MB default the plugin would fail on the report's size, not on a finding.
 */
const guardFor = (disabledRules: string[]) => new CfnGuardValidator({ maxBuffer: 256 * 1024 * 1024, disabledRules });

/** cfn-guard over the templates, each read with only the rules that can apply to it (rule-selection.ts). */
function guardViolations(paths: readonly string[]): PolicyViolationBeta1[] {
  const groups = new Map<string, { disabled: string[]; paths: string[] }>();
  for (const path of paths) {
    const disabled = rulesNotApplying(resourceTypesOf(path));
    const key = disabled.join(',');
    groups.set(key, { disabled, paths: [...(groups.get(key)?.paths ?? []), path] });
  }
  const ruleCount = controlTowerRules().length;
  return [...groups.values()]
    .filter((g) => g.disabled.length < ruleCount)
    // The validator reads templatePaths alone; the rest of CDK's context would describe the parent stacks only.
    .flatMap((g) => guardFor(g.disabled).validate({ templatePaths: g.paths } as unknown as Parameters<CfnGuardValidator['validate']>[0]).violations);
}

/** The cfn-guard run and the exemptions over the given stack templates and the nested templates under them. */
export function runControlTower(app: IConstruct, templatePaths: readonly string[], exemptions: readonly Exemption[] = CONTROL_TOWER_EXEMPTIONS): ControlTowerResult {
  const stacks = stacksByTemplate(app);
  const paths = templatePaths.flatMap((p) => [p, ...nestedTemplatesOf(stacks.get(basename(p)), dirname(p))]);
  const result: ControlTowerResult = { templates: paths, findings: [], exempted: [] };
  const elements = new ElementIndex();
  for (const v of guardViolations(paths)) {
    for (const r of v.violatingResources) {
      const finding = findingOf(v, r.resourceLogicalId, r.templatePath, stacks, elements);
      const exemption = exemptionFor(finding, stacks.get(basename(r.templatePath)), exemptions);
      if (exemption) result.exempted.push({ finding, exemption });
      else result.findings.push(finding);
    }
  }
  return result;
}

function stacksByTemplate(app: IConstruct): Map<string, Stack> {
  const stacks = app.node.findAll().filter((c): c is Stack => Stack.isStack(c));
  return new Map(stacks.map((s) => [s.templateFile, s]));
}

function nestedTemplatesOf(stack: Stack | undefined, folder: string): string[] {
  if (!stack) return [];
  return stack.node
    .findAll()
    .filter((c): c is NestedStack => NestedStack.isNestedStack(c))
    .map((n) => join(folder, n.templateFile));
}

/** The stack a deploy creates: a nested stack's top-level parent. */
function environmentStackOf(stack: Stack): Stack {
  let s = stack;
  while (s.nestedStackParent) s = s.nestedStackParent;
  return s;
}

function findingOf(v: PolicyViolationBeta1, logicalId: string, template: string, stacks: Map<string, Stack>, elements: ElementIndex): ControlFinding {
  const stack = stacks.get(basename(template));
  const top = stack ? environmentStackOf(stack) : undefined;
  const element = stack && logicalId ? elements.of(stack, logicalId) : undefined;
  const resource = element && top ? element.node.path.slice(top.node.path.length + 1) : String(logicalId);
  const control = /^\[(CT\.[A-Z0-9]+\.PR\.\d+)\]/.exec(v.description)?.[1] ?? v.ruleName;
  return { control, resource, stack: top?.stackName ?? basename(template), logicalId, template, description: v.description, fix: v.fix ?? '' };
}

/**
 * Each stack's elements by logical id, built once per stack: an exempted finding per report (hundreds at 500 reports)
 * would otherwise walk and resolve the whole construct tree each, which made the check most of a large synth.
 */
class ElementIndex {
  private readonly byStack = new Map<Stack, Map<string, IConstruct>>();

  of(stack: Stack, logicalId: string): IConstruct | undefined {
    let index = this.byStack.get(stack);
    if (!index) {
      index = new Map();
      for (const c of stack.node.findAll()) {
        if (CfnElement.isCfnElement(c) && c.stack === stack) index.set(stack.resolve(c.logicalId) as string, c);
      }
      this.byStack.set(stack, index);
    }
    return index.get(logicalId);
  }
}

function exemptionFor(finding: ControlFinding, stack: Stack | undefined, exemptions: readonly Exemption[]): Exemption | undefined {
  const top = stack ? environmentStackOf(stack) : undefined;
  const context: ExemptionContext = { config: top && 'config' in top ? (top.config as EnvironmentConfig) : undefined };
  return exemptions.find((e) => e.control === finding.control && e.resources.test(finding.resource) && (e.when?.(context) ?? true));
}

function asViolation(f: ControlFinding): PolicyViolationBeta1 {
  return {
    ruleName: f.control,
    description: `${f.description} (${f.stack}: ${f.resource})`,
    fix: `${f.fix} Or, if this control should not apply, add an exemption with its reason to lib/control-tower/exemptions.ts.`,
    violatingResources: [{ resourceLogicalId: f.logicalId, templatePath: f.template, locations: [] }],
  };
}
