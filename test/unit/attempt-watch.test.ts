import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import type { GatewayReport } from '../../functions/core/gateway/client.js';
import { watchAttempt } from '../../functions/core/gateway/attempt-watch.js';

/**
 * One attempt's watch (functions/core/gateway/attempt-watch.ts) on a real request to a loopback server that
 * never answers: an attempt is settled once, by its first failure or by its hand-over, and nothing after that
 * touches the request or the caller's promise again.
 */

async function silentServer(t: TestContext): Promise<string> {
  const server = http.createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/report`;
}

async function watched(t: TestContext) {
  const url = new URL(await silentServer(t));
  const req = http.request(url, { method: 'POST' });
  req.on('error', () => {});
  req.end();
  const rejected: Error[] = [];
  const resolved: GatewayReport[] = [];
  const watch = watchAttempt({ url, timeouts: { connectMs: 60_000, totalMs: 60_000 }, attempt: 1 }, req, (r) => resolved.push(r), (e) => rejected.push(e));
  t.after(() => {
    watch.cleanup();
    req.destroy();
  });
  return { req, watch, rejected, resolved };
}

describe('an attempt is settled once', () => {
  it('is unsettled until it fails; its first failure destroys the request and rejects once, a second is ignored', async (t) => {
    const { req, watch, rejected } = await watched(t);
    assert.equal(watch.settled, false);
    watch.fail(new Error('first'));
    assert.equal(watch.settled, true);
    assert.equal(req.destroyed, true);
    watch.fail(new Error('second'));
    assert.deepEqual(rejected.map((e) => e.message), ['first']);
  });

  it('after the hand-over, a failure neither destroys the request nor rejects', async (t) => {
    const { req, watch, rejected, resolved } = await watched(t);
    const report = { status: 200 } as GatewayReport;
    watch.succeed(report);
    assert.equal(watch.settled, true);
    watch.fail(new Error('too late'));
    assert.equal(req.destroyed, false);
    assert.deepEqual(rejected, []);
    assert.deepEqual(resolved, [report]);
  });
});
