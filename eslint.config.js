// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'dist/', 'bench/data/', '.lake/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The core must stay pure: the same code runs in Lambda, locally and in tests.
    files: ['functions/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@aws-sdk/*', '@aws-lambda-powertools/*', 'aws-cdk-lib', 'aws-cdk-lib/*'], message: 'functions/core/ is pure: put AWS calls in functions/aws/.' },
            { group: ['esbuild', 'tsx', 'tsx/*', 'typescript'], message: 'functions/core/ is pure: build tooling belongs in functions/runtime/ or lib/.' },
          ],
        },
      ],
    },
  },
);
