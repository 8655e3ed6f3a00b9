import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseConnectionsVariable } from '../../functions/core/connections/connection.js';
import { parseReportDefinition, reportDefinitionSchema } from '../../functions/core/definitions/report-definition.js';
import { refusalWording, shown } from '../../functions/core/definitions/refusal-wording.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { environmentSchema, parseEnvironment } from '../../lib/environment/environments.js';

/**
 * Every refusal a definition or an environment file can get is in our words, never zod's: a set of bad files made
 * from valid ones by changing each field in turn (left out, another type, empty, out of range, an unknown field
 * beside it), each refusal read for zod's own phrasing. The kinds of refusal the walk reached are counted, so a
 * walk that stopped reaching one fails here rather than passing quietly.
 */

/** What zod 4 says by itself (its English locale): none of it may reach a user. */
const ZOD_PHRASING = /Invalid (input|option|key|element|string|value|URL|url|email|discriminator|number|date|type)|Too (small|big)|Unrecognized keys?|expected \w+, received \w+|^Invalid$/m;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as Json;

/** A definition with every optional part written: keys, the volume check's sum, columns of each option. */
const definition = {
  ...(fixture('reports/transactions.json') as Record<string, Json>),
  keys: ['transaction_id'],
  volume: { enabled: true, historyWeeks: 4, minHistory: 3, lowRatio: 0.5, highRatio: 2, minRowsDifference: 10, sumColumn: 'amount', minSumDifference: 0, skipDates: ['2026-01-01'] },
} as Json;
const definitions: Json[] = [definition, fixture('report-shapes/payouts_cp1251.json'), fixture('report-shapes/settlements_iso.json')];

/** An environment with every optional part written. */
const environment: Json = {
  name: 'staging',
  account: '123456789012',
  region: 'eu-central-1',
  gateway: { endpointUrl: 'https://gateway.test/paynet-ui/services/v2/rpt-engine' },
  secret: { name: 'paynet-reports/staging/gateway', mode: 'create' },
  connections: {
    gamma: {
      gateway: { endpointUrl: 'https://gamma.test/paynet-ui/services/v2/rpt-engine' },
      secret: { name: 'paynet-reports/staging/gamma', mode: 'existing', kmsKeyArn: 'arn:aws:kms:eu-central-1:123456789012:key/0f7d1d1e-1111-2222-3333-444455556666' },
      maxConcurrentRequests: 1,
    },
  },
  schedulesEnabled: true,
  alarmEmails: ['ops@merchant.test'],
  removalPolicy: 'retain',
  terminationProtection: true,
  raw: { transitionAfterDays: 30, storageClass: 'GLACIER_INSTANT_RETRIEVAL', noncurrentVersionExpirationDays: 365, objectLock: { mode: 'GOVERNANCE', days: 30 } },
  curated: { noncurrentVersionExpirationDays: 30 },
  athena: { resultsExpirationDays: 7, bytesScannedCutoffPerQuery: 10737418240, projectionStart: '2024-01-01' },
  fetch: { timeoutSeconds: 900, memoryMb: 512, reservedConcurrency: null },
  parse: { timeoutSeconds: 120, memoryMb: 2048, reservedConcurrency: 10 },
  logLevel: 'INFO',
  logRetentionDays: 400,
  analystRoleArns: ['arn:aws:iam::123456789012:role/analyst'],
  freshnessGraceHours: 6,
  network: { staticEgressIp: true },
  permissionsBoundaryArn: 'arn:aws:iam::123456789012:policy/boundary',
  tags: { team: 'finance' },
  alarmChat: {
    slack: [{ workspaceId: 'T012ABCDE', channelId: 'C012ABCDE' }],
    teams: [{ teamId: '0f7d1d1e-1111-2222-3333-444455556666', channelId: '19%3aabc%40thread.tacv2', tenantId: '0f7d1d1e-1111-2222-3333-444455556667' }],
  },
};

/** What each field is replaced by in turn: every JSON type, empty, negative, fractional, huge. */
const REPLACEMENTS: Json[] = [null, true, 0, -1, 1.5, 1e15, '', 'x', [], [{}], {}];

