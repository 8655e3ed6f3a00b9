import { ConfigurationError } from '../errors.js';

/**
 * Every report's connection must be defined by every environment (each deploys every report), and by at least
 * one: a report naming a connection no environment file defines would load nowhere. A checkout with no
 * environment file checks nothing. Checked wherever the
 * catalog is loaded beside the environments (`cdk synth`, `npm start`, every command), every problem at once,
 * each naming the report's file and the connection, as the catalog's own problems do.
 */

/** A report as this check sees it. */
export interface ReportConnection {
  readonly id: string;
  /** As the user knows it: config/reports/<id>.json. */
  readonly file: string;
  readonly connection: string;
}

/** An environment file and the connections it defines. */
export interface DefinedConnections {
  /** As the user knows it: config/environments/<name>.json. */
  readonly file: string;
  readonly names: readonly string[];
}

export function connectionProblems(reports: readonly ReportConnection[], environments: readonly DefinedConnections[]): string[] {
  // A checkout with no environment yet deploys nowhere: locally every connection is the simulator's.
  if (environments.length === 0) return [];
  const problems: string[] = [];
  for (const r of reports) {
    const lacking = environments.filter((e) => !e.names.includes(r.connection));
    if (lacking.length === environments.length) {
      // The defined names beside each file: a misspelt connection is fixed by picking one of them.
      const defined = environments.map((e) => `${e.file} defines ${e.names.join(', ') || 'none'}`).join('; ');
      problems.push(
        `${r.file}: report "${r.id}" uses connection "${r.connection}", which no environment defines (${defined}). ` +
          `Add it under "connections" of each environment file (docs/deploy.md, "Connections"), or name a defined one.`,
      );
      continue;
    }
    for (const e of lacking) {
      problems.push(
        `${r.file}: report "${r.id}" uses connection "${r.connection}", which ${e.file} does not define (it has ${e.names.join(', ') || 'none'}). ` +
          'Every environment deploys every report: add the connection there too.',
      );
    }
  }
  return problems;
}

/** Throws one ConfigurationError listing every problem, or returns. */
export function refuseConnectionProblems(reports: readonly ReportConnection[], environments: readonly DefinedConnections[]): void {
  const problems = connectionProblems(reports, environments);
  if (!problems.length) return;
  const n = problems.length;
  throw new ConfigurationError(`${n} report connection problem${n === 1 ? '' : 's'} (every report's connection must be defined by every environment):\n${problems.join('\n')}`);
}
