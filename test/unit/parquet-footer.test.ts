import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import pkg from '../../package.json' with { type: 'json' };
import { buildCommit, createdBy, PIPELINE_NAME } from '../../functions/core/build-info.js';
import { openDuckDb } from '../helpers/duckdb.js';
import { footerProblems, parseCreatedBy, parquetProblems } from '../helpers/parquet-checks.js';
import { readParquetFooter } from '../helpers/parquet-footer.js';

/**
 * The footer reader and checks of test/helpers must be right for the tests built on them to mean
 * anything: they read another writer's file (DuckDB's) as DuckDB describes it, and they catch each rule
 * a file can break, on a file written the way the pipeline wrote them before issue 11.
 */

describe('Parquet footer reader and checks (test helpers)', () => {
  it("reads DuckDB's file as DuckDB's parquet_metadata describes it", async () => {
    const db = await openDuckDb();
    const dir = await mkdtemp(join(tmpdir(), 'footer-'));
    try {
      const file = join(dir, 'duck.parquet');
      await db.query(`COPY (SELECT i AS id, CASE WHEN i % 3 = 0 THEN NULL ELSE 'v' || (i % 5) END AS s FROM range(5000) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
      const footer = readParquetFooter(await readFile(file));
      const meta = await db.query(`SELECT row_group_id, row_group_num_rows AS n, path_in_schema AS p, stats_null_count AS nulls, encodings, total_compressed_size AS size FROM parquet_metadata('${file}') ORDER BY row_group_id, column_id`);
      const created = await db.query(`SELECT created_by FROM parquet_file_metadata('${file}')`);
      assert.equal(footer.createdBy, created[0]!.created_by);
      assert.equal(footer.numRows, 5000n);
      assert.deepEqual(footer.columns.map((c) => [c.name, c.physicalType]), [['id', 'INT64'], ['s', 'BYTE_ARRAY']]);
      const ours = footer.rowGroups.flatMap((g, i) => g.columns.map((c) => ({ g: i, n: g.numRows, p: c.path, nulls: c.statistics?.nullCount, size: c.totalCompressedSize })));
      assert.deepEqual(ours, meta.map((m) => ({ g: Number(m.row_group_id), n: BigInt(m.n as bigint), p: m.p, nulls: BigInt(m.nulls as bigint), size: BigInt(m.size as bigint) })));
      // Pages add up to each chunk, and the page walk ends exactly at the chunk's end (readPages checks that).
      for (const g of footer.rowGroups) for (const c of g.columns) assert.equal(c.pages.filter((p) => p.type.startsWith('DATA_PAGE')).reduce((n, p) => n + p.numValues!, 0), Number(g.numRows));
      // DuckDB's created_by ("DuckDB version v1.5.5 (build …)") is not semver: parquet-java cannot parse it either.
      assert.match(footerProblems(footer).join('\n'), /created_by .* does not parse/);
    } finally {
      db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('flags every rule on a file written as the pipeline wrote them before issue 11', () => {
    const writer = new ByteWriter();
    const pw = new ParquetWriter({
      writer,
      createdBy: 'paynet-reports-pipeline',
      schema: [
        { name: 'root', num_children: 3 },
        { name: 'oid', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
        { name: 'at', type: 'INT64', repetition_type: 'REQUIRED', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' } },
        { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' },
      ],
    });
    const n = 3000;
    pw.write({
      rowGroupSize: 1000,
      columnData: [
        { name: 'oid', data: Array.from({ length: n }, (_, i) => `ORD-${i}`), encoding: 'DELTA_BYTE_ARRAY', statistics: false },
        { name: 'at', data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i)) },
        { name: 'id', data: BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), encoding: 'DELTA_BINARY_PACKED' },
      ],
    });
    pw.finish();
    const problems = parquetProblems(writer.getBytes(), { minRowsPerGroup: 2000 }).join('\n');
    assert.match(problems, /created_by "paynet-reports-pipeline" does not parse/);
    assert.match(problems, /column at: TIMESTAMP without the converted type TIMESTAMP_MILLIS/);
    assert.match(problems, /column oid: a DATA_PAGE_V2 page/);
    assert.match(problems, /column oid: lists encoding DELTA_BYTE_ARRAY/);
    assert.match(problems, /column oid: no null_count/);
    assert.match(problems, /row group 0: 1000 rows, fewer than 2000/);
    assert.doesNotMatch(problems, /row group 2: /, 'the last group may be short');
  });

  it("created_by parses as parquet-java's VersionParser reads it, with the package version and a hex build or unknown", () => {
    assert.deepEqual(parseCreatedBy(createdBy('0123abcd')), { application: PIPELINE_NAME, version: pkg.version, build: '0123abcd' });
    assert.equal(createdBy('unknown'), `paynet-reports-pipeline version ${pkg.version} (build unknown)`);
    assert.equal(parseCreatedBy('parquet-mr version 1.12.3 (build f8dced182c4c1fbdec6ccb3185537b5a01e6ed6b)')?.version, '1.12.3');
    assert.equal(buildCommit('F00DBABE1234'), 'f00dbabe1234');
    for (const bad of ['x) (build y', 'main', '', undefined]) assert.equal(buildCommit(bad), 'unknown', String(bad));
  });
});
