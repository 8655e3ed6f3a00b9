import { readFileSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { floorOf } from './targets.js';

/** The part of Stryker's JSON report (mutation-testing-report-schema) the summary reads. */
interface ReportMutant {
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number } };
}
interface Report {
  files: Record<string, { mutants: ReportMutant[] }>;
}

export interface FileScore {
  file: string;
  mutants: number;
  killed: number;
  survived: number;
  noCoverage: number;
  /** Detected (killed or timed out) over detected plus undetected, as Stryker counts it; null with nothing to score. */
  score: number | null;
  floor: number;
  survivors: string[];
}

/** Killed by a failing test, or by running past the time limit (an infinite loop the mutant made). */
const DETECTED = new Set(['Killed', 'Timeout']);

function scoreFile(file: string, mutants: ReportMutant[]): FileScore {
  const count = (status: string) => mutants.filter((mutant) => mutant.status === status).length;
  const killed = mutants.filter((mutant) => DETECTED.has(mutant.status)).length;
  const survived = count('Survived');
  const noCoverage = count('NoCoverage');
  const valid = killed + survived + noCoverage;
  const survivors = mutants
    .filter((mutant) => mutant.status === 'Survived' || mutant.status === 'NoCoverage')
    .map((mutant) => {
      const { line, column } = mutant.location.start;
      const replacement = (mutant.replacement ?? '').replace(/\s+/g, ' ').slice(0, 60);
      return `${file}:${line}:${column} ${mutant.mutatorName}${mutant.status === 'NoCoverage' ? ' (no test reaches it)' : ''}: ${replacement}`;
    });
  return {
    file, mutants: mutants.length, killed, survived, noCoverage,
    score: valid === 0 ? null : (100 * killed) / valid,
    floor: floorOf(file), survivors,
  };
}

export function readScores(root: string, reportFile: string): FileScore[] {
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
  return Object.entries(report.files)
    .map(([path, { mutants }]) => scoreFile(isAbsolute(path) ? relative(root, path) : path, mutants))
    .sort((a, b) => a.file.localeCompare(b.file));
}

export const meetsFloor = (score: FileScore) => score.score === null || score.score >= score.floor;

/** One line per file: mutants, killed, survived, no coverage, score, and the floor it is held to. */
export function scoreTable(scores: FileScore[]): string {
  const width = Math.max(4, ...scores.map((score) => score.file.length));
  const header = `${'file'.padEnd(width)}  mutants  killed  survived  no-cov   score  floor`;
  const rows = scores.map((score) => {
    const shown = score.score === null ? '-' : `${score.score.toFixed(1)}%`;
    const verdict = meetsFloor(score) ? '' : '  BELOW FLOOR';
    return `${score.file.padEnd(width)}  ${String(score.mutants).padStart(7)}  ${String(score.killed).padStart(6)}  ${String(score.survived).padStart(8)}  ${String(score.noCoverage).padStart(6)}  ${shown.padStart(6)}  ${String(score.floor).padStart(4)}%${verdict}`;
  });
  return [header, ...rows].join('\n');
}
