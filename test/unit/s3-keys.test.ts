import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigurationError } from '../../functions/core/errors.js';
import {
  decodeS3EventKey,
  encodeS3EventKey,
  keysFor,
  manifestKey,
  parseCuratedKey,
  parseRawKey,
  partitionStart,
  rawKey,
  rejectedKey,
  tableFilesGlob,
  tableKey,
  tableLocationTemplate,
  tablePrefix,
} from '../../functions/core/lake/s3-keys.js';
import { parseWindowSize, windowAt, type LocalDateTime } from '../../functions/core/time/window.js';

const day = windowAt({ year: 2026, month: 11, day: 20, hour: 0, minute: 0, second: 0 }, parseWindowSize('P1D'));
const sixHours = windowAt({ year: 2026, month: 3, day: 1, hour: 18, minute: 0, second: 0 }, parseWindowSize('PT6H'));

describe('S3 layout keys', () => {
  it('places a daily window under its start date', () => {
    assert.equal(rawKey('transactions', day, 'CSV'), 'raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.csv');
    assert.equal(rawKey('transactions', day, 'PDF'), 'raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.pdf');
    assert.equal(rawKey('transactions', day, 'pdf'), rawKey('transactions', day, 'PDF'), "the gateway client's fileExtension works too");
    assert.equal(tableKey('transactions', day), 'tables/transactions/dt=2026-11-20/2026-11-20T00-00-00.parquet');
    assert.equal(rejectedKey('transactions', day), 'rejected/transactions/dt=2026-11-20/2026-11-20T00-00-00.csv');
    assert.equal(manifestKey('transactions', day), 'manifests/transactions/dt=2026-11-20/2026-11-20T00-00-00.json');
  });

  it('uses the start, not the end, for a window ending on the next day', () => {
    assert.equal(sixHours.end.day, 2);
    assert.equal(tableKey('card_payments', sixHours), 'tables/card_payments/dt=2026-03-01/2026-03-01T18-00-00.parquet');
  });

  it('gives every key of a window, the same for the window and its bare start (re-runs overwrite)', () => {
    const keys = {
      raw: 'raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.pdf',
      table: 'tables/transactions/dt=2026-11-20/2026-11-20T00-00-00.parquet',
      rejected: 'rejected/transactions/dt=2026-11-20/2026-11-20T00-00-00.csv',
      manifest: 'manifests/transactions/dt=2026-11-20/2026-11-20T00-00-00.json',
    };
    assert.deepEqual(keysFor('transactions', day, 'pdf'), keys);
    assert.deepEqual(keysFor('transactions', { start: { ...day.start } }, 'PDF'), keys);
  });

  it('names the Glue table location', () => {
    assert.equal(tablePrefix('transactions'), 'tables/transactions/');
    assert.ok(tableKey('transactions', day).startsWith(tablePrefix('transactions')));
  });

  it('spells the patterns others need from the same layout: the Glue location template, the views\' glob, a listing from a date on', () => {
    assert.equal(tableLocationTemplate('transactions'), 'tables/transactions/dt=${dt}/');
    assert.equal(tableFilesGlob('transactions'), 'tables/transactions/dt=*/*.parquet');
    assert.equal(tableFilesGlob('transactions', '._S3rver_object'), 'tables/transactions/dt=*/*.parquet._S3rver_object');
    assert.equal(partitionStart('manifests', 'transactions', '2026-11-20'), 'manifests/transactions/dt=2026-11-20');
    // Every key of that date and later sorts at or after it; earlier dates sort before.
    assert.ok(manifestKey('transactions', day) >= partitionStart('manifests', 'transactions', '2026-11-20'));
    assert.ok(manifestKey('transactions', day) < partitionStart('manifests', 'transactions', '2026-11-21'));
  });

  it('refuses a report id that is not lower snake_case', () => {
    for (const id of ['Transactions', 'a/b', '', 'x-y', '1abc']) {
      assert.throws(() => rawKey(id, day, 'CSV'), ConfigurationError, id);
    }
    assert.throws(() => tablePrefix('card-payments'), {
      name: 'ConfigurationError',
      message: 'report id "card-payments" must be lower snake_case (a-z, 0-9, _): it is part of S3 keys.',
    });
    assert.throws(() => partitionStart('raw', 'Raw', '2026-11-20'), /report id "Raw" must be lower snake_case/);
  });
});

