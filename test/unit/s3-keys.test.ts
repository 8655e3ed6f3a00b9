import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigurationError } from '../../functions/core/errors.js';
import {
  areaPrefix,
  decodeS3EventKey,
  encodeS3EventKey,
  keysFor,
  manifestKey,
  parseCuratedKey,
  parseLegacyRawKey,
  parseRawKey,
  partitionStart,
  rawKey,
  rejectedKey,
  reportAreaPrefix,
  tableFilesGlob,
  tableKey,
  tableLocationTemplate,
  tablePrefix,
} from '../../functions/core/lake/s3-keys.js';
import { parseWindowSize, windowAt, type LocalDateTime } from '../../functions/core/time/window.js';
import { feedKey } from '../helpers/feed-key.js';

const day = windowAt({ year: 2026, month: 11, day: 20, hour: 0, minute: 0, second: 0 }, parseWindowSize('P1D'));
const sixHours = windowAt({ year: 2026, month: 3, day: 1, hour: 18, minute: 0, second: 0 }, parseWindowSize('PT6H'));

describe('S3 layout keys', () => {
  it('places a daily window under its start date', () => {
    assert.equal(rawKey(feedKey('transactions'), day, 'CSV'), 'raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv');
    assert.equal(rawKey(feedKey('transactions'), day, 'PDF'), 'raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.pdf');
    assert.equal(rawKey(feedKey('transactions'), day, 'pdf'), rawKey(feedKey('transactions'), day, 'PDF'), "the gateway client's fileExtension works too");
    assert.equal(tableKey(feedKey('transactions'), day), 'tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet');
    assert.equal(rejectedKey(feedKey('transactions'), day), 'rejected/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv');
    assert.equal(manifestKey(feedKey('transactions'), day), 'manifests/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json');
  });

  it('uses the start, not the end, for a window ending on the next day', () => {
    assert.equal(sixHours.end.day, 2);
    assert.equal(tableKey(feedKey('card_payments'), sixHours), 'tables/card_payments/connection=default/dt=2026-03-01/2026-03-01T18-00-00.parquet');
  });

  it('gives every key of a window, the same for the window and its bare start (re-runs overwrite)', () => {
    const keys = {
      raw: 'raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.pdf',
      table: 'tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet',
      rejected: 'rejected/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv',
      manifest: 'manifests/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json',
    };
    assert.deepEqual(keysFor(feedKey('transactions'), day, 'pdf'), keys);
    assert.deepEqual(keysFor(feedKey('transactions'), { start: { ...day.start } }, 'PDF'), keys);
  });

  it('names the Glue table location', () => {
    assert.equal(tablePrefix('transactions'), 'tables/transactions/');
    assert.ok(tableKey(feedKey('transactions'), day).startsWith(tablePrefix('transactions')));
  });

  it('spells the patterns others need from the same layout: the Glue location template, the views\' glob, a listing from a date on', () => {
    assert.equal(tableLocationTemplate('transactions'), 'tables/transactions/connection=${connection}/dt=${dt}/');
    assert.equal(tableFilesGlob('transactions'), 'tables/transactions/connection=*/dt=*/*.parquet');
    assert.equal(tableFilesGlob('transactions', '._S3rver_object'), 'tables/transactions/connection=*/dt=*/*.parquet._S3rver_object');
    assert.equal(partitionStart('manifests', feedKey('transactions'), '2026-11-20'), 'manifests/transactions/connection=default/dt=2026-11-20');
    // Every key of that date and later sorts at or after it; earlier dates sort before.
    assert.ok(manifestKey(feedKey('transactions'), day) >= partitionStart('manifests', feedKey('transactions'), '2026-11-20'));
    assert.ok(manifestKey(feedKey('transactions'), day) < partitionStart('manifests', feedKey('transactions'), '2026-11-21'));
  });

  it('places each feed of a report under its connection, in the one table of the report', () => {
    const acme = feedKey('transactions', 'acme');
    const beta = feedKey('transactions', 'beta-2');
    assert.equal(tableKey(acme, day), 'tables/transactions/connection=acme/dt=2026-11-20/2026-11-20T00-00-00.parquet');
    assert.equal(rawKey(beta, day, 'CSV'), 'raw/transactions/connection=beta-2/dt=2026-11-20/2026-11-20T00-00-00.csv');
    assert.notEqual(manifestKey(acme, day), manifestKey(beta, day), 'two providers never share a manifest');
    for (const f of [acme, beta]) assert.ok(tableKey(f, day).startsWith(tablePrefix('transactions')));
    assert.equal(areaPrefix('manifests', acme), 'manifests/transactions/connection=acme/');
    assert.equal(reportAreaPrefix('raw', 'transactions'), 'raw/transactions/');
    assert.deepEqual(parseRawKey(rawKey(beta, day, 'CSV'))?.connection, 'beta-2');
    assert.deepEqual(parseCuratedKey(tableKey(acme, day))?.connection, 'acme');
    assert.throws(() => tableKey(feedKey('transactions', 'Acme'), day), /connection "Acme" must be 1-32 lower-case letters/);
  });

  it('reads a raw key of the layout before connections only through parseLegacyRawKey, which reparse moves', () => {
    const old = 'raw/transactions/' + 'dt=2026-11-20/2026-11-20T00-00-00.csv';
    assert.throws(() => parseRawKey(old), /layout before connections: `reports reparse` rebuilds it/);
    assert.deepEqual(parseLegacyRawKey(old), { reportId: 'transactions', dt: '2026-11-20', stamp: '2026-11-20T00-00-00', format: 'CSV', start: day.start });
    assert.equal(parseLegacyRawKey(rawKey(feedKey('transactions'), day, 'CSV')), null);
  });

  it('refuses a report id that is not lower snake_case', () => {
    for (const id of ['Transactions', 'a/b', '', 'x-y', '1abc']) {
      assert.throws(() => rawKey(feedKey(id), day, 'CSV'), ConfigurationError, id);
    }
    assert.throws(() => tablePrefix('card-payments'), {
      name: 'ConfigurationError',
      message: 'report id "card-payments" must be lower snake_case (a-z, 0-9, _): it is part of S3 keys.',
    });
    assert.throws(() => partitionStart('raw', feedKey('Raw'), '2026-11-20'), /report id "Raw" must be lower snake_case/);
  });
});

