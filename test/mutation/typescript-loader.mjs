// @ts-check
// Preloaded into every test process of a mutation run (test/mutation/mutate.ts). The tests run compiled to
// JavaScript (test/mutation/compile.ts); a test file still named `.ts` is one that must run through tsx
// (RUN_AS_TYPESCRIPT in test/mutation/targets.ts), and only that process pays for loading it.
import process from 'node:process';

if (process.argv[1]?.endsWith('.ts')) await import('tsx');
