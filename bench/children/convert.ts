import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { loadCatalog } from '../../functions/core/definitions/catalog-files.js';
import { convertCsvToParquet } from '../../functions/core/convert/csv-to-parquet.js';
import type { EncoderMode } from '../../functions/core/parquet/encoder-thread.js';
import type { ReportDefinition } from '../../functions/core/definitions/report-definition.js';
import { cpuByTenth, measure } from './measure.js';

/**
 * Our converter, file to file, as the parse function runs it. `repeat` > 1 streams the file's rows that
 * many times (the header once), for the memory run on 4M rows without a 540 MB file on disk. `checks`:
 * the sample definition as shipped (`sample`: keys transaction_id), without data checks (`none`), or with
 * a sum column too (`sum`: volume.sumColumn amount), to measure what the row tally costs.
 */
const [file = '', out = '', repeat = '1', encoder = 'auto', checks = 'sample'] = process.argv.slice(2);

function definition(): ReportDefinition {
  const sample = loadCatalog().get('transactions');
  if (checks === 'none') return { ...sample, keys: undefined };
  if (checks === 'sum') return { ...sample, volume: { ...sample.volume, enabled: true, sumColumn: 'amount' } };
  return sample;
}

async function* repeated(times: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < times; i++) {
    let first = true;
    for await (const chunk of createReadStream(file)) {
      let bytes = chunk as Buffer;
      if (i > 0 && first) bytes = bytes.subarray(bytes.indexOf('\n') + 1); // drop the header of repeats
      first = false;
      yield bytes;
    }
  }
}

// The catalog is loaded before the clock starts, as the parse function loads it: once per container, at
// its first invocation (`catalog ??= loadCatalog()`), with the modules, which are not measured either. It
// is ~18 ms of CPU (zod's checks, Intl's time-zone data), not work done per report.
const report = definition();

await measure(async () => {
  const times = Number(repeat);
  const stream = times === 1 ? createReadStream(file) : undefined;
  const tenths = stream ? cpuByTenth(stream, statSync(file).size) : undefined;
  const manifest = await convertCsvToParquet({
    input: stream ?? Readable.from(repeated(times)),
    output: createWriteStream(out),
    report,
    encoder: encoder as EncoderMode,
  });
  return { rows: manifest.rowsWritten, outBytes: manifest.bytesOut, tenths: tenths?.(), extra: { manifest } };
});
