import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import { InvokeCommand, LambdaClient, ResourceNotFoundException, ResourceNotReadyException } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { AuthenticationRefused, ConfigurationError, GatewayUnavailable, SchemaDrift } from '../../functions/core/errors.js';
import { formatLocalDate, formatLocalDateTime, type ReportWindow } from '../../functions/core/time/window.js';
import { mapWithConcurrency } from '../../functions/core/concurrency.js';
import { lambdaWindowRunner } from '../../local/pipeline/backfill-lambda.js';
import {
  backfillWindows,
  runBackfill,
  summaryLines,
  windowLine,
  windowName,
  type WindowReport,
} from '../../local/pipeline/backfill-runner.js';

const daily = { id: 'transactions', window: 'P1D' };
const day = (w: ReportWindow) => formatLocalDate(w.start);
const ok = async () => ({ ok: true as const });

describe('backfillWindows', () => {
  it('lists every window in [from, to), oldest first: --to is exclusive', () => {
    assert.deepEqual(backfillWindows(daily, '2026-11-01', '2026-11-04').map(day), ['2026-11-01', '2026-11-02', '2026-11-03']);
  });

  it('cuts hour windows', () => {
    const windows = backfillWindows({ id: 'hourly', window: 'PT6H' }, '2026-11-01', '2026-11-02');
    assert.deepEqual(windows.map((w) => formatLocalDateTime(w.start).slice(11)), ['00:00:00', '06:00:00', '12:00:00', '18:00:00']);
    assert.equal(windowName(windows[1]!), '2026-11-01T06:00:00');
    assert.equal(windowName(backfillWindows(daily, '2026-11-01', '2026-11-02')[0]!), '2026-11-01');
  });

  it('refuses an empty or reversed range and a non-date, naming the problem', () => {
    assert.throws(() => backfillWindows(daily, '2026-11-04', '2026-11-04'), (e: unknown) => e instanceof ConfigurationError && /--from must be before --to/.test(e.message));
    assert.throws(() => backfillWindows(daily, '2026-11-05', '2026-11-01'), ConfigurationError);
    // A reparse's mistake is the reparse's: the message names that command, never "Backfill".
    assert.throws(
      () => backfillWindows(daily, '2026-11-05', '2026-11-01', 'reparse'),
      (e: unknown) => e instanceof ConfigurationError && e.message.startsWith(`reports reparse --report ${daily.id}: [2026-11-05, 2026-11-01) holds no P1D window`),
    );
    // The form backfill --help gives (bin/reports.ts), with the flag to fix.
    assert.throws(
      () => backfillWindows(daily, 'yesterday', '2026-11-01'),
      (e: unknown) => e instanceof ConfigurationError && e.message === '--from "yesterday" is not a date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:mm).',
    );
  });
});

describe('mapWithConcurrency', () => {
  it('never has more than `limit` calls in flight, and keeps the order of results', async () => {
    for (const limit of [1, 2, 3]) {
      let inFlight = 0;
      let most = 0;
      const items = Array.from({ length: 12 }, (_, i) => i);
      const results = await mapWithConcurrency(items, limit, async (i) => {
        most = Math.max(most, ++inFlight);
        await sleep((i * 7) % 5); // uneven durations, so workers finish out of order
        inFlight--;
        return i * 10;
      });
      assert.equal(most, limit, `limit ${limit}`);
      assert.deepEqual(results, items.map((i) => i * 10));
    }
  });

  it('handles fewer items than workers, none at all, and refuses a limit below 1', async () => {
    assert.deepEqual(await mapWithConcurrency([1], 4, async (x) => x + 1), [2]);
    assert.deepEqual(await mapWithConcurrency([], 2, async (x) => x), []);
    await assert.rejects(mapWithConcurrency([1], 0, async (x) => x), ConfigurationError);
  });
});

