// @ts-check
/**
 * Where bin/reports.mjs keeps the compiled command of one checkout. node_modules can be shared between checkouts (a
 * linked git worktree, a clone whose node_modules is a symbolic link to another's), and a single cache there would
 * make one checkout run the other's build, and read the other's report definitions and queries, without a word. So
 * each checkout has a directory of its own, named by a hash of its absolute root (after symbolic links are followed)
 * and, for a reader, the root's last segment.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * The cache of `root`'s compiled command: node_modules/.cache/paynet-reports-pipeline/cli/<root's name>-<hash>/.
 * @param {string} root the checkout's root directory
 * @returns {string}
 */
export function cliCacheDir(root) {
  const real = realpathSync(root);
  const key = createHash('sha256').update(real).digest('hex').slice(0, 16);
  return join(root, 'node_modules', '.cache', 'paynet-reports-pipeline', 'cli', `${basename(real).replace(/[^\w.-]/g, '_')}-${key}`);
}