describe('parseRawKey', () => {
  it('reads a raw key back into report, partition, stamp, format and window start', () => {
    assert.deepEqual(parseRawKey('raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.csv'), {
      reportId: 'transactions',
      dt: '2026-11-20',
      stamp: '2026-11-20T00-00-00',
      format: 'CSV',
      start: day.start,
    });
    assert.equal(parseRawKey('raw/transactions/dt=2026-03-01/2026-03-01T18-00-00.pdf')?.format, 'PDF');
  });

  it('gives null for keys outside raw/ (the parse handler ignores them)', () => {
    for (const key of ['tables/transactions/dt=2026-11-20/2026-11-20T00-00-00.parquet', 'manifests/x.json', '', 'rawfile.csv', 'RAW/x']) {
      assert.equal(parseRawKey(key), null, key);
    }
  });

  it('throws a ConfigurationError naming the key for a raw/ key off the layout', () => {
    const bad = [
      'raw/transactions/2026-11-20T00-00-00.csv', // no partition
      'raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.txt', // extension
      'raw/transactions/dt=2026-11-21/2026-11-20T00-00-00.csv', // partition differs from the start date
      'raw/transactions/dt=2026-02-30/2026-02-30T00-00-00.csv', // no such day
      'raw/transactions/dt=2026-11-20/2026-11-20T24-00-00.csv', // no such hour
      'raw/Transactions/dt=2026-11-20/2026-11-20T00-00-00.csv', // report id case
      'raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.csv.bak',
      'raw/copy/raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.csv', // a layout key below another folder
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
    const layout = 'Expected raw/<report>/dt=YYYY-MM-DD/YYYY-MM-DDTHH-mm-ss.<csv|pdf>, as the fetch function writes it; move the object elsewhere or delete it.';
    assert.throws(() => parseRawKey('raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.txt'), {
      message: `S3 key "raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.txt" is under raw/ but does not follow the layout. ${layout}`,
    });
    assert.throws(() => parseRawKey('raw/transactions/dt=2026-02-30/2026-02-30T00-00-00.csv'), {
      message: `S3 key "raw/transactions/dt=2026-02-30/2026-02-30T00-00-00.csv" is under raw/ but names no real date-time ("2026-02-30T00-00-00"). ${layout}`,
    });
    assert.throws(() => parseRawKey('raw/transactions/dt=2026-11-21/2026-11-20T23-00-00.csv'), {
      message: `S3 key "raw/transactions/dt=2026-11-21/2026-11-20T23-00-00.csv" is under raw/ but has partition dt=2026-11-21 but a window starting on 2026-11-20. ${layout}`,
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
        const parts = parseRawKey(rawKey(id, { start }, fmt));
        assert.ok(parts);
        assert.equal(parts.reportId, id);
        assert.equal(parts.format, fmt);
        assert.deepEqual(parts.start, start);
        // What the parse handler derives from the raw key lands beside it in the curated bucket.
        assert.equal(tableKey(parts.reportId, parts), tableKey(id, { start }));
      }),
    );
  });

  it('round-trips through the URL encoding of S3 events', () => {
    fc.assert(
      fc.property(reportId, localDateTime, format, (id, start, fmt) => {
        const key = rawKey(id, { start }, fmt);
        assert.deepEqual(parseRawKey(decodeS3EventKey(encodeS3EventKey(key))), parseRawKey(key));
      }),
    );
  });
});

describe('parseCuratedKey', () => {
  it('reads table, rejects and manifest keys back into area, report, partition and window start', () => {
    for (const [key, area] of [
      [tableKey('transactions', day), 'tables'],
      [rejectedKey('transactions', day), 'rejected'],
      [manifestKey('transactions', day), 'manifests'],
    ] as const) {
      assert.deepEqual(parseCuratedKey(key), { area, reportId: 'transactions', dt: '2026-11-20', stamp: '2026-11-20T00-00-00', start: day.start }, key);
    }
  });

  it('reads the key a file path ends in (the local lake keeps objects as files named by their keys)', () => {
    assert.equal(parseCuratedKey(`/home/me/.lake/paynet-reports-local-curated/${tableKey('tables', sixHours)}`)?.reportId, 'tables');
    assert.deepEqual(parseCuratedKey(`C:\\lake\\b\\${manifestKey('card_payments', sixHours).replace(/\//g, '\\')}`)?.start, sixHours.start);
  });

  it('gives null for anything else: raw keys, another extension, a partition off its window, no real date', () => {
    for (const key of [
      rawKey('transactions', day, 'CSV'),
      'tables/transactions/dt=2026-11-20/2026-11-20T00-00-00.json',
      'manifests/transactions/dt=2026-11-21/2026-11-20T00-00-00.json',
      'manifests/transactions/dt=2026-02-30/2026-02-30T00-00-00.json',
      'manifests/transactions/2026-11-20T00-00-00.json',
      'manifests/transactions/dt=2026-11-20/2026-11-20T00-00-00.json.bak',
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
      decodeS3EventKey('raw/transactions/dt%3D2026-11-20/2026-11-20T00-00-00.csv'),
      'raw/transactions/dt=2026-11-20/2026-11-20T00-00-00.csv',
    );
    assert.equal(decodeS3EventKey('manual/red+flower+pot.jpg'), 'manual/red flower pot.jpg');
    assert.equal(decodeS3EventKey('a%2Bb'), 'a+b');
    assert.equal(decodeS3EventKey('caf%C3%A9'), 'café');
  });

  it('encodes like AWS: slashes kept, spaces as "+", "=" and "+" escaped', () => {
    assert.equal(encodeS3EventKey('raw/x/dt=2026-11-20/a b+c d.csv'), 'raw/x/dt%3D2026-11-20/a+b%2Bc+d.csv');
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
