import { HeadObjectCommand, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';

/**
 * Where the raw object an S3 event names stands now: still the key's current version, replaced by a newer
 * version (superseded), or deleted (the current version is a delete marker, or nothing is left at the key).
 * S3 answers 404 for a deleted key only to a caller allowed s3:ListBucket; without it the answer is 403, which
 * stays an error (lib/policies/grants.ts, grantListRaw).
 */
export type RawState = 'current' | 'superseded' | 'deleted';

export async function rawObjectState(client: S3Client, object: { bucket: string; key: string; versionId?: string }): Promise<RawState> {
  try {
    const out = await client.send(new HeadObjectCommand({ Bucket: object.bucket, Key: object.key }));
    // Without versions (the local lake, an unversioned bucket) there is nothing to compare.
    if (!object.versionId || out.VersionId === undefined) return 'current';
    return out.VersionId === object.versionId ? 'current' : 'superseded';
  } catch (e) {
    if (e instanceof S3ServiceException && (e.name === 'NotFound' || e.name === 'NoSuchKey')) return 'deleted';
    throw e;
  }
}
