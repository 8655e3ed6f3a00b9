import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';

/** What installs each tool a test shells out to, for the message a CI failure prints. */
const INSTALLED_BY = {
  pdftotext: ".ci/run installs it (Debian's poppler-utils)",
  openssl: '.ci/run installs it (Debian\'s openssl)',
  curl: '.ci/run installs it (Debian\'s curl)',
  // Python's registry is not reachable from CI's machines and Debian has no package: .ci/run uses the one installed.
  'cfn-lint': "it comes installed on CI's machines (cfn-lint 1.51); install it with `pip install cfn-lint==1.51.0`",
} as const;
export type RequiredTool = keyof typeof INSTALLED_BY;
/** The one line a developer's skipped test prints: how to get the tool on their own machine. */
const INSTALL_HINT: Record<RequiredTool, string> = {
  pdftotext: 'install it with `apt-get install poppler-utils` (or your system\'s poppler)',
  openssl: 'install it with `apt-get install openssl`',
  curl: 'install it with `apt-get install curl`',
  'cfn-lint': 'install it with `pip install cfn-lint==1.51.0` (or `pipx install cfn-lint==1.51.0`)',
};
/** Arguments that make each tool print its version and exit, without touching the network. */
const VERSION_ARGS: Record<RequiredTool, string[]> = { pdftotext: ['-v'], openssl: ['version'], curl: ['--version'], 'cfn-lint': ['--version'] };

const probed = new Map<RequiredTool, boolean>();

/**
 * Whether `tool` is on the PATH: only "no such command" counts as missing, never a failing run of it. Asked once
 * per process: cfn-lint takes seconds to print its version on a busy machine, and a file asks for each test.
 */
export function toolInstalled(tool: RequiredTool): boolean {
  if (!probed.has(tool)) {
    const probe = spawnSync(tool, VERSION_ARGS[tool], { stdio: 'ignore' });
    probed.set(tool, (probe.error as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT');
  }
  return probed.get(tool)!;
}

/**
 * Skips the test when `tool` is missing on a developer's machine, saying how to install it. Under CI (`CI` set) a
 * missing tool fails the test instead: a skip there would hide that the test never ran on any submission.
 */
export function skipWithoutTool(t: TestContext, tool: RequiredTool): boolean {
  if (toolInstalled(tool)) return false;
  if (process.env.CI) assert.fail(`${tool} is not installed and CI never skips a test for a missing tool: ${INSTALLED_BY[tool]}.`);
  t.skip(`${tool} is not installed: ${INSTALL_HINT[tool]}`);
  return true;
}
