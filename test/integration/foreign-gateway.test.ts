import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import { after, describe, it } from 'node:test';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import iconv from 'iconv-lite';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { headerLine } from '../../functions/core/gateway/answer.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { formatWithPattern, parseLocalDateTime, parseWindowSize, windowAt } from '../../functions/core/time/window.js';
import { openObjectStream } from '../../functions/aws/s3-streams.js';
import { startLocalPipeline, type LocalPipeline } from '../../local/pipeline/pipeline.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * The whole local chain (fetch -> raw object on s3rver -> parse -> Parquet -> DuckDB) against a gateway
 * that is not this project's simulator: a hand-written server that answers the way a Java back end
 * streaming a file might. What must load, loads exactly; what is not a report fails loudly with nothing in
 * the table and no raw file.
 */

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const report: ReportDefinition = loadCatalog().get('transactions');
const window = windowAt(parseLocalDateTime('2026-11-20'), parseWindowSize(report.window));
const DATE = '2026-11-20';
const ROWS = 60;

/** Rows built from the definition's columns alone, each value valid for its type. */
function rowsFor(def: ReportDefinition, n: number): string[][] {
  return Array.from({ length: n }, (_, i) =>
    def.columns.map((c) => {
      switch (c.kind) {
        case 'string':
          return `Value ${i}, "quoted" «№${i}»\r\nnext line`;
        case 'bigint':
          return String(9_007_199_254_740_993n + BigInt(i));
        case 'decimal':
          return c.scale ? `${i}.${'5'.repeat(c.scale)}` : String(i);
        case 'timestamp':
        case 'date':
          return formatWithPattern(window.start, c.pattern!);
        case 'boolean':
          return i % 2 ? 'true' : 'False';
      }
    }),
  );
}

const csv = (rows: string[][]) => [report.columns.map((c) => c.header), ...rows].map((r) => headerLine(r, report.delimiter)).join('\r\n') + '\r\n';
const reportText = csv(rowsFor(report, ROWS));

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function foreignGateway(answer: (res: http.ServerResponse) => Promise<void> | void): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => void answer(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/reports/services/v2/rpt-engine`;
}

async function pipelineFor(gatewayUrl: string): Promise<LocalPipeline> {
  const lakeDir = await mkdtemp(join(tmpdir(), 'foreign-'));
  const p = await startLocalPipeline({
    lakeDir,
    gatewayUrl,
    secret: { login: 'foreign-merchant', controlKey: 'foreign-key' },
    gateway: { retry: { attempts: 1 } },
  });
  cleanups.push(async () => {
    await p.close();
    await rm(lakeDir, { recursive: true, force: true });
  });
  return p;
}

const rawKeys = async (p: LocalPipeline) =>
  ((await p.s3.send(new ListObjectsV2Command({ Bucket: p.buckets.raw, Prefix: 'raw/' }))).Contents ?? []).map((o) => o.Key!);
const tableKeys = async (p: LocalPipeline) =>
  ((await p.s3.send(new ListObjectsV2Command({ Bucket: p.buckets.curated, Prefix: 'tables/' }))).Contents ?? []).map((o) => o.Key!);

async function tableCount(p: LocalPipeline): Promise<number> {
  const db = await p.openDatabase();
  try {
    const r = await db.query(`SELECT count(*) AS n FROM ${report.id} WHERE dt = '${DATE}'`);
    return Number(r.rows[0]![0]);
  } finally {
    db.close();
  }
}

describe('a gateway that is not this project\'s', () => {
  it('a report sent as text/plain, gzip-compressed unasked, trickled in chunks: loads exactly; the raw file is the decoded report', async () => {
    const gz = zlib.gzipSync(Buffer.from(reportText));
    const url = await foreignGateway(async (res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain;charset=UTF-8', 'Content-Encoding': 'gzip' });
      for (let at = 0; at < gz.length; at += 300) {
        res.write(gz.subarray(at, at + 300));
        await sleep(1);
      }
      res.end();
    });
    const p = await pipelineFor(url);
    const o = await p.runWindow(feedKey(report.id), window);
    assert.equal(o.status, 'loaded', JSON.stringify(o.error));
    assert.equal(o.rowsWritten, ROWS);
    assert.equal(o.fetched?.wireCoding, 'gzip');
    assert.equal(o.fetched?.wireBytes, gz.length);
    assert.equal(o.fetched?.headerMatches, true);
    assert.equal(o.manifest?.source.wireCoding, 'gzip');
    const opened = await openObjectStream({ client: p.s3, bucket: p.buckets.raw, key: o.fetched!.key });
    assert.equal(Buffer.concat(await opened.body.toArray()).toString('utf8'), reportText);
    assert.equal(opened.metadata['wire-coding'], 'gzip');
    assert.equal(await tableCount(p), ROWS);
  });

  const refusals: Array<{ name: string; code: string; send: (res: http.ServerResponse) => void }> = [
    {
      name: 'a JSON error',
      code: 'UnexpectedAnswer',
      send: (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"error":"INVALID_FILTER","message":"Unknown gate, check filters"}'),
    },
    {
      name: 'a refusal in other words',
      code: 'AuthenticationRefused',
      send: (res) => res.writeHead(403, { 'Content-Type': 'text/html' }).end('<html><body><h1>403</h1><p>Access denied: unauthorized signature.</p></body></html>'),
    },
    {
      name: 'a report in an undeclared encoding (UTF-16LE where UTF-8 is declared)',
      code: 'UnexpectedAnswer',
      send: (res) => res.writeHead(200, { 'Content-Type': 'text/csv' }).end(Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(reportText, 'utf16-le')])),
    },
  ];
  for (const r of refusals) {
    it(`${r.name}: fails loudly (${r.code}), no raw file, nothing in the table`, async () => {
      const p = await pipelineFor(await foreignGateway(r.send));
      const o = await p.runWindow(feedKey(report.id), window);
      assert.equal(o.status, 'failed');
      assert.equal(o.error?.stage, 'fetch');
      assert.equal(o.error?.code, r.code, o.error?.message);
      assert.deepEqual(await rawKeys(p), []);
      assert.deepEqual(await tableKeys(p), []);
    });
  }

  it('a drifted header sent as application/octet-stream: stored raw, refused by the parse as SchemaDrift', async () => {
    const drifted = reportText.replace(`"${report.columns[0]!.header}"`, '"Renamed_column"');
    const p = await pipelineFor(await foreignGateway((res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(drifted);
    }));
    const o = await p.runWindow(feedKey(report.id), window);
    assert.equal(o.status, 'failed');
    assert.equal(o.error?.code, 'SchemaDrift');
    assert.equal(o.fetched?.headerMatches, false);
    assert.equal((await rawKeys(p)).length, 1, 'the raw file of a drifted report is kept');
    assert.deepEqual(await tableKeys(p), []);
  });
});
