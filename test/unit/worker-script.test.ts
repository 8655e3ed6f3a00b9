import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startWorkerScript } from '../../functions/runtime/worker-script.js';

/** Worker threads started from TypeScript sources run a compiled copy (no tsx in the worker). */
describe('startWorkerScript', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'worker-script-'));
    // TypeScript only a compiler accepts (a type annotation, an interface, an imported module).
    await writeFile(join(dir, 'helper.ts'), 'export const twice = (n: number): number => n * 2;\n');
    await writeFile(
      join(dir, 'doubler.ts'),
      [
        "import { parentPort, workerData } from 'node:worker_threads';",
        "import { twice } from './helper.js';",
        'interface Answer { doubled: number; script: string }',
        'const answer: Answer = { doubled: twice(workerData as number), script: import.meta.url };',
        'parentPort!.postMessage(answer);',
      ].join('\n'),
    );
    await writeFile(join(dir, 'broken.ts'), "const n: number = 1;\nthrow new Error(`worker failed with ${n}`);\n");
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('runs a .ts worker, its imports bundled, and starts it again from the same compiled script', async () => {
    const scripts = new Set<string>();
    for (const n of [21, 50]) {
      const worker = startWorkerScript(pathToFileURL(join(dir, 'doubler.ts')), { workerData: n });
      const [answer] = (await once(worker, 'message')) as [{ doubled: number; script: string }];
      assert.equal(answer.doubled, n * 2);
      // JavaScript compiled into the project's cache, one file for both starts.
      assert.match(answer.script, /node_modules\/\.cache\/paynet-reports-pipeline\/workers\/doubler-[0-9a-f]{16}\.mjs$/);
      scripts.add(answer.script);
      await worker.terminate();
    }
    assert.equal(scripts.size, 1);
  });

  it('a new process reuses the compiled script without compiling, and compiles again once an imported source changes', async () => {
    // Each process has its own in-memory cache: this is what every `npm start` meets.
    const runner = join(dir, 'run-doubler.mjs');
    await writeFile(
      runner,
      [
        `import { startWorkerScript } from ${JSON.stringify(pathToFileURL(join(process.cwd(), 'functions/runtime/worker-script.ts')).href)};`,
        'import { once } from "node:events";',
        `const w = startWorkerScript(new URL(${JSON.stringify(pathToFileURL(join(dir, 'doubler.ts')).href)}), { workerData: 7 });`,
        'const [a] = await once(w, "message"); console.log(JSON.stringify(a)); await w.terminate();',
      ].join('\n'),
    );
    const run = async () => JSON.parse((await promisify(execFile)(process.execPath, ['--import', 'tsx', runner])).stdout) as { doubled: number; script: string };
    const recordsDir = join(process.cwd(), 'node_modules/.cache/paynet-reports-pipeline/workers');
    const record = async () => {
      const name = `doubler-${createHash('sha256').update(join(dir, 'doubler.ts')).digest('hex').slice(0, 16)}.json`;
      return JSON.parse(await readFile(join(recordsDir, name), 'utf8')) as { builtAt: number; inputs: string[] };
    };
    const first = await run();
    assert.equal(first.doubled, 14);
    const built = await record();
    assert.ok(built.inputs.some((f) => f.endsWith('helper.ts')), 'the record lists the imported source');
    assert.equal((await run()).script, first.script);
    assert.equal((await record()).builtAt, built.builtAt, 'nothing changed: not compiled again');
    await new Promise((r) => setTimeout(r, 20));
    await writeFile(join(dir, 'helper.ts'), 'export const twice = (n: number): number => n * 3;\n');
    const again = await run();
    assert.equal(again.doubled, 21, 'the edited import is in the new script');
    assert.ok((await record()).builtAt > built.builtAt);
    await writeFile(join(dir, 'helper.ts'), 'export const twice = (n: number): number => n * 2;\n');
  });

  it("reports a worker's own error as the worker's error event", async () => {
    const worker = startWorkerScript(pathToFileURL(join(dir, 'broken.ts')), {});
    const [error] = (await once(worker, 'error')) as [Error];
    assert.match(error.message, /worker failed with 1/);
  });

  it('fails at once, naming the file, when the source does not compile', async () => {
    await writeFile(join(dir, 'syntax.ts'), 'const = ;\n');
    assert.throws(() => startWorkerScript(pathToFileURL(join(dir, 'syntax.ts')), {}), /syntax\.ts:1:\d+: ERROR/);
  });
});
