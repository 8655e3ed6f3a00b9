import { link, open, readFile, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigurationError } from '../../functions/core/errors.js';
import { showPath } from '../../functions/core/shown-path.js';

/**
 * Files the user names on the command line (a sample, a query file, an --out), read and written with one line
 * that says what is wrong and what to do, instead of node's ENOENT and its stack.
 */

const WHY: Record<string, string> = {
  ENOENT: 'there is no such file',
  EISDIR: 'it is a directory, not a file',
  EACCES: 'this user may not read it',
  EPERM: 'this user may not read it',
};

const unreadable = (file: string, what: string, e: unknown) => {
  const code = (e as NodeJS.ErrnoException).code ?? 'error';
  return new ConfigurationError(`${what} ${showPath(file)}: cannot read it: ${WHY[code] ?? code} (paths are relative to ${process.cwd()}).`);
};

/** The file's text; `what` names the argument it came from ("--file", "the sample"). */
export async function readUserFile(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw unreadable(file, what, e);
  }
}

/** The file opened for reading, for a reader that stops early (a sample is read up to a bound); close it after. */
export async function openUserFile(file: string, what: string): Promise<FileHandle> {
  try {
    const handle = await open(file, 'r');
    // open() succeeds on a directory; reading it fails later, with no name.
    if ((await handle.stat()).isDirectory()) {
      await handle.close();
      throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
    }
    return handle;
  } catch (e) {
    throw unreadable(file, what, e);
  }
}

const isDirectory = (path: string) => stat(path).then((s) => s.isDirectory(), () => false);

/**
 * Writes `text` to `file` whole or not at all: into a new file beside it, then given the name once complete.
 * Without `force` an existing file is left alone and refused, naming the flag that replaces it.
 */
export async function writeUserFile(file: string, text: string, opts: { force?: boolean; flag: string }): Promise<void> {
  const partial = join(dirname(file), `.${basename(file)}.${process.pid}.partial`);
  try {
    if (await isDirectory(file)) throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
    await writeFile(partial, text, { flag: 'wx' });
    // A link fails when the name is taken where a rename would replace it: a file made meanwhile is not lost.
    if (opts.force) await rename(partial, file);
    else await link(partial, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    const shown = `${opts.flag} ${showPath(file)}`;
    if (code === 'EEXIST') throw new ConfigurationError(`${shown}: the file exists; nothing was written. Pass --force to replace it, or another ${opts.flag}.`);
    if (code === 'ENOENT') throw new ConfigurationError(`${shown}: the folder ${showPath(dirname(file))} does not exist; nothing was written.`);
    if (code === 'EISDIR') throw new ConfigurationError(`${shown}: is a directory; name the file to write.`);
    throw new ConfigurationError(`${shown}: cannot write it (${code}); nothing was written.`);
  } finally {
    await rm(partial, { force: true });
  }
}
