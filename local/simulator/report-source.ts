import { readFileSync } from 'node:fs';
import { ConfigurationError } from '../../functions/core/errors.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import type { LocalDateTime } from '../../functions/core/time/window.js';
import { definitionRows, driftDefinitionRow, driftedDefinitionHeader } from './definition-rows.js';
import type { PdfOptions } from './report-pdf.js';
import type { ReportRequest } from './report-request.js';
import { DRIFTED_HEADER, REPORT_HEADER, driftRow, hasSampleColumns, transactionRows } from './transactions.js';
import { rowsPerDayFor, type VolumeShape } from './volume.js';

/**
 * What the simulator's report answers are made of (server.ts): a sample file the provider sent, served as
 * it is, or rows generated for the report's columns, login and window.
 */

export interface SampleFile {
  bytes: Buffer;
  pdf: boolean;
}

/** A generated report's columns and rows (drifted by schemaDrift), and the PDF's title lines and dates. */
export interface ReportContent {
  header: readonly string[];
  /** A fresh generator at each call. */
  rows: () => Iterable<string[]>;
  pdfOptions: PdfOptions;
}

/** The `samples` files, read once at start: a missing file or an unknown report fails the start, not a request. */
export function readSamples(files: Readonly<Record<string, string>>, reports: readonly ReportDefinition[]): Map<string, SampleFile> {
  const out = new Map<string, SampleFile>();
  for (const [id, file] of Object.entries(files)) {
    if (!reports.some((r) => r.id === id)) {
      throw new ConfigurationError(`--sample ${id}=${file}: there is no report "${id}" in the catalog (${reports.map((r) => r.id).join(', ') || 'none'}).`);
    }
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      throw new ConfigurationError(`--sample ${id}=${file}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? String(e)}).`);
    }
    out.set(id, { bytes, pdf: bytes.subarray(0, 5).toString('latin1') === '%PDF-' });
  }
  return out;
}

export function generatedContent(report: ReportRequest, login: string, drift: boolean, rowsPerDay: number, volume: VolumeShape | undefined): ReportContent {
  // A catalog report of another shape than the spec's sample gets rows from its own columns.
  const generated = report.definition && !hasSampleColumns(report.definition.columns) ? report.definition : undefined;
  const header = generated
    ? drift ? driftedDefinitionHeader(generated) : generated.columns.map((c) => c.header)
    : drift ? DRIFTED_HEADER : REPORT_HEADER;
  const perDay = rowsPerDayFor(report.window, rowsPerDay, volume);
  const rows = () => {
    if (generated) {
      const plain = definitionRows(generated, login, report.window, perDay);
      return drift ? mapRows(plain, driftDefinitionRow) : plain;
    }
    const plain = transactionRows(login, report.window, perDay);
    return drift ? mapRows(plain, driftRow) : plain;
  };
  const pdfOptions = {
    title: report.reportName,
    subtitle: `Period ${report.dateFrom} to ${report.dateTo} (end excluded), login ${login}`,
    // Fixed document dates (hence the file ID): the window start, read as UTC.
    date: asUtcDate(report.window.start),
  };
  return { header, rows, pdfOptions };
}

const asUtcDate = (t: LocalDateTime) => new Date(Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second));

function* mapRows(rows: Iterable<string[]>, f: (row: string[]) => string[]): Generator<string[]> {
  for (const row of rows) yield f(row);
}
