import assert from 'node:assert/strict';
import { createHmac, createVerify, generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import OAuth from 'oauth-1.0a';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { headerLine } from '../../functions/core/gateway/answer.js';
import { renderBody } from '../../functions/core/gateway/body-template.js';
import { fetchReport } from '../../functions/core/gateway/client.js';
import { formatWithPattern, parseLocalDateTime, parseWindowSize, windowAt, type ReportWindow } from '../../functions/core/time/window.js';
import { runBackfillCommand } from '../../local/cli/backfill.js';
import { runQueryCommand } from '../../local/cli/query.js';
import { runReparseCommand } from '../../local/cli/reparse.js';
import { runLocal } from '../../local/cli/run.js';
import { openLakeDatabase } from '../../local/duckdb/duckdb.js';
import { startSimulator, type Simulator } from '../../local/simulator/index.js';
import { useConnectionFixtures } from '../helpers/connection-fixtures.js';

/**
 * `npm start` over a catalog of several connections: each connection's requests go to its own gateway, signed with
 * its own login, never more at once than its maxConcurrentRequests, and the summary groups the windows by connection.
 */

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const DATE = '2026-11-20';
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
  process.exitCode = undefined;
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A loopback proxy in front of a gateway that counts the requests in flight through it. It holds a request until a
 * second one is in flight or a moment has passed, so two requests the client lets overlap do overlap here.
 */
async function countingProxy(target: string): Promise<{ url: string; peak: () => number; total: () => number }> {
  let inFlight = 0;
  let peak = 0;
  let total = 0;
  let release: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    inFlight++;
    total++;
    peak = Math.max(peak, inFlight);
    const go = () => {
      const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    };
    res.on('close', () => inFlight--);
    release.push(go);
    if (inFlight >= 2) {
      for (const r of release.splice(0)) r();
    } else {
      setTimeout(() => {
        if (release.includes(go)) {
          release = release.filter((r) => r !== go);
          go();
        }
      }, 300);
    }
  });
  const url = await listen(server);
  return { url, peak: () => peak, total: () => total };
}

