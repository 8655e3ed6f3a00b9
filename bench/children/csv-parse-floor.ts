import { createReadStream, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Parser as PatchedParser } from 'csv-parse';
import { csvParseOptions } from '../../functions/core/csv/records.js';
import { cpuByTenth, measure } from './measure.js';

/**
 * The floor: csv-parse alone over the file, with the converter's options, driven the way the converter
 * drives it (its synchronous core, see functions/core/csv/records.ts), records counted and dropped. Any converter built
 * on csv-parse takes at least this long.
 *
 * `patched` (default) is the csv-parse the converter runs: the ES module build, patched at install
 * (patches/csv-parse+7.0.3.patch). `stock` is the same version as published: its CommonJS build, which the
 * patch leaves alone (test/unit/csv-parse-patch.test.ts holds the two to the same output).
 */
type CsvParser = typeof PatchedParser;
const [file = '', which = 'patched'] = process.argv.slice(2);
const Parser: CsvParser = which === 'stock' ? (createRequire(import.meta.url)('csv-parse') as { Parser: CsvParser }).Parser : PatchedParser;
await measure(async () => {
  const parser = new Parser({ ...csvParseOptions(','), bom: true });
  const core = (parser as unknown as { api: { parse(b: Buffer | undefined, end: boolean, push: (r: string[]) => void, close: () => void): Error | undefined } }).api;
  if ('__appendOrdinary' in core !== (which === 'patched')) throw new Error(`the ${which} floor did not load the ${which} csv-parse`);
  let rows = 0;
  const push = () => {
    rows++;
  };
  const stream = createReadStream(file);
  const tenths = cpuByTenth(stream, statSync(file).size);
  for await (const chunk of stream) {
    const err = core.parse(chunk as Buffer, false, push, () => {});
    if (err) throw err;
  }
  core.parse(undefined, true, push, () => {});
  return { rows: rows - 1, outBytes: 0, tenths: tenths() };
});
