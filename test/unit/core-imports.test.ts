import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { projectPath } from '../../lib/bundling/project.js';

/**
 * No module of the core is in an import cycle that crosses its folder, type-only imports included (issue 46:
 * time/window.ts took a type from definitions/report-definition.ts, which imports time/window.ts): a file that needs a
 * file of another folder which needs it back makes neither folder readable on its own. Files of one folder may lean on
 * each other (gateway/client.ts and gateway/attempt-watch.ts do). Each cycle is named, its files in import order.
 */

const CORE = projectPath('functions/core');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : /\.ts$/.test(d.name) && !d.name.endsWith('.d.ts') ? [join(dir, d.name)] : [],
  );
}

/** The core files a file imports (static imports and re-exports, `import type` too). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)].map((m) => m[1]!);
  return specifiers.map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts')).filter((f) => f.startsWith(CORE));
}

/** Every cycle, each once, as "a -> b -> a", starting at its first name in sort order. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = stack.slice(stack.indexOf(next));
        const start = cycle.indexOf([...cycle].sort()[0]!);
        const canonical = [...cycle.slice(start), ...cycle.slice(0, start)];
        cycles.add([...canonical, canonical[0]!].join(' -> '));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return [...cycles].sort();
}

describe('functions/core imports', () => {
  it('hold no cycle across folders, type-only imports included', () => {
    const files = sources(CORE);
    assert.ok(files.length > 50, 'read the core');
    const graph = new Map(files.map((f) => [relative(CORE, f), importsOf(f).map((i) => relative(CORE, i))]));
    const acrossFolders = importCycles(graph).filter((c) => new Set(c.split(' -> ').map((f) => dirname(f))).size > 1);
    assert.deepEqual(acrossFolders, []);
  });

  it('a cycle is found and named', () => {
    const graph = new Map([
      ['time/window.ts', ['definitions/report-definition.ts']],
      ['definitions/report-definition.ts', ['errors.ts', 'time/window.ts']],
      ['errors.ts', []],
    ]);
    assert.deepEqual(importCycles(graph), ['definitions/report-definition.ts -> time/window.ts -> definitions/report-definition.ts']);
  });
});
