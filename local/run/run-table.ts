import { showCount as count, showKib as kib } from '../args/display.js';
import type { LocalConnection } from '../connections/local-gateways.js';
import { checkMark, emptyWindowNote, findingsOf } from '../pipeline/check-summary.js';
import type { WindowOutcome } from '../pipeline/pipeline.js';
import { windowLabel, type RunItem } from './run-plan.js';

/**
 * The summary table of a local run: a row per report and window, grouped by connection under a heading that names
 * its gateway, simulator or not, and who signs. Windows end in any order when several run at once; rows are shown
 * in the table's order as soon as every row before them is there, so a one-report run reads as it always did.
 * The report column is there only when the run has more than one report.
 */

export class RunTable {
  private readonly results: Array<{ outcome: WindowOutcome; stopped: number } | 'not-tried' | undefined>;
  private next = 0;
  private shownConnection: string | undefined;
  private readonly reportWidth: number;
  private readonly windowWidth: number;

  constructor(
    private readonly print: (line: string) => void,
    private readonly items: readonly RunItem[],
    private readonly connections: ReadonlyMap<string, LocalConnection>,
  ) {
    this.results = items.map(() => undefined);
    const reports = new Set(items.map((i) => i.report.id));
    this.reportWidth = reports.size > 1 ? Math.max(6, ...[...reports].map((id) => id.length)) : 0;
    this.windowWidth = Math.max(6, ...items.map((i) => windowLabel(i.report, i.window).length));
  }

  /** The column names, under each connection's heading. */
  private printHeader(): void {
    const report = this.reportWidth ? `${'report'.padEnd(this.reportWidth)}  ` : '';
    this.print(`  ${report}${'window'.padEnd(this.windowWidth)}  format  status       rows  rejected      raw bytes       parquet      ms  checks`);
  }

  /** A window's outcome, and the items its failure stopped; prints every row now in order. */
  add(index: number, outcome: WindowOutcome, stopped: readonly number[]): void {
    this.results[index] = { outcome, stopped: stopped.length };
    for (const j of stopped) this.results[j] = 'not-tried';
    this.flush();
  }

  private flush(): void {
    for (let r = this.results[this.next]; r !== undefined; r = this.results[++this.next]) {
      if (r === 'not-tried') continue;
      const item = this.items[this.next]!;
      if (item.feed.connection !== this.shownConnection) {
        this.shownConnection = item.feed.connection;
        this.print(connectionHeading(this.connections.get(item.feed.connection)!));
        this.printHeader();
      }
      this.printRow(item, r.outcome);
      if (r.stopped) this.print(`      the ${r.stopped} later window(s) were not tried: every one would fail the same way (${stopReason(r.outcome)})`);
    }
  }

  private printRow(item: RunItem, o: WindowOutcome): void {
    const format = o.fetched ? o.fetched.kind.toUpperCase() : '—';
    const report = this.reportWidth ? `${item.report.id.padEnd(this.reportWidth)}  ` : '';
    this.print(
      `  ${report}${windowLabel(item.report, item.window).padEnd(this.windowWidth)}  ${format.padEnd(6)}  ${o.status.padEnd(10)}  ${count(o.rowsWritten).padStart(5)}` +
        `  ${count(o.rowsRejected).padStart(8)}  ${kib(o.bytes).padStart(13)}  ${kib(o.parquetBytes).padStart(12)}  ${String(o.durationMs).padStart(6)}  ${checkMark(o.manifest?.checks)}`,
    );
    if (o.fetched?.secretReread) {
      this.print('      the gateway refused the secret read earlier; re-read after the refusal, it had changed, and this window was fetched with the new value');
    }
    if (o.error) this.print(`      ${o.error.stage} failed: ${o.error.code}: ${o.error.message}`);
    for (const finding of findingsOf(o.manifest?.checks)) this.print(`      ${finding}`);
    const empty = o.status === 'loaded' && o.fetched?.kind === 'csv' ? emptyWindowNote(item.report, item.window, o.rowsWritten + o.rowsRejected, o.manifest?.checks) : undefined;
    if (empty) this.print(`      ${empty}`);
  }
}

/** Where a connection's requests go, as whom, and how many at once. */
export function connectionHeading(c: LocalConnection): string {
  return (
    `Connection "${c.name}": ${c.endpointUrl}${c.simulator ? ' (embedded simulator)' : ''}, login "${c.login}" signing with ${c.signatureMethod}, ` +
    `at most ${c.maxConcurrentRequests} request(s) at a time.`
  );
}

function stopReason(o: WindowOutcome): string {
  return o.error?.code === 'ConfigurationError' ? 'the same report' : `the same connection: its gateway and login`;
}
