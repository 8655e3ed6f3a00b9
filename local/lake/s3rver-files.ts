import { join, resolve } from 'node:path';

/**
 * How s3rver (the embedded lake) keeps objects on disk, in one place: the object `<key>` of bucket B is the file
 * `<lake>/B/<key>._S3rver_object`, with `<key>._S3rver_object.md5` and `<key>._S3rver_metadata.json` beside it
 * (its FilesystemStore). DuckDB reads the lake's Parquet through these names, the external store's local copy is
 * laid out the same way, and the interrupt clean-up removes them.
 */

/** The suffix of an object's bytes. */
export const S3RVER_OBJECT_SUFFIX = '._S3rver_object';

/** The files s3rver keeps for one object: its bytes, and the checksum and metadata beside them. */
export function s3rverFiles(lakeDir: string, bucket: string, key: string): { object: string; others: string[] } {
  const object = join(resolve(lakeDir), bucket, `${key}${S3RVER_OBJECT_SUFFIX}`);
  return { object, others: [`${object}.md5`, join(resolve(lakeDir), bucket, `${key}._S3rver_metadata.json`)] };
}

/** The key of an object file (its path with the suffix dropped), or the path as it is when it is not one. */
export const objectFileKeyPath = (file: string): string => (file.endsWith(S3RVER_OBJECT_SUFFIX) ? file.slice(0, -S3RVER_OBJECT_SUFFIX.length) : file);
