import type { Readable } from 'node:stream';

/**
 * The report as a PDF: a title, then the rows as a table on landscape A4 pages, the header row repeated on
 * every page, a page number at the foot.
 *
 * Deterministic: CreationDate and ModDate are fixed to the `date` passed in (the server passes the window
 * start) and PDFKit derives the file ID from the info dictionary, so the same request gives the same bytes.
 *
 * Text: the standard PDF fonts (Helvetica) only cover WinAnsi (Latin-1 plus a few signs such as €), not
 * Cyrillic. Rather than ship a font package for a simulator, the PDF alone transliterates Cyrillic to Latin
 * (ООО «Ромашка» → OOO «Romashka»), writes № as "No.", turns CR/LF/tab into spaces and anything else outside
 * WinAnsi into "?". Cells wider than their column are cut with "...". The CSV is never transliterated.
 *
 * PDFKit does not honour stream back-pressure, so a PDF is built in memory as it is read; PDFs are the
 * small, human-facing format, so that is acceptable.
 */

export interface PdfOptions {
  title: string;
  /** Second title line, e.g. the period and the login. */
  subtitle: string;
  /** Fixed CreationDate/ModDate (and so the file ID). */
  date: Date;
}

const CYRILLIC: Record<string, string> = {
  а: 'a', б: 'b', в: 'v', г: 'g', д: 'd', е: 'e', ё: 'yo', ж: 'zh', з: 'z', и: 'i', й: 'y', к: 'k', л: 'l',
  м: 'm', н: 'n', о: 'o', п: 'p', р: 'r', с: 's', т: 't', у: 'u', ф: 'f', х: 'kh', ц: 'ts', ч: 'ch', ш: 'sh',
  щ: 'shch', ъ: '', ы: 'y', ь: '', э: 'e', ю: 'yu', я: 'ya', і: 'i', ї: 'yi', є: 'ye', ґ: 'g', ў: 'u',
};

/** Characters above U+00FF that WinAnsi (and so Helvetica in PDFKit) can show. */
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** What the PDF shows for a value: see the comment at the top. */
export function pdfText(value: string): string {
  let out = '';
  for (const ch of value) {
    const lower = ch.toLowerCase();
    const latin = CYRILLIC[lower];
    if (latin !== undefined) {
      out += ch === lower ? latin : latin.charAt(0).toUpperCase() + latin.slice(1);
    } else if (ch === '№') out += 'No.';
    else if (ch === '\r' || ch === '\n' || ch === '\t') out += ' ';
    else {
      const code = ch.codePointAt(0)!;
      out += (code >= 0x20 && code < 0x7f) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(ch) ? ch : '?';
    }
  }
  return out;
}

const PAGE_MARGIN = 28;
const FONT_SIZE = 7;
const ROW_HEIGHT = 11;
const CELL_PADDING = 2;

/** Column widths in points, in the order of the sample report's columns; other headers share the rest. */
const PREFERRED_WIDTHS: Record<string, number> = {
  Merchant_Name: 115,
  Transaction_id: 95,
  Merchant_OID: 72,
  Merchant_Order_ID: 72,
  Created_date: 78,
  Amount: 62,
  Currency: 38,
  Transaction_type: 62,
  Transaction_status: 55,
  Order_description: 190,
  Date_of_report: 62,
};

const RIGHT_ALIGNED = new Set(['Transaction_id', 'Amount']);

function columnWidths(header: readonly string[], total: number): number[] {
  const fixed = header.map((h) => PREFERRED_WIDTHS[h] ?? 0);
  const used = fixed.reduce((a, b) => a + b, 0);
  const unknown = fixed.filter((w) => w === 0).length;
  const share = unknown ? Math.max(30, (total - used) / unknown) : 0;
  const widths = fixed.map((w) => w || share);
  const scale = Math.min(1, total / widths.reduce((a, b) => a + b, 0));
  return widths.map((w) => w * scale);
}

/** Cuts a text to fit a width, with "..." when cut. */
function fit(doc: PDFKit.PDFDocument, text: string, width: number): string {
  if (doc.widthOfString(text) <= width) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (doc.widthOfString(`${text.slice(0, mid)}...`) <= width) lo = mid;
    else hi = mid - 1;
  }
  return `${text.slice(0, lo)}...`;
}

/**
 * The PDF as a stream of bytes; rows are laid out as they are read from the iterable. PDFKit is loaded here, on
 * the first PDF asked: with its fonts and compression it is ~80 ms of a simulator's start, which a run of CSV
 * reports (every `npm start` on the shipped catalog) would pay for nothing.
 */
export async function reportPdfStream(header: readonly string[], rows: Iterable<string[]>, opts: PdfOptions): Promise<Readable> {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margin: PAGE_MARGIN,
    info: { Title: pdfText(opts.title), Producer: 'gateway simulator', Creator: 'gateway simulator', CreationDate: opts.date, ModDate: opts.date },
  });
  const left = PAGE_MARGIN;
  const width = doc.page.width - 2 * PAGE_MARGIN;
  const bottom = doc.page.height - PAGE_MARGIN - ROW_HEIGHT; // room for the page number
  const widths = columnWidths(header, width);
  let page = 1;
  let y = PAGE_MARGIN;

  const line = (cells: readonly string[], bold: boolean) => {
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(FONT_SIZE);
    let x = left;
    cells.forEach((cell, i) => {
      const w = widths[i] ?? 30;
      const text = fit(doc, pdfText(cell), w - 2 * CELL_PADDING);
      // Numbers read better right-aligned; headers stay left like the rest.
      const shift = !bold && RIGHT_ALIGNED.has(header[i] ?? '') ? w - 2 * CELL_PADDING - doc.widthOfString(text) : 0;
      doc.text(text, x + CELL_PADDING + shift, y + 2, { lineBreak: false });
      x += w;
    });
    y += ROW_HEIGHT;
    doc.moveTo(left, y).lineTo(left + width, y).lineWidth(bold ? 0.8 : 0.3).stroke();
  };
  const footer = () => {
    doc.font('Helvetica').fontSize(FONT_SIZE);
    doc.text(`Page ${page}`, left, doc.page.height - PAGE_MARGIN - 8, { lineBreak: false });
  };

  doc.font('Helvetica-Bold').fontSize(12).text(pdfText(opts.title), left, y, { lineBreak: false });
  y += 16;
  doc.font('Helvetica').fontSize(8).text(pdfText(opts.subtitle), left, y, { lineBreak: false });
  y += 14;
  line(header, true);
  for (const row of rows) {
    if (y + ROW_HEIGHT > bottom) {
      footer();
      doc.addPage();
      page += 1;
      y = PAGE_MARGIN;
      line(header, true);
    }
    line(row, false);
  }
  footer();
  doc.end();
  return doc;
}

/** The whole PDF as bytes: for tests. */
export async function writeReportPdf(header: readonly string[], rows: Iterable<string[]>, opts: PdfOptions): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await reportPdfStream(header, rows, opts)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
