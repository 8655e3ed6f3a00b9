import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root: entries, the lockfile and tsconfig.json resolve from here whatever the working directory. */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const projectPath = (relative: string): string => fileURLToPath(new URL(`../../${relative}`, import.meta.url));

/**
 * The commit the deployed code is built from, for the Parquet footer's `created_by` (parquet-java reads
 * `(build <hash>)`): PIPELINE_BUILD_COMMIT when the synth sets it (a CI that builds from an export), else
 * `git rev-parse HEAD` of this checkout, else "unknown". Never fails a synth: a tarball has no .git.
 */
export function sourceCommit(): string {
  const given = process.env.PIPELINE_BUILD_COMMIT?.trim();
  if (given && /^[0-9a-f]{7,40}$/i.test(given)) return given.toLowerCase();
  return (gitHead ??= readGitHead());
}

/** Asked once per process: every environment's parse function of one synth has the same commit. */
let gitHead: string | undefined;
function readGitHead(): string {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return /^[0-9a-f]{40}$/.test(head) ? head : 'unknown';
  } catch {
    return 'unknown';
  }
}
