import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { reportSources } from '../../functions/core/definitions/catalog-files.js';
import { collect, selectReports } from '../../local/args/report-selection.js';
import { connectionValue, parseConnectionFlags, realGatewaysOf } from '../../local/connections/connection-flags.js';
import { RequestLimiter } from '../../local/connections/request-bound.js';
import { runScheduled } from '../../local/run/run-schedule.js';
import type { RunItem } from '../../local/run/run-plan.js';
import type { WindowOutcome } from '../../local/pipeline/pipeline.js';
import { parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';

/** The flags that point connections at gateways, the report selection, and the order a run takes its windows in. */

const URL_A = 'https://a.gateway.example/paynet-ui/services/v2/rpt-engine';
const URL_D = 'https://gateway.example/paynet-ui/services/v2/rpt-engine';
const known = ['default', 'provider-a'];

describe('--gateway-url and --secret-file', () => {
  it('CONNECTION=VALUE names a connection; a plain value (a URL, a path) is the default connection', () => {
    assert.deepEqual(connectionValue(`provider-a=${URL_A}`), ['provider-a', URL_A]);
    assert.deepEqual(connectionValue(URL_D), ['default', URL_D]);
    assert.deepEqual(connectionValue('https://x.example/p?a=b'), ['default', 'https://x.example/p?a=b']);
    assert.deepEqual(connectionValue('./secrets/a.json'), ['default', './secrets/a.json']);
    assert.deepEqual(connectionValue('./name=odd.json'), ['default', './name=odd.json']);
  });

  it('pairs each URL with its connection\'s secret file, plain and named forms together', () => {
    const flags = parseConnectionFlags({ gatewayUrl: [URL_D, `provider-a=${URL_A}`], secretFile: ['provider-a=a.json', 'd.json'] }, known);
    assert.deepEqual(flags, [
      { connection: 'default', url: URL_D, secretFile: 'd.json' },
      { connection: 'provider-a', url: URL_A, secretFile: 'a.json' },
    ]);
    assert.deepEqual(parseConnectionFlags({ gatewayUrl: URL_D, secretFile: 'd.json' }, known), [{ connection: 'default', url: URL_D, secretFile: 'd.json' }]);
    assert.deepEqual(parseConnectionFlags({}, known), []);
  });

  it('refuses, naming the connection: an unknown one, a URL without its file, a file without its URL, twice, a bad URL', () => {
    assert.throws(() => parseConnectionFlags({ gatewayUrl: [`nowhere=${URL_A}`], secretFile: ['nowhere=a.json'] }, known), /--gateway-url: no report uses the connection "nowhere" \(the reports' connections: default, provider-a\)/);
    assert.throws(() => parseConnectionFlags({ gatewayUrl: [`provider-a=${URL_A}`] }, known), /--gateway-url provider-a=URL needs --secret-file provider-a=FILE/);
    assert.throws(() => parseConnectionFlags({ gatewayUrl: [`provider-a=${URL_A}`], secretFile: ['a.json'] }, known), /--gateway-url provider-a=URL needs --secret-file provider-a=FILE/);
    assert.throws(() => parseConnectionFlags({ gatewayUrl: [URL_D] }, known), /--gateway-url URL needs --secret-file FILE/);
    assert.throws(() => parseConnectionFlags({ secretFile: ['provider-a=a.json'] }, known), /--secret-file provider-a=FILE goes with --gateway-url provider-a=URL/);
    assert.throws(() => parseConnectionFlags({ gatewayUrl: [URL_D, `default=${URL_A}`], secretFile: ['d.json'] }, known), /--gateway-url is given twice for the connection "default"/);
    assert.throws(() => parseConnectionFlags({ gatewayUrl: ['provider-a='], secretFile: ['provider-a=a.json'] }, known), /--gateway-url provider-a=: expected CONNECTION=URL or URL/);
    assert.throws(() => parseConnectionFlags({ gatewayUrl: ['ftp://gateway.example/x'], secretFile: ['d.json'] }, known), /ftp/);
  });

  it('reads a connection written in upper case as the lower-case name it must be, never as the default connection', () => {
    // Before: `Beta=…` was a value of "default", refused as `no report uses the connection "default"`.
    assert.deepEqual(connectionValue(`Provider-A=${URL_A}`), ['provider-a', URL_A]);
    assert.deepEqual(
      parseConnectionFlags({ gatewayUrl: [`PROVIDER-A=${URL_A}`], secretFile: ['Provider-A=a.json'] }, known),
      [{ connection: 'provider-a', url: URL_A, secretFile: 'a.json' }],
    );
    assert.throws(() => parseConnectionFlags({ gatewayUrl: [`Nowhere=${URL_A}`], secretFile: ['Nowhere=a.json'] }, known), /no report uses the connection "nowhere" \(the reports' connections: default, provider-a\)/);
  });

  it('refuses a value that starts with a name no connection can have, naming it as given', () => {
    assert.throws(
      () => parseConnectionFlags({ gatewayUrl: [`my_provider=${URL_A}`], secretFile: ['a.json'] }, known),
      /--gateway-url my_provider=https:\S+: "my_provider" is not a connection name: connection names must be 1-32 lower-case letters/,
    );
    assert.deepEqual(connectionValue('./my_file=x.json'), ['default', './my_file=x.json']);
  });

  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('a secret file is read at the start, and again when asked for a fresh value (rotation)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flags-'));
    dirs.push(dir);
    const file = join(dir, 'a.json');
    await writeFile(file, JSON.stringify({ login: 'merchant-a', controlKey: 'first' }));
    const gateways = await realGatewaysOf([{ connection: 'provider-a', url: URL_A, secretFile: file }]);
    await writeFile(file, JSON.stringify({ login: 'merchant-a', controlKey: 'second' }));
    assert.deepEqual(await gateways['provider-a']!.loadSecret(), { login: 'merchant-a', controlKey: 'first' });
    assert.deepEqual(await gateways['provider-a']!.loadSecret({ fresh: true }), { login: 'merchant-a', controlKey: 'second' });
    await assert.rejects(realGatewaysOf([{ connection: 'provider-a', url: URL_A, secretFile: join(dir, 'missing.json') }]), /Cannot read the secret file/);
  });
});

describe('--report', () => {
  const catalog = ReportCatalog.fromSources(reportSources());
  it('repeats; none means every report; an unknown id is refused with the known ones', () => {
    assert.deepEqual(collect('b', collect('a')), ['a', 'b']);
    assert.deepEqual(selectReports(catalog, undefined).map((r) => r.id), catalog.ids());
    assert.deepEqual(selectReports(catalog, []).map((r) => r.id), catalog.ids());
    assert.deepEqual(selectReports(catalog, ['transactions', 'transactions']).map((r) => r.id), ['transactions']);
    assert.throws(() => selectReports(catalog, ['nope']), /There is no report "nope"; known reports: transactions/);
  });
});

/** A promise settled by the test, never by a clock. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('the order of a run', () => {
  const window = windowAt(parseLocalDateTime('2026-11-20'), parseWindowSize('P1D'));
  const item = (id: string, connection: string): RunItem => {
    const report = { id, connections: [connection], window: 'P1D' } as unknown as RunItem['report'];
    return { feed: { reportId: id, connection, report }, report, window };
  };
  const outcome = (reportId: string, code?: string): WindowOutcome =>
    ({ reportId, status: code ? 'failed' : 'loaded', ...(code ? { error: { stage: 'fetch', code, message: 'x' } } : {}) }) as WindowOutcome;

  it('the first window of a connection goes alone, then up to its bound, within the overall concurrency', async () => {
    const items = [item('a1', 'a'), item('a2', 'a'), item('a3', 'a'), item('b1', 'b')];
    const gates = new Map(items.map((i) => [i.report.id, deferred<void>()]));
    const started: string[] = [];
    const startedNow = () => [...started];
    const ticks = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    const done = runScheduled(items, {
      concurrency: 3,
      boundOf: () => 2,
      run: async (i) => {
        started.push(i.report.id);
        await gates.get(i.report.id)!.promise;
        return outcome(i.report.id);
      },
      onOutcome: () => undefined,
    });
    await ticks();
    assert.deepEqual(startedNow(), ['a1', 'b1'], 'one window per connection until its first has answered');
    gates.get('a1')!.resolve();
    await ticks();
    assert.deepEqual(startedNow(), ['a1', 'b1', 'a2', 'a3'], 'then two of a at once');
    for (const g of gates.values()) g.resolve();
    await done;
  });

  it('a refused login stops the rest of its connection, a ConfigurationError the rest of its report', async () => {
    const items = [item('a1', 'a'), item('a1', 'a'), item('a2', 'a'), item('b1', 'b'), item('b2', 'b')];
    const stoppedBy = new Map<number, number[]>();
    await runScheduled(items, {
      concurrency: 1,
      boundOf: () => 2,
      run: async (i) => outcome(i.report.id, i.report.id === 'a1' ? 'AuthenticationRefused' : i.report.id === 'b1' ? 'ConfigurationError' : undefined),
      onOutcome: (index, _o, stopped) => void stoppedBy.set(index, stopped),
    });
    assert.deepEqual([...stoppedBy], [
      [0, [1, 2]],
      [3, []],
      [4, []],
    ]);
  });

  it('a limiter lets `limit` tasks run and queues the rest in order', async () => {
    const limiter = new RequestLimiter(2);
    const gates = [deferred<void>(), deferred<void>(), deferred<void>()];
    const running: number[] = [];
    const all = gates.map((g, i) => limiter.run(async () => {
      running.push(i);
      await g.promise;
    }));
    await Promise.resolve();
    assert.deepEqual(running, [0, 1]);
    gates[1]!.resolve();
    await all[1];
    await Promise.resolve();
    assert.deepEqual(running, [0, 1, 2]);
    for (const g of gates) g.resolve();
    await Promise.all(all);
  });
});
