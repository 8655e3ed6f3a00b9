import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import '../helpers/fixture-reports.js';
import type { EnvironmentConfig } from '../../lib/environment/environments.js';
import { identifier, labelValue } from '../../lib/metrics-insights/identifiers.js';
import { RESERVED_KEYWORDS, RESERVED_KEYWORDS_SOURCE } from '../../lib/metrics-insights/reserved-keywords.js';
import { DASHBOARD_LIMITS } from '../../lib/constructs/dashboard/limits.js';
import { resourcesOf, shippedEnvironment, synthPipeline, testConfig, type Cfn } from './helpers.js';

/**
 * Every Metrics Insights query the stack writes (the alarms', the dashboard's, and each with every entry of the
 * dashboard's drop-downs in place) against what AWS documents, not against our own builder: a query CloudWatch would
 * refuse fails the deploy (an alarm) or draws nothing (a widget), and neither shows offline otherwise.
 *
 * The grammar ("Metrics Insights query components and syntax"):
 *
 *   SELECT FUNCTION(metricName) FROM namespace | SCHEMA(...)
 *   [ WHERE labelKey OPERATOR labelValue [AND ... ] ] [ GROUP BY labelKey [ , ... ] ]
 *   [ ORDER BY FUNCTION() [ DESC | ASC ] ] [ LIMIT number ]
 *
 * FUNCTION is AVG, COUNT, MAX, MIN or SUM; a query returns at most 500 time series, so LIMIT is 1 to 500; a multi-series
 * alarm (GROUP BY) needs ORDER BY. OPERATOR is kept to = and != (the operators every version of the page lists). A
 * namespace, metric name or label key is letters, digits and underscores, or anything in double quotes (a quote inside
 * escaped with a backslash); a label value is in single quotes. And ("Reserved keywords") a namespace, metric name or
 * label key that is one of AWS's reserved words, in any case, must be in double quotes: lib/metrics-insights/
 * reserved-keywords.ts holds AWS's list.
 */
const FUNCTION = '(?:AVG|COUNT|MAX|MIN|SUM)';
const IDENT = `(?:[A-Za-z_][A-Za-z0-9_]*|"(?:[^"\\\\]|\\\\.)+")`;
const VALUE = `'(?:[^'\\\\]|\\\\.)*'`;
const CONDITION = `${IDENT} (?:=|!=) ${VALUE}`;
const GRAMMAR = new RegExp(
  `^SELECT ${FUNCTION}\\((?<metric>${IDENT})\\) FROM (?:(?<namespace>${IDENT})|SCHEMA\\((?<schema>${IDENT}(?:, ${IDENT})*)\\))` +
    `(?: WHERE (?<where>${CONDITION}(?: AND ${CONDITION})*))?` +
    `(?: GROUP BY (?<group>${IDENT}(?:, ${IDENT})*))?` +
    `(?: ORDER BY ${FUNCTION}\\(\\)(?: DESC| ASC)?)?` +
    `(?: LIMIT (?<limit>\\d+))?$`,
);

const RESERVED = new Set(RESERVED_KEYWORDS.map((w) => w.toUpperCase()));

/** Every namespace, metric name and label key of a query that matched GRAMMAR, as written (quoted or not), with its role. */
function identifiersOf(m: RegExpExecArray): [string, string][] {
  const all = (role: string, text: string | undefined, pattern: string): [string, string][] =>
    [...(text ?? '').matchAll(new RegExp(pattern, 'g'))].map((x) => [role, x[1]!]);
  const g = m.groups!;
  const schema = all('label key', g.schema, `(${IDENT})(?:, |$)`);
  return [
    ['metric name', g.metric!],
    ...(g.namespace ? [['namespace', g.namespace] as [string, string]] : []),
    ...schema.map(([, id], i): [string, string] => [i === 0 ? 'namespace' : 'label key', id]),
    ...all('label key', g.where, `(${IDENT}) (?:=|!=) ${VALUE}`),
    ...all('label key', g.group, `(${IDENT})(?:, |$)`),
  ];
}