describe('runBackfill', () => {
  const windows = backfillWindows(daily, '2026-11-01', '2026-11-06'); // 5 windows

  it('counts done and failed, naming each failed window with its typed code, thrown or returned', async () => {
    const seen: WindowReport[] = [];
    const summary = await runBackfill({
      windows,
      concurrency: 2,
      runWindow: async (w) => {
        if (day(w) === '2026-11-02') throw new GatewayUnavailable(5, 'HTTP 503');
        if (day(w) === '2026-11-04') throw new SchemaDrift('transactions', ['Amount'], [], []);
        if (day(w) === '2026-11-05') return { ok: false, code: 'TooManyRejectedRows', message: '3 of 10 rows' };
        return { ok: true, detail: '10 rows' };
      },
      onWindow: (r) => seen.push(r),
    });
    assert.equal(summary.done, 2);
    assert.equal(summary.skipped, 0);
    assert.deepEqual(summary.failed.map((f) => [day(f.window), f.code]), [
      ['2026-11-02', 'GatewayUnavailable'],
      ['2026-11-04', 'SchemaDrift'],
      ['2026-11-05', 'TooManyRejectedRows'],
    ]);
    assert.equal(seen.length, 5, 'onWindow hears of every window');
    assert.deepEqual(summary.reports.map((r) => r.status), ['done', 'failed', 'done', 'failed', 'failed']);

    const text = summaryLines(summary, 'transactions').join('\n');
    assert.match(text, /5 window\(s\) in [\d.]+ s: 2 done, 3 failed, 0 skipped\./);
    assert.match(text, /2026-11-02 {2}GatewayUnavailable: The gateway was unavailable after 5 attempt/);
    assert.match(text, /2026-11-05 {2}TooManyRejectedRows: 3 of 10 rows/);
    assert.match(windowLine(summary.reports[0]!), /^ {2}2026-11-01 +done +\d+ ms {2}10 rows$/);
  });

  it('an error without a code is named by its class, or "Error"', async () => {
    class ThrottlingException extends Error {
      override name = 'ThrottlingException';
    }
    const summary = await runBackfill({
      windows: windows.slice(0, 2),
      concurrency: 1,
      runWindow: async (w) => {
        throw day(w) === '2026-11-01' ? new ThrottlingException('slow down') : new Error('boom');
      },
    });
    assert.deepEqual(summary.failed.map((f) => f.code), ['ThrottlingException', 'Error']);
  });

  it('skips loaded windows unless forced; a failing check does not skip', async () => {
    const ran: string[] = [];
    const options = {
      windows,
      concurrency: 2,
      runWindow: async (w: ReportWindow) => (ran.push(day(w)), { ok: true as const }),
      isLoaded: async (w: ReportWindow) => {
        if (day(w) === '2026-11-03') throw new Error('manifest unreadable');
        return ['2026-11-01', '2026-11-02'].includes(day(w)) ? 'manifest says succeeded' : false;
      },
    };
    const first = await runBackfill(options);
    assert.deepEqual([first.done, first.skipped, first.failed.length], [3, 2, 0]);
    assert.deepEqual(ran.sort(), ['2026-11-03', '2026-11-04', '2026-11-05']);
    assert.equal(first.reports[0]!.detail, 'manifest says succeeded');

    ran.length = 0;
    const forced = await runBackfill({ ...options, force: true });
    assert.deepEqual([forced.done, forced.skipped], [5, 0]);
    assert.equal(ran.length, 5);
  });

  it('stops starting windows after a failure every window would repeat (a refused login)', async () => {
    let calls = 0;
    const summary = await runBackfill({
      windows,
      concurrency: 1,
      runWindow: async (w) => {
        calls++;
        if (day(w) === '2026-11-02') throw new AuthenticationRefused('merchant', 'HMAC-SHA1', 'not authorised', 'the login and the control key');
        return { ok: true };
      },
    });
    assert.equal(calls, 2, 'no window after the refusal is tried');
    assert.deepEqual([summary.done, summary.failed.length, summary.notTried], [1, 1, 3]);
    assert.equal(summary.stoppedBy?.code, 'AuthenticationRefused');
    assert.match(summaryLines(summary, 'transactions').join('\n'), /3 not tried\.\nStopped after 2026-11-02 failed with AuthenticationRefused/);
  });

  it('with stopOn returning false, tries every window', async () => {
    const summary = await runBackfill({
      windows,
      concurrency: 2,
      stopOn: () => false,
      runWindow: async () => ({ ok: false, code: 'AuthenticationRefused', message: 'no' }),
    });
    assert.equal(summary.failed.length, 5);
  });

  it('an empty window list is an empty summary', async () => {
    const summary = await runBackfill({ windows: [], concurrency: 2, runWindow: ok });
    assert.deepEqual([summary.done, summary.failed.length, summary.skipped], [0, 0, 0]);
  });
});

