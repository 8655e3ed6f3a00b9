import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { LoadManifest } from '../../functions/core/lake/load-manifest.js';
import { reportAreaPrefix } from '../../functions/core/lake/s3-keys.js';
import { commandTime, staleStatus } from '../../functions/core/lake/stale-windows.js';
import { showPath } from '../../functions/core/shown-path.js';
import { S3RVER_OBJECT_SUFFIX, s3rverFiles } from './s3rver-files.js';
import { lakeReparseFlags, lakeStaleReport } from './stale-notice.js';

/**
 * `reports status --lake [DIR]`: what the local lake holds, per report, from the manifests on disk (no AWS, no
 * DuckDB): the newest windows loaded, the data checks' findings of the loads of the last 7 days, the partitions
 * written under another definition (the same judgement and count as the banner of `npm start` and `npm run query`,
 * functions/core/lake/stale-windows.ts), and the windows whose rows were rejected, with the file that lists them.
 * The lines have the verdicts of `reports status --environment` (local/cli/status-items.ts).
 */

export interface LakeStatusItem {
  item: string;
  verdict: 'OK' | 'TODO';
  detail: string;
}

/** How far back the findings go: the deployed status's FINDINGS_DAYS, counted from each load's end here. */
export const LAKE_FINDINGS_DAYS = 7;
/** Newest windows named per report. */
const NEWEST = 3;

/** Every readable manifest of a report in the lake, oldest window first (a half-written one is skipped, as the banner does). */
async function lakeManifests(lakeDir: string, curatedBucket: string, reportId: string): Promise<Array<Partial<LoadManifest>>> {
  const dir = join(resolve(lakeDir), curatedBucket, reportAreaPrefix('manifests', reportId));
  const files = (await readdir(dir, { recursive: true }).catch(() => [] as string[])).filter((f) => f.endsWith(`.json${S3RVER_OBJECT_SUFFIX}`));
  const manifests: Array<Partial<LoadManifest>> = [];
  for (const file of files.sort()) {
    try {
      manifests.push(JSON.parse(await readFile(join(dir, file), 'utf8')) as Partial<LoadManifest>);
    } catch {
      continue;
    }
  }
  return manifests.sort((a, b) => ((a.window?.start ?? '') < (b.window?.start ?? '') ? -1 : 1));
}

const rows = (n: number) => `${n.toLocaleString('en-US')} row${n === 1 ? '' : 's'}`;

function newestItem(report: ReportDefinition, manifests: ReadonlyArray<Partial<LoadManifest>>): LakeStatusItem {
  const item = `newest loads ${report.id}`;
  const loaded = manifests.filter((m) => m.outcome === 'loaded' || m.outcome === 'not-parsed');
  const failed = manifests.filter((m) => m.outcome === 'failed');
  const failedNote = failed.length
    ? `; ${failed.length} window(s) whose latest attempt failed (${failed.slice(-NEWEST).map((m) => `${commandTime(m.window!.start)}: ${m.error?.code ?? 'failed'}`).join(', ')}): run them again with npm start -- --report ${report.id} --from …`
    : '';
  if (!loaded.length) {
    return { item, verdict: 'TODO', detail: `no window loaded yet${failedNote || `: load some with npm start -- --report ${report.id}`}` };
  }
  const shown = loaded
    .slice(-NEWEST)
    .reverse()
    .map((m) => `${commandTime(m.window!.start)} (${m.outcome === 'loaded' ? rows(m.rows?.written ?? 0) : 'PDF, kept raw'})`);
  return { item, verdict: failed.length ? 'TODO' : 'OK', detail: `${loaded.length} window(s) loaded, the newest ${shown.join(', ')}${failedNote}` };
}

function findingsItem(report: ReportDefinition, manifests: ReadonlyArray<Partial<LoadManifest>>, now: Date): LakeStatusItem {
  const item = `data checks ${report.id}`;
  const since = now.getTime() - LAKE_FINDINGS_DAYS * 86_400_000;
  const recent = manifests.filter((m) => m.outcome === 'loaded' && Date.parse(m.finishedAt ?? '') >= since);
  const flagged = recent.filter((m) => (m.checks ?? []).some((c) => c.outcome === 'anomaly'));
  const scope = `${recent.length} window(s) loaded in the last ${LAKE_FINDINGS_DAYS} days`;
  if (!flagged.length) return { item, verdict: 'OK', detail: recent.length ? `no finding in ${scope}` : `nothing loaded in the last ${LAKE_FINDINGS_DAYS} days` };
  const named = flagged.map((m) => `${commandTime(m.window!.start)}: ${(m.checks ?? []).filter((c) => c.outcome === 'anomaly').map((c) => c.message).join('; ')}`);
  return { item, verdict: 'TODO', detail: `${flagged.length} FLAGGED of ${scope} (docs/operations.md, "Data checks"): ${named.join(' | ')}` };
}

/** The banner's judgement and count (stale-notice.ts lakeStaleReport): manifests and table files agreed, raw files known. */
async function staleItem(report: ReportDefinition, lakeDir: string): Promise<LakeStatusItem> {
  const { stale, windows, raw } = await lakeStaleReport(lakeDir, report);
  const { verdict, detail } = staleStatus(stale, windows, lakeReparseFlags(lakeDir), windows.length, windows.length, { local: true, raw });
  return { item: `stale ${report.id}`, verdict, detail };
}