/** The problems AWS would find in `query` (none: []), each naming the query, as `where` names its place. */
function problemsOf(query: string, where: string, alarm: boolean): string[] {
  const m = GRAMMAR.exec(query);
  if (!m) return [`${where}: not the documented grammar: ${query}`];
  const reserved = identifiersOf(m)
    .filter(([, id]) => !id.startsWith('"') && RESERVED.has(id.toUpperCase()))
    .map(([role, id]) => `${where}: the ${role} ${id} is a Metrics Insights reserved keyword, unquoted; AWS requires "${id}" (${RESERVED_KEYWORDS_SOURCE.page}): ${query}`);
  // A key named in SCHEMA and again in WHERE is one finding.
  const problems = [...new Set(reserved)];
  const limit = m.groups!.limit;
  if (limit !== undefined && !(Number(limit) >= 1 && Number(limit) <= 500)) problems.push(`${where}: LIMIT ${limit} (1 to 500): ${query}`);
  if (alarm && m.groups!.group !== undefined && !query.includes(' ORDER BY ')) problems.push(`${where}: a multi-time-series alarm needs ORDER BY: ${query}`);
  return problems;
}

const checkQuery = (query: string, where: string, alarm: boolean) => assert.deepEqual(problemsOf(query, where, alarm), []);

/** Stands in the dashboard body for a CloudFormation reference (a log group's name, a queue's): JSON-safe, and findable. */
const REF = '__REF__';

interface DashboardBody {
  widgets: { type: string; properties: Cfn }[];
  variables?: { type: string; pattern: string; values: { value: string }[] }[];
}

/** The dashboard's body as CloudWatch reads it, every reference stood in as REF. */
function dashboardBodyOf(dashboard: Cfn): DashboardBody {
  const body = (dashboard.Properties as Cfn).DashboardBody;
  const parts: Cfn[] = typeof body === 'string' ? [body] : body['Fn::Join'][1];
  return JSON.parse(parts.map((p) => (typeof p === 'string' ? p : REF)).join('')) as DashboardBody;
}

interface Queries {
  /** [alarm logical id, query] of every alarm's Metrics Insights query. */
  alarms: [string, string][];
  /** [widget title, query] of every dashboard graph's Metrics Insights query, with each drop-down entry in place. */
  widgets: [string, string][];
  /** How many drop-down entries (pattern values) were put in place. */
  patterns: number;
  /** Every Logs Insights query of the dashboard, [widget title, query]. */
  logs: [string, string][];
}

/** Every query of an environment's synthesized template (the parent with its nested stacks inlined). */
function queriesOf(config: EnvironmentConfig): Queries {
  const { template } = synthPipeline(config);
  const alarms = Object.entries(resourcesOf(template, 'AWS::CloudWatch::Alarm')).flatMap(([id, a]) =>
    ((a.Properties as Cfn).Metrics ?? []).flatMap((m: Cfn) => (typeof m.Expression === 'string' && /\bSELECT\b/i.test(m.Expression) ? [[id, m.Expression]] : [])),
  ) as [string, string][];
  const dashboards = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard')).map(dashboardBodyOf);
  const widgets: [string, string][] = [];
  const logs: [string, string][] = [];
  let patterns = 0;
  for (const body of dashboards) {
    const variables = (body.variables ?? []).filter((v) => v.type === 'pattern');
    patterns += variables.reduce((n, v) => n + v.values.length, 0);
    for (const w of body.widgets) {
      const title = String(w.properties.title ?? w.type);
      if (w.type === 'log') logs.push([title, String(w.properties.query)]);
      for (const line of (w.properties.metrics ?? []) as Cfn[][]) {
        const expression = typeof line[0] === 'object' ? (line[0].expression as string | undefined) : undefined;
        if (!expression || !/\bSELECT\b/i.test(expression)) continue;
        const chosen = variables.filter((v) => expression.includes(v.pattern));
        // A query holding a drop-down's pattern is what CloudWatch runs with each entry in its place, never as written.
        const resolved = chosen.length ? chosen.flatMap((v) => v.values.map((x) => expression.split(v.pattern).join(x.value))) : [expression];
        for (const q of resolved) widgets.push([title, q]);
      }
    }
  }
  return { alarms, widgets, patterns, logs };
}

