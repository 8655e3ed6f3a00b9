import { readParquetFooter, type ParquetFooter } from './parquet-footer.js';

/**
 * What issue 11 promises of every Parquet file the pipeline writes, checked on the file's own Thrift
 * structures (parquet-footer.ts): a list of problems, empty when the file is fine, so a test can show
 * both that our files pass and that a file breaking a rule is caught.
 *
 *  1. created_by parses as parquet-java's VersionParser does: `<app> version <semver> (build <hash>)`.
 *  2. TIMESTAMP columns carry the converted type TIMESTAMP_MILLIS beside TIMESTAMP(MILLIS, isAdjustedToUTC=false);
 *     DATE and DECIMAL both annotations; strings UTF8 and STRING.
 *  3. Only v1 data pages (DATA_PAGE) with RLE definition levels, and dictionary pages; no DELTA_BYTE_ARRAY or
 *     DELTA_LENGTH_BYTE_ARRAY; strings RLE_DICTIONARY or PLAIN; DELTA_BINARY_PACKED only on integers.
 *  4. Statistics on every column chunk: null_count always, min and max unless every value is null.
 *  5. Every row group but the last holds at least `minRowsPerGroup` rows, unless it reached `maxGroupBytes`.
 */

// parquet-java's org.apache.parquet.VersionParser and SemanticVersion patterns.
const VERSION_PARSER = /^(.*?)\s+version\s*(?:([^(]*?)\s*(?:\(\s*build\s*([^)]*?)\s*\))?)?$/;
const SEMVER = /^(\d+)\.(\d+)\.(\d+)([^-+]*)?(?:-([^+]*))?(?:\+(.*))?$/;

export interface CheckOptions {
  /** The application and version created_by must name (default: any that parses). */
  application?: string;
  version?: string;
  minRowsPerGroup?: number;
  /** A group this large (total uncompressed bytes) may hold fewer rows. */
  maxGroupBytes?: bigint;
}

const STRING_ENCODINGS = new Set(['PLAIN', 'RLE_DICTIONARY', 'PLAIN_DICTIONARY']);
const NUMBER_ENCODINGS = new Set(['PLAIN', 'RLE_DICTIONARY', 'PLAIN_DICTIONARY', 'DELTA_BINARY_PACKED']);
/** Booleans: bit-packed PLAIN, what every engine reads on v1 pages (no dictionary exists for them). */
const BOOLEAN_ENCODINGS = new Set(['PLAIN']);

export function parseCreatedBy(createdBy: string | undefined): { application: string; version: string; build?: string } | undefined {
  const m = createdBy === undefined ? null : VERSION_PARSER.exec(createdBy);
  if (!m || !m[1] || !m[2] || !SEMVER.test(m[2])) return undefined;
  return { application: m[1], version: m[2], ...(m[3] ? { build: m[3] } : {}) };
}

export function footerProblems(footer: ParquetFooter, options: CheckOptions = {}): string[] {
  const problems: string[] = [];
  const parsed = parseCreatedBy(footer.createdBy);
  if (!parsed) problems.push(`created_by ${JSON.stringify(footer.createdBy)} does not parse as "<application> version <semver> (build <hash>)"`);
  else {
    if (options.application && parsed.application !== options.application) problems.push(`created_by names ${parsed.application}, not ${options.application}`);
    if (options.version && parsed.version !== options.version) problems.push(`created_by says version ${parsed.version}, not ${options.version}`);
    if (!parsed.build || !/^([0-9a-f]{7,40}|unknown)$/.test(parsed.build)) problems.push(`created_by has no build part: ${JSON.stringify(footer.createdBy)}`);
  }

  for (const c of footer.columns) {
    const lt = c.logicalType;
    const where = `column ${c.name}`;
    if (lt?.type === 'TIMESTAMP') {
      if (c.physicalType !== 'INT64' || lt.unit !== 'MILLIS' || lt.isAdjustedToUTC !== false) problems.push(`${where}: TIMESTAMP is not INT64 MILLIS with isAdjustedToUTC=false`);
      if (c.convertedType !== 'TIMESTAMP_MILLIS') problems.push(`${where}: TIMESTAMP without the converted type TIMESTAMP_MILLIS`);
    } else if (c.convertedType === 'TIMESTAMP_MILLIS') problems.push(`${where}: TIMESTAMP_MILLIS without the logical TIMESTAMP type`);
    if ((lt?.type === 'DATE') !== (c.convertedType === 'DATE')) problems.push(`${where}: DATE needs both the logical and the converted type`);
    if (lt?.type === 'DECIMAL' || c.convertedType === 'DECIMAL') {
      if (lt?.type !== 'DECIMAL' || c.convertedType !== 'DECIMAL' || lt.precision !== c.precision || lt.scale !== c.scale) problems.push(`${where}: DECIMAL annotations missing or disagreeing`);
    }
    if (c.physicalType === 'BYTE_ARRAY' && (c.convertedType !== 'UTF8' || lt?.type !== 'STRING')) problems.push(`${where}: a string without UTF8 and STRING`);
    if (c.physicalType === 'BOOLEAN' && (lt || c.convertedType)) problems.push(`${where}: a BOOLEAN with an annotation`);
  }

  footer.rowGroups.forEach((group, g) => {
    if (g < footer.rowGroups.length - 1 && options.minRowsPerGroup !== undefined && group.numRows < BigInt(options.minRowsPerGroup)) {
      if (options.maxGroupBytes === undefined || group.totalByteSize < options.maxGroupBytes) problems.push(`row group ${g}: ${group.numRows} rows, fewer than ${options.minRowsPerGroup}`);
    }
    for (const chunk of group.columns) {
      const where = `row group ${g}, column ${chunk.path}`;
      const allowed = chunk.physicalType === 'BYTE_ARRAY' ? STRING_ENCODINGS : chunk.physicalType === 'BOOLEAN' ? BOOLEAN_ENCODINGS : NUMBER_ENCODINGS;
      for (const e of chunk.encodings) if (e !== 'RLE' && !allowed.has(e)) problems.push(`${where}: lists encoding ${e}`);
      for (const p of chunk.pages) {
        if (p.type === 'DICTIONARY_PAGE') {
          if (p.encoding !== 'PLAIN' && p.encoding !== 'PLAIN_DICTIONARY') problems.push(`${where}: dictionary page encoded ${p.encoding}`);
          continue;
        }
        if (p.type !== 'DATA_PAGE') {
          problems.push(`${where}: a ${p.type} page (only DATA_PAGE v1 pages are written)`);
          continue;
        }
        if (!allowed.has(p.encoding!)) problems.push(`${where}: a data page encoded ${p.encoding}`);
        if (p.definitionLevelEncoding !== 'RLE') problems.push(`${where}: definition levels encoded ${p.definitionLevelEncoding}`);
      }
      for (const s of chunk.encodingStats) if (s.pageType === 'DATA_PAGE_V2') problems.push(`${where}: encoding_stats lists DATA_PAGE_V2`);
      const st = chunk.statistics;
      if (st?.nullCount === undefined) problems.push(`${where}: no null_count`);
      else if (st.nullCount < chunk.numValues && (!st.minValue || !st.maxValue)) problems.push(`${where}: no min_value/max_value`);
    }
  });
  return problems;
}

/** Reads the file's footer and page headers and lists what breaks the rules above. */
export function parquetProblems(file: Uint8Array, options: CheckOptions = {}): string[] {
  return footerProblems(readParquetFooter(file), options);
}
