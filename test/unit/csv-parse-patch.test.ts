import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Parser as PatchedParser, type Info, type Options } from 'csv-parse';
import { csvParseOptions } from '../../functions/core/csv/records.js';

/**
 * patches/csv-parse+7.0.3.patch (fast paths: the bytes no parsing rule looks at go to the field in one step;
 * a closing quote, the delimiter after it and the next opening quote take one iteration) claims to change no
 * output of csv-parse for any input, chunking or options. Only csv-parse's ESM source (lib/, what `import`
 * loads) is patched; its CommonJS build (dist/cjs, what `require` loads) is the stock code of the same
 * release, so the two copies in node_modules are run side by side on the same bytes, cut
 * into the same chunks, through the synchronous core the project uses (`new Parser(options).api.parse`):
 * every record, the counters after every call, every error (code, message, the info it carries) and every
 * skipped error must be the same. Deterministic: a seeded generator, no Math.random.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const stockEntry = require.resolve('csv-parse');
const patchedEntry = fileURLToPath(import.meta.resolve('csv-parse'));
const StockParser = (require('csv-parse') as typeof import('csv-parse')).Parser;

/** csv-parse's synchronous core (`parser.api`), untyped in its declarations. */
interface Core {
  parse(buf: Buffer | undefined, end: boolean, push: (record: unknown) => void, close: () => void): Error | undefined;
  readonly info: Info;
  readonly state: { stop: boolean };
}
type ParserClass = typeof PatchedParser;
const coreOf = (P: ParserClass, options: Options): Core => (new P(options) as unknown as { api: Core }).api;

// ---------------------------------------------------------------------------------------------------------
// Running one copy

/** A value as plain data for JSON: errors (of either copy's CsvError class) by name, message and own
 * fields, Buffers in hex, and what JSON would lose (undefined, -0, NaN) spelled out. */
function view(value: unknown): unknown {
  if (value === undefined) return '(undefined)';
  if (typeof value === 'number' && (Object.is(value, -0) || !Number.isFinite(value))) return `(${Object.is(value, -0) ? '-0' : value})`;
  if (value instanceof Error) {
    const out: Record<string, unknown> = { error: value.name, message: value.message };
    for (const key of Object.keys(value)) out[key] = view((value as unknown as Record<string, unknown>)[key]);
    return out;
  }
  if (value instanceof Uint8Array) return { bytes: Buffer.from(value).toString('hex') };
  if (value instanceof Date) return { date: value.getTime() };
  if (Array.isArray(value)) return value.map(view);
  if (typeof value === 'function') return '[function]';
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = view(v);
    return out;
  }
  return value;
}

interface Chunking {
  readonly chunks: readonly Buffer[];
  /** The last chunk goes with `end` (as csv-parse/sync does); otherwise a final `parse(undefined, true)`. */
  readonly lastEnds: boolean;
}

/** What came out of a copy, one line each: a record, a skipped error, the counters after a call, ... */
type Event = string;
const event = (kind: string, ...values: unknown[]) => `${kind} ${JSON.stringify(values.map(view))}`;

/** Feeds the chunks as csv-parse's stream does (nothing more once `state.stop`), logging what comes out. */
function drive(P: ParserClass, options: Options, { chunks, lastEnds }: Chunking): Event[] {
  const events: Event[] = [];
  let core: Core;
  try {
    core = coreOf(P, { ...options, on_skip: (err, raw) => void events.push(event('skip', err, raw)) });
  } catch (err) {
    return [event('constructor', err)];
  }
  const push = (record: unknown) => void events.push(event('record', record));
  const close = () => void events.push('close');
  const call = (buf: Buffer | undefined, end: boolean): boolean => {
    if (core.state.stop) return false;
    let err: Error | undefined;
    try {
      err = core.parse(buf, end, push, close);
    } catch (thrown) {
      events.push(event('thrown', thrown));
      return false;
    }
    events.push(`info ${JSON.stringify(core.info)}`); // numbers only
    if (err !== undefined) {
      events.push(event('error', err));
      return false;
    }
    return true;
  };
  for (let i = 0; i < chunks.length; i++) {
    const end = lastEnds && i === chunks.length - 1;
    if (!call(chunks[i], end) || end) return events;
  }
  call(undefined, true);
  return events;
}

