import { createReadStream, createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { loadCatalog } from '../../config/reports/index.js';
import { convertCsvToParquet } from '../../functions/core/csv-to-parquet.js';
import type { EncoderMode } from '../../functions/core/encoder-thread.js';
import { measure } from './measure.js';

/**
 * Our converter, file to file, as the parse function runs it. `repeat` > 1 streams the file's rows that
 * many times (the header once), for the memory run on 4M rows without a 540 MB file on disk.
 */
const [file = '', out = '', repeat = '1', encoder = 'auto'] = process.argv.slice(2);

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

await measure(async () => {
  const times = Number(repeat);
  const manifest = await convertCsvToParquet({
    input: times === 1 ? createReadStream(file) : Readable.from(repeated(times)),
    output: createWriteStream(out),
    report: loadCatalog().get('transactions'),
    encoder: encoder as EncoderMode,
  });
  return { rows: manifest.rowsWritten, outBytes: manifest.bytesOut, extra: { manifest } };
});
