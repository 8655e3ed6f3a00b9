import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type S3rver from 's3rver';
import type { KoaMiddleware } from 's3rver';

/**
 * s3rver 3.7 has no AbortMultipartUpload (DELETE /<bucket>/<key>?uploadId=...: "405 Method Not Allowed").
 * Without it, every aborted upload (a report stream that fails mid-way, a Parquet file not committed) would
 * fail a second time while cleaning up, hiding the real error, and leave its parts on disk. This Koa
 * middleware, placed before s3rver's router, answers that request the way S3 does: it deletes the upload's
 * parts and replies 204, or 404 NoSuchUpload.
 */
export function abortMultipartUploadMiddleware(server: S3rver): KoaMiddleware {
  return async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string') return next();
    const bucket = decodeURIComponent(ctx.path.split('/')[1] ?? '');
    // s3rver's upload ids are 32 hex digits; anything else would let the id walk the file system.
    const uploadDir = /^[0-9a-f]{1,64}$/i.test(uploadId) && bucket ? join(server.store.getResourcePath(bucket, undefined, 'uploads'), uploadId) : undefined;
    if (!uploadDir || !(await stat(uploadDir).catch(() => undefined))) {
      ctx.status = 404;
      ctx.type = 'application/xml';
      ctx.body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code>' +
        '<Message>The specified upload does not exist.</Message></Error>';
      return;
    }
    await rm(uploadDir, { recursive: true, force: true });
    ctx.status = 204;
    ctx.body = null;
  };
}
