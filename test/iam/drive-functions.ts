import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { S3EventRecord, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { CONNECTIONS_VARIABLE, encodeConnectionsVariable, parseConnectionsVariable } from '../../functions/core/connections/connection.js';
import type { BucketNames } from '../../functions/core/naming.js';
import { clearGatewaySecretCache } from '../../functions/aws/secrets.js';
import { handler as fetchHandler } from '../../functions/fetch-report/handler.js';
import { handler as parseHandler } from '../../functions/parse-report/handler.js';
import { handler as freshnessHandler } from '../../functions/check-freshness/handler.js';
import { LOCAL_LAKE_CREDENTIALS, startLocalLake } from '../../local/lake/local-lake.js';
import { sqsEventOf } from '../../local/lake/sqs-message.js';
import { startSimulator } from '../../local/simulator/index.js';
import { captureJsonLines, lambdaContext } from '../helpers/handler-harness.js';
import { as, watchMocked } from './recorder.js';

/**
 * The three functions run as Lambda runs them, each with the environment variables the synthesized template gives it
 * (so with the environment's own bucket and secret names): the fetch function over a backfill day and the keep-alive,
 * the parse function on the S3 notifications of what the fetch wrote, the freshness check over the manifests the
 * parse wrote. The gateway is the simulator, S3 the local lake, Secrets Manager a mock (it has no local stand-in).
 * Every AWS request they make is recorded under the function's name (recorder.ts).
 */

export interface FunctionEnvironments {
  fetch: Record<string, string>;
  parse: Record<string, string>;
  freshness: Record<string, string>;
}

const RUNTIME = { AWS_REGION: 'eu-central-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_TRACE_ENABLED: 'false' };

export async function driveFunctions(env: FunctionEnvironments, buckets: BucketNames): Promise<void> {
  const saved = { ...process.env };
  const dir = await mkdtemp(join(tmpdir(), 'iam-drive-'));
  const lake = await startLocalLake({ dir, buckets });
  const sim = await startSimulator({ rowsPerDay: 40 });
  const secrets = mockClient(SecretsManagerClient);
  watchMocked(SecretsManagerClient);
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify(sim.credentials.hmac) });
  clearGatewaySecretCache();
  const created: S3EventRecord[] = [];
  lake.onObjectCreated((r) => void (r.s3.object.key.startsWith('raw') && created.push(r)));
  const local = { ...RUNTIME, AWS_ENDPOINT_URL_S3: lake.endpoint, AWS_ACCESS_KEY_ID: LOCAL_LAKE_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: LOCAL_LAKE_CREDENTIALS.secretAccessKey };
  const run = async <T>(caller: string, variables: Record<string, string>, fn: () => Promise<T>): Promise<T> => {
    process.env = { ...saved, ...variables, ...local };
    const out = await as(caller, () => captureJsonLines(fn));
    if (out.error) throw new Error(`the ${caller} function failed while its requests were recorded: ${String(out.error)}`, { cause: out.error });
    return out.result as T;
  };
  try {
    // The gateway is the simulator: every connection's URL points there, each reading its own secret.
    const connections = parseConnectionsVariable(env.fetch[CONNECTIONS_VARIABLE]!);
    const fetchEnv = { ...env.fetch, [CONNECTIONS_VARIABLE]: encodeConnectionsVariable([...connections.values()].map((c) => ({ ...c, endpointUrl: sim.url }))) };
    // A recent day, so that the freshness check finds its manifest and reads it.
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
    await run('fetch', fetchEnv, () => fetchHandler({ reportId: 'transactions', from: day(2), to: day(1) }, lambdaContext('iam-fetch')));
    await run('fetch', fetchEnv, () => fetchHandler({ keepAlive: true }, lambdaContext('iam-keep-alive')));
    await lake.settled();
    if (!created.length) throw new Error('the fetch wrote no raw file: nothing for the parse function to read');
    await run('parse', env.parse, () => parseHandler(sqsEventOf(created, 'eu-central-1') as SQSEvent, lambdaContext('iam-parse')));
    await run('freshness', env.freshness, () => freshnessHandler({}, lambdaContext('iam-freshness')));
  } finally {
    process.env = saved;
    secrets.restore();
    clearGatewaySecretCache();
    await sim.close();
    await lake.close();
    await rm(dir, { recursive: true, force: true });
  }
}
