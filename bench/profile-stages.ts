import { readFileSync } from 'node:fs';

/**
 * Where a converter run's CPU went, by stage, from a V8 CPU profile (`node --cpu-prof`) of a bundled child.
 * Each sample is put in the stage of the source module its function came from: the bundle (esbuild, not
 * minified) marks where each module's code starts with a `// path` comment. Node's and V8's own functions
 * (Buffer's slice and utf8Slice that csv-parse calls, Map.get, typed-array copies) count for the stage of
 * the bundle function that called them; garbage collection is a stage of its own. The main thread only:
 * the profile does not see V8's helper threads (concurrent compilation and marking), which the bench's
 * CPU figures include.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** A stage per source module (first match wins); what matches none is "other". */
const STAGES: Array<[RegExp, string]> = [
  [/node_modules\/csv-parse\//, 'csv-parse (the floor\'s work)'],
  [/functions\/core\/(csv\/records|convert\/csv-to-parquet|convert\/row-loop|byte-sink|csv\/reject-writer)\.ts/, 'reading, UTF-8 check, the row loop'],
  [/functions\/core\/(parquet\/row-group-buffer|csv\/value-parsers)\.ts/, 'typing values into batches'],
  [/functions\/core\/quality\/row-tally\.ts/, 'data checks (key tally)'],
  [/functions\/core\/parquet\/column-buffers\.ts/, 'column buffers, dictionaries, statistics'],
  [/functions\/core\/parquet\/(pages|encoder|encoder-thread)\.ts/, 'pages: PLAIN, RLE, DELTA, assembly'],
  [/node_modules\/hyparquet-writer\/src\/snappy\.js/, 'Snappy compression'],
  [/node_modules\/hyparquet-writer\//, 'hyparquet-writer: headers, footer'],
];

/** The bundle's module starts: [line, path] in line order. */
function moduleStarts(bundleFile: string): Array<[number, string]> {
  const starts: Array<[number, string]> = [];
  readFileSync(bundleFile, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const m = /^\/\/ ((?:node_modules|functions|bench|config|lib)\/\S+)$/.exec(text);
      if (m) starts.push([i, m[1]!]);
    });
  return starts;
}

/** Milliseconds per stage, and the profile's total (wall time the thread was sampled, idle included). */
export function stagesOf(profileFile: string, bundleFile: string): { stages: Map<string, number>; totalMs: number; idleMs: number } {
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const starts = moduleStarts(bundleFile);
  const bundleName = bundleFile.split('/').at(-1)!;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const moduleAt = (line: number): string => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = '';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]![0] <= line) {
        found = starts[mid]![1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
  const stageOfNode = new Map<number, string>();
  const stageOf = (id: number): string => {
    const known = stageOfNode.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    let stage: string;
    if (frame.functionName === '(garbage collector)') stage = 'garbage collection (main thread)';
    else if (frame.functionName === '(idle)') stage = '(idle)';
    else if (frame.url.endsWith(bundleName)) {
      const path = moduleAt(frame.lineNumber);
      stage = STAGES.find(([re]) => re.test(path))?.[1] ?? 'other';
    } else {
      const up = parent.get(id);
      stage = up === undefined || byId.get(up)!.callFrame.functionName === '(root)' ? 'other' : stageOf(up);
    }
    stageOfNode.set(id, stage);
    return stage;
  };
  const stages = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    totalMs += ms;
    const stage = stageOf(id);
    if (stage === '(idle)') idleMs += ms;
    else stages.set(stage, (stages.get(stage) ?? 0) + ms);
  });
  return { stages, totalMs, idleMs };
}
