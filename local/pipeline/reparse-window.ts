import type { SQSEvent } from 'aws-lambda';
import { showCount as count } from '../args/display.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { objectCreatedRecord, sqsEventOf } from '../lake/sqs-message.js';
import type { ReportWindow } from '../../functions/core/time/window.js';
import type { WindowResult } from './backfill-runner.js';
import type { RawObject } from './raw-objects.js';

/**
 * One window of `reports reparse`, the part both modes share: the event that asks the parse step to load a raw
 * file again, and what its manifest says came of it. The event is the one the parse function receives from its
 * queue (functions/parse-report/sqs-batch.ts): an SQS message whose body is an S3 ObjectCreated notification
 * naming the raw key and its current version, so a reparse runs exactly the code of a load.
 */

/** How a mode does its windows: local/pipeline/reparse-local.ts (the lake) or reparse-lambda.ts (a deployment). */
export interface Reparser {
  /** Where the work happens, for the first line ("locally on lake .lake", "by invoking <function>"). */
  readonly where: string;
  rawObjects(windows: readonly ReportWindow[]): Promise<Map<string, RawObject>>;
  reparse(window: ReportWindow, raw: RawObject): Promise<ReparseOutcome>;
  /** For Ctrl-C: what the windows in flight leave (locally, their half-written table files are removed). */
  abandon(inFlight: readonly ReportWindow[]): ReportWindow[];
  close(): Promise<void>;
}

/** The notification's configuration id, so the parse log tells a reparse from S3's own events. */
export const REPARSE_CONFIGURATION_ID = 'reports-reparse';

export function reparseEvent(bucket: string, raw: RawObject, region?: string): SQSEvent {
  const record = objectCreatedRecord({
    bucket,
    key: raw.key,
    size: raw.size,
    eTag: raw.etag,
    versionId: raw.versionId,
    region,
    configurationId: REPARSE_CONFIGURATION_ID,
  });
  return sqsEventOf([record], region);
}

/** What one window's reparse came to, with its row counts for the summary. */
export interface ReparseOutcome {
  result: WindowResult;
  rowsWritten: number;
  rowsRejected: number;
}

/** The outcome a window's manifest describes (written last by the parse, so it is this attempt's). */
export function outcomeOfManifest(manifest: Partial<LoadManifest>): ReparseOutcome {
  const rowsRejected = manifest.rows?.rejected ?? 0;
  if (manifest.outcome === 'loaded') {
    const written = manifest.rows?.written ?? 0;
    const fingerprint = manifest.definition ? ` under definition ${manifest.definition.fingerprint}` : '';
    return {
      result: { ok: true, detail: `${count(written)} rows${rowsRejected ? `, ${count(rowsRejected)} rejected` : ''}${fingerprint}` },
      rowsWritten: written,
      rowsRejected,
    };
  }
  const error = manifest.error ?? { code: 'Unexpected' as const, message: `the manifest says "${manifest.outcome ?? 'nothing'}"` };
  return { result: { ok: false, code: error.code, message: error.message }, rowsWritten: 0, rowsRejected };
}

/** A parse that wrote no manifest: it found the raw version replaced or deleted since it was listed (its log says which). */
export const NOT_LOADED: ReparseOutcome = {
  result: { ok: true, detail: 'not rebuilt: the raw file changed or went since it was listed (a newer version loads through its own event)' },
  rowsWritten: 0,
  rowsRejected: 0,
};
