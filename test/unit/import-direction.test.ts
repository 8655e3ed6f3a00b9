import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import { projectPath } from '../../lib/bundling/project.js';

/**
 * Imports run one way (docs/architecture.md "Folders"): the lint rule of eslint.config.js refuses an import that
 * climbs from functions/ to config/, lib/, local/ or bin/, or from lib/ to local/ or bin/, static or dynamic. The
 * project's own lint run shows the code obeys it; this shows the rule bites, on texts linted as if they were
 * files of those folders.
 */

const eslint = new ESLint({ cwd: projectPath('.') });

/**
 * The rules that refused `code` linted as a file of `folder`, with the line of each. The file is named here, not by
 * the callers, so that no path of a file the repository lacks stands in this text.
 */
async function refusals(folder: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: projectPath(`${folder}/linted-text.ts`) });
  return result!.messages.filter((m) => m.severity === 2).map((m) => `${m.ruleId}: ${m.line}`);
}

describe('imports run one way (eslint.config.js)', () => {
  it('refuses a handler that reads config/, lib/, local/ or bin/', async () => {
    const code = [
      "import { loadCatalog } from '../../config/reports/index.js';",
      "import { Lake } from '../../lib/constructs/lake.js';",
      "import { showKib } from '../../local/args/display.js';",
      "export const run = () => import('../../bin/reports.js');",
      'export { loadCatalog, Lake, showKib };',
    ].join('\n');
    assert.deepEqual(await refusals('functions/fetch-report', code), [
      'no-restricted-imports: 1',
      'no-restricted-imports: 2',
      'no-restricted-imports: 3',
      'no-restricted-syntax: 4',
    ]);
  });

  it('refuses a climb from any depth of the core, beside its purity rule', async () => {
    const code = ["import { environmentOf } from '../../../lib/environment/environments.js';", "import { S3Client } from '@aws-sdk/client-s3';", 'export { environmentOf, S3Client };'].join('\n');
    assert.deepEqual(await refusals('functions/core/lake', code), ['no-restricted-imports: 1', 'no-restricted-imports: 2']);
  });

  it('refuses lib/ reading the command line, and lets it read the core', async () => {
    const code = ["import { showKib } from '../../local/args/display.js';", "import { showPath } from '../../functions/core/shown-path.js';", 'export { showKib, showPath };'].join('\n');
    assert.deepEqual(await refusals('lib/constructs', code), ['no-restricted-imports: 1']);
  });

  it('lets the command line read lib/ and the core, and the core read its own folders', async () => {
    const local = ["import { Lake } from '../../lib/constructs/lake.js';", "import { keysFor } from '../../functions/core/lake/s3-keys.js';", 'export { Lake, keysFor };'].join('\n');
    assert.deepEqual(await refusals('local/cli', local), []);
    const core = ["import { ConfigurationError } from '../errors.js';", "import { keysFor } from '../lake/s3-keys.js';", 'export { ConfigurationError, keysFor };'].join('\n');
    assert.deepEqual(await refusals('functions/core/gateway', core), []);
  });
});
