// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The core must stay pure: the same code runs in Lambda, locally and in tests. */
const CORE_PURITY = [
  { group: ['@aws-sdk/*', '@aws-lambda-powertools/*', 'aws-cdk-lib', 'aws-cdk-lib/*'], message: 'functions/core/ is pure: put AWS calls in functions/aws/.' },
  { group: ['esbuild', 'tsx', 'tsx/*', 'typescript'], message: 'functions/core/ is pure: build tooling belongs in functions/runtime/ or lib/.' },
];
const CORE_PURITY_ALSO = { files: 'functions/core/**', patterns: CORE_PURITY };

/**
 * A relative import that climbs to one of `folders` at the project's top, refused in `files`. Flat config keeps one
 * set of options per rule and file, so the core's purity patterns ride along for its files.
 * @param {string} files
 * @param {string[]} folders
 * @param {string} message
 * @param {{ files: string, patterns: object[] }} [also]
 */
function importDirection(files, folders, message, also) {
  const regex = `^(\\.\\./)+(${folders.join('|')})(/|$)`;
  const climb = { regex, message };
  // esquery ends a regular expression at its first slash: the selector spells it \x2F.
  const selector = `ImportExpression[source.value=/${regex.replaceAll('/', '\\x2F')}/]`;
  const rule = (patterns) => ({
    'no-restricted-imports': ['error', { patterns }],
    'no-restricted-syntax': ['error', { selector, message }],
  });
  const configs = [{ files: [files], rules: rule([climb]) }];
  if (also) configs.push({ files: [also.files], rules: rule([climb, ...also.patterns]) });
  return configs;
}

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'dist/', 'bench/data/', '.lake/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Imports run one way (docs/architecture.md "Folders"): functions/ is deployed code and imports nothing of the
  // stack, the command line or the data users edit; lib/ (the stack) does not import the command line. Static and
  // dynamic imports alike: a climb hidden in an import() would still land in a bundle.
  ...importDirection('functions/**', ['config', 'lib', 'local', 'bin'], 'functions/ is what Lambda runs: it imports only functions/ and packages (the catalog comes through functions/core/definitions/catalog-files.ts).', CORE_PURITY_ALSO),
  ...importDirection('lib/**', ['local', 'bin'], 'lib/ is the stack: what the command line and the stack share lives in functions/core/ or lib/.'),
);
