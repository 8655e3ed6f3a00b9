import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, parse } from 'node:path';

/**
 * Which of Control Tower's rules can apply to a template. cfn-guard reads every rule file once per template, and
 * at 500 reports the 16 report shards (schedules, Glue tables, named queries) spent 37 s of a synthesis on 237
 * rules for other services. Every rule selects its resources by type (`Resources.*[ Type == 'AWS::S3::Bucket' ]`),
 * so a rule naming none of a template's types finds nothing in it: the check runs each template with only the rules
 * naming one of its types, and a template no rule can apply to is read by none. Same findings, a fraction of the time.
 */

const RESOURCE_TYPE = /AWS::[A-Za-z0-9]+::[A-Za-z0-9]+/g;

/** The validator's own Control Tower rules (it reads them from here when controlTowerRulesEnabled). */
function controlTowerRulesDir(): string {
  const entry = createRequire(import.meta.url).resolve('@cdklabs/cdk-validator-cfnguard');
  return join(dirname(entry), '..', 'rules', 'control-tower', 'cfn-guard');
}

interface Rule {
  /** The file name without extension: what the validator's disabledRules names. */
  readonly name: string;
  readonly types: ReadonlySet<string>;
}

let rules: Rule[] | undefined;

function guardFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? guardFiles(join(dir, e.name)) : e.name.endsWith('.guard') ? [join(dir, e.name)] : []));
}

/** Every rule and the resource types its text names; read once per process. */
export function controlTowerRules(): readonly Rule[] {
  rules ??= guardFiles(controlTowerRulesDir()).map((file) => ({ name: parse(file).name, types: new Set(readFileSync(file, 'utf8').match(RESOURCE_TYPE) ?? []) }));
  return rules;
}

/** The resource types a template declares. */
export function resourceTypesOf(templatePath: string): Set<string> {
  const template = JSON.parse(readFileSync(templatePath, 'utf8')) as { Resources?: Record<string, { Type?: string }> };
  return new Set(Object.values(template.Resources ?? {}).flatMap((r) => (r.Type ? [r.Type] : [])));
}

/** The rules that cannot apply to a template of these types: the validator's disabledRules for it. */
export function rulesNotApplying(types: ReadonlySet<string>): string[] {
  return controlTowerRules()
    .filter((r) => ![...r.types].some((t) => types.has(t)))
    .map((r) => r.name);
}