describe('npm start over many reports and connections', () => {
  it('10 reports of one connection due at once, maxConcurrentRequests 2: never more than 2 requests in flight, all 10 windows load', async () => {
    const dir = await tempDir('connections-bound-');
    const ids = Array.from({ length: 10 }, (_, i) => `report_${String(i).padStart(2, '0')}`);
    // The strictest environment wins: 2 here, 5 in the other.
    await useConnectionFixtures(dir, ids.map((id) => ({ id, connection: 'acquirer' })), {
      integration: [{ name: 'acquirer', maxConcurrentRequests: 2 }],
      production: [{ name: 'acquirer', maxConcurrentRequests: 5 }],
    });
    const sim: Simulator = await startSimulator({ reports: loadCatalog().reports, rowsPerDay: 20 });
    cleanups.push(() => sim.close());
    const proxy = await countingProxy(`http://127.0.0.1:${new URL(sim.url).port}`);
    const secretFile = join(dir, 'acquirer.json');
    await writeFile(secretFile, JSON.stringify(sim.credentials.hmac));
    const lines: string[] = [];
    const summary = await runLocal(
      {
        from: DATE,
        to: '2026-11-21',
        lake: join(dir, 'lake'),
        concurrency: 10,
        gatewayUrl: [`acquirer=${proxy.url}${new URL(sim.url).pathname}`],
        secretFile: [`acquirer=${secretFile}`],
      },
      (l) => void lines.push(l),
    );
    const out = lines.join('\n');
    assert.deepEqual([summary.asked, summary.loaded, summary.failedWindows], [10, 10, 0], out);
    assert.deepEqual(summary.reports, ids);
    assert.equal(proxy.total(), 10, 'one request per window');
    assert.equal(proxy.peak(), 2, 'the requests overlapped up to the bound and never past it');
    assert.match(out, /^Connection "acquirer": .*, at most 2 request\(s\) at a time\.$/m);
    assert.match(out, /^Done: 10 window\(s\) of 10 reports asked: 10 loaded, 0 failed, 0 not tried; 200 rows fetched/m);
  });

  it('two gateways that are not this project\'s, HMAC-SHA1 and RSA-SHA256: one run loads both exactly, each gateway sees only its report, signed with its login', async () => {
    const dir = await tempDir('connections-foreign-');
    await useConnectionFixtures(
      dir,
      [
        { id: 'alpha', connection: 'provider-a', reportIdentifier: 'alpha-report' },
        { id: 'beta', connection: 'provider-b', reportIdentifier: 'beta-report' },
      ],
      { integration: [{ name: 'provider-a' }, { name: 'provider-b' }] },
    );
    const catalog = loadCatalog();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    const a = await verifyingGateway(catalog.get('alpha'), 7, { login: 'merchant-a', method: 'HMAC-SHA1', key: 'control-key-a' });
    const b = await verifyingGateway(catalog.get('beta'), 11, { login: 'merchant-b', method: 'RSA-SHA256', key: rsa.publicKey });
    const fileA = join(dir, 'a.json');
    const fileB = join(dir, 'b.json');
    await writeFile(fileA, JSON.stringify({ login: 'merchant-a', controlKey: 'control-key-a' }));
    await writeFile(fileB, JSON.stringify({ login: 'merchant-b', signatureMethod: 'RSA-SHA256', privateKeyPem: rsa.privateKey }));

    const lines: string[] = [];
    const lake = join(dir, 'lake');
    const summary = await runLocal(
      { from: DATE, to: '2026-11-21', lake, gatewayUrl: [`provider-a=${a.url}`, `provider-b=${b.url}`], secretFile: [`provider-a=${fileA}`, `provider-b=${fileB}`] },
      (l) => void lines.push(l),
    );
    const out = lines.join('\n');
    assert.deepEqual([summary.asked, summary.loaded], [2, 2], out);
    assert.deepEqual(a.seen, [{ login: 'merchant-a', method: 'HMAC-SHA1', verified: true, reportIdentifier: 'alpha-report' }]);
    assert.deepEqual(b.seen, [{ login: 'merchant-b', method: 'RSA-SHA256', verified: true, reportIdentifier: 'beta-report' }]);

    const db = await openLakeDatabase({ lakeDir: lake, reports: catalog.reports });
    try {
      for (const [id, sent] of [['alpha', a.sent], ['beta', b.sent]] as const) {
        const rows = await db.query(`SELECT CAST(transaction_id AS VARCHAR), merchant_name FROM ${id} WHERE dt = '${DATE}' ORDER BY transaction_id`);
        assert.deepEqual(rows.rows, sent.map((r) => [r[1], r[0]]), `${id}: the rows its gateway sent, exactly`);
      }
    } finally {
      db.close();
    }

    // The table: a heading per connection naming its gateway and login, its rows under it.
    const headingA = lines.findIndex((l) => l === `Connection "provider-a": ${a.url}, login "merchant-a" signing with HMAC-SHA1, at most 2 request(s) at a time.`);
    const headingB = lines.findIndex((l) => l === `Connection "provider-b": ${b.url}, login "merchant-b" signing with RSA-SHA256, at most 2 request(s) at a time.`);
    assert.ok(headingA > 0 && headingB > headingA, out);
    // Each group under its heading reads on its own: the column names, then its rows.
    for (const heading of [headingA, headingB]) assert.match(lines[heading + 1]!, /^ {2}report {2}window {6}format {2}status/);
    assert.match(lines[headingA + 2]!, new RegExp(`^ {2}alpha {3}${DATE} {2}CSV {5}loaded +7 `));
    assert.match(lines[headingB + 2]!, new RegExp(`^ {2}beta {4}${DATE} {2}CSV {5}loaded +11 `));
  });

  it('with no gateway given, each connection has a simulator of its own, a login naming it, serving only its reports; rows grouped by connection', async () => {
    const dir = await tempDir('connections-simulated-');
    await useConnectionFixtures(
      dir,
      [
        { id: 'alpha', connection: 'provider-a', reportIdentifier: 'alpha-report' },
        { id: 'beta', connection: 'provider-b', reportIdentifier: 'beta-report' },
        { id: 'gamma', connection: 'provider-a', reportIdentifier: 'gamma-report' },
      ],
      { integration: [{ name: 'provider-a', maxConcurrentRequests: 1 }, { name: 'provider-b' }] },
    );
    const lines: string[] = [];
    const summary = await runLocal({ from: DATE, to: '2026-11-22', lake: join(dir, 'lake') }, (l) => void lines.push(l));
    const out = lines.join('\n');
    assert.deepEqual([summary.asked, summary.loaded], [6, 6], out);
    // Catalog order is alpha, beta, gamma; the table goes connection by connection.
    const table = lines.filter((l) => /^(Connection | {2}(alpha|beta|gamma) )/.test(l)).map((l) => (l.startsWith('Connection') ? l.split(':')[0] : l.trim().split(/ +/).slice(0, 2).join(' ')));
    assert.deepEqual(table, [
      'Connection "provider-a"',
      `alpha ${DATE}`,
      'alpha 2026-11-21',
      `gamma ${DATE}`,
      'gamma 2026-11-21',
      'Connection "provider-b"',
      `beta ${DATE}`,
      'beta 2026-11-21',
    ]);
    const headings = lines.filter((l) => l.startsWith('Connection '));
    assert.equal(headings.length, 2, out);
    assert.match(headings[0]!, /^Connection "provider-a": (http:\/\/127\.0\.0\.1:\d+)\/\S+ \(embedded simulator\), login "sim-provider-a-hmac" signing with HMAC-SHA1, at most 1 request\(s\) at a time\.$/);
    assert.match(headings[1]!, /^Connection "provider-b": http:\/\/127\.0\.0\.1:\d+\/\S+ \(embedded simulator\), login "sim-provider-b-hmac" signing with HMAC-SHA1, at most 2 request\(s\) at a time\.$/);
    const port = (heading: string) => /127\.0\.0\.1:(\d+)/.exec(heading)![1];
    assert.notEqual(port(headings[0]!), port(headings[1]!), 'two simulators');
    assert.match(out, /^Report "alpha" \(P1D windows, Europe\/Moscow\) over connection "provider-a": 2 window\(s\)\.$/m);

    // A simulator standing for one connection does not answer another connection's report.
    const catalog = loadCatalog();
    const sim = await startSimulator({ reports: catalog.reportsOver('provider-a'), onlyReports: true });
    cleanups.push(() => sim.close());
    const window = windowAt(parseLocalDateTime(DATE), parseWindowSize('P1D'));
    await assert.rejects(
      fetchReport({ endpointUrl: sim.url, secret: sim.credentials.hmac, body: renderBody(catalog.get('beta').bodyTemplate, window), retry: { attempts: 1 } }),
      /HTTP 400.*Unknown reportIdentifier .*beta-report.*; this simulator serves alpha-report, gamma-report\./,
    );
  });

  it('12 reports over 3 connections, one refused: the head a line per connection, a line per saved query, then failures first and totals per connection', async () => {
    const dir = await tempDir('connections-many-');
    const ids = Array.from({ length: 12 }, (_, i) => `r${String(i + 1).padStart(2, '0')}`);
    const connectionOf = (i: number) => `c${(i % 3) + 1}`;
    await useConnectionFixtures(dir, ids.map((id, i) => ({ id, connection: connectionOf(i) })), { integration: [{ name: 'c1' }, { name: 'c2' }, { name: 'c3' }] });
    for (const [id, file, sql] of [
      ['r01', 'per_day.sql', '-- Rows per day.\nSELECT dt, count(*) AS n FROM r01 GROUP BY dt\n'],
      ['r02', 'broken.sql', '-- A column the table does not have.\nSELECT no_such_column FROM r02\n'],
      ['r02', 'per_day.sql', '-- Rows per day.\nSELECT dt, count(*) AS n FROM r02 GROUP BY dt\n'],
    ] as const) {
      await mkdir(join(dir, 'queries', id), { recursive: true });
      await writeFile(join(dir, 'queries', id, file), sql);
    }
    const sim: Simulator = await startSimulator({ rowsPerDay: 20 });
    cleanups.push(() => sim.close());
    const wrong = join(dir, 'wrong.json');
    await writeFile(wrong, JSON.stringify({ ...sim.credentials.hmac, controlKey: 'not-the-key' }));
    const lines: string[] = [];
    const errors = mock.method(console, 'error', () => undefined);
    let summary;
    try {
      summary = await runLocal({ from: DATE, to: '2026-11-21', lake: join(dir, 'lake'), gatewayUrl: [`c3=${sim.url}`], secretFile: [`c3=${wrong}`] }, (l) => void lines.push(l));
    } finally {
      errors.mock.restore();
    }
    const out = lines.join('\n');
    assert.deepEqual([summary.asked, summary.loaded, summary.failedWindows, summary.notTried, summary.queries, summary.failedQueries], [12, 8, 1, 3, 3, 1], out);
    assert.equal(process.exitCode, 1);
    process.exitCode = undefined;

    // The head: a line per connection, none per report.
    assert.deepEqual(lines.filter((l) => /^\d+ report\(s\) over connection|^Report "/.test(l)), [
      '4 report(s) over connection "c1" (P1D windows, Europe/Moscow): 4 window(s).',
      '4 report(s) over connection "c2" (P1D windows, Europe/Moscow): 4 window(s).',
      '4 report(s) over connection "c3" (P1D windows, Europe/Moscow): 4 window(s).',
    ]);
    assert.match(out, /^No window loaded for 4 reports, so their saved queries were not run: "r03", "r06", "r09", "r12"\.$/m);
    assert.match(out, /^No saved queries for 6 reports \(.*\): "r04", "r05", "r07", "r08", "r10" and 1 more\.$/m);
    // A line per saved query, the failed one saying why.
    assert.match(out, /^Saved queries of 2 reports .*a line each/m);
    assert.match(out, /^ {2}r01\/per_day {2}1 row$/m);
    assert.match(out, /^ {2}r02\/broken {3}The query failed on DuckDB: .*no_such_column/m);
    assert.match(out, /^ {2}r02\/per_day {2}1 row$/m);

    // The closing lines: failures first, then the totals per connection, then the rest.
    const failedAt = lines.indexOf('Failed: 1 window(s) and 1 saved query:');
    const totalsAt = lines.indexOf('Per connection:');
    const doneAt = lines.findIndex((l) => l.startsWith('Done: 12 window(s) of 12 reports asked: 8 loaded, 1 failed, 3 not tried'));
    assert.ok(failedAt > 0 && totalsAt > failedAt && doneAt > totalsAt, out);
    assert.match(lines[failedAt + 1]!, /^ {2}r03 2026-11-20: fetch failed: \w+: /);
    assert.match(lines[failedAt + 2]!, /^ {2}saved query r02\/broken: The query failed on DuckDB: .*no_such_column/);
    assert.deepEqual(lines.slice(totalsAt + 1, totalsAt + 5), [
      '  connection  reports  windows   loaded   failed  not tried  rows written  rejected',
      '  c1                4        4        4        0          0         1,000         0',
      '  c2                4        4        4        0          0         1,000         0',
      '  c3                4        4        0        1          3             0         0',
    ]);
    assert.doesNotMatch(out, /not-the-key/);
    // stderr: the same failures, for whoever reads only that.
    const stderr = errors.mock.calls.map((c) => String(c.arguments[0]));
    assert.equal(stderr.length, 2, stderr.join('\n'));
    assert.match(stderr[0]!, /^r03 2026-11-20: fetch failed: AuthenticationRefused: /);
    assert.equal(stderr[1], '1 saved query failed on DuckDB (see above).');
  });

  it('backfill, reparse and query with no --report: every report, a summary each, each connection on its simulator; --report narrows; --environment goes with --deployed', async () => {
    const dir = await tempDir('connections-backfill-');
    await useConnectionFixtures(
      dir,
      [
        { id: 'alpha', connection: 'provider-a', reportIdentifier: 'alpha-report' },
        { id: 'beta', connection: 'provider-b', reportIdentifier: 'beta-report' },
      ],
      { integration: [{ name: 'provider-a' }, { name: 'provider-b', maxConcurrentRequests: 1 }] },
    );
    const lines: string[] = [];
    const summary = await runBackfillCommand({ from: DATE, to: '2026-11-23', concurrency: 2, lake: join(dir, 'lake'), tty: false }, (l) => void lines.push(l));
    const out = lines.join('\n');
    assert.deepEqual(summary.perReport.map((r) => [r.reportId, r.summary.done]), [['alpha', 3], ['beta', 3]], out);
    assert.match(out, /^Backfill of "alpha": 3 P1D window\(s\) 2026-11-20 \.\. 2026-11-22, 2 at a time, locally, connection "provider-a": the embedded simulator \(\S+\) as "sim-provider-a-hmac"/m);
    assert.match(out, /^Backfill of "beta": .* as "sim-provider-b-hmac"/m);
    assert.match(out, /^Backfill of "beta": 3 window\(s\) in [\d.]+ s: 3 done, 0 failed, 0 skipped\.$/m);
    assert.match(out, /^Backfill of 2 reports: 6 window\(s\): 6 done, 0 failed, 0 skipped\.$/m);

    // reparse and query take the same selection: every report by default, or those --report names.
    const rebuilt: string[] = [];
    const reparsed = await runReparseCommand({ from: DATE, to: '2026-11-23', lake: join(dir, 'lake'), tty: false }, (l) => void rebuilt.push(l));
    assert.deepEqual(reparsed.perReport.map((r) => [r.reportId, r.summary.done]), [['alpha', 3], ['beta', 3]], rebuilt.join('\n'));
    const one = await runReparseCommand({ report: ['beta'], from: DATE, to: '2026-11-21', lake: join(dir, 'lake'), tty: false }, () => undefined);
    assert.deepEqual(one.perReport.map((r) => [r.reportId, r.summary.done]), [['beta', 1]]);
    const listed: string[] = [];
    const io = { out: (t: string) => void listed.push(t), err: () => undefined };
    assert.equal(await runQueryCommand(undefined, { lake: join(dir, 'lake'), list: true }, io), 0);
    assert.deepEqual(listed.map((l) => l.split(' ')[0]), ['alpha', 'beta', 'loads']);
    listed.length = 0;
    assert.equal(await runQueryCommand(undefined, { lake: join(dir, 'lake'), list: true, report: ['beta'] }, io), 0);
    assert.deepEqual(listed.map((l) => l.split(' ')[0]), ['beta', 'loads']);

    const deployed = { from: DATE, to: '2026-11-23', concurrency: 2, lake: join(dir, 'lake'), tty: false, deployed: true, functionName: 'f', region: 'eu-west-1' };
    await assert.rejects(runBackfillCommand({ ...deployed, environment: 'nope' }, () => undefined), /--environment nope: there is no environment file of that name/);
    await assert.rejects(runBackfillCommand({ ...deployed, deployed: false, functionName: undefined, region: undefined, environment: 'integration' }, () => undefined), /go with --deployed/);
  });

  it('a report naming a connection no environment defines is refused by npm start, naming the connection and the file', async () => {
    const dir = await tempDir('connections-unknown-');
    await useConnectionFixtures(dir, [{ id: 'alpha', connection: 'provider-a' }, { id: 'stray', connection: 'nowhere' }], { integration: [{ name: 'provider-a' }] });
    const lines: string[] = [];
    await assert.rejects(runLocal({ from: DATE, to: '2026-11-21', lake: join(dir, 'lake') }, (l) => void lines.push(l)), (e: Error) => {
      assert.match(e.message, /stray\.json/);
      assert.match(e.message, /"nowhere"/);
      return true;
    });
    assert.deepEqual(lines, [], 'nothing started');
  });
});

