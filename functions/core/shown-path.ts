import { isAbsolute, relative, resolve } from 'node:path';

/**
 * A path as the user can type it from here: relative when under the working directory, else absolute. Errors that
 * name a file the user edits (a definition, a saved query) and the commands' output spell paths alike through it.
 */
export const showPath = (path: string): string => {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? resolve(path) : rel;
};