describe('deployed mode: one Lambda invocation per window', () => {
  const lambda = mockClient(LambdaClient);
  afterEach(() => lambda.reset());
  const client = () => new LambdaClient({ region: 'eu-central-1' });
  const encode = (value: unknown) => new Uint8Array(Buffer.from(JSON.stringify(value)));
  const sent = () => lambda.commandCalls(InvokeCommand).map((c) => c.args[0].input);
  const payloadOf = (input: { Payload?: unknown }) => JSON.parse(Buffer.from(input.Payload as Uint8Array).toString('utf8'));

  it('sends {reportId, from, to} per window synchronously, within the concurrency bound', async () => {
    let inFlight = 0;
    let most = 0;
    lambda.on(InvokeCommand).callsFake(async (input) => {
      most = Math.max(most, ++inFlight);
      await sleep(5);
      inFlight--;
      const request = payloadOf(input);
      return {
        StatusCode: 200,
        Payload: encode({ runId: 'r', reportId: request.reportId, kind: 'backfill', windows: [{ key: `raw/transactions/${request.from}.csv`, bytes: 120 }] }),
      };
    });
    const windows = backfillWindows(daily, '2026-11-01', '2026-11-06');
    const summary = await runBackfill({
      windows,
      concurrency: 2,
      runWindow: lambdaWindowRunner({ client: client(), functionName: 'paynet-reports-production-fetch', feed: { reportId: 'transactions', connection: 'default' } }),
    });
    assert.equal(summary.done, 5);
    assert.equal(most, 2);
    const inputs = sent();
    assert.equal(inputs.length, 5);
    for (const input of inputs) {
      assert.equal(input.FunctionName, 'paynet-reports-production-fetch');
      assert.equal(input.InvocationType, 'RequestResponse');
    }
    assert.deepEqual(inputs.map(payloadOf).sort((a, b) => a.from.localeCompare(b.from)), [
      { reportId: 'transactions', connection: 'default', from: '2026-11-01T00:00:00', to: '2026-11-02T00:00:00' },
      { reportId: 'transactions', connection: 'default', from: '2026-11-02T00:00:00', to: '2026-11-03T00:00:00' },
      { reportId: 'transactions', connection: 'default', from: '2026-11-03T00:00:00', to: '2026-11-04T00:00:00' },
      { reportId: 'transactions', connection: 'default', from: '2026-11-04T00:00:00', to: '2026-11-05T00:00:00' },
      { reportId: 'transactions', connection: 'default', from: '2026-11-05T00:00:00', to: '2026-11-06T00:00:00' },
    ]);
    assert.match(summary.reports[0]!.detail ?? '', /^120 bytes -> raw\/transactions\/2026-11-01T00:00:00\.csv$/);
  });

  it('counts a FunctionError result as failed, with the error type as its code', async () => {
    lambda.on(InvokeCommand).callsFake(async (input) => {
      const { from } = payloadOf(input);
      if (from.startsWith('2026-11-02')) {
        return {
          StatusCode: 200,
          FunctionError: 'Unhandled',
          Payload: encode({ errorType: 'GatewayUnavailable', errorMessage: 'The gateway was unavailable after 5 attempt(s)', trace: [] }),
        };
      }
      if (from.startsWith('2026-11-03')) return { StatusCode: 200, FunctionError: 'Unhandled', Payload: encode('not json at all') };
      return { StatusCode: 200, Payload: encode({ windows: [] }) };
    });
    const summary = await runBackfill({
      windows: backfillWindows(daily, '2026-11-01', '2026-11-04'),
      concurrency: 2,
      runWindow: lambdaWindowRunner({ client: client(), functionName: 'fetch', feed: { reportId: 'transactions', connection: 'default' } }),
    });
    assert.equal(summary.done, 1);
    assert.deepEqual(summary.failed.map((f) => [day(f.window), f.code, f.message]), [
      ['2026-11-02', 'GatewayUnavailable', 'The gateway was unavailable after 5 attempt(s)'],
      ['2026-11-03', 'FunctionUnhandledError', 'not json at all'],
    ]);
  });

  it('waits for a function Lambda is still making ready (an idle function in a VPC), then runs the window', async () => {
    let calls = 0;
    lambda.on(InvokeCommand).callsFake(async () => {
      if (++calls <= 3) throw new ResourceNotReadyException({ message: 'Functions in Inactive state cannot be invoked', $metadata: {} });
      return { StatusCode: 200, Payload: encode({ windows: [] }) };
    });
    const summary = await runBackfill({
      windows: backfillWindows(daily, '2026-11-01', '2026-11-02'),
      concurrency: 1,
      runWindow: lambdaWindowRunner({ client: client(), functionName: 'fetch', feed: { reportId: 'transactions', connection: 'default' }, notReady: { everyMs: 1, forMs: 10 } }),
    });
    assert.equal(summary.done, 1);
    assert.equal(sent().length, 4);
  });

  it('gives up on a function that stays not ready past the wait, naming the error', async () => {
    lambda.on(InvokeCommand).rejects(new ResourceNotReadyException({ message: 'Functions in Inactive state cannot be invoked', $metadata: {} }));
    const summary = await runBackfill({
      windows: backfillWindows(daily, '2026-11-01', '2026-11-02'),
      concurrency: 1,
      runWindow: lambdaWindowRunner({ client: client(), functionName: 'fetch', feed: { reportId: 'transactions', connection: 'default' }, notReady: { everyMs: 1, forMs: 3 } }),
    });
    assert.equal(sent().length, 4, 'the first call and one every 1 ms for 3 ms');
    assert.equal(summary.failed[0]?.code, 'ResourceNotReadyException');
  });

  it('stops after the function turns out not to exist', async () => {
    lambda.on(InvokeCommand).rejects(new ResourceNotFoundException({ message: 'Function not found: fetch', $metadata: {} }));
    const summary = await runBackfill({
      windows: backfillWindows(daily, '2026-11-01', '2026-11-06'),
      concurrency: 1,
      runWindow: lambdaWindowRunner({ client: client(), functionName: 'fetch', feed: { reportId: 'transactions', connection: 'default' } }),
    });
    assert.equal(sent().length, 1);
    assert.equal(summary.failed[0]?.code, 'ResourceNotFoundException');
    assert.equal(summary.notTried, 4);
  });
});