const ENVIRONMENTS: [string, () => EnvironmentConfig][] = [
  ['the test config', () => testConfig()],
  ['integration (config/environments/integration.json)', () => shippedEnvironment('integration')],
  ['production (config/environments/production.json)', () => shippedEnvironment('production')],
];

for (const [name, config] of ENVIRONMENTS) {
  describe(`Metrics Insights queries of ${name}, as AWS reads them`, () => {
    const q = queriesOf(config());

    it("every alarm's query: the documented grammar, no reserved word unquoted", () => {
      // Four per connection (auth-refused, rejected-rows, data-quality, no-fresh-data).
      assert.ok(q.alarms.length >= 4, `the per-connection alarms: ${q.alarms.length}`);
      assert.deepEqual(q.alarms.flatMap(([id, query]) => problemsOf(query, `alarm ${id}`, true)), []);
    });

    it("every dashboard graph's query, with each drop-down entry in place: the documented grammar, no reserved word unquoted", (t) => {
      t.diagnostic(`${name}: ${q.alarms.length} alarm queries, ${q.widgets.length} dashboard queries (${q.patterns} drop-down entries in place), ${q.logs.length} Logs Insights queries checked`);
      assert.ok(q.widgets.length >= 10, `dashboard queries: ${q.widgets.length}`);
      assert.ok(q.patterns >= 1, `drop-down entries: ${q.patterns}`);
      assert.deepEqual(q.widgets.flatMap(([title, query]) => problemsOf(query, `dashboard "${title}"`, false)), []);
    });

    it('every Logs Insights query of the dashboard, within its documented limits', (t) => {
      assert.ok(q.logs.length >= 2, `Logs Insights widgets: ${q.logs.length}`);
      for (const [title, query] of q.logs) {
        // CDK writes a log widget's log groups into its query as SOURCE '<name>' | ..., so they count in its length.
        const sources = query.split(' | ').filter((part) => part.startsWith('SOURCE '));
        assert.ok(sources.length >= 1 && sources.length <= DASHBOARD_LIMITS.logGroupsPerQuery, `"${title}": ${sources.length} log groups`);
        // A reference is a log group's name, known only at deploy: count each at the longest name AWS allows.
        const longest = query.split(REF).join('x'.repeat(DASHBOARD_LIMITS.logGroupNameLength));
        t.diagnostic(`"${title}": ${sources.length} log group(s), ${longest.length} characters at ${DASHBOARD_LIMITS.logGroupNameLength}-character names`);
        assert.ok(longest.length <= DASHBOARD_LIMITS.logsQueryLength, `"${title}": ${longest.length} characters`);
        for (const limit of query.matchAll(/\|\s*limit (\d+)/g)) assert.ok(Number(limit[1]) <= DASHBOARD_LIMITS.logsQueryRows, `"${title}": limit ${limit[1]}`);
      }
    });
  });
}

