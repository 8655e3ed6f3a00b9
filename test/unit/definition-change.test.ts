import '../helpers/fixture-reports.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { classifyChange, parquetTypeFor } from '../../functions/core/definitions/change.js';
import { definitionRecord, fingerprintOf, type RecordedColumn } from '../../functions/core/definitions/fingerprint.js';
import { parseReportDefinition, type ColumnDefinition } from '../../functions/core/definitions/report-definition.js';
import { commandTime, reparseCommand, staleNotice, staleReport, staleStatus, windowList, type RecordedWindow, type StaleReport } from '../../functions/core/lake/stale-windows.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { recordedWindowOf } from '../../functions/parse-report/table-in-place.js';

/**
 * The fingerprint of a definition's columns, what a change of them does to the partitions written before
 * (functions/core/definitions/change.ts), and what the readers say about it (functions/core/lake/stale-windows.ts).
 */

const base = loadCatalog().get('transactions');
const columnsOf = (change: (columns: Array<Record<string, unknown>>) => void = () => undefined): ColumnDefinition[] => {
  const raw = structuredClone(base.columns).map(({ kind: _k, precision: _p, scale: _s, ...c }) => c as Record<string, unknown>);
  change(raw);
  return parseReportDefinition({ ...base, columns: raw }, 'test').columns;
};
const recorded = (columns: ColumnDefinition[]): RecordedColumn[] => definitionRecord(columns).columns;
const column = (columns: Array<Record<string, unknown>>, name: string) => columns.find((c) => c.name === name)!;
const day = (date: string, table?: RecordedWindow['table'], failed?: string): RecordedWindow => {
  const next = new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  return { start: `${date}T00:00:00`, end: `${next}T00:00:00`, ...(table ? { table } : {}), ...(failed ? { lastAttemptFailed: failed } : {}) };
};

describe('the definition fingerprint', () => {
  const now = definitionRecord(base.columns);

  it('is 12 hex digits, and the same for the same columns', () => {
    assert.match(now.fingerprint, /^[0-9a-f]{12}$/);
    assert.equal(definitionRecord(columnsOf()).fingerprint, now.fingerprint);
  });

  it('changes with a name, a type or a pattern: what decides the table file a reader sees', () => {
    const changed = [
      columnsOf((c) => void (column(c, 'merchant_oid').name = 'order_ref')),
      columnsOf((c) => void (column(c, 'amount').type = 'decimal(18,4)')),
      columnsOf((c) => void (column(c, 'created_date').pattern = 'dd.MM.yyyy HH:mm:ss')),
      columnsOf((c) => void c.push({ header: 'Fee', name: 'fee', type: 'decimal(18,3)', nullable: true })),
      columnsOf((c) => void c.splice(2, 1)),
    ].map((columns) => definitionRecord(columns).fingerprint);
    assert.equal(new Set([now.fingerprint, ...changed]).size, changed.length + 1);
  });

  it('does not change with the column order, a header alone or nullability, which no reader of the table file sees', () => {
    for (const columns of [
      columnsOf((c) => c.reverse()),
      columnsOf((c) => void (column(c, 'merchant_oid').header = 'Merchant_Order_Id')),
      columnsOf((c) => void (column(c, 'currency').nullable = true)),
    ]) {
      assert.equal(definitionRecord(columns).fingerprint, now.fingerprint);
    }
  });

  it('records every column in CSV order, with header and nullability for telling renames from additions', () => {
    assert.deepEqual(now.columns.slice(3, 5), [
      { header: 'Created_date', name: 'created_date', type: 'timestamp', pattern: 'yyyy-MM-dd HH:mm:ss', nullable: false },
      { header: 'Amount', name: 'amount', type: 'decimal(18,3)', nullable: false },
    ]);
    assert.equal(fingerprintOf(now.columns), now.fingerprint);
  });
});

