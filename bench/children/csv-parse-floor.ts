import { createReadStream } from 'node:fs';
import { Parser } from 'csv-parse';
import { csvParseOptions } from '../../functions/core/csv-records.js';
import { measure } from './measure.js';

/**
 * The floor: csv-parse alone over the file, with the converter's options, driven the way the converter
 * drives it (its synchronous core, see csv-records.ts), records counted and dropped. Any converter built
 * on csv-parse takes at least this long.
 */
const [file = ''] = process.argv.slice(2);
await measure(async () => {
  const parser = new Parser({ ...csvParseOptions(','), bom: true });
  const core = (parser as unknown as { api: { parse(b: Buffer | undefined, end: boolean, push: (r: string[]) => void, close: () => void): Error | undefined } }).api;
  let rows = 0;
  const push = () => {
    rows++;
  };
  for await (const chunk of createReadStream(file)) {
    const err = core.parse(chunk as Buffer, false, push, () => {});
    if (err) throw err;
  }
  core.parse(undefined, true, push, () => {});
  return { rows: rows - 1, outBytes: 0 };
});