describe('the Metrics Insights checks, so they can fail', () => {
  it('refuses what the documentation does not allow', () => {
    const bad = [
      "SELECT SUM(RowsRejected) FROM SCHEMA(PaynetReports, report) WHERE report = 'a' OR report = 'b'",
      'SELECT MEDIAN(RowsRejected) FROM PaynetReports',
      'SELECT SUM(RowsRejected) FROM PaynetReports GROUP BY report ORDER BY SUM() DESC LIMIT 501',
      "SELECT SUM(RowsRejected) FROM PaynetReports WHERE report IN ('a')",
      "SELECT SUM(RowsRejected) FROM PaynetReports WHERE \"report = 'a'",
    ];
    for (const query of bad) assert.throws(() => checkQuery(query, 'bad', true), assert.AssertionError, query);
    assert.throws(() => checkQuery('SELECT SUM(RowsRejected) FROM PaynetReports GROUP BY report', 'alarm', true), /needs ORDER BY/);
  });

  it('refuses a reserved word unquoted wherever an identifier goes, in any case, naming the query and the word', () => {
    const base = "SELECT SUM(RowsRejected) FROM SCHEMA(PaynetReports, \"connection\", report) WHERE \"connection\" = 'eu' GROUP BY report ORDER BY SUM() DESC LIMIT 10";
    const unquoted = [
      base.replace('SCHEMA(PaynetReports, "connection"', 'SCHEMA(PaynetReports, connection'),
      base.replace('WHERE "connection"', 'WHERE Connection'),
      base.replace('GROUP BY report', 'GROUP BY "report", connection'),
      base.replace('SUM(RowsRejected)', 'SUM(Date)'),
      base.replace('SCHEMA(PaynetReports', 'SCHEMA(Source'),
      "SELECT MAX(CPUUtilization) FROM key",
    ];
    checkQuery(base, 'good', true);
    for (const query of unquoted) {
      const problems = problemsOf(query, 'alarm x', true);
      assert.equal(problems.length, 1, query);
      assert.match(problems[0]!, /^alarm x: the (label key|metric name|namespace) (connection|Connection|Date|Source|key) is a Metrics Insights reserved keyword, unquoted; AWS requires "\2" .*: SELECT /);
    }
    // A value is no identifier: 'connection' in quotes is a label value, and "select" quoted is allowed.
    checkQuery("SELECT SUM(\"select\") FROM \"AWS/EC2\" WHERE InstanceType = 'connection'", 'good', true);
  });
});

describe("AWS's reserved keywords, as data", () => {
  it("holds the page's every word once, the unclosed \"FALLBACK included, with the page's address and the date read", () => {
    assert.equal(RESERVED_KEYWORDS.length, 917);
    assert.equal(new Set(RESERVED_KEYWORDS).size, RESERVED_KEYWORDS.length);
    for (const word of RESERVED_KEYWORDS) assert.match(word, /^[A-Z][A-Z0-9_-]*$/, word);
    for (const word of ['ABORT', 'CONNECTION', 'FALLBACK', 'FALSE', 'KEY', 'DATE', 'SOURCE', 'TYPE', 'ZONE']) assert.ok(RESERVED.has(word), word);
    assert.deepEqual([RESERVED_KEYWORDS[0], RESERVED_KEYWORDS.at(-1)], ['ABORT', 'ZONE']);
    assert.equal(RESERVED_KEYWORDS_SOURCE.page, 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-metrics-insights-reserved-keywords.html');
    assert.match(RESERVED_KEYWORDS_SOURCE.read, /^\d{4}-\d{2}-\d{2}$/);
  });

  it('quotes a reserved identifier, in any case, and one with other characters; leaves a plain one; escapes quotes', () => {
    assert.equal(identifier('connection'), '"connection"');
    assert.equal(identifier('Fallback'), '"Fallback"');
    assert.equal(identifier('AWS/EC2'), '"AWS/EC2"');
    assert.equal(identifier('9lives'), '"9lives"');
    assert.equal(identifier('Bytes"Input"'), '"Bytes\\"Input\\""');
    for (const plain of ['report', 'environment', 'service', 'outcome', 'PaynetReports', 'RowsRejected', 'connection_id']) assert.equal(identifier(plain), plain);
    for (const word of RESERVED_KEYWORDS) assert.equal(identifier(word.toLowerCase()).startsWith('"'), true, word);
    assert.throws(() => identifier(''), /cannot be empty/);
    assert.equal(labelValue("O'Brien\\"), "'O\\'Brien\\\\'");
  });
});
