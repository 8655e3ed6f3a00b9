import { createHash } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type S3rver from 's3rver';

let partialWrites = 0;
/** Per object file, the last PUT's commit in line (see putObjectWhole). */
const commits = new Map<string, Promise<void>>();

/** Runs `commit` after the commits already in line for `objectPath`. */
function inTurn(objectPath: string, commit: () => Promise<void>): Promise<void> {
  const turn = (commits.get(objectPath) ?? Promise.resolve()).then(commit);
  const settled = turn.catch(() => undefined);
  commits.set(objectPath, settled);
  void settled.then(() => commits.get(objectPath) === settled && commits.delete(objectPath));
  return turn;
}

/**
 * s3rver 3.7 stores a PUT by opening the key's object file for writing (emptying it) and piping the request
 * into it, and answers once its MD5 has seen the last byte, not once the file holds it. A reader meets a
 * half-written object, and two PUTs of one key at once (two runs of the same window writing its manifest) can
 * leave the start of the shorter followed by the tail of the longer. S3 replaces an object whole, last writer
 * wins. This one writes the bytes to a file of their own, closes it, and renames it over the key before it
 * answers; the MD5 stays the ETag, as s3rver gave it.
 */
export function putObjectWhole(server: S3rver): void {
  const store = server.store;
  store.putObject = async ({ bucket, key, content, metadata }) => {
    const objectPath = store.getResourcePath(bucket, key, 'object');
    await mkdir(dirname(objectPath), { recursive: true });
    // Not named `…._S3rver_object`, so a listing never shows it as a key.
    const partialPath = `${objectPath}.${process.pid}-${++partialWrites}.partial`;
    const md5 = createHash('md5');
    let size = 0;
    const file = await open(partialPath, 'w');
    try {
      for await (const chunk of Buffer.isBuffer(content) ? [content] : content) {
        const bytes = chunk as Buffer;
        md5.update(bytes);
        size += bytes.length;
        await file.write(bytes);
      }
    } catch (e) {
      await file.close();
      await rm(partialPath, { force: true });
      throw e;
    }
    await file.close();
    const digest = md5.digest('hex');
    // s3rver keeps the metadata (content type, user metadata, ETag) in files beside the object's: one PUT's rename
    // and metadata go before the next one's, so the key never ends with one writer's bytes and the other's metadata.
    await inTurn(objectPath, async () => {
      await rename(partialPath, objectPath);
      await store.putMetadata(bucket, key, metadata, digest);
    });
    return { size, md5: digest };
  };
}