/** Every bad variant of `value`: at each path, the field left out, replaced, or given an unknown neighbour. */
function* mutants(value: Json): Generator<Json> {
  for (const r of REPLACEMENTS) yield r;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) for (const m of mutants(item)) yield value.map((x, j) => (j === i ? m : x));
  } else if (value && typeof value === 'object') {
    yield { ...value, zzUnknownField: 1 };
    for (const [k, v] of Object.entries(value)) {
      const { [k]: _left, ...without } = value;
      yield without;
      for (const m of mutants(v)) yield { ...value, [k]: m };
    }
  }
}

/** The refusal of each bad variant (variants that load are skipped), and the zod issue kinds met. */
function refusals(valid: Json, parse: (raw: unknown) => unknown, schema: { safeParse: typeof environmentSchema.safeParse }): { messages: string[]; codes: Set<string> } {
  const messages: string[] = [];
  const codes = new Set<string>();
  for (const m of mutants(valid)) {
    // zod words its issues when they are first read: read them, so the map sees each.
    void schema.safeParse(m, {
      error: (issue) => {
        codes.add(issue.code);
        return refusalWording(issue);
      },
    }).error?.issues;
    try {
      parse(m);
    } catch (e) {
      if (!(e instanceof ConfigurationError)) throw e;
      messages.push(e.message);
    }
  }
  return { messages, codes };
}

const inZodWords = (messages: readonly string[]) => [...new Set(messages.flatMap((m) => m.split('\n')).filter((l) => ZOD_PHRASING.test(l)))];

