import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { FullBatchFailureError } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { bucketNames, LOCAL_ENVIRONMENT } from '../../functions/core/naming.js';
import { ConfigurationError } from '../../functions/core/errors.js';
import { showPath } from '../../functions/core/shown-path.js';
import type { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import type { Feed } from '../../functions/core/connections/feed.js';
import type { ParseDeps, ParseResult } from '../../functions/parse-report/parse-object.js';
import { handleParseBatch } from '../../functions/parse-report/sqs-batch.js';
import { startLocalLake } from '../lake/local-lake.js';
import { removePartialTables } from './interrupt.js';
import { localLogger } from './local-logger.js';
import { currentRawObjects } from './raw-objects.js';
import { NOT_LOADED, outcomeOfManifest, reparseEvent, type Reparser } from './reparse-window.js';

/**
 * `reports reparse` on the local lake: the embedded S3 (s3rver) over the lake directory, and the parse step's own
 * batch handler (functions/parse-report/sqs-batch.ts) given, per window, the event its queue would deliver for the
 * raw file already stored. No gateway, no simulator: nothing is fetched. The catalog is the current one, so each
 * window is rebuilt with the current definition, exactly as a load would write it.
 */

export async function localReparser(options: {
  lakeDir: string;
  feed: Feed;
  catalog: ReportCatalog;
  logger?: Logger;
}): Promise<Reparser> {
  const buckets = bucketNames(LOCAL_ENVIRONMENT);
  if (!existsSync(options.lakeDir)) {
    throw new ConfigurationError(`There is no lake at ${options.lakeDir}: nothing to reparse (npm start or backfill creates it; pass --lake the directory they used).`);
  }
  const lake = await startLocalLake({ dir: options.lakeDir, buckets });
  const deps: ParseDeps = { catalog: options.catalog, s3: lake.client, curatedBucket: buckets.curated, environment: LOCAL_ENVIRONMENT, logger: options.logger ?? localLogger() };
  return {
    where: `locally on lake ${showPath(options.lakeDir)}`,
    rawObjects: (windows) => currentRawObjects(lake.client, buckets.raw, options.feed, windows, { versioned: false }),
    async reparse(_window, raw) {
      let result: ParseResult | undefined;
      try {
        await handleParseBatch(reparseEvent(buckets.raw, raw), deps, randomUUID(), { onResult: (r) => (result = r) });
      } catch (e) {
        // A failed file fails its one-message batch: Powertools throws FullBatchFailureError, as in Lambda. The
        // result (a failed manifest) says why; without one, the failure came before the load (a bad key).
        if (!result) throw e instanceof FullBatchFailureError ? (e.recordErrors[0] ?? e) : e;
      }
      return result && 'manifest' in result ? outcomeOfManifest(result.manifest) : NOT_LOADED;
    },
    abandon: (inFlight) => removePartialTables(options.lakeDir, buckets.curated, options.feed, inFlight),
    close: () => lake.close(),
  };
}