interface Login {
  login: string;
  method: 'HMAC-SHA1' | 'RSA-SHA256';
  /** The control key, or the public key the merchant handed over. */
  key: string;
}

/**
 * A gateway written apart from this project: it checks the OAuth 1.0a signature with the oauth-1.0a package's base
 * string (HMAC-SHA1 with the control key, RSA-SHA256 with the public key) and answers one report, rows of its own.
 */
async function verifyingGateway(report: ReportDefinition, n: number, account: Login) {
  const seen: Array<{ login: string; method: string; verified: boolean; reportIdentifier: string }> = [];
  const sent = rowsOf(report, n);
  let base = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const oauth = Object.fromEntries([...(req.headers.authorization ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, decodeURIComponent(m[2]!)]));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { reportIdentifier: string };
      const verified = verify(`${base}${req.url}`, oauth, account);
      seen.push({ login: oauth.oauth_consumer_key!, method: oauth.oauth_signature_method!, verified, reportIdentifier: body.reportIdentifier });
      if (!verified || body.reportIdentifier !== report.reportIdentifier) {
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('You are not authorized to perform this request.');
        return;
      }
      const csv = [report.columns.map((c) => c.header), ...sent].map((r) => headerLine(r, report.delimiter)).join('\r\n') + '\r\n';
      res.writeHead(200, { 'Content-Type': 'text/csv; charset=UTF-8' }).end(csv);
    });
  });
  base = await listen(server);
  return { url: `${base}/gateway/services/v2/rpt-engine`, seen, sent };
}