describe('the fingerprint, byte for byte', () => {
  it('is the first 12 hex digits of SHA-256 over [name, type, pattern or null] sorted by name, as JSON', () => {
    const canonical = '[["a","string","x"],["b","bigint",null],["c","decimal(18,2)",null]]';
    const expected = createHash('sha256').update(canonical).digest('hex').slice(0, 12);
    const columns = [
      { name: 'c', type: 'decimal(18,2)' },
      { name: 'a', type: 'string', pattern: 'x' },
      { name: 'b', type: 'bigint' },
    ];
    assert.equal(fingerprintOf(columns), expected);
    assert.equal(fingerprintOf([columns[1]!, columns[2]!, columns[0]!]), expected);
  });
});

describe('what a change does to the partitions written before it', () => {
  const before = recorded(base.columns);
  const after = (change: (columns: Array<Record<string, unknown>>) => void) => classifyChange(before, recorded(columnsOf(change)));

  it('the same columns: nothing', () => {
    assert.deepEqual(classifyChange(before, before), { verdict: 'same', changes: [] });
  });

  it('an added nullable column reads NULL there and needs nothing', () => {
    const change = after((c) => void c.push({ header: 'Fee', name: 'fee', type: 'decimal(18,3)', nullable: true }));
    assert.equal(change.verdict, 'compatible');
    assert.deepEqual(change.changes.map((c) => c.change), [{ change: 'added', column: 'fee', type: 'decimal(18,3)', nullable: true }]);
    assert.match(change.changes[0]!.effect, /reads NULL there .*nothing to do/);
  });

  it('an added required column reads NULL too, and a reparse cannot fill it: compatible, with the reason', () => {
    const change = after((c) => void c.push({ header: 'Fee', name: 'fee', type: 'decimal(18,3)' }));
    assert.equal(change.verdict, 'compatible');
    assert.match(change.changes[0]!.effect, /although it is not nullable.*a reparse cannot fill it/);
  });

  it('a removed column: older files keep it, unseen; nothing to do', () => {
    const change = after((c) => void c.splice(c.findIndex((x) => x.name === 'order_description'), 1));
    assert.equal(change.verdict, 'compatible');
    assert.deepEqual(change.changes.map((c) => c.change), [{ change: 'removed', column: 'order_description', type: 'string' }]);
  });

  it('a renamed column (same header) is stale: the new name reads NULL in older files', () => {
    const change = after((c) => void (column(c, 'merchant_oid').name = 'order_ref'));
    assert.equal(change.verdict, 'stale');
    assert.deepEqual(change.changes[0]!.change, { change: 'renamed', from: 'merchant_oid', to: 'order_ref', header: 'Merchant_OID', fromType: 'string', toType: 'string' });
    assert.match(change.changes[0]!.effect, /order_ref reads NULL there \(Athena reads Parquet columns by name\)/);
  });

  it('a renamed header with a renamed column is a removal and an addition: their raw files would not parse anyway', () => {
    const change = after((c) => Object.assign(column(c, 'merchant_oid'), { header: 'Order_Ref', name: 'order_ref' }));
    assert.deepEqual(change.changes.map((c) => c.change.change).sort(), ['added', 'removed']);
    assert.equal(change.verdict, 'compatible');
  });

  it('a changed pattern is stale: the values were read from the text with the old one', () => {
    const change = after((c) => void (column(c, 'date_of_report').pattern = 'MM.dd.yyyy'));
    assert.equal(change.verdict, 'stale');
    assert.deepEqual(change.changes[0]!.change, { change: 'pattern', column: 'date_of_report', from: 'dd.MM.yyyy', to: 'MM.dd.yyyy' });
  });

  it('every retype is unreadable: Athena reads no Parquet type this pipeline writes as another, decimal scale included', () => {
    const cases: Array<[string, string, string, string]> = [
      ['amount', 'decimal(18,4)', 'INT64 DECIMAL(18,3)', 'INT64 DECIMAL(18,4)'],
      ['amount', 'decimal(12,3)', 'INT64 DECIMAL(18,3)', 'INT64 DECIMAL(12,3)'],
      ['transaction_id', 'string', 'INT64', 'BYTE_ARRAY UTF8'],
      ['merchant_oid', 'bigint', 'BYTE_ARRAY UTF8', 'INT64'],
      ['created_date', 'date', 'INT64 TIMESTAMP_MILLIS', 'INT32 DATE'],
    ];
    for (const [name, type, fromParquet, toParquet] of cases) {
      const change = after((c) => {
        Object.assign(column(c, name), { type });
        if (type === 'date') column(c, name).pattern = 'yyyy-MM-dd';
        if (type !== 'date' && type !== 'timestamp') delete column(c, name).pattern;
      });
      assert.equal(change.verdict, 'unreadable', `${name} -> ${type}`);
      const retyped = change.changes.find((c) => c.change.change === 'retyped')!;
      assert.deepEqual(
        [retyped.change, retyped.verdict],
        [{ change: 'retyped', column: name, from: before.find((c) => c.name === name)!.type, to: type, fromParquet, toParquet }, 'unreadable'],
      );
      assert.match(retyped.effect, new RegExp(`every query reading ${name} there fails \\(HIVE_BAD_DATA\\)`));
    }
  });

  it('the worst change decides: a rename and a retype together are unreadable; the types are named as the Parquet footer has them', () => {
    const change = after((c) => {
      column(c, 'merchant_oid').name = 'order_ref';
      column(c, 'amount').type = 'decimal(18,4)';
    });
    assert.equal(change.verdict, 'unreadable');
    assert.deepEqual(change.changes.map((c) => c.verdict), ['stale', 'unreadable']);
    assert.equal(parquetTypeFor('timestamp'), 'INT64 TIMESTAMP_MILLIS');
    assert.equal(parquetTypeFor('varchar(3)'), 'varchar(3)', 'a type no definition allows is named as it is');
  });
});