const hex = (b: Buffer) => b.toString('hex');
const describeRun = (name: string, input: Buffer, { chunks, lastEnds }: Chunking) =>
  `option set ${name}, input ${JSON.stringify(input.toString('latin1'))} (hex ${hex(input)}), ` +
  `chunk sizes [${chunks.map((c) => c.length).join(',')}]${lastEnds ? ' (last with end)' : ''}`;

/** Both copies on the same input and chunks; returns the patched copy's events. */
function assertSameOutput(name: string, options: Options, input: Buffer, chunking: Chunking): Event[] {
  const patched = drive(PatchedParser, options, chunking);
  const stock = drive(StockParser, options, chunking);
  if (!isDeepStrictEqual(patched, stock)) {
    const i = patched.findIndex((e, k) => !isDeepStrictEqual(e, stock[k]));
    const at = i === -1 ? patched.length : i;
    assert.fail(
      `patched and stock csv-parse differ at event ${at}: ${describeRun(name, input, chunking)}\n` +
        `  patched: ${patched[at]}\n  stock:   ${stock[at]}\n` +
        `  events before: ${patched.slice(Math.max(0, at - 3), at).join('\n    ')}`,
    );
  }
  return patched;
}

// ---------------------------------------------------------------------------------------------------------
// Inputs

/** mulberry32: a small seeded generator, so every run compares the same cases. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const seedOf = (name: string) => [...name].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619), 2166136261);

/** Every byte some rule looks at, for any of the option sets below, and the bytes none does. */
const TOKENS = [
  '"', '"', '\\', ',', ',', ';', ':', '::', '#', '|', '||', 'Q',
  '\r', '\n', '\r\n', '\r\n', '\n\n', '\r\n\r\n', // line breaks, empty lines
  ' ', '\t', '  ', ' \t', '\u00a0', '\u3000', '\ufeff', // trimmable, one to three bytes in UTF-8
  'Ж', 'ёлка', '😀', 'z😀Жz', 'é', // multi-byte UTF-8
  'a', 'b', '1', 'xyz',
  '""', '"a"', '"a"b', 'a"b', '"a""b"', '"a"\r\n', '"x\ry"', '"x\r\ny"', '\\"', // quotes in and out of place
];