function verify(url: string, oauth: Record<string, string>, account: Login): boolean {
  if (oauth.oauth_consumer_key !== account.login || oauth.oauth_signature_method !== account.method) return false;
  let baseString = '';
  const oracle = new OAuth({
    consumer: { key: account.login, secret: account.method === 'HMAC-SHA1' ? account.key : '' },
    signature_method: account.method,
    hash_function: (b, key) => {
      baseString = b;
      return account.method === 'HMAC-SHA1' ? createHmac('sha1', key).update(b).digest('base64') : '';
    },
  });
  oracle.getNonce = () => oauth.oauth_nonce!;
  oracle.getTimeStamp = () => Number(oauth.oauth_timestamp);
  const expected = oracle.authorize({ url, method: 'POST' }).oauth_signature;
  if (account.method === 'HMAC-SHA1') return expected === oauth.oauth_signature;
  return createVerify('RSA-SHA256').update(baseString).verify(account.key, oauth.oauth_signature!, 'base64');
}

/** Rows valid for the definition's columns, the key unique per row and per report. */
function rowsOf(def: ReportDefinition, n: number): string[][] {
  const window: ReportWindow = windowAt(parseLocalDateTime(DATE), parseWindowSize(def.window));
  const offset = def.id.length * 1000;
  return Array.from({ length: n }, (_, i) =>
    def.columns.map((c) => {
      switch (c.kind) {
        case 'string':
          return `${def.id} merchant ${i}`;
        case 'bigint':
          return String(offset + i);
        case 'decimal':
          return c.scale ? `${i}.${'5'.repeat(c.scale)}` : String(i);
        case 'timestamp':
        case 'date':
          return formatWithPattern(window.start, c.pattern!);
        case 'boolean':
          return i % 2 ? 'true' : 'false';
      }
    }),
  );
}
