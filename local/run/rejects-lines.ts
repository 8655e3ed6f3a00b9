import { showCount as count } from '../args/display.js';
import { showPath as show } from '../../functions/core/shown-path.js';
import { s3rverFiles } from '../lake/s3rver-files.js';
import type { WindowOutcome } from '../pipeline/pipeline.js';

/**
 * Where the rows a run rejected went: one line per window that rejected any, with the file that lists them (its
 * line in the report and the reason), so nobody has to work out the lake's layout to find it. The embedded lake's
 * file is on disk (s3rver's name for it); another S3 store's is an s3:// address.
 */
export function rejectsLines<O extends Pick<WindowOutcome, 'rowsRejected' | 'manifest'>>(
  outcomes: readonly O[],
  name: (o: O) => string,
  lake: { dir: string; embedded: boolean },
): string[] {
  const withRejects = outcomes.filter((o) => o.rowsRejected > 0 && o.manifest?.rejected);
  if (!withRejects.length) return [];
  const where = ({ bucket, key }: { bucket: string; key: string }) => (lake.embedded ? show(s3rverFiles(lake.dir, bucket, key).object) : `s3://${bucket}/${key}`);
  return [
    'Rejected rows (each with its line in the report and the reason):',
    ...withRejects.map((o) => `  ${name(o)}: ${count(o.rowsRejected)} in ${where(o.manifest!.rejected!)}`),
  ];
}
