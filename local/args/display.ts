import { isAbsolute, relative, resolve } from 'node:path';

/** How the commands print paths, counts and sizes, so `run` and `backfill` say them alike. */

/** A path as the user can type it from here: relative when under the working directory, else absolute. */
export const showPath = (path: string): string => {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? resolve(path) : rel;
};

export const showKib = (bytes: number): string => (bytes < 10_240 ? `${bytes} B` : `${Math.round(bytes / 1024).toLocaleString('en-US')} KiB`);

export const showCount = (n: number): string => n.toLocaleString('en-US');