describe('stale windows and the command that rebuilds them', () => {
  const current = columnsOf((c) => void (column(c, 'merchant_oid').name = 'order_ref'));
  const old = definitionRecord(base.columns);
  const now = definitionRecord(current);
  const added = definitionRecord(columnsOf((c) => void c.splice(c.findIndex((x) => x.name === 'order_description'), 1)).map((c) => (c.name === 'merchant_oid' ? { ...c, name: 'order_ref' } : c)));

  it('groups the windows by the definition their table file was written with; only stale and unreadable ones need a reparse', () => {
    const report = staleReport('transactions', current, [
      day('2026-11-22', old),
      day('2026-11-20', old),
      day('2026-11-23', now),
      day('2026-11-19', added),
      day('2026-11-18', 'unrecorded'),
      day('2026-11-24'),
    ]);
    assert.equal(report.withTable, 5);
    assert.deepEqual(report.groups.map((g) => [g.fingerprint, g.change.verdict, g.windows.map((w) => w.start.slice(0, 10))]), [
      [added.fingerprint, 'compatible', ['2026-11-19']],
      [old.fingerprint, 'stale', ['2026-11-20', '2026-11-22']],
    ]);
    assert.deepEqual(report.unrecorded.map((w) => w.start), ['2026-11-18T00:00:00']);
    assert.deepEqual(report.toReparse.map((w) => w.start), ['2026-11-20T00:00:00', '2026-11-22T00:00:00']);

    const lines = staleNotice(report, ['--lake ./my-lake']);
    assert.equal(lines[0], `Stale: 2 partitions of "transactions" were written under another definition than the current one (fingerprint ${now.fingerprint}):`);
    assert.equal(lines[1], `  2 windows (2026-11-20, 2026-11-22) under ${old.fingerprint}:`);
    assert.match(lines[2]!, /^ {4}- column merchant_oid was renamed order_ref: /);
    assert.equal(lines[3], '  Rebuild them from the raw files already stored (no gateway request): npm run reports -- reparse --report transactions --from 2026-11-20 --to 2026-11-23 --lake ./my-lake');
    assert.match(lines[4]!, /^Note: 1 partition of "transactions" \(2026-11-19\) was written under an earlier definition \(\w+\): column order_description was added: .*nothing to do\.$/);
    assert.match(lines[5]!, /^Note: 1 partition of "transactions" \(2026-11-18\) was loaded before manifests recorded the definition, .*--from 2026-11-18 --to 2026-11-19 --lake \.\/my-lake$/);
  });

  it('names the windows whose latest load failed, once per code, and what SchemaDrift means for a reparse', () => {
    const report = staleReport('transactions', current, [
      day('2026-11-20', old, 'SchemaDrift'),
      day('2026-11-21', old),
      day('2026-11-22', old, 'TooManyRejectedRows'),
      day('2026-11-23', old, 'SchemaDrift'),
    ]);
    assert.equal(
      staleNotice(report)[3],
      "    3 windows of them (2026-11-20, 2026-11-22, 2026-11-23) failed their latest load (SchemaDrift, TooManyRejectedRows): the table file there is the older load's; " +
        'a raw file whose header no longer matches the definition cannot be reparsed (re-fetch it with backfill)',
    );
    const one = staleNotice(staleReport('transactions', current, [day('2026-11-21', old), day('2026-11-22', old, 'TooManyRejectedRows')]));
    assert.equal(one[3], "    1 window of them (2026-11-22) failed its latest load (TooManyRejectedRows): the table file there is the older load's");
  });

  it('one stale window, and groups with no changes or a changed fingerprint only: singular words, "the same columns"', () => {
    const report: StaleReport = {
      reportId: 'transactions',
      fingerprint: 'cccccccccccc',
      withTable: 3,
      groups: [
        { fingerprint: 'aaaaaaaaaaaa', change: { verdict: 'stale', changes: [{ change: { change: 'removed', column: 'fee', type: 'bigint' }, verdict: 'stale', effect: 'column fee was removed' }] }, windows: [day('2026-11-20')] },
        { fingerprint: 'bbbbbbbbbbbb', change: { verdict: 'same', changes: [] }, windows: [day('2026-11-21'), day('2026-11-22')] },
      ],
      unrecorded: [day('2026-11-23')],
      toReparse: [day('2026-11-20')],
    };
    assert.deepEqual(staleNotice(report), [
      'Stale: 1 partition of "transactions" was written under another definition than the current one (fingerprint cccccccccccc):',
      '  1 window (2026-11-20) under aaaaaaaaaaaa:',
      '    - column fee was removed',
      '  Rebuild them from the raw files already stored (no gateway request): npm run reports -- reparse --report transactions --from 2026-11-20 --to 2026-11-21',
      'Note: 2 partitions of "transactions" (2026-11-21, 2026-11-22) were written under an earlier definition (bbbbbbbbbbbb): the same columns.',
      'Note: 1 partition of "transactions" (2026-11-23) was loaded before manifests recorded the definition, so whether they match the current one is not known. ' +
        'If the columns changed since, rebuild them: npm run reports -- reparse --report transactions --from 2026-11-23 --to 2026-11-24',
    ]);
    const fine = { ...report, groups: [report.groups[1]!], toReparse: [] };
    assert.deepEqual(staleStatus(fine, [day('2026-11-21', old)], [], 4, 4), {
      verdict: 'OK',
      detail: "4 windows checked: 0 with a table file written under this checkout's definition (cccccccccccc); 2 windows under an earlier definition (the same columns); 1 window loaded before manifests recorded the definition (not compared)",
    });
  });

  it('windows a retype made unreadable need a reparse like stale ones', () => {
    const unreadable = definitionRecord(columnsOf((c) => void (column(c, 'amount').type = 'decimal(18,4)')));
    const windows = [day('2026-11-21', unreadable), day('2026-11-20', unreadable), day('2026-11-22', now)];
    const report = staleReport('transactions', current, windows);
    assert.deepEqual([report.groups.map((g) => g.change.verdict), report.toReparse.map((w) => w.start)], [['unreadable'], ['2026-11-20T00:00:00', '2026-11-21T00:00:00']]);
    assert.match(staleNotice(report)[0]!, /^Stale: 2 partitions of "transactions" were written under another definition/);
    assert.equal(staleStatus(report, windows, [], 3, 3).verdict, 'TODO');
  });

  it('lists up to six windows by name, more as the first and the last', () => {
    const days = ['01', '02', '03', '04', '05', '06', '07'].map((d) => day(`2026-11-${d}`));
    assert.equal(windowList(days.slice(0, 6)), '2026-11-01, 2026-11-02, 2026-11-03, 2026-11-04, 2026-11-05, 2026-11-06');
    assert.equal(windowList(days), '2026-11-01 .. 2026-11-07');
    assert.equal(windowList(days.slice(0, 3), 2), '2026-11-01 .. 2026-11-03');
    assert.equal(windowList([{ start: '2026-11-01T06:00:00', end: '2026-11-01T12:00:00' }]), '2026-11-01T06:00');
  });

  it('status of a local lake: rebuild, never "deploy first", even when the newest load is another definition\'s', () => {
    const undeployed = [day('2026-11-20', old), day('2026-11-21', old)];
    const local = staleStatus(staleReport('transactions', current, undeployed), undeployed, ['--lake x'], 2, 2, { local: true });
    assert.match(local.detail, /\. To fix, rebuild them from their raw files: npm run reports -- reparse --report transactions --from 2026-11-20 --to 2026-11-22 --lake x$/);
  });

  it('says nothing when every table file is the current definition\'s', () => {
    assert.deepEqual(staleNotice(staleReport('transactions', current, [day('2026-11-20', now), day('2026-11-21')])), []);
  });

  it('hour windows: --from and --to keep the time; the end of the last window is exclusive', () => {
    const hours = [
      { start: '2026-11-20T18:00:00', end: '2026-11-21T00:00:00', table: old },
      { start: '2026-11-20T06:00:00', end: '2026-11-20T12:00:00', table: old },
    ];
    assert.equal(reparseCommand('hourly', hours), 'npm run reports -- reparse --report hourly --from 2026-11-20T06:00 --to 2026-11-21');
    assert.equal(commandTime('2026-11-20T06:30:15'), '2026-11-20T06:30:15');
    assert.equal(commandTime('2026-11-20T06:00:15'), '2026-11-20T06:00:15');
    assert.equal(commandTime('2026-11-20T00:00:30'), '2026-11-20T00:00:30');
  });

  it('status: TODO with the command for the environment; deploy first when the newest load is not this checkout\'s definition', () => {
    const windows = [day('2026-11-20', old), day('2026-11-21', old), day('2026-11-22', now)];
    const todo = staleStatus(staleReport('transactions', current, windows), windows, ['--environment integration'], 3, 3);
    assert.equal(todo.verdict, 'TODO');
    assert.match(todo.detail, /^2 windows \(2026-11-20, 2026-11-21\) written under another definition than this checkout's \(\w+\): column merchant_oid was renamed order_ref: .*\. To fix, rebuild them from their raw files: npm run reports -- reparse --report transactions --from 2026-11-20 --to 2026-11-22 --environment integration$/);

    const undeployed = [day('2026-11-20', old), day('2026-11-21', old)];
    const first = staleStatus(staleReport('transactions', current, undeployed), undeployed, ['--environment integration'], 2, 2);
    assert.match(first.detail, new RegExp(`To fix, the newest load used definition ${old.fingerprint}, not this checkout's: deploy this checkout first \\(npx cdk deploy\\), then rebuild them: `));

    const fine = [day('2026-11-20', now), day('2026-11-21', 'unrecorded')];
    assert.deepEqual(staleStatus(staleReport('transactions', current, fine), fine, [], 2, 450), {
      verdict: 'OK',
      detail: `the newest 2 of 450 windows checked: 1 with a table file written under this checkout's definition (${now.fingerprint}); 1 window loaded before manifests recorded the definition (not compared)`,
    });
  });
});

describe('a window as its manifest describes it', () => {
  const definition = definitionRecord(base.columns);
  const table = { bucket: 'curated', key: 'tables/transactions/connection=default/dt=2026-11-20/2026-11-20T00-00-00.parquet', bytes: 9000, sha256: 'ab' };
  const window = { start: '2026-11-20T00:00:00', end: '2026-11-21T00:00:00', timeZone: 'Europe/Moscow' };
  const of = (m: Partial<LoadManifest>) => recordedWindowOf({ window, ...m });

  it('loaded: its own table file and definition; before definitions were recorded: "unrecorded"', () => {
    assert.deepEqual(of({ outcome: 'loaded', table, definition }), { start: window.start, end: window.end, table: definition });
    assert.deepEqual(of({ outcome: 'loaded', table }), { start: window.start, end: window.end, table: 'unrecorded' });
  });

  it('failed: the earlier table file it left in place, its own when it wrote one, or none; and the failure\'s code', () => {
    const older = { ...definition, fingerprint: 'older0000000' };
    const failed = { outcome: 'failed' as const, definition, error: { code: 'SchemaDrift' as const, message: 'm', retryable: false } };
    assert.deepEqual(of({ ...failed, tableInPlace: { table, definition: older, loadRunId: 'r', finishedAt: 't' } }), {
      start: window.start,
      end: window.end,
      table: older,
      lastAttemptFailed: 'SchemaDrift',
    });
    assert.deepEqual(of({ ...failed, table }), { start: window.start, end: window.end, table: definition, lastAttemptFailed: 'SchemaDrift' });
    assert.deepEqual(of(failed), { start: window.start, end: window.end, lastAttemptFailed: 'SchemaDrift' });
  });

  it('a PDF has no table; a manifest without its window is not a window', () => {
    assert.deepEqual(of({ outcome: 'not-parsed', definition }), { start: window.start, end: window.end });
    assert.equal(recordedWindowOf({ outcome: 'loaded', table, definition }), undefined);
  });
});

describe('classifyChange on columns as a manifest records them', () => {
  const col = (name: string, type: string, more: Partial<RecordedColumn> = {}): RecordedColumn => ({ header: name.toUpperCase(), name, type, nullable: false, ...more });

  it('every kind of change at once: in the current columns\' order, removals last, each with the sentence a notice quotes', () => {
    const before = [
      col('id', 'bigint'),
      col('merchant', 'string', { header: 'Merchant' }),
      col('amount', 'decimal(18,3)'),
      col('paid', 'timestamp', { pattern: 'yyyy-MM-dd HH:mm:ss' }),
      col('day', 'date', { pattern: 'dd.MM.yyyy' }),
      col('note', 'string', { nullable: true }),
    ];
    const now = [
      col('fee', 'decimal(18,2)', { nullable: true }),
      col('id', 'string'),
      col('order_ref', 'string', { header: 'Merchant' }),
      col('amount', 'decimal(18,3)', { nullable: true }),
      col('paid', 'date', { pattern: 'yyyy-MM-dd' }),
      col('day', 'date', { pattern: 'yyyy-MM-dd' }),
      col('tax', 'bigint'),
    ];
    assert.deepEqual(classifyChange(before, now), {
      verdict: 'unreadable',
      changes: [
        {
          change: { change: 'added', column: 'fee', type: 'decimal(18,2)', nullable: true },
          verdict: 'compatible',
          effect: 'column fee was added: it reads NULL there (their raw files do not have it); nothing to do',
        },
        {
          change: { change: 'retyped', column: 'id', from: 'bigint', to: 'string', fromParquet: 'INT64', toParquet: 'BYTE_ARRAY UTF8' },
          verdict: 'unreadable',
          effect:
            'column id was retyped bigint -> string: their files hold INT64 where the table now says string (BYTE_ARRAY UTF8), ' +
            'which Athena does not read as another type, so every query reading id there fails (HIVE_BAD_DATA)',
        },
        {
          change: { change: 'renamed', from: 'merchant', to: 'order_ref', header: 'Merchant', fromType: 'string', toType: 'string' },
          verdict: 'stale',
          effect: 'column merchant was renamed order_ref: order_ref reads NULL there (Athena reads Parquet columns by name) and the values sit unseen under merchant',
        },
        {
          // A retype that also changes the pattern is the retype alone: the file cannot be read at all.
          change: { change: 'retyped', column: 'paid', from: 'timestamp', to: 'date', fromParquet: 'INT64 TIMESTAMP_MILLIS', toParquet: 'INT32 DATE' },
          verdict: 'unreadable',
          effect:
            'column paid was retyped timestamp -> date: their files hold INT64 TIMESTAMP_MILLIS where the table now says date (INT32 DATE), ' +
            'which Athena does not read as another type, so every query reading paid there fails (HIVE_BAD_DATA)',
        },
        {
          change: { change: 'pattern', column: 'day', from: 'dd.MM.yyyy', to: 'yyyy-MM-dd' },
          verdict: 'stale',
          effect: 'the pattern of day changed from "dd.MM.yyyy" to "yyyy-MM-dd": their values were read from the text with the old one',
        },
        {
          change: { change: 'added', column: 'tax', type: 'bigint', nullable: false },
          verdict: 'compatible',
          effect:
            'column tax was added: it reads NULL there although it is not nullable, since their raw files do not have it ' +
            '(a reparse cannot fill it; a backfill re-fetches them, if the gateway now sends it for those dates)',
        },
        {
          change: { change: 'removed', column: 'note', type: 'string' },
          verdict: 'compatible',
          effect: 'column note was removed: their files keep its values, which no query sees; nothing to do',
        },
      ],
    });
  });

  it('the worst verdict wins whatever the order: compatible then stale is stale, unreadable then stale is unreadable', () => {
    const before = [col('a', 'string'), col('b', 'string'), col('c', 'bigint')];
    assert.equal(classifyChange(before, [col('a', 'string'), col('b2', 'string', { header: 'B' }), col('c', 'bigint'), col('d', 'bigint')]).verdict, 'stale');
    assert.equal(classifyChange(before, [col('x', 'string'), col('b2', 'string', { header: 'B' }), col('c', 'bigint')]).verdict, 'stale');
    assert.equal(classifyChange(before, [col('a', 'bigint'), col('b2', 'string', { header: 'B' }), col('c', 'bigint')]).verdict, 'unreadable');
    assert.equal(classifyChange(before, [col('a', 'string'), col('b', 'string'), col('c', 'bigint'), col('d', 'bigint')]).verdict, 'compatible');
  });

  it('a header taken by one rename only: two gone columns of one header are renamed once each, a third new one is added', () => {
    const before = [col('a', 'string', { header: 'H' }), col('b', 'bigint', { header: 'H' }), col('keep', 'string')];
    const now = [col('keep', 'string'), col('c', 'string', { header: 'H' }), col('d', 'bigint', { header: 'H' }), col('e', 'string', { header: 'H' })];
    assert.deepEqual(classifyChange(before, now).changes.map((c) => c.change), [
      { change: 'renamed', from: 'a', to: 'c', header: 'H', fromType: 'string', toType: 'string' },
      { change: 'renamed', from: 'b', to: 'd', header: 'H', fromType: 'bigint', toType: 'bigint' },
      { change: 'added', column: 'e', type: 'string', nullable: false },
    ]);
  });

  it('a pattern recorded on one side only (a manifest written before the column had one) is a pattern change with that side left out', () => {
    const [added] = classifyChange([col('s', 'string')], [col('s', 'string', { pattern: 'x' })]).changes;
    assert.deepEqual(added, {
      change: { change: 'pattern', column: 's', to: 'x' },
      verdict: 'stale',
      effect: 'the pattern of s changed from "" to "x": their values were read from the text with the old one',
    });
    const [dropped] = classifyChange([col('s', 'string', { pattern: 'x' })], [col('s', 'string')]).changes;
    assert.deepEqual(dropped!.change, { change: 'pattern', column: 's', from: 'x' });
    assert.equal(dropped!.effect, 'the pattern of s changed from "x" to "": their values were read from the text with the old one');
    assert.deepEqual(classifyChange([col('s', 'string', { pattern: '' })], [col('s', 'string')]), { verdict: 'same', changes: [] });
  });

  it('names every kind\'s Parquet type as the footer has it, and a type no definition allows as it is', () => {
    assert.deepEqual(
      ['string', 'bigint', 'decimal(18,3)', 'decimal(9, 0)', 'timestamp', 'date', 'boolean'].map(parquetTypeFor),
      ['BYTE_ARRAY UTF8', 'INT64', 'INT64 DECIMAL(18,3)', 'INT64 DECIMAL(9,0)', 'INT64 TIMESTAMP_MILLIS', 'INT32 DATE', 'BOOLEAN'],
    );
    assert.deepEqual(['decimal(19,2)', 'decimal(2,3)', 'DATE', ''].map(parquetTypeFor), ['decimal(19,2)', 'decimal(2,3)', 'DATE', '']);
  });
});
