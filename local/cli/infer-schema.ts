import { basename, extname } from 'node:path';
import { snakeCase } from '../../functions/core/lake/athena-names.js';
import { inferReportDefinition } from '../../functions/core/definitions/infer-schema.js';
import { showPath } from '../../functions/core/shown-path.js';
import { openUserFile, writeUserFile } from '../args/user-file.js';

/**
 * `reports infer-schema <file>`: a proposed report definition from a sample CSV, into `--out FILE` (whole or not
 * at all, never over a file without `--force`) or else on stdout; the notes and what to do next on stderr, so
 * stdout redirected holds the definition alone (`npm run -s` keeps npm's own banner out of it too).
 */

export interface InferSchemaCommandOptions {
  encoding?: string;
  delimiter?: string;
  id?: string;
  out?: string;
  force?: boolean;
}

export interface InferSchemaOutput {
  out: (text: string) => void;
  err: (line: string) => void;
}

const stdio: InferSchemaOutput = { out: (t) => console.log(t), err: (l) => console.error(l) };

export async function runInferSchemaCommand(file: string, opts: InferSchemaCommandOptions, io: InferSchemaOutput = stdio): Promise<void> {
  if (opts.force && !opts.out) io.err('note: --force only matters with --out; ignored.');
  const sample = await openUserFile(file, 'the sample');
  const { definition, notes } = await inferReportDefinition(sample.createReadStream(), {
    encoding: opts.encoding,
    delimiter: opts.delimiter,
    id: opts.id ?? snakeCase(basename(file, extname(file))),
    source: file,
  }).finally(() => sample.close());
  const json = `${JSON.stringify(definition, null, 2)}\n`;
  if (opts.out) await writeUserFile(opts.out, json, { force: opts.force, flag: '--out' });
  else io.out(json.trimEnd());
  for (const note of notes) io.err(`note: ${note}`);
  const id = definition.id;
  const next = `Then try it: npm start -- --report ${id} (docs/add-a-report.md).`;
  if (opts.out) io.err(`Wrote ${showPath(opts.out)}. Fill in every "REPLACE_ME" there: until then, in config/reports/ (where every file is a report), it stops every command. ${next}`);
  else io.err(`Fill in every "REPLACE_ME" and save it as config/reports/${id}.json: every file there is a report. ${next}`);
}
