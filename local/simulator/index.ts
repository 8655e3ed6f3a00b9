/** The gateway simulator's public surface: the server, its pure report pieces, and the standalone runner. */
export {
  startSimulator,
  NOT_AUTHORISED_MESSAGE,
  type Simulator,
  type SimulatorOptions,
  type LoggedRequest,
  type RequestOutcome,
} from './server.js';
export type { SimulatorAccount, RefusalReason } from './auth.js';
export {
  DEFAULT_HMAC_LOGIN,
  DEFAULT_HMAC_CONTROL_KEY,
  DEFAULT_RSA_LOGIN,
  TEST_ACCOUNTS,
  testSecretOf,
  makeRsaTestKey,
  type TestCredentials,
  type TestAccountFiles,
} from './test-accounts.js';
export { FAULT_MODES, HTML_ERROR_PAGE, type FaultMode, type FaultOptions } from './faults.js';
export {
  REPORT_HEADER,
  DRIFTED_HEADER,
  HARD_CASES,
  HARD_CASE_COUNT,
  generateTransactions,
  transactionRows,
  rowCount,
  driftRow,
  hasSampleColumns,
  SAMPLE_COLUMNS,
} from './transactions.js';
export { definitionRows, driftedDefinitionHeader, driftDefinitionRow } from './definition-rows.js';
export { writeReportCsv, reportCsvChunks, isSupportedEncoding, delimiterProblem, type CsvOptions } from './report-csv.js';
export { writeReportPdf, reportPdfStream, pdfText, type PdfOptions } from './report-pdf.js';
export { parseReportRequest, SIMULATED_REPORT_IDENTIFIER, MAX_WINDOW_DAYS, PERIOD_TO_READINGS, DEFAULT_PERIOD_TO, type PeriodToReading, type ReportRequest } from './report-request.js';
export { runStandaloneSimulator, parseStandaloneArgs, transportFrom, type StandaloneOptions, type StandaloneReady } from './standalone.js';
export type { TransportOptions } from './transport.js';
export { rowsPerDayFor, parseWeekdayVolume, parseDropDates, volumeShapeFrom, DEFAULT_DROP_SHARE, type VolumeShape } from './volume.js';
