// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The core must stay pure: the same code runs in Lambda, locally and in tests. */
const CORE_PURITY = [
  { group: ['@aws-sdk/*', '@aws-lambda-powertools/*', 'aws-cdk-lib', 'aws-cdk-lib/*'], message: 'functions/core/ is pure: put AWS calls in functions/aws/.' },
  { group: ['esbuild', 'tsx', 'tsx/*', 'typescript'], message: 'functions/core/ is pure: build tooling belongs in functions/runtime/ or lib/.' },
];

/** A relative import that climbs to one of `folders` at the project's top. */
const climbTo = (folders, message) => ({ regex: `^(\\.\\./)+(${folders.join('|')})(/|$)`, message });

/** Imports run one way (docs/architecture.md "Folders"): functions/ is what Lambda runs. */
const FUNCTIONS_CLIMB = climbTo(
  ['config', 'lib', 'local', 'bin'],
  'functions/ is what Lambda runs: it imports only functions/ and packages (the catalog comes through functions/core/definitions/catalog-files.ts).',
);
/** lib/ is the stack: it does not import the command line. */
const LIB_CLIMB = climbTo(['local', 'bin'], 'lib/ is the stack: what the command line and the stack share lives in functions/core/ or lib/.');

/**
 * The rules refusing `climb` (static imports and import() alike: a climb hidden in an import() would still land in
 * a bundle) and any further import `patterns`.
 * @param {{ regex: string, message: string }} climb
 * @param {object[]} [patterns]
 */
function refuse(climb, patterns = []) {
  // esquery ends a regular expression at its first slash: the selector spells it \x2F.
  const selector = `ImportExpression[source.value=/${climb.regex.replaceAll('/', '\\x2F')}/]`;
  return {
    'no-restricted-imports': ['error', { patterns: [climb, ...patterns] }],
    'no-restricted-syntax': ['error', { selector, message: climb.message }],
  };
}

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'dist/', 'bench/data/', '.lake/', 'coverage/', '.mutation/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['functions/**'], rules: refuse(FUNCTIONS_CLIMB) },
  // Flat config keeps one set of options per rule and file: the core's repeats the climb beside its purity.
  { files: ['functions/core/**'], rules: refuse(FUNCTIONS_CLIMB, CORE_PURITY) },
  { files: ['lib/**'], rules: refuse(LIB_CLIMB) },
);
