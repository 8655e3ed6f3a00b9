import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CONNECTION_NAME } from '../../functions/core/connections/connection.js';
import { parseEnvironment } from '../../lib/environment/environments.js';
import { environmentJsonSchema, environmentJsonSchemaText, writeEnvironmentJsonSchema } from '../../lib/environment/json-schema.js';

/**
 * The environment files' JSON Schema (editor help): the committed file is what the validator generates, the
 * shipped files point at it, and it knows `connections` as the validator does.
 */

const CONFIG = new URL('../../config/', import.meta.url);
const SCHEMA_FILE = fileURLToPath(new URL('environment.schema.json', CONFIG));
const ENVIRONMENTS = fileURLToPath(new URL('environments/', CONFIG));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Two providers in one environment, as docs/deploy.md shows them. */
const twoConnections = {
  name: 'prod',
  connections: {
    'provider-a': { gateway: { endpointUrl: 'https://a.example/paynet-ui/services/v2/rpt-engine' }, secret: { name: 'paynet-reports/prod/a' } },
    'provider-b': {
      gateway: { endpointUrl: 'https://b.example/paynet-ui/services/v2/rpt-engine' },
      secret: { name: 'paynet-reports/prod/b', mode: 'existing' },
      maxConcurrentRequests: 1,
    },
  },
};

describe('the environment JSON Schema for editors', () => {
  it('is up to date with the validator', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8').catch(() => '(missing)');
    assert.equal(
      committed,
      environmentJsonSchemaText(),
      'config/environment.schema.json is out of date with lib/environment/environments.ts. Regenerate it with `npm run reports -- json-schema` and commit it.',
    );
  });

  it('writes the same text it checks', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'environment-schema-'));
    try {
      await writeEnvironmentJsonSchema(join(dir, 'schema.json'));
      assert.equal(await readFile(join(dir, 'schema.json'), 'utf8'), environmentJsonSchemaText());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('every shipped environment file points at it, and names only fields it knows', async () => {
    const schema = environmentJsonSchema() as Json;
    const files = (await readdir(ENVIRONMENTS)).filter((f) => f.endsWith('.json'));
    assert.ok(files.length > 0);
    for (const f of files) {
      const raw = JSON.parse(await readFile(join(ENVIRONMENTS, f), 'utf8')) as Record<string, unknown>;
      assert.equal(raw.$schema, '../environment.schema.json', f);
      for (const key of Object.keys(raw)) assert.ok(key in schema.properties, `${f}: ${key}`);
    }
  });

  it('describes the input side: connections by name, the default connection as the top-level gateway and secret', () => {
    const s = environmentJsonSchema() as Json;
    assert.equal(s.$schema, 'http://json-schema.org/draft-07/schema#');
    assert.deepEqual(s.required, ['name']);
    assert.equal(s.additionalProperties, false);
    assert.deepEqual(s.properties.gateway.required, ['endpointUrl']);
    assert.deepEqual(s.properties.secret.properties.mode.enum, ['create', 'existing']);
    const connections = s.properties.connections;
    assert.equal(connections.propertyNames.pattern, CONNECTION_NAME.source);
    const connection = connections.additionalProperties;
    assert.deepEqual([...connection.required].sort(), ['gateway', 'secret']);
    assert.deepEqual(
      { min: connection.properties.maxConcurrentRequests.minimum, max: connection.properties.maxConcurrentRequests.maximum, default: connection.properties.maxConcurrentRequests.default },
      { min: 1, max: 10, default: 2 },
    );
    assert.deepEqual(s.properties.logLevel.enum, ['DEBUG', 'INFO']);
    assert.ok(s.properties.logRetentionDays.enum.includes(400));
  });

  it('what it describes for two connections, the validator accepts', () => {
    const s = environmentJsonSchema() as Json;
    for (const [name, c] of Object.entries(twoConnections.connections)) {
      assert.match(name, new RegExp(s.properties.connections.propertyNames.pattern));
      for (const key of Object.keys(c)) assert.ok(key in s.properties.connections.additionalProperties.properties, key);
    }
    const env = parseEnvironment(twoConnections, 'prod.json');
    assert.deepEqual(
      env.connections.map((c) => [c.name, c.secret.name, c.maxConcurrentRequests]),
      [
        ['provider-a', 'paynet-reports/prod/a', 2],
        ['provider-b', 'paynet-reports/prod/b', 1],
      ],
    );
  });
});