describe('refusals are in our words', () => {
  it('every refusal of a bad environment file', () => {
    const { messages, codes } = refusals(environment, (raw) => parseEnvironment(raw, 'config/environments/staging.json'), environmentSchema);
    assert.ok(messages.length > 300, `${messages.length} refusals`);
    assert.deepEqual(inZodWords(messages), []);
    for (const code of ['invalid_type', 'too_small', 'too_big', 'invalid_format', 'invalid_value', 'unrecognized_keys']) assert.ok(codes.has(code), `${code} (met: ${[...codes].join(', ')})`);
  });

  it('every refusal of a bad definition', () => {
    const all = definitions.map((d) => refusals(d, (raw) => parseReportDefinition(raw, 'config/reports/x.json'), reportDefinitionSchema as unknown as typeof environmentSchema));
    const messages = all.flatMap((r) => r.messages);
    assert.ok(messages.length > 1000, `${messages.length} refusals`);
    assert.deepEqual(inZodWords(messages), []);
    const codes = new Set(all.flatMap((r) => [...r.codes]));
    for (const code of ['invalid_type', 'too_small', 'too_big', 'invalid_value', 'unrecognized_keys']) assert.ok(codes.has(code), code);
  });

  it("the issue's example: a connection without its secret says what is missing, not what zod received", () => {
    const { secret: _secret, ...gamma } = (environment as { connections: { gamma: Record<string, Json> } }).connections.gamma;
    assert.throws(
      () => parseEnvironment({ ...(environment as object), connections: { gamma } }, 'config/environments/staging.json'),
      (e: unknown) => e instanceof ConfigurationError && e.message.includes('  connections.gamma.secret: is missing: add it (an object {…})'),
    );
  });

  it('says each kind in words that name what to write', () => {
    const env = (patch: Record<string, Json>) => () => parseEnvironment({ ...(environment as object), ...patch }, 'e.json');
    assert.throws(env({ removalPolicy: 'keep' }), /removalPolicy: must be one of "retain", "destroy", not the string "keep"/);
    assert.throws(env({ schedulesEnabled: 'yes' }), /schedulesEnabled: must be true or false, not the string "yes"/);
    assert.throws(env({ freshnessGraceHours: 100 }), /freshnessGraceHours: must be 48 or less/);
    assert.throws(env({ alarmEmails: ['not-an-address'] }), /alarmEmails\.0: must be an email address, such as ops@example\.com, not the string "not-an-address"/);
    assert.throws(env({ colour: 'blue' }), /\(root\): "colour" is not a field here: remove it or correct the spelling \(the fields here: name, account, region, /);
    assert.throws(() => parseConnectionsVariable('{"a": {"endpointUrl": "x"}}'), /a\.endpointUrl: must be a full URL, such as https:\/\/host\/path, not the string "x"; a\.secretName: is missing: add it \(a string in quotes\)/);
  });
});

describe('each sentence, word for word', () => {
  // Issues as zod hands them to the error map: each kind and its variants, with the sentence the person reads.
  const word = (issue: Record<string, unknown>) => refusalWording(issue as never);
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['missing', { code: 'invalid_type', expected: 'object', input: undefined }, 'is missing: add it (an object {…})'],
    ['missing, a type without a phrase', { code: 'invalid_type', expected: 'bigint', input: undefined }, 'is missing: add it (a bigint)'],
    ['wrong type', { code: 'invalid_type', expected: 'int', input: 'x' }, 'must be a whole number, not the string "x"'],
    ['empty string', { code: 'too_small', origin: 'string', minimum: 1, input: '' }, 'must not be empty'],
    ['empty list', { code: 'too_small', origin: 'array', minimum: 1, input: [] }, 'must list at least one entry'],
    ['short string', { code: 'too_small', origin: 'string', minimum: 2, input: 'a' }, 'must have at least 2 characters'],
    ['long list', { code: 'too_big', origin: 'array', maximum: 1, input: [1, 2] }, 'must have at most 1 entry'],
    ['long list, many', { code: 'too_big', origin: 'array', maximum: 3, input: [1, 2, 3, 4] }, 'must have at most 3 entries'],
    ['number below, inclusive', { code: 'too_small', origin: 'number', minimum: 1, inclusive: true, input: 0 }, 'must be 1 or more'],
    ['number above, exclusive', { code: 'too_big', origin: 'number', maximum: 10, inclusive: false, input: 10 }, 'must be less than 10'],
    ['number below, exclusive', { code: 'too_small', origin: 'number', minimum: 0, inclusive: false, input: 0 }, 'must be more than 0'],
    ['url', { code: 'invalid_format', format: 'url', input: 'gateway' }, 'must be a full URL, such as https://host/path, not the string "gateway"'],
    ['pattern', { code: 'invalid_format', format: 'regex', pattern: '/^a$/', input: 'b' }, 'must be text of the form the field documents (/^a$/), not the string "b"'],
    ['unknown format', { code: 'invalid_format', format: 'cidr', input: 'x' }, 'must be in the cidr format, not the string "x"'],
    ['multiple', { code: 'not_multiple_of', divisor: 5, input: 3 }, 'must be a multiple of 5'],
    ['one unknown key', { code: 'unrecognized_keys', keys: ['colour'], input: {} }, '"colour" is not a field here: remove it or correct the spelling'],
    ['two unknown keys', { code: 'unrecognized_keys', keys: ['a', 'b'], input: {} }, '"a", "b" are not fields here: remove them or correct the spelling'],
    ['one value', { code: 'invalid_value', values: ['CSV'], input: 'csv' }, 'must be "CSV", not the string "csv"'],
    ['several values', { code: 'invalid_value', values: ['INFO', 'DEBUG'], input: 3 }, 'must be one of "INFO", "DEBUG", not the number 3'],
    ['union', { code: 'invalid_union', input: true }, 'matches none of the forms this field takes (true): see the field in the docs'],
    ['key', { code: 'invalid_key', input: {} }, 'has a key this field does not take'],
    ['element', { code: 'invalid_element', input: [] }, 'has an entry this field does not take'],
    ['anything else', { code: 'custom', input: null }, 'is not accepted here (null)'],
  ];
  for (const [name, issue, sentence] of cases) it(name, () => assert.equal(word(issue), sentence));

  it('shows a value as it was written, a long string cut at 40 characters', () => {
    assert.equal(shown('x'.repeat(41)), `the string "${'x'.repeat(40)}…"`);
    assert.equal(shown('x'.repeat(40)), `the string "${'x'.repeat(40)}"`);
    assert.equal(shown([1]), 'a list');
    assert.equal(shown({}), 'an object');
    assert.equal(shown(false), 'false');
    assert.equal(shown(undefined), 'undefined');
  });
});
