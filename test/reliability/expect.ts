import assert from 'node:assert/strict';
import { mock } from 'node:test';
import { FullBatchFailureError } from '@aws-lambda-powertools/batch';
import { generateTransactions } from '../../local/simulator/index.js';
import { metricPoints } from '../helpers/handler-harness.js';
import { sha256 } from '../helpers/lake-inspect.js';
import { day, keysOf, type ParseRecord, type Run, type World } from './harness.js';

/** Assertions the reliability cases share: what must be (or not be) in the buckets, and what an alarm sees. */

/**
 * The FetchOutcome metric lines of a run, per environment: [outcome, ...], after checking each failure is also written
 * with the report's dimensions the auth-refused alarm groups by.
 */
export function fetchOutcomes(run: Run<unknown>): string[] {
  const points = metricPoints(run.lines, 'FetchOutcome', 'environment');
  const perReport = metricPoints(run.lines, 'FetchOutcome', 'report');
  for (const p of [...points, ...perReport]) {
    assert.equal(p.value, 1);
    assert.equal(p.dims.environment, 'reliability');
    assert.equal(p.dims.service, 'paynet-reports');
  }
  for (const p of perReport) assert.equal(p.dims.report, 'transactions');
  const outcomes = points.map((p) => String(p.dims.outcome));
  assert.deepEqual(perReport.map((p) => String(p.dims.outcome)), outcomes.filter((o) => o !== 'Success'));
  return outcomes;
}

/** Keys of one day in the curated bucket, across tables/, rejected/ and manifests/. */
export async function curatedKeysOf(w: World, date: string): Promise<string[]> {
  const out: string[] = [];
  for (const prefix of ['tables', 'rejected', 'manifests']) out.push(...(await w.keys('curated', `${prefix}/transactions/connection=default/dt=${date}/`)));
  return out.sort();
}

/** Nothing at all for the day in either bucket, and no multipart upload left half done. */
export async function assertNothingStored(w: World, date: string): Promise<void> {
  assert.deepEqual(await w.keys('raw', `raw/transactions/connection=default/dt=${date}/`), [], 'no raw object');
  assert.deepEqual(await curatedKeysOf(w, date), [], 'nothing in the curated bucket');
  assert.deepEqual(await w.incomplete(), { raw: [], curated: [] }, 'no incomplete multipart upload');
}

/**
 * The day holds exactly one raw file, equal to `expectedRaw`, and its rows are in the table exactly once
 * (DuckDB over the whole table, as Athena queries it), with a "loaded" manifest that names that raw file.
 */
export async function assertLoadedOnce(w: World, date: string, expectedRaw: Buffer, expectedIds: string[]): Promise<void> {
  const keys = keysOf(date);
  assert.deepEqual(await w.keys('raw', `raw/transactions/connection=default/dt=${date}/`), [keys.raw], 'one raw file');
  const raw = await w.read('raw', keys.raw);
  assert.equal(raw.length, expectedRaw.length, 'the raw file has every byte');
  assert.ok(raw.equals(expectedRaw), 'the raw file is byte for byte what the gateway sent');
  assert.deepEqual(await curatedKeysOf(w, date), [keys.manifest, keys.rejected, keys.table].sort());
  const m = await w.manifest(date);
  assert.equal(m.outcome, 'loaded', JSON.stringify(m.error));
  assert.equal(m.source.sha256, sha256(raw), 'the manifest names the raw file that was loaded');
  assert.deepEqual(m.rows, { read: expectedIds.length, written: expectedIds.length, rejected: 0, emptyLines: 0 });
  assert.equal(m.table?.sha256, sha256(await w.read('curated', keys.table)), 'the manifest describes the table file in place');
  const table = await w.table(date);
  assert.equal(table.rows, expectedIds.length, 'each row once');
  assert.equal(table.distinctIds, expectedIds.length, 'no duplicate');
  assert.deepEqual(table.ids, [...expectedIds].sort(byBigInt), 'exactly the rows sent');
  assert.deepEqual(await w.incomplete(), { raw: [], curated: [] }, 'no incomplete multipart upload');
}

export const byBigInt = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

/** The transaction ids the simulator sends for a day. */
export const simulatorIds = (login: string, date: string, rowsPerDay: number): string[] =>
  generateTransactions(login, day(date), rowsPerDay).map((r) => r[1]!);

/** The one parse the chain made for a day's raw key, and the typed error its message failed with. */
export function failedParse(run: Run<unknown>, date: string): { record: ParseRecord; error: Error } {
  const records = run.parses.filter((p) => p.key === keysOf(date).raw);
  assert.equal(records.length, 1, 'one parse of the raw object');
  const record = records[0]!;
  // Batch size one: the failed message fails the invocation (the parse-errors alarm), SQS redelivers it, then the DLQ.
  assert.ok(record.error instanceof FullBatchFailureError, `the parse invocation failed: ${String(record.error)}`);
  const error = record.error.recordErrors[0];
  assert.ok(error instanceof Error);
  return { record, error };
}

/** The parse the chain made for a day's raw key succeeded (no failed message). */
export function loadedParse(run: Run<unknown>, date: string): ParseRecord {
  const records = run.parses.filter((p) => p.key === keysOf(date).raw);
  assert.ok(records.length >= 1, 'the raw object was parsed');
  for (const r of records) {
    assert.equal(r.error, undefined, String(r.error));
    assert.deepEqual(r.result, { batchItemFailures: [] });
  }
  return records.at(-1)!;
}

/** The log line a handler wrote with this message (first one), or a failure listing the messages seen. */
export function logLine(run: Run<unknown>, message: string | RegExp): Record<string, unknown> {
  const line = run.lines.find((l) => (typeof message === 'string' ? l.message === message : message.test(String(l.message))));
  assert.ok(line, `a log line ${String(message)}; saw: ${run.lines.map((l) => l.message).filter(Boolean).join(' | ')}`);
  return line;
}

/**
 * Runs fn with Math.random pinned to 0: the gateway client's full-jitter back-off then waits 0 ms, so cases
 * that retry through the real handler (whose policy is 4 attempts from 1 s) do not wait seconds for nothing.
 * Retry-After still applies (it is a floor). Nothing else on these paths draws from Math.random.
 */
export async function withoutJitter<T>(fn: () => Promise<T>): Promise<T> {
  const random = mock.method(Math, 'random', () => 0);
  try {
    return await fn();
  } finally {
    random.mock.restore();
  }
}

/** Physical line (1-based, CR, LF and CRLF one break each, as an editor counts) of byte offset `at`. */
export function lineAt(bytes: Buffer, at: number): number {
  const text = bytes.subarray(0, at).toString('utf8');
  return 1 + (text.match(/\r\n|\r|\n/g)?.length ?? 0);
}

/**
 * Byte offset where each record starts, found by walking the quoted CSV (independently of csv-parse): a CRLF,
 * LF or CR outside quotes ends a record.
 */
export function recordStarts(bytes: Buffer): number[] {
  const starts = [0];
  let quoted = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x22) quoted = !quoted;
    else if (!quoted && (b === 0x0a || b === 0x0d)) {
      if (b === 0x0d && bytes[i + 1] === 0x0a) i++;
      if (i + 1 < bytes.length) starts.push(i + 1);
    }
  }
  return starts;
}
