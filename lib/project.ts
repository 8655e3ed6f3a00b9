import { fileURLToPath } from 'node:url';

/** The repository root: entries, the lockfile and tsconfig.json resolve from here whatever the working directory. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const projectPath = (relative: string): string => fileURLToPath(new URL(`../${relative}`, import.meta.url));
