import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { runInferSchemaCommand, type InferSchemaOutput } from '../../local/cli/infer-schema.js';

/** `reports infer-schema … --out FILE`: the definition alone in the file, whole or not at all, never over a file unasked. */

const sample = join('test', 'fixtures', 'sample-report.csv');

function capture(): InferSchemaOutput & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (l) => void stderr.push(l) };
}

describe('infer-schema --out', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'infer-out-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('writes the same definition stdout would carry, and nothing to stdout', async () => {
    const toStdout = capture();
    await runInferSchemaCommand(sample, { id: 'payouts' }, toStdout);
    const out = join(dir, 'payouts.json');
    const toFile = capture();
    await runInferSchemaCommand(sample, { id: 'payouts', out }, toFile);
    assert.deepEqual(toFile.stdout, []);
    const written = await readFile(out, 'utf8');
    assert.deepEqual(JSON.parse(written), JSON.parse(toStdout.stdout.join('\n')));
    assert.equal(JSON.parse(written).id, 'payouts');
    assert.match(toFile.stderr.at(-1)!, /^Wrote .*payouts\.json\. Fill in every "REPLACE_ME".*npm start -- --report payouts/);
  });

  it('refuses to replace a file without --force, and replaces it with', async () => {
    const out = join(dir, 'taken.json');
    await writeFile(out, '{"mine": true}\n');
    await assert.rejects(
      runInferSchemaCommand(sample, { id: 'taken', out }, capture()),
      /^ConfigurationError: --out .*taken\.json: the file exists; nothing was written\. Pass --force to replace it, or another --out\.$/,
    );
    assert.equal(await readFile(out, 'utf8'), '{"mine": true}\n');
    await runInferSchemaCommand(sample, { id: 'taken', out, force: true }, capture());
    assert.equal(JSON.parse(await readFile(out, 'utf8')).id, 'taken');
    assert.deepEqual((await readdir(dir)).filter((f) => f.endsWith('.partial')), [], 'no partial file left beside it');
  });

  it('writes nothing when the sample cannot be read or decoded, or the folder is missing', async () => {
    const latin1 = join(dir, 'latin1.csv');
    await writeFile(latin1, Buffer.concat([Buffer.from('Soci'), Buffer.from([0xe9]), Buffer.from('t'), Buffer.from([0xe9]), Buffer.from(';n\nA;1\n')]));
    const out = join(dir, 'never.json');
    await assert.rejects(runInferSchemaCommand(latin1, { out }, capture()), /pass its encoding, e\.g\. --encoding windows-1252/);
    await assert.rejects(runInferSchemaCommand(join(dir, 'missing.csv'), { out }, capture()), /^ConfigurationError: the sample .*missing\.csv: cannot read it: there is no such file/);
    await assert.rejects(runInferSchemaCommand(dir, { out }, capture()), /the sample .*: cannot read it: it is a directory, not a file/);
    await assert.rejects(runInferSchemaCommand(sample, { out: join(dir, 'no-such-folder', 'x.json') }, capture()), /--out .*x\.json: the folder .*no-such-folder does not exist; nothing was written\./);
    assert.deepEqual((await readdir(dir)).sort(), ['latin1.csv', 'payouts.json', 'taken.json']);
  });

  it('on the command line a mistake is one line, no stack, and stdout stays empty', async () => {
    const r = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/reports.ts', 'infer-schema', join(dir, 'missing.csv'), '--out', join(dir, 'y.json')]).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.deepEqual(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^ConfigurationError: the sample .*missing\.csv: cannot read it: there is no such file/);
  });
});
