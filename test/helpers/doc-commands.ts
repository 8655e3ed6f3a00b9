import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'shell-quote';

/**
 * The command lines the docs give (README.md and docs/*.md): every one that starts `npm start`, `npm run reports`,
 * `npm run query` or `npm run simulator`, in a code block or an inline code span, as the argv of `reports` it
 * comes to (npm's script names mapped as package.json maps them).
 */

export interface DocCommand {
  /** Where it is written: file:line. */
  where: string;
  /** The command as written (continuation lines joined). */
  text: string;
  /** What `reports` receives; undefined when the line gives npm arguments without `--` (npm would take them). */
  argv: string[] | undefined;
  /** Arguments that stand for a value the reader supplies (`<id>`, `…`, `$URL`): any value is right. */
  placeholders: ReadonlySet<string>;
  /** Its stdout goes into a pipe or a file (`| jq`, `> file`). */
  redirected: boolean;
  /** npm runs it with `-s`: npm's own banner stays off stdout. */
  silent: boolean;
}

/** What a reader replaces: `<id>`, `<day after the last>`. Rewritten to one word before the shell-like split. */
const ANGLE = /<[^<>\n`]+>/g;
export const PLACEHOLDER = 'PLACEHOLDER';
const isPlaceholder = (arg: string) => arg.includes(PLACEHOLDER) || arg.includes('…') || arg.includes('$') || /^[A-Z][A-Z0-9_]*$/.test(arg) || arg === '...';

/** The npm scripts that run `reports` (package.json): `npm start` is `reports run`, and so on. */
const SCRIPTS: Record<string, string[]> = { start: ['run'], reports: [], query: ['query'], simulator: ['simulator'] };

export function docFiles(root: string): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => join('docs', f))];
}

/** The shell text of a file's command candidates: each code-block line (with its continuations) and each inline code span. */
function candidates(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const lines = text.split('\n');
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      let joined = line;
      const at = i;
      while (joined.endsWith('\\') && i + 1 < lines.length) joined = `${joined.slice(0, -1)} ${lines[++i]!.trim()}`;
      out.push({ line: at + 1, text: joined.trim() });
    } else {
      for (const m of line.matchAll(/`([^`]+)`/g)) out.push({ line: i + 1, text: m[1]! });
    }
  }
  return out;
}

interface SimpleCommand {
  words: string[];
  redirected: boolean;
}

/** The simple commands of a shell line: split at `&&`, `;`, `|`, without redirections and comments. */
function simpleCommands(text: string): SimpleCommand[] {
  const words = parse(text.replace(ANGLE, PLACEHOLDER), (name) => `$${name}`);
  const commands: SimpleCommand[] = [{ words: [], redirected: false }];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const current = commands.at(-1)!;
    if (typeof w === 'string') current.words.push(w);
    else if ('comment' in w) break;
    else if ('op' in w && ['>', '>>', '&>'].includes(w.op)) {
      current.redirected = true;
      i++; // the file redirected to
    } else if ('op' in w && w.op === '<') i++;
    else if ('op' in w) {
      if (w.op === '|') current.redirected = true;
      commands.push({ words: [], redirected: false });
    }
  }
  return commands.filter((c) => c.words.length);
}

/** `npm start …`, `npm run [-s] reports -- …`: the script and what follows it, or undefined for any other command. */
function reportsArgv(words: string[]): { argv: string[] | undefined } | undefined {
  if (words[0] !== 'npm') return undefined;
  let rest: string[];
  if (words[1] === 'start') rest = words.slice(1);
  else if (words[1] === 'run') rest = words.slice(2).filter((w, i) => !(i === 0 && (w === '-s' || w === '--silent')));
  else return undefined;
  const script = SCRIPTS[rest[0] ?? ''];
  if (!script) return undefined;
  const after = rest.slice(1);
  if (after.length === 0) return { argv: script };
  if (after[0] !== '--') return { argv: undefined };
  return { argv: [...script, ...after.slice(1)] };
}

export function docCommands(root: string): DocCommand[] {
  const found: DocCommand[] = [];
  for (const file of docFiles(root)) {
    for (const c of candidates(readFileSync(join(root, file), 'utf8'))) {
      // A command line starts with npm (or chains it after &&): prose and sample output that mention one are not.
      if (!/^(\$ )?npm (start|run)\b|&&\s*npm (start|run)\b/.test(c.text)) continue;
      for (const { words, redirected } of simpleCommands(c.text)) {
        const mapped = reportsArgv(words);
        if (!mapped) continue;
        found.push({
          where: `${file}:${c.line}`,
          text: c.text,
          argv: mapped.argv,
          placeholders: new Set((mapped.argv ?? []).filter(isPlaceholder)),
          redirected,
          silent: words[1] === 'run' && (words[2] === '-s' || words[2] === '--silent'),
        });
      }
    }
  }
  return found;
}
