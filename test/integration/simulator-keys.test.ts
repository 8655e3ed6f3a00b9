import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { readReportSources } from '../../functions/core/definitions/catalog-files.js';
import { ReportCatalog } from '../../functions/core/definitions/catalog.js';
import { parseReportDefinition, type ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { parseWindowSize, windowAt, type ReportWindow } from '../../functions/core/time/window.js';
import { checkMark } from '../../local/pipeline/check-summary.js';
import { startLocalPipeline } from '../../local/pipeline/pipeline.js';
import { definitionRows } from '../../local/simulator/definition-rows.js';
import { feedKey } from '../helpers/feed-key.js';

/**
 * The simulator's made-up data never trips the data checks of a definition a newcomer writes or changes as the
 * docs walk through: declared keys stay unique, and a currency column holds currency codes under any name.
 * The ISO 4217 codes below are the standard's, not the simulator's list.
 */

const dirOf = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const sources = [...readReportSources(dirOf('../../config/reports/')), ...readReportSources(dirOf('../fixtures/report-shapes/'))];
const definitions = ReportCatalog.fromSources(sources).reports;
const shipped = ReportCatalog.fromSources(readReportSources(dirOf('../../config/reports/'))).get('transactions');

/** The shipped report after "Changing a report": merchant_oid renamed order_ref, amount retyped decimal(18,4). */
const changed: ReportDefinition = parseReportDefinition(
  {
    ...(JSON.parse(JSON.stringify(sources.flatMap((s) => ('raw' in s ? [s.raw as { id: string }] : [])).find((r) => r.id === 'transactions'))) as object),
    id: 'transactions_changed',
    columns: shipped.columns.map((c) => ({
      header: c.header,
      name: c.name === 'merchant_oid' ? 'order_ref' : c.name,
      type: c.name === 'amount' ? 'decimal(18,4)' : c.type,
      ...(c.pattern ? { pattern: c.pattern } : {}),
      ...(c.nullable ? { nullable: true } : {}),
    })),
  },
  'transactions_changed.json',
);

/** The definition with keys declared: its own, else its first text or bigint column that is never empty. */
function withKeys(d: ReportDefinition): ReportDefinition {
  if (d.keys) return d;
  const key = d.columns.find((c) => !c.nullable && (c.kind === 'string' || c.kind === 'bigint'));
  return key ? { ...d, keys: [key.name] } : d;
}

const windowsOf = (d: ReportDefinition): ReportWindow[] =>
  [18, 19, 20].map((day) => windowAt({ year: 2026, month: 11, day, hour: 0, minute: 0, second: 0 }, parseWindowSize(d.window)));

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("the simulator's rows for any definition", () => {
  it('keep every declared key unique in each window, for the shipped and fixture reports and the changed shipped one', () => {
    const keyed = [...definitions, changed].map(withKeys).filter((d) => d.keys);
    assert.ok(keyed.length >= 4, keyed.map((d) => d.id).join(', '));
    for (const d of keyed) {
      const at = d.keys!.map((k) => d.columns.findIndex((c) => c.name === k));
      for (const window of windowsOf(d)) {
        const keys = [...definitionRows(d, 'merchant-login', window, 500)].map((row) => JSON.stringify(at.map((i) => row[i])));
        assert.ok(keys.length > 0);
        assert.equal(new Set(keys).size, keys.length, `${d.id} ${JSON.stringify(window.start)}: ${keys.length - new Set(keys).size} repeated key(s)`);
      }
    }
  });

  it('fill a currency column with ISO 4217 codes after a rename and a retype', () => {
    const currency = changed.columns.findIndex((c) => c.name === 'currency');
    const codes = new Set([...definitionRows(changed, 'merchant-login', windowsOf(changed)[0]!, 250)].map((r) => r[currency]));
    assert.ok(codes.size > 1);
    for (const code of codes) assert.ok(['RUB', 'USD', 'EUR', 'KZT', 'GBP', 'AMD'].includes(code!), `not a currency code: ${JSON.stringify(code)}`);
  });

  it('a run of the changed shipped report loads every window with its key declared and nothing FLAGGED', async () => {
    const lakeDir = await mkdtemp(join(tmpdir(), 'simulator-keys-'));
    dirs.push(lakeDir);
    const pipeline = await startLocalPipeline({ lakeDir, catalog: new ReportCatalog([changed]), simulator: { rowsPerDay: 300 } });
    try {
      for (const window of windowsOf(changed)) {
        const outcome = await pipeline.runWindow(feedKey(changed.id), window);
        assert.equal(outcome.status, 'loaded', JSON.stringify(outcome.error));
        assert.notEqual(checkMark(outcome.manifest?.checks), 'FLAGGED', JSON.stringify(outcome.manifest?.checks));
        const duplicates = outcome.manifest?.checks?.find((c) => c.check.startsWith('duplicate'));
        assert.ok(duplicates, 'the key check ran');
        assert.equal(duplicates.observed, 0);
      }
    } finally {
      await pipeline.close();
    }
  });
});
