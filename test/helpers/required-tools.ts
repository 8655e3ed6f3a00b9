import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';

/** What installs each tool a test shells out to, for the message a CI failure prints. */
const INSTALLED_BY = {
  pdftotext: ".ci/run installs it (Debian's poppler-utils)",
  openssl: '.ci/run installs it (Debian\'s openssl)',
  curl: '.ci/run installs it (Debian\'s curl)',
} as const;
/** Arguments that make each tool print its version and exit, without touching the network. */
const VERSION_ARGS: Record<keyof typeof INSTALLED_BY, string[]> = { pdftotext: ['-v'], openssl: ['version'], curl: ['--version'] };
export type RequiredTool = keyof typeof INSTALLED_BY;

/** Whether `tool` is on the PATH: only "no such command" counts as missing, never a failing run of it. */
export function toolInstalled(tool: RequiredTool): boolean {
  const probe = spawnSync(tool, VERSION_ARGS[tool], { stdio: 'ignore' });
  return (probe.error as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT';
}

/**
 * Skips the test when `tool` is missing on a developer's machine. Under CI (`CI` set) a missing tool fails the test
 * instead: a skip there would hide that the test never ran on any submission.
 */
export function skipWithoutTool(t: TestContext, tool: RequiredTool): boolean {
  if (toolInstalled(tool)) return false;
  if (process.env.CI) assert.fail(`${tool} is not installed and CI never skips a test for a missing tool: ${INSTALLED_BY[tool]}.`);
  t.skip(`${tool} is not installed`);
  return true;
}
