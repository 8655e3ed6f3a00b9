import { isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * A path as the user can type it from here: relative when under the working directory, else absolute. Errors that
 * name a file the user edits (a definition, a saved query) and the commands' output spell paths alike through it.
 * Outside is `..` or `../…`; a name that only begins with dots (`..draft.json`) is inside.
 */
export const showPath = (path: string): string => {
  const rel = relative(process.cwd(), path);
  const outside = rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
  return rel === '' ? '.' : outside ? resolve(path) : rel;
};