describe('parseRawKey', () => {
  it('reads a raw key back into report, partition, stamp, format and window start', () => {
    assert.deepEqual(parseRawKey('raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv'), {
      reportId: 'transactions',
      connection: 'default',
      dt: '2026-11-20',
      stamp: '2026-11-20T00-00-00',
      format: 'CSV',
      start: day.start,
    });
    assert.equal(parseRawKey('raw/transactions/connection=default/dt=2026-03-01/2026-03-01T18-00-00.pdf')?.format, 'PDF');
  });

  it('gives null for keys outside raw/ (the parse handler ignores them)', () => {
    for (const key of ['tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet', 'manifests/x.json', '', 'rawfile.csv', 'RAW/x']) {
      assert.equal(parseRawKey(key), null, key);
    }
  });

  it('throws a ConfigurationError naming the key for a raw/ key off the layout', () => {
    const bad = [
      'raw/transactions/2026-11-20T00-00-00.csv', // no partition
      'raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.txt', // extension
      'raw/transactions/connection=default/dt=2026-11-21/2026-11-20T00-00-00.csv', // partition differs from the start date
      'raw/transactions/connection=default/dt=2026-02-30/2026-02-30T00-00-00.csv', // no such day
      'raw/transactions/connection=default/dt=2026-11-20/2026-11-20T24-00-00.csv', // no such hour
      'raw/Transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv', // report id case
      'raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv.bak',
      'raw/copy/raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv', // a layout key below another folder
      'raw/',
    ];
    for (const key of bad) {
      assert.throws(
        () => parseRawKey(key),
        (e: unknown) => e instanceof ConfigurationError && e.message.includes(`"${key}"`),
        key,
      );
    }
  });

  it('says why a raw/ key is off the layout, what the layout is, and what to do', () => {
    const layout = 'Expected raw/<report>/connection=<name>/dt=YYYY-MM-DD/YYYY-MM-DDTHH-mm-ss.<csv|pdf>, as the fetch function writes it; move the object elsewhere or delete it.';
    assert.throws(() => parseRawKey('raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.txt'), {
      message: `S3 key "raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.txt" is under raw/ but does not follow the layout. ${layout}`,
    });
    assert.throws(() => parseRawKey('raw/transactions/connection=default/dt=2026-02-30/2026-02-30T00-00-00.csv'), {
      message: `S3 key "raw/transactions/connection=default/dt=2026-02-30/2026-02-30T00-00-00.csv" is under raw/ but names no real date-time ("2026-02-30T00-00-00"). ${layout}`,
    });
    assert.throws(() => parseRawKey('raw/transactions/connection=default/dt=2026-11-21/2026-11-20T23-00-00.csv'), {
      message: `S3 key "raw/transactions/connection=default/dt=2026-11-21/2026-11-20T23-00-00.csv" is under raw/ but has partition dt=2026-11-21 but a window starting on 2026-11-20. ${layout}`,
    });
  });

  const localDateTime = fc
    .record({
      date: fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.integer({ min: 0, max: 59 }),
    })
    .map(
      ({ date, hour, minute, second }): LocalDateTime => ({
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
        day: date.getUTCDate(),
        hour,
        minute,
        second,
      }),
    );
  const reportId = fc.stringMatching(/^[a-z][a-z0-9_]{0,30}$/);
  const format = fc.constantFrom('CSV' as const, 'PDF' as const);

  it('round-trips every (report, start, format) through rawKey and parseRawKey', () => {
    fc.assert(
      fc.property(reportId, localDateTime, format, (id, start, fmt) => {
        const parts = parseRawKey(rawKey(feedKey(id), { start }, fmt));
        assert.ok(parts);
        assert.equal(parts.reportId, id);
        assert.equal(parts.format, fmt);
        assert.deepEqual(parts.start, start);
        // What the parse handler derives from the raw key lands beside it in the curated bucket.
        assert.equal(tableKey(feedKey(parts.reportId), parts), tableKey(feedKey(id), { start }));
      }),
    );
  });

  it('round-trips through the URL encoding of S3 events', () => {
    fc.assert(
      fc.property(reportId, localDateTime, format, (id, start, fmt) => {
        const key = rawKey(feedKey(id), { start }, fmt);
        assert.deepEqual(parseRawKey(decodeS3EventKey(encodeS3EventKey(key))), parseRawKey(key));
      }),
    );
  });
});

