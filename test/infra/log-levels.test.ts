import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LAMBDA_APPLICATION_LOG_LEVELS, LOG_LEVELS, type LambdaApplicationLogLevel } from '../../lib/environment/log-levels.js';
import { METRIC_NAMESPACE } from '../../lib/metrics.js';
import { synthPipeline, testConfig, type Cfn } from './helpers.js';

/**
 * No allowed log level silences an alarm. Read from the synthesized template alone, with Lambda's documented rule
 * ("Log-level filtering": with the JSON log format, a line below the function's application log level is dropped,
 * and a line without a `level` field counts as INFO), applied here without our lib/environment/log-levels.ts helpers: every
 * alarm on a custom metric needs a function that writes that namespace with metrics on, and whose filter lets an
 * unlevelled INFO line (the metric line, CloudWatch's embedded metric format) through.
 */

type Template = { Resources: Record<string, { Type: string; Properties?: Cfn }> };

/** Namespaces every alarm watches, plain, through metric math, or in a Metrics Insights query's SCHEMA(namespace, ...). */
function alarmNamespaces(template: Template): Array<{ alarm: string; namespace: string }> {
  return Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm')
    .flatMap(([alarm, r]) => {
      const p = r.Properties ?? {};
      const ofQuery = (m: Cfn) => /SCHEMA\(\s*"?([^",\s)]+)/.exec(String(m.Expression ?? ''))?.[1];
      const spaces: string[] = p.Namespace ? [p.Namespace] : (p.Metrics ?? []).map((m: Cfn) => m.MetricStat?.Metric?.Namespace ?? ofQuery(m)).filter(Boolean);
      return spaces.map((namespace) => ({ alarm, namespace }));
    });
}

/** Why a function's metric lines would not reach CloudWatch, or undefined when they do. */
function metricLinesLost(fn: Cfn): string | undefined {
  const env = fn.Environment?.Variables ?? {};
  if (String(env.POWERTOOLS_METRICS_DISABLED).toLowerCase() === 'true') return 'POWERTOOLS_METRICS_DISABLED is true';
  const logging = fn.LoggingConfig ?? {};
  if (logging.LogFormat !== 'JSON' || logging.ApplicationLogLevel === undefined) return undefined; // no filter at all
  const order: readonly string[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];
  return order.indexOf('INFO') >= order.indexOf(logging.ApplicationLogLevel) ? undefined : `ApplicationLogLevel ${logging.ApplicationLogLevel} drops unlevelled (INFO) lines`;
}

/** Every alarm on a custom metric against the functions that write it: the problems found. */
function silencedAlarms(template: Template): string[] {
  const functions = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
  const problems: string[] = [];
  for (const { alarm, namespace } of alarmNamespaces(template)) {
    if (namespace.startsWith('AWS/')) continue; // written by the service itself, not through the function's logs
    const writers = functions.filter(([, f]) => f.Properties?.Environment?.Variables?.POWERTOOLS_METRICS_NAMESPACE === namespace);
    if (!writers.length) problems.push(`${alarm}: no function writes ${namespace}`);
    else if (writers.every(([, f]) => metricLinesLost(f.Properties))) {
      problems.push(`${alarm}: ${writers.map(([id, f]) => `${id} ${metricLinesLost(f.Properties)}`).join('; ')}`);
    }
  }
  return problems;
}

describe('log levels and the alarms', () => {
  it('allows only levels whose filter passes an unlevelled line: DEBUG and INFO, not WARN or ERROR', () => {
    assert.deepEqual([...LOG_LEVELS], ['DEBUG', 'INFO']);
    assert.ok(LOG_LEVELS.every((l) => (LAMBDA_APPLICATION_LOG_LEVELS as readonly string[]).includes(l as LambdaApplicationLogLevel)));
  });

  for (const level of LOG_LEVELS) {
    it(`at logLevel ${level}, every metric an alarm watches still reaches CloudWatch`, () => {
      const template = synthPipeline(testConfig({ logLevel: level })).template.toJSON() as Template;
      const custom = alarmNamespaces(template).filter((a) => a.namespace === METRIC_NAMESPACE);
      assert.ok(custom.length >= 3, 'the auth-refused, rejected-rows and freshness alarms watch custom metrics');
      assert.deepEqual(silencedAlarms(template), []);
      // The check fails where Lambda would drop the lines: the same template with a WARN filter, or metrics off.
      const ours = (t: Template) => Object.values(t.Resources).filter((r) => r.Properties?.Environment?.Variables?.POWERTOOLS_METRICS_NAMESPACE);
      const warn = structuredClone(template);
      for (const r of ours(warn)) r.Properties!.LoggingConfig.ApplicationLogLevel = 'WARN';
      assert.equal(silencedAlarms(warn).length, custom.length);
      const off = structuredClone(template);
      for (const r of ours(off)) r.Properties!.Environment.Variables.POWERTOOLS_METRICS_DISABLED = 'true';
      assert.match(silencedAlarms(off).join('\n'), /POWERTOOLS_METRICS_DISABLED/);
    });
  }

  it('refuses WARN and ERROR at synth even from a caller that skips the environment schema', () => {
    for (const level of ['WARN', 'ERROR']) {
      const config = { ...testConfig(), logLevel: level } as unknown as ReturnType<typeof testConfig>;
      assert.throws(() => synthPipeline(config), /logLevel "(WARN|ERROR)" must be one of DEBUG, INFO: .*metric lines/);
    }
  });
});
