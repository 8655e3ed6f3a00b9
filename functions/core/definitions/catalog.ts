import { ConfigurationError } from '../errors.js';
import { parseReportDefinition, type ReportDefinition } from './report-definition.js';
import { feedOf, feedsOf, type Feed } from '../connections/feed.js';

/**
 * One definition file: its path (as the user knows it, e.g. config/reports/payouts.json) and its parsed
 * JSON, or why it is not JSON (definition-json.ts), reported with the other files' problems.
 */
export type ReportSource = { readonly file: string; readonly raw: unknown } | { readonly file: string; readonly problem: string };

/** The validated set of report definitions, looked up by id. */
export class ReportCatalog {
  private readonly byId: Map<string, ReportDefinition>;

  /** Each report's file as the user knows it (config/reports/<name>.json), for errors that point at it. */
  private readonly files: Map<string, string>;

  constructor(
    readonly reports: ReportDefinition[],
    files: ReadonlyMap<string, string> = new Map(),
  ) {
    this.files = new Map(files);
    this.byId = new Map();
    for (const r of reports) {
      if (this.byId.has(r.id)) throw new ConfigurationError(`Two report definitions share the id "${r.id}".`);
      this.byId.set(r.id, r);
    }
  }

  /**
   * Every source validated, and every problem of every file reported at once (a broken file names itself,
   * whatever report the command was asked for). Ids must be unique: each names a Glue table and the S3
   * prefixes, so two files with one id would write into each other's table.
   */
  static fromSources(sources: readonly ReportSource[]): ReportCatalog {
    const problems: string[] = [];
    const reports: ReportDefinition[] = [];
    const fileOf = new Map<string, string>();
    for (const s of sources) {
      try {
        if ('problem' in s) {
          problems.push(s.problem);
          continue;
        }
        const r = parseReportDefinition(s.raw, s.file);
        const other = fileOf.get(r.id);
        if (other) {
          problems.push(
            `${s.file}: report "${r.id}" has the id of ${other}: ids name the Glue table and the S3 prefixes, so each report needs its own (rename one)`,
          );
          continue;
        }
        fileOf.set(r.id, s.file);
        reports.push(r);
      } catch (e) {
        if (!(e instanceof ConfigurationError)) throw e;
        problems.push(e.message);
      }
    }
    if (problems.length) {
      const n = problems.length;
      throw new ConfigurationError(`${n} report definition problem${n === 1 ? '' : 's'} (every config/reports/*.json must load):\n${problems.join('\n')}`);
    }
    return new ReportCatalog(reports, fileOf);
  }

  get(id: string): ReportDefinition {
    const r = this.byId.get(id);
    if (!r) {
      throw new ConfigurationError(
        `There is no report "${id}"; known reports: ${[...this.byId.keys()].join(', ') || 'none'}. ` +
          `A report is a file config/reports/${id}.json (see docs/add-a-report.md).`,
      );
    }
    return r;
  }

  /** The file a report came from; a catalog built from definitions alone says where the file would be. */
  fileOf(id: string): string {
    return this.files.get(id) ?? `config/reports/${id}.json`;
  }

  /** The reports over one connection, in catalog order. */
  reportsOver(connection: string): ReportDefinition[] {
    return this.reports.filter((r) => r.connections.includes(connection));
  }

  /** The connections the reports use, in order of first use. */
  connections(): string[] {
    return [...new Set(this.reports.flatMap((r) => r.connections))];
  }

  /** Every feed (report, connection): each report's connections in its definition's order, reports in catalog order. */
  feeds(): Feed[] {
    return this.reports.flatMap(feedsOf);
  }

  /**
   * One feed of a report: `connection` when given (it must be one of the report's), else the report's only one.
   * A report over several connections and none named is refused, naming them.
   */
  feed(reportId: string, connection?: string): Feed {
    const report = this.get(reportId);
    if (connection === undefined) {
      if (report.connections.length === 1) return feedOf(report, report.connections[0]!);
      throw new ConfigurationError(`Report "${reportId}" is fetched over ${report.connections.join(', ')}: say which connection.`);
    }
    if (!report.connections.includes(connection)) {
      throw new ConfigurationError(
        `Report "${reportId}" is not fetched over connection "${connection}": its connections are ${report.connections.join(', ')} (${this.fileOf(reportId)}).`,
      );
    }
    return feedOf(report, connection);
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /**
   * The report a command works on: `id` when given, else the catalog's only report. With several and none
   * named, the user says which (a default of one particular id would break as soon as that file is removed).
   */
  chosen(id: string | undefined, alternatives = '--report ID'): ReportDefinition {
    if (id !== undefined) return this.get(id);
    if (this.reports.length === 1) return this.reports[0]!;
    throw new ConfigurationError(`Say which report: ${alternatives} (the catalog has ${this.ids().join(', ') || 'no reports'}).`);
  }
}
