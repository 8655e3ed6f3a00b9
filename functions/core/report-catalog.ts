import { ConfigurationError } from './errors.js';
import { parseReportDefinition, type ReportDefinition } from './report-definition.js';

/** The validated set of report definitions, looked up by id. */
export class ReportCatalog {
  private readonly byId: Map<string, ReportDefinition>;

  constructor(readonly reports: ReportDefinition[]) {
    this.byId = new Map();
    for (const r of reports) {
      if (this.byId.has(r.id)) throw new ConfigurationError(`Two report definitions share the id "${r.id}".`);
      this.byId.set(r.id, r);
    }
  }

  static fromSources(sources: Array<{ file: string; raw: unknown }>): ReportCatalog {
    return new ReportCatalog(sources.map((s) => parseReportDefinition(s.raw, s.file)));
  }

  get(id: string): ReportDefinition {
    const r = this.byId.get(id);
    if (!r) {
      throw new ConfigurationError(`There is no report "${id}"; known reports: ${[...this.byId.keys()].join(', ') || 'none'}.`);
    }
    return r;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }
}