type Rand = () => number;
const pick = <T>(r: Rand, items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
const int = (r: Rand, min: number, max: number) => min + Math.floor(r() * (max - min + 1));

/** Lengths where something changes: the field buffer doubles from 20 bytes, appendRange copies from 32. */
const EDGE_LENGTHS = [19, 20, 21, 31, 32, 33, 39, 40, 41, 79, 80, 81];

function word(r: Rand, min: number, max: number, ascii = false): string {
  const n = max > 20 && r() < 0.3 ? pick(r, EDGE_LENGTHS) : int(r, min, max);
  const letters = r() < 0.2 && !ascii ? 'жёлтыйЖЁ' : 'abcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < n; i++) s += letters[Math.floor(r() * letters.length)];
  return s;
}

const strings = (option: unknown): string[] => [option].flat().filter((t): t is string => typeof t === 'string');

/** A random input: records of fields (plain, or quoted with the quote, escape, delimiters and line breaks
 * inside), plain runs short and long (appendRange copies runs of 32 bytes and more differently), empty
 * lines, maybe a BOM, maybe no final line break; then, at a rate drawn per input (none for a third of
 * them), noise: tokens any rule looks at, anywhere (unclosed quotes, quotes inside plain fields, text
 * after a closing quote, bytes that are no UTF-8). `asciiOnly`: unquoted ASCII fields, no noise. */
function generate(r: Rand, options: Options, asciiOnly = false): Buffer {
  const delimiters = strings(options.delimiter);
  const recordDelimiters = strings(options.record_delimiter);
  const own = [...delimiters, ...recordDelimiters, ...strings(options.quote), ...strings(options.escape), ...strings(options.comment)];
  const noiseTokens = [...TOKENS, ...own, ...own];
  const delimiter = () => (delimiters.length > 0 ? pick(r, delimiters) : ',');
  const lineBreak = () => (recordDelimiters.length > 0 ? pick(r, recordDelimiters) : pick(r, ['\n', '\r\n', '\r']));
  const quote = typeof options.quote === 'string' ? options.quote : '"';
  const escape = typeof options.escape === 'string' ? options.escape : quote;
  const encoding = options.encoding === 'utf16le' || options.encoding === 'latin1' ? options.encoding : 'utf8';
  const noise = asciiOnly ? 0 : pick(r, [0, 0, 0.02, 0.05, 0.15, 0.4]);

  const parts: Buffer[] = [];
  const text = (s: string) => {
    if (r() < noise) parts.push(r() < 0.15 ? Buffer.from([int(r, 0x80, 0xff)]) : Buffer.from(pick(r, noiseTokens), encoding));
    parts.push(Buffer.from(s, encoding));
  };
  const plain = () => {
    const x = r();
    if (x < 0.45) return word(r, 1, 9, asciiOnly);
    if (x < 0.7) return word(r, 28, 90, asciiOnly);
    if (asciiOnly) return x < 0.8 ? ' ' : '.';
    if (x < 0.8) return pick(r, [' ', '\t', ' \t ', '\u00a0', '\u3000']);
    return pick(r, ['Ж', 'ёлка', '😀', 'z😀Жz', 'é', '#', '1.5', '-0', '2024-01-02']);
  };
  const width = int(r, 1, 5); // most inputs keep one field count, as a report does
  const ragged = r() < 0.3;
  const bom = asciiOnly ? 1 : r();
  if (bom < 0.15) parts.push(Buffer.from([0xef, 0xbb, 0xbf]));
  else if (bom < 0.18) parts.push(Buffer.from([0xff, 0xfe]));
  for (let records = int(r, 0, 8), i = 0; i < records; i++) {
    if (r() < 0.12) {
      text(lineBreak()); // an empty line
      continue;
    }
    for (let fields = ragged ? int(r, 1, 5) : width, f = 0; f < fields; f++) {
      if (f > 0) text(delimiter());
      if (!asciiOnly && r() < 0.35) {
        text(quote);
        for (let k = int(r, 0, 4); k > 0; k--) {
          const x = r();
          text(x < 0.6 ? plain() : x < 0.75 ? escape + quote : x < 0.85 ? delimiter() : lineBreak());
        }
        // Unclosed: the parse ends inside the quotes (csv-parse's error names the line), rarely mid-file.
        if (r() > (i === records - 1 && f === fields - 1 ? 0.2 : 0.02)) text(quote);
      } else {
        for (let k = int(r, 0, 3); k > 0; k--) text(plain());
      }
    }
    if (i < records - 1 || r() < 0.5) text(lineBreak());
  }
  return Buffer.concat(parts);
}

/** Cuts of one input: whole (with and without `end` on it), byte by byte (so inside every multi-byte
 * character and delimiter), and at random places, with empty chunks. */
function chunkings(r: Rand, input: Buffer): Chunking[] {
  const cut = (min: number, max: number) => {
    const chunks: Buffer[] = [];
    for (let i = 0; i < input.length; ) {
      const n = int(r, min, max);
      chunks.push(input.subarray(i, i + n));
      i += n;
    }
    return chunks;
  };
  return [
    { chunks: [input], lastEnds: true },
    { chunks: [input], lastEnds: false },
    { chunks: cut(1, 1), lastEnds: false },
    { chunks: cut(0, 4), lastEnds: false },
    { chunks: cut(1, 48), lastEnds: true },
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Option sets: the project's, and one variant per rule the fast path has to leave alone

const project = csvParseOptions(',');
const OPTION_SETS: Record<string, Options> = {
  'project ,': project,
  'project ;': csvParseOptions(';'),
  'record_delimiter auto': { ...project, record_delimiter: undefined },
  'record_delimiter \\n': { ...project, record_delimiter: '\n' },
  'record_delimiter \\r\\n': { ...project, record_delimiter: '\r\n' },
  'record_delimiter ||': { ...project, record_delimiter: ['||', '\n'] },
  'delimiter ::': { ...project, delimiter: '::' },
  'delimiters , :: Ж': { ...project, delimiter: [',', '::', 'Ж'] },
  'escape \\': { ...project, escape: '\\' },
  'escape null': { ...project, escape: null },
  'quote null': { ...project, quote: null },
  'comment #': { ...project, comment: '#' },
  'comment # no infix': { ...project, comment: '#', comment_no_infix: true },
  ltrim: { ...project, ltrim: true },
  rtrim: { ...project, rtrim: true },
  trim: { ...project, trim: true },
  raw: { ...project, raw: true },
  relax_quotes: { ...project, relax_quotes: true },
  // Where the one-step closing quote + delimiter must stay off: a record delimiter that starts with the
  // delimiter, a delimiter skipped at the end of a record, a delimiter that is the quote or a line break;
  // and where it must leave the byte to the escape.
  'delimiter |, record_delimiter ||': { ...project, delimiter: '|', record_delimiter: ['||', '\n'] },
  'ignore_last_delimiters 2': { ...project, ignore_last_delimiters: 2 },
  'delimiter the quote, escape null': { ...project, delimiter: '"', escape: null },
  'delimiter \\n, record_delimiter ;': { ...project, delimiter: '\n', record_delimiter: ';' },
  'escape \\ as delimiter': { ...project, delimiter: '\\', escape: '\\' },
  'escape of two bytes, the quote and the delimiter': { ...project, escape: '",' },
  'relax_column_count off': { ...project, relax_column_count: false },
  'relax_column_count_less': { relax_column_count_less: true },
  'skip_empty_lines off': { ...project, skip_empty_lines: false },
  'max_record_size 5': { ...project, max_record_size: 5 },
  'max_record_size 40': { ...project, max_record_size: 40 },
  'max_record_size 40, relax_quotes, escape \\': { ...project, max_record_size: 40, relax_quotes: true, escape: '\\' },
  'from_line 2 to_line 4': { ...project, from_line: 2, to_line: 4 },
  'from 2 to 3': { ...project, from: 2, to: 3 },
  'bom true': { ...project, bom: true },
  'bom true, defaults': { bom: true },
  "encoding 'utf8'": { ...project, encoding: 'utf8' },
  'encoding null (Buffers)': { ...project, encoding: null },
  'encoding latin1': { ...project, encoding: 'latin1' },
  'encoding utf16le': { encoding: 'utf16le', bom: true },
  'columns true': { ...project, columns: true },
  'columns true, strict count': { columns: true, relax_column_count: false },
  'columns, ignore_last_delimiters': { columns: true, ignore_last_delimiters: true },
  'info, cast': { ...project, info: true, cast: true },
  skip_records_with_empty_values: { skip_records_with_empty_values: true },
  'skip_records_with_error, max_record_size 40': {
    ...project,
    skip_records_with_error: true,
    max_record_size: 40,
    relax_column_count: false,
  },
  'skip_records_with_error, max_record_size 12': { skip_records_with_error: true, max_record_size: 12 },
  delimiter_auto: { delimiter_auto: true },
  defaults: {},
  // Out-of-the-way settings csv-parse accepts: a quote that is a line break, a quote longer than the
  // field buffer's first size.
  'quote \\r, to_line 1': { quote: '\r', to_line: 1 },
  'quote \\n, record_delimiter ;, to_line 3': { quote: '\n', record_delimiter: ';', to_line: 3 },
  'quote of 20 bytes, relax_quotes': { quote: 'Q'.repeat(20), relax_quotes: true },
};
/** More inputs where the project's own options are; fewer where every byte after a skipped error makes
 * another error (csv-parse does not recover from a skipped CSV_MAX_RECORD_SIZE). */
const INPUTS_PER_SET: Record<string, number> = {
  'project ,': 300,
  'project ;': 150,
  'skip_records_with_error, max_record_size 40': 20,
  'skip_records_with_error, max_record_size 12': 20,
};
const DEFAULT_INPUTS = 50;
/** csv-parse's delimiter discovery fails on quotes inside fields and on bytes above 127 (stock too). */
const ASCII_ONLY = new Set(['delimiter_auto']);

// ---------------------------------------------------------------------------------------------------------

/** Undoes a unified diff's hunks (new side -> old side) in a text; throws if a hunk is not there. */
function unpatch(text: string, hunks: readonly { old: string[]; new: string[] }[]): string {
  const lines = text.split('\n');
  let from = 0;
  for (const hunk of hunks) {
    let at = -1;
    for (let i = from; i + hunk.new.length <= lines.length && at === -1; i++) {
      if (hunk.new.every((l, k) => lines[i + k] === l)) at = i;
    }
    assert.notEqual(at, -1, `a hunk of the patch is not in the installed file:\n${hunk.new.join('\n')}`);
    lines.splice(at, hunk.new.length, ...hunk.old);
    from = at + hunk.old.length;
  }
  return lines.join('\n');
}

/** The patch file's hunks by patched file (path inside csv-parse). */
function readPatch(): Map<string, { old: string[]; new: string[] }[]> {
  const patch = readFileSync(join(ROOT, 'patches', 'csv-parse+7.0.3.patch'), 'utf8');
  const files = new Map<string, { old: string[]; new: string[] }[]>();
  let hunks: { old: string[]; new: string[] }[] = [];
  let hunk: { old: string[]; new: string[] } | undefined;
  for (const line of patch.split('\n')) {
    const file = /^diff --git a\/node_modules\/csv-parse\/(\S+) /.exec(line);
    if (file) {
      hunks = [];
      hunk = undefined;
      files.set(file[1] as string, hunks);
    } else if (line.startsWith('@@')) {
      hunk = { old: [], new: [] };
      hunks.push(hunk);
    } else if (hunk && (line.startsWith(' ') || line === '')) {
      hunk.old.push(line.slice(1));
      hunk.new.push(line.slice(1));
    } else if (hunk && line.startsWith('-')) hunk.old.push(line.slice(1));
    else if (hunk && line.startsWith('+')) hunk.new.push(line.slice(1));
  }
  // A trailing empty line of the file is no context line.
  for (const hs of files.values()) {
    const last = hs[hs.length - 1];
    if (last && last.new[last.new.length - 1] === '' && last.old[last.old.length - 1] === '') {
      last.new.pop();
      last.old.pop();
    }
  }
  return files;
}

/** The text of a top-level declaration, from its first line to its closing line. */
function declaration(text: string, start: string, close: string): string {
  const at = text.indexOf(start);
  assert.notEqual(at, -1, `${start} not found`);
  const end = text.indexOf(close, at);
  assert.notEqual(end, -1, `end of ${start} not found`);
  return text.slice(at, end + close.length);
}

describe('csv-parse patch: the reference is stock, the installed copy is patched', () => {
  const libDir = dirname(patchedEntry);
  const cjs = readFileSync(stockEntry, 'utf8');

  it('loads the patched ESM source and the stock CommonJS build, two different modules', () => {
    assert.match(patchedEntry, /node_modules[\\/]csv-parse[\\/]lib[\\/]index\.js$/);
    assert.match(stockEntry, /node_modules[\\/]csv-parse[\\/]dist[\\/]cjs[\\/]index\.cjs$/);
    assert.notEqual(PatchedParser, StockParser);
    const pkg = JSON.parse(readFileSync(join(libDir, '..', 'package.json'), 'utf8')) as { version: string };
    assert.equal(pkg.version, '7.0.3', 'the patch is for csv-parse 7.0.3');
  });

  it('has the fast path in lib and not in dist/cjs, in the files and in the loaded parsers', () => {
    const libApi = readFileSync(join(libDir, 'api', 'index.js'), 'utf8');
    const libBuffer = readFileSync(join(libDir, 'utils', 'ResizeableBuffer.js'), 'utf8');
    assert.ok(libApi.includes('__appendOrdinary') && libBuffer.includes('appendRange'), 'lib/ is not patched: run npm ci');
    assert.ok(libApi.includes('fieldDelimiter'), 'lib/ has an older version of the patch: run npm ci');
    assert.ok(!cjs.includes('__appendOrdinary') && !cjs.includes('appendRange') && !cjs.includes('utf8Slice'));
    const patched = coreOf(PatchedParser, project) as unknown as Record<string, unknown>;
    const stock = coreOf(StockParser, project) as unknown as Record<string, unknown>;
    assert.equal(typeof patched['__appendOrdinary'], 'function');
    assert.equal(stock['__appendOrdinary'], undefined);
  });

  it('is, without the patch, the same code as dist/cjs (so the comparison is with the same release)', () => {
    const hunks = readPatch();
    assert.deepEqual([...hunks.keys()].sort(), ['lib/api/index.js', 'lib/utils/ResizeableBuffer.js']);
    const unpatched = (file: string) => unpatch(readFileSync(join(libDir, '..', file), 'utf8'), hunks.get(file) ?? []);
    const api = unpatched('lib/api/index.js');
    assert.ok(!api.includes('__appendOrdinary'));
    const same = (text: string, start: string, close: string) =>
      assert.equal(declaration(text, start, close), declaration(cjs, start, close), `${start} differs from dist/cjs`);
    same(api, 'const transform = function', '\n};\n');
    same(unpatched('lib/utils/ResizeableBuffer.js'), 'class ResizeableBuffer', '\n}\n');
    same(readFileSync(join(libDir, 'api', 'init_state.js'), 'utf8'), 'const init_state = function', '\n};\n');
  });
});

describe('csv-parse patch: differential fuzz against the stock build', () => {
  for (const [name, options] of Object.entries(OPTION_SETS)) {
    it(`same output: ${name}`, (t) => {
      const r = prng(seedOf(name));
      const inputs = INPUTS_PER_SET[name] ?? DEFAULT_INPUTS;
      let runs = 0;
      let records = 0;
      let errors = 0;
      let clean = 0;
      for (let i = 0; i < inputs; i++) {
        const input = generate(r, options, ASCII_ONLY.has(name));
        for (const chunking of chunkings(r, input)) {
          const events = assertSameOutput(name, options, input, chunking);
          runs++;
          records += events.filter((e) => e.startsWith('record ')).length;
          const failed = events.filter((e) => /^(error|thrown|skip) /.test(e)).length;
          errors += failed;
          if (failed === 0) clean++;
        }
      }
      t.diagnostic(`${inputs} inputs x 5 chunkings = ${runs} runs (${clean} without error); ${records} records, ${errors} errors`);
      // Not a comparison of error messages only: some runs must get through and give records.
      assert.ok(records > 0 && clean > 0, `${name}: ${records} records, ${clean} runs without error in ${runs}`);
    });
  }

  it('same output on the differences the fuzz found in the first version of the patch', () => {
    const cases: [string, Options, string[], boolean][] = [
      // The fast path took bytes the loop leaves for the next call; a skipped error returns before the
      // leftover is saved, so the patched copy went on with different bytes (and emitted ["b","c"]).
      ['skipped error', { skip_records_with_error: true, max_record_size: 12, record_delimiter: '\n' }, ['aaaa', 'aaaaaaaaaaaaa', '\nb,c\n'], false],
      // A quote that is a line break: the line is counted at the next iteration, which the fast path skipped.
      ['quote \\r', { quote: '\r' }, ['\ra'], true],
      ['quote \\n', { quote: '\n', record_delimiter: ';' }, ['\na'], true],
      // appendRange grew the field's buffer past what append does; prepend (relax_quotes) resizes once.
      ['quote of 20 bytes', { quote: 'Q'.repeat(20), relax_quotes: true }, [`${'Q'.repeat(20)}${'a'.repeat(20)}${'Q'.repeat(20)}a`], true],
      // An empty quote matches everywhere; no byte is ordinary (csv-parse loops forever on some inputs).
      ['empty quote', { quote: Buffer.alloc(0) }, ['ab'], true],
      ['empty quote, in a utf8 string', { quote: Buffer.alloc(0) }, ['Жa"b\n'], true],
    ];
    for (const [name, options, chunks, lastEnds] of cases) {
      const buffers = chunks.map((c) => Buffer.from(c));
      assertSameOutput(name, options, Buffer.concat(buffers), { chunks: buffers, lastEnds });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// Expected records, so that a fault both copies shared would show too

interface Parsed {
  records: { record: unknown; lines: number }[];
  error?: string;
  info: Info;
}

function parseWith(P: ParserClass, options: Options, chunks: readonly Buffer[]): Parsed {
  const core = coreOf(P, options);
  const records: Parsed['records'] = [];
  const push = (record: unknown) => void records.push({ record, lines: core.info.lines });
  for (const [i, chunk] of [...chunks, undefined].entries()) {
    const err = core.parse(chunk, i === chunks.length, push, () => {});
    if (err !== undefined) return { records, error: (err as Error & { code: string }).code, info: { ...core.info } };
  }
  return { records, info: { ...core.info } };
}

const bytes = (input: string, size: number) => {
  const b = Buffer.from(input);
  const chunks: Buffer[] = [];
  for (let i = 0; i < b.length; i += size) chunks.push(b.subarray(i, i + size));
  return chunks;
};

const BOTH: [string, ParserClass][] = [
  ['patched', PatchedParser],
  ['stock', StockParser],
];

describe('csv-parse patch: expected records', () => {
  it('joins a record cut anywhere in a long ordinary run', () => {
    const long = 'x'.repeat(100);
    const quoted = `${'y'.repeat(70)}Ж${'z'.repeat(40)}`;
    const input = Buffer.from(`id,name\r\n1,${long}\r\n2,"${quoted}"\r\n`);
    const expected = [
      { record: ['id', 'name'], lines: 1 },
      { record: ['1', long], lines: 2 },
      { record: ['2', quoted], lines: 3 },
    ];
    const cuts: Buffer[][] = [[input], bytes(input.toString(), 1), bytes(input.toString(), 7), bytes(input.toString(), 33)];
    for (let at = 1; at < input.length; at++) cuts.push([input.subarray(0, at), input.subarray(at)]);
    for (const [which, P] of BOTH) {
      for (const chunks of cuts) {
        const parsed = parseWith(P, project, chunks);
        assert.deepEqual(parsed.records, expected, `${which}, chunk sizes ${chunks.map((c) => c.length).join(',')}`);
        assert.equal(parsed.error, undefined);
      }
    }
  });

  it('keeps a record at max_record_size and fails one byte over, in both copies', () => {
    // csv-parse checks the size before it appends a byte, so the longest record it takes is max + 1
    // bytes (delimiters not counted); the fast path must stop at exactly the same byte.
    for (const max of [10, 100]) {
      const options = { ...project, max_record_size: max };
      const fits = 'f'.repeat(max + 1);
      const cases: [string, unknown[] | undefined][] = [
        [`${fits}\nx\n`, [fits]],
        [`${fits}f\nx\n`, undefined],
        [`"${fits}"\nx\n`, [fits]],
        [`"${fits}f"\nx\n`, undefined],
        [`ab,${fits.slice(2)}\nx\n`, ['ab', fits.slice(2)]],
        [`ab,${fits.slice(2)}f\nx\n`, undefined],
        [`ab,"${fits.slice(2)}"\nx\n`, ['ab', fits.slice(2)]],
      ];
      for (const [input, first] of cases) {
        for (const size of [input.length, 1, 3, 32]) {
          for (const [which, P] of BOTH) {
            const parsed = parseWith(P, options, bytes(input, size));
            const label = `${which}, max ${max}, ${JSON.stringify(input)} in chunks of ${size}`;
            if (first === undefined) {
              assert.equal(parsed.error, 'CSV_MAX_RECORD_SIZE', label);
              assert.deepEqual(parsed.records, [], label);
            } else {
              assert.equal(parsed.error, undefined, label);
              assert.deepEqual(parsed.records.map((p) => p.record), [first, ['x']], label);
            }
          }
        }
      }
    }
  });

  it('counts a CR or CRLF inside a quoted value as lines, with an ordinary run after it', () => {
    const run = 'y'.repeat(40);
    const cases: [string, string, number[], number][] = [
      [`a,"x\r${run}"\nb,c\n`, `x\r${run}`, [2, 3], 4],
      [`a,"x\r\n${run}"\r\nb,c\r\n`, `x\r\n${run}`, [3, 4], 5],
      [`a,"\r${run}\r${run}"\nb,c\n`, `\r${run}\r${run}`, [3, 4], 5],
    ];
    for (const [input, value, lines, finalLines] of cases) {
      for (const size of [input.length, 1, 2, 5]) {
        for (const [which, P] of BOTH) {
          const parsed = parseWith(P, project, bytes(input, size));
          const label = `${which}, ${JSON.stringify(input)} in chunks of ${size}`;
          assert.deepEqual(
            parsed.records,
            [
              { record: ['a', value], lines: lines[0] },
              { record: ['b', 'c'], lines: lines[1] },
            ],
            label,
          );
          assert.equal(parsed.info.lines, finalLines, label);
          assert.equal(parsed.info.records, 2, label);
        }
      }
    }
  });

  it('names the line of a CR in a quoted value left open at the end of the file', () => {
    const input = `a,b\nc,"x\r${'y'.repeat(40)}`;
    for (const size of [input.length, 1, 3]) {
      for (const [which, P] of BOTH) {
        const core = coreOf(P, project);
        let err: Error | undefined;
        for (const chunk of bytes(input, size)) err ??= core.parse(chunk, false, () => {}, () => {});
        err ??= core.parse(undefined, true, () => {}, () => {});
        const label = `${which}, in chunks of ${size}`;
        assert.equal((err as Error & { code?: string } | undefined)?.code, 'CSV_QUOTE_NOT_CLOSED', label);
        assert.match(err?.message ?? '', /opening quote at line 3$/, label);
      }
    }
    // In one call with `end`, as csv-parse/sync parses.
    for (const [which, P] of BOTH) {
      const err = coreOf(P, project).parse(Buffer.from(input), true, () => {}, () => {});
      assert.match(err?.message ?? '', /opening quote at line 3$/, which);
    }
  });
});