describe('parseCuratedKey', () => {
  it('reads table, rejects and manifest keys back into area, report, partition and window start', () => {
    for (const [key, area] of [
      [tableKey(feedKey('transactions'), day), 'tables'],
      [rejectedKey(feedKey('transactions'), day), 'rejected'],
      [manifestKey(feedKey('transactions'), day), 'manifests'],
    ] as const) {
      assert.deepEqual(parseCuratedKey(key), { area, reportId: 'transactions', connection: 'default', dt: '2026-11-20', stamp: '2026-11-20T00-00-00', start: day.start }, key);
    }
  });

  it('reads the key a file path ends in (the local lake keeps objects as files named by their keys)', () => {
    assert.equal(parseCuratedKey(`/home/me/.lake/paynet-reports-local-curated/${tableKey(feedKey('tables'), sixHours)}`)?.reportId, 'tables');
    assert.deepEqual(parseCuratedKey(`C:\\lake\\b\\${manifestKey(feedKey('card_payments'), sixHours).replace(/\//g, '\\')}`)?.start, sixHours.start);
  });

  it('gives null for anything else: raw keys, another extension, a partition off its window, no real date', () => {
    for (const key of [
      rawKey(feedKey('transactions'), day, 'CSV'),
      'tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json',
      'manifests/transactions/connection=default/dt=2026-11-21/2026-11-20T00-00-00.json',
      'manifests/transactions/connection=default/dt=2026-02-30/2026-02-30T00-00-00.json',
      'manifests/transactions/2026-11-20T00-00-00.json',
      'manifests/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.json.bak',
      'oldmanifests/transactions/dt=2026-11-20/2026-11-20T00-00-00.json', // an area name must be a whole path segment
      '',
    ]) {
      assert.equal(parseCuratedKey(key), null, key);
    }
  });
});

describe('S3 event key encoding', () => {
  it('decodes keys as AWS sends them: "+" is a space, %XX a byte of UTF-8', () => {
    assert.equal(
      decodeS3EventKey('raw/transactions/connection%3Ddefault/dt%3D2026-11-20/2026-11-20T00-00-00.csv'),
      'raw/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.csv',
    );
    assert.equal(decodeS3EventKey('manual/red+flower+pot.jpg'), 'manual/red flower pot.jpg');
    assert.equal(decodeS3EventKey('a%2Bb'), 'a+b');
    assert.equal(decodeS3EventKey('caf%C3%A9'), 'café');
  });

  it('encodes like AWS: slashes kept, spaces as "+", "=" and "+" escaped', () => {
    assert.equal(encodeS3EventKey('raw/x/connection=default/dt=2026-11-20/a b+c d.csv'), 'raw/x/connection%3Ddefault/dt%3D2026-11-20/a+b%2Bc+d.csv');
  });

  it('round-trips any key', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (key) => {
        assert.equal(decodeS3EventKey(encodeS3EventKey(key)), key);
      }),
    );
  });

  it('rejects malformed escapes with a URIError naming the key', () => {
    assert.throws(
      () => decodeS3EventKey('raw/%E0%A4%A'),
      (e: unknown) => e instanceof URIError && e.message === 'S3 event key "raw/%E0%A4%A" is not valid URL encoding' && e.cause instanceof URIError,
    );
  });
});