async function rejectsItem(report: ReportDefinition, manifests: ReadonlyArray<Partial<LoadManifest>>, lakeDir: string): Promise<LakeStatusItem> {
  const item = `rejects ${report.id}`;
  // A failed load above rejects.maxShare keeps its rejected rows too: those are the first to look at.
  const withRejects = manifests.filter((m) => (m.outcome === 'loaded' || m.outcome === 'failed') && (m.rows?.rejected ?? 0) > 0 && m.rejected);
  if (!withRejects.length) return { item, verdict: 'OK', detail: 'no rejected row in the windows loaded' };
  const total = withRejects.reduce((n, m) => n + (m.rows?.rejected ?? 0), 0);
  const listed = await Promise.all(
    withRejects.slice(-NEWEST).map(async (m) => {
      const file = s3rverFiles(lakeDir, m.rejected!.bucket, m.rejected!.key).object;
      const there = await stat(file).then(() => true, () => false);
      const failed = m.outcome === 'failed' ? ` (the load failed: ${m.error?.code ?? 'failed'})` : '';
      return `${commandTime(m.window!.start)}: ${m.rows!.rejected}${failed} in ${there ? showPath(file) : `${m.rejected!.key} (no longer on disk)`}`;
    }),
  );
  const more = withRejects.length > NEWEST ? ` (the newest ${NEWEST} shown)` : '';
  return {
    item,
    verdict: 'TODO',
    detail: `${rows(total)} rejected in ${withRejects.length} window(s)${more}: ${listed.join(', ')}; each line says why: fix the column's type, pattern or nullability and run again`,
  };
}

/**
 * Which windows each feed lacks: a window some connection of the report loaded and this one did not (its load
 * failed, or it was never fetched: a refused login writes no manifest). One line per report, each feed that lacks
 * windows named with them and the command that loads them.
 */
function coverageItem(report: ReportDefinition, manifests: ReadonlyArray<Partial<LoadManifest>>): LakeStatusItem {
  const item = `coverage ${report.id}`;
  const isLoaded = (m: Partial<LoadManifest>) => m.outcome === 'loaded' || m.outcome === 'not-parsed';
  const starts = [...new Set(manifests.flatMap((m) => (m.window?.start ? [m.window.start] : [])))].sort();
  const missing = report.connections.flatMap((connection) => {
    const loaded = new Set(manifests.filter((m) => (m.connection ?? report.connections[0]) === connection && isLoaded(m)).map((m) => m.window?.start));
    const lacking = starts.filter((s) => !loaded.has(s));
    return lacking.length ? [{ connection, lacking }] : [];
  });
  if (!missing.length) return { item, verdict: 'OK', detail: `every connection (${report.connections.join(', ')}) loaded each of the ${starts.length} window(s) any of them loaded` };
  const lines = missing.map(({ connection, lacking }) => {
    const shown = lacking.slice(0, NEWEST * 2).map(commandTime).join(', ') + (lacking.length > NEWEST * 2 ? ` and ${lacking.length - NEWEST * 2} more` : '');
    return `${connection}: ${lacking.length} window(s) not loaded (${shown}): npm start -- --report ${report.id} --connection ${connection} --from ${commandTime(lacking[0]!)} …`;
  });
  return { item, verdict: 'TODO', detail: lines.join(' | ') };
}

/** The items of every report, in catalog order. */
export async function lakeStatus(options: { lakeDir: string; curatedBucket: string; reports: readonly ReportDefinition[]; now?: Date }): Promise<LakeStatusItem[]> {
  const items: LakeStatusItem[] = [];
  for (const report of options.reports) {
    const manifests = await lakeManifests(options.lakeDir, options.curatedBucket, report.id);
    items.push(
      newestItem(report, manifests),
      // Over one connection a missing window is the newest-loads line's; over several, which provider lacks it.
      ...(report.connections.length > 1 ? [coverageItem(report, manifests)] : []),
      findingsItem(report, manifests, options.now ?? new Date()),
      await staleItem(report, options.lakeDir),
      await rejectsItem(report, manifests, options.lakeDir),
    );
  }
  return items;
}

/** The CLI entry: `.lake` unless a directory is given; exit code 1 unless every line is OK, as with --environment. */
export async function runLakeStatusCommand(opts: { lake: string | true }, print: (line: string) => void = (l) => console.log(l)): Promise<number> {
  const lakeDir = opts.lake === true ? '.lake' : opts.lake;
  const [{ loadCheckedCatalog }, { ConfigurationError }, { bucketNames, LOCAL_ENVIRONMENT }] = await Promise.all([
    import('../args/catalog.js'),
    import('../../functions/core/errors.js'),
    import('../../functions/core/naming.js'),
  ]);
  const curatedBucket = bucketNames(LOCAL_ENVIRONMENT).curated;
  if (!(await stat(join(resolve(lakeDir), curatedBucket)).then((s) => s.isDirectory(), () => false))) {
    throw new ConfigurationError(`No local lake at ${showPath(lakeDir)}: load some windows first (npm start), or name the lake with --lake DIR.`);
  }
  const items = await lakeStatus({ lakeDir, curatedBucket, reports: loadCheckedCatalog().reports });
  const width = Math.max(...items.map((i) => i.item.length));
  print(`Local lake ${showPath(lakeDir)}:`);
  for (const i of items) print(`${i.verdict.padEnd(7)} ${i.item.padEnd(width)}  ${i.detail}`);
  return items.every((i) => i.verdict === 'OK') ? 0 : 1;
}
