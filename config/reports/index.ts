import { ReportCatalog } from '../../functions/core/report-catalog.js';
import transactions from './transactions.json' with { type: 'json' };

/**
 * The shipped report definitions. To add a report, put its JSON beside this file and list it here:
 * the catalog is bundled into the Lambda functions and read by the CDK stack, so both see the same list.
 */
export const reportSources: Array<{ file: string; raw: unknown }> = [
  { file: 'config/reports/transactions.json', raw: transactions },
];

export const loadCatalog = (): ReportCatalog => ReportCatalog.fromSources(reportSources);
