import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openLakeDatabase, QueryFailed, type LakeDatabase } from '../../local/duckdb/duckdb.js';

/**
 * Trino's date functions on the local engine, through the same database `npm run query` opens. Each expected
 * value is the result Trino's documentation prints for that example
 * (https://trino.io/docs/current/functions/datetime.html), or, where the page gives none, a calendar fact
 * (20 October 2022 was a Thursday; 22 August 2001 was a Wednesday, day 234, ISO week 34).
 */

let db: LakeDatabase;
let lakeDir: string;

async function one(sql: string): Promise<unknown[]> {
  const { rows } = await db.query(sql);
  return rows[0]!;
}

describe('Trino date functions over the local lake', () => {
  before(async () => {
    lakeDir = await mkdtemp(join(tmpdir(), 'trino-functions-'));
    db = await openLakeDatabase({ lakeDir, staleNotices: false });
  });
  after(async () => {
    db.close();
    await rm(lakeDir, { recursive: true, force: true });
  });

  it('date_format and date_parse take MySQL specifiers, as the documentation examples', async () => {
    assert.deepEqual(await one(`SELECT date_format(TIMESTAMP '2022-10-20 05:10:00', '%m-%d-%Y %H')`), ['10-20-2022 05']);
    assert.deepEqual(await one(`SELECT CAST(date_parse('2022/10/20/05', '%Y/%m/%d/%H') AS VARCHAR)`), ['2022-10-20 05:00:00']);
    assert.deepEqual(await one(`SELECT typeof(date_parse('2022/10/20/05', '%Y/%m/%d/%H'))`), ['TIMESTAMP']);
  });

  it('reads the specifiers of the table: names, 12-hour clock, %T, %r, %j, %% and an unlisted letter as itself', async () => {
    const t = `TIMESTAMP '2022-10-20 17:04:09.123'`;
    assert.deepEqual(await one(`SELECT date_format(${t}, '%a %W %b %M %c/%e %k %l %p|%T|%r|%j|%i|100%%|%Q')`), [
      'Thu Thursday Oct October 10/20 17 5 PM|17:04:09|05:04:09 PM|293|04|100%|Q',
    ]);
    assert.deepEqual(await one(`SELECT date_format(${t}, '%f')`), ['123000']);
    assert.deepEqual(await one(`SELECT CAST(date_parse('20.11.2026 10:15 PM', '%d.%m.%Y %h:%i %p') AS VARCHAR)`), ['2026-11-20 22:15:00']);
    assert.deepEqual(await one(`SELECT CAST(date_parse('69-01-01', '%y-%m-%d') AS VARCHAR), CAST(date_parse('70-01-01', '%y-%m-%d') AS VARCHAR)`), [
      '2069-01-01 00:00:00',
      '1970-01-01 00:00:00',
    ]);
  });

  it('the idiom of the issue runs: a date N days back as text', async () => {
    const [formatted, expected] = await one(
      `SELECT date_format(current_date - INTERVAL '31' DAY, '%Y-%m-%d'), CAST(current_date - INTERVAL '31' DAY AS DATE)::VARCHAR`,
    );
    assert.equal(formatted, expected);
    // dt is text: the documented filter compares text with text on a report's view.
    assert.deepEqual((await one(`SELECT count(*) FROM transactions WHERE dt >= date_format(current_date - INTERVAL '31' DAY, '%Y-%m-%d')`)).map(String), ['0']);
  });

  it('refuses what Trino refuses, in one line: an unsupported specifier, a date that does not exist, text off the format', async () => {
    await assert.rejects(db.query(`SELECT date_format(TIMESTAMP '2022-10-20 05:10:00', '%D')`), (e: unknown) => {
      assert.ok(e instanceof QueryFailed);
      assert.match(e.message, /specifier %D is not supported/);
      return true;
    });
    await assert.rejects(db.query(`SELECT date_parse('31.02.2026', '%d.%m.%Y')`), /"31\.02\.2026" is not a real date/);
    await assert.rejects(db.query(`SELECT date_parse('2026-11-20', '%d.%m.%Y')`), /does not match the format/);
  });

  it('format_datetime and parse_datetime take JodaTime patterns, quoted literals included', async () => {
    assert.deepEqual(await one(`SELECT format_datetime(TIMESTAMP '2022-10-20 05:10:00.123', 'EEEE, dd MMMM yyyy ''T'' HH:mm:ss.SSS')`), [
      'Thursday, 20 October 2022 T 05:10:00.123',
    ]);
    assert.deepEqual(await one(`SELECT format_datetime(DATE '2022-10-20', 'd.M.yy EEE ''''')`), ["20.10.22 Thu '"]);
    assert.deepEqual(await one(`SELECT CAST(parse_datetime('2022-10-20 05:10', 'yyyy-MM-dd HH:mm') AS VARCHAR)`), ['2022-10-20 05:10:00+00']);
    await assert.rejects(db.query(`SELECT format_datetime(TIMESTAMP '2022-10-20 05:10:00', 'yyyy G')`), /pattern G is not supported locally/);
  });

  it('from_iso8601_timestamp, from_iso8601_date and to_iso8601, in UTC as Athena', async () => {
    assert.deepEqual(
      await one(
        `SELECT CAST(from_iso8601_timestamp('2020-05-11') AS VARCHAR), CAST(from_iso8601_timestamp('2020-05-11T11:15:05') AS VARCHAR), ` +
          `CAST(from_iso8601_timestamp('2020-05-11T11:15:05.055+01:00') AS VARCHAR), CAST(from_iso8601_date('2020-05-11') AS VARCHAR)`,
      ),
      ['2020-05-11 00:00:00+00', '2020-05-11 11:15:05+00', '2020-05-11 10:15:05.055+00', '2020-05-11'],
    );
    assert.deepEqual(
      await one(
        `SELECT to_iso8601(DATE '2020-05-11'), to_iso8601(TIMESTAMP '2020-05-11 11:15:05.055'), ` +
          `to_iso8601(from_iso8601_timestamp('2020-05-11T11:15:05.055+01:00'))`,
      ),
      ['2020-05-11', '2020-05-11T11:15:05.055', '2020-05-11T10:15:05.055Z'],
    );
  });

  it("date_add and date_diff take Trino's (unit, …) arguments; date_diff counts whole units elapsed", async () => {
    assert.deepEqual(
      await one(
        `SELECT CAST(date_add('second', 86, TIMESTAMP '2020-03-01 00:00:00') AS VARCHAR), CAST(date_add('hour', 9, TIMESTAMP '2020-03-01 00:00:00') AS VARCHAR), ` +
          `CAST(date_add('day', -1, TIMESTAMP '2020-03-01 00:00:00') AS VARCHAR), CAST(date_add('quarter', 3, TIMESTAMP '2020-03-01 00:00:00') AS VARCHAR)`,
      ),
      ['2020-03-01 00:01:26', '2020-03-01 09:00:00', '2020-02-29 00:00:00', '2020-12-01 00:00:00'],
    );
    assert.deepEqual(
      (await one(
        `SELECT date_diff('second', TIMESTAMP '2020-03-01 00:00:00', TIMESTAMP '2020-03-02 00:00:00'), date_diff('hour', TIMESTAMP '2020-03-01 00:00:00', TIMESTAMP '2020-03-02 00:00:00'), ` +
          `date_diff('day', DATE '2020-03-01', DATE '2020-03-02'), date_diff('millisecond', TIMESTAMP '2020-06-01 12:30:45.000000000', TIMESTAMP '2020-06-02 12:30:45.123456789'), ` +
          `date_diff('day', TIMESTAMP '2020-03-01 23:00:00', TIMESTAMP '2020-03-02 01:00:00')`,
      )).map(String),
      ['86400', '24', '1', '86400123', '0'],
    );
  });

  it('the extraction functions Trino names and DuckDB does not', async () => {
    assert.deepEqual(
      (await one(
        `SELECT day_of_week(DATE '2001-08-22'), dow(DATE '2001-08-22'), day_of_year(DATE '2001-08-22'), doy(DATE '2001-08-22'), ` +
          `year_of_week(DATE '2001-08-22'), yow(DATE '2001-08-22'), week_of_year(DATE '2001-08-22'), day_of_month(DATE '2001-08-22'), ` +
          `CAST(last_day_of_month(DATE '2001-08-22') AS VARCHAR), to_unixtime(TIMESTAMP '1970-01-02 00:00:00.500'), CAST(from_unixtime(86400) AS VARCHAR)`,
      )).map(String),
      ['3', '3', '234', '234', '2001', '2001', '34', '22', '2001-08-31', '86400.5', '1970-01-02 00:00:00+00'],
    );
  });
});
