import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

/**
 * What `npm start` loads. The X-Ray SDK (Powertools' Tracer) turns on async hooks for the whole process
 * (cls-hooked): a callback on every promise and stream operation of a run that moves 130 MiB through
 * streams. The Lambda handlers need it; the local run imports only the logger's service name
 * (functions/aws/service-name.ts), so it must not load it.
 */
describe('modules of a local run', () => {
  it('the run command and the local pipeline do not load the X-Ray SDK', async () => {
    const script = [
      "const { createRequire } = await import('node:module');",
      "await import('./local/cli/run.ts');",
      "await import('./local/pipeline/pipeline.ts');",
      'const loaded = Object.keys(createRequire(import.meta.url).cache);',
      "console.log(JSON.stringify({ xray: loaded.some((k) => k.includes('aws-xray-sdk-core')), sdk: loaded.some((k) => k.includes('@aws-sdk/client-s3')) }));",
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as { xray: boolean; sdk: boolean };
    assert.equal(seen.sdk, true, 'the check sees what the pipeline loads (the S3 client)');
    assert.equal(seen.xray, false, 'aws-xray-sdk-core was loaded: something on the local path imports functions/aws/powertools.ts');
  });

  it('the Lambda side still gets its tracer from the shared module', async () => {
    const script = [
      "const { createRequire } = await import('node:module');",
      "await import('./functions/aws/powertools.ts');",
      "console.log(Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('aws-xray-sdk-core')));",
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    assert.equal(stdout.trim().split('\n').at(-1), 'true');
  });
});
