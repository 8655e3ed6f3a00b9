import { ConfigurationError } from '../../functions/core/errors.js';
import { formatLocalDate, parseLocalDateTime, type ReportWindow } from '../../functions/core/time/window.js';

/**
 * How many rows the simulator sends for a window, beyond the flat `rowsPerDay`: a weekly rhythm (a shop sells
 * less on Sundays) and dates whose volume drops (a provider-side filter that lost most rows), so the volume
 * check (functions/core/quality/volume-band.ts) can be seen judging ordinary swings and catching a real drop:
 *
 *   npm start -- --from 2026-10-01 --to 2026-11-01 --weekday-volume 1,1,1,1,1.2,0.6,0.4 --drop-date 2026-10-27
 *
 * Deterministic: the count depends only on the window and these settings.
 */
export interface VolumeShape {
  /** Seven factors, Monday first, applied by the window start's weekday. */
  weekday?: readonly number[];
  /** Date (YYYY-MM-DD, the window start's) -> the share of its usual rows sent (0.1: a tenth). */
  drops?: Readonly<Record<string, number>>;
}

/** What --drop-date sends when no share is given: a tenth of the usual rows. */
export const DEFAULT_DROP_SHARE = 0.1;

/** rowsPerDay for this window after the weekly rhythm and any drop. */
export function rowsPerDayFor(window: ReportWindow, rowsPerDay: number, shape: VolumeShape | undefined): number {
  if (!shape) return rowsPerDay;
  const sundayFirst = new Date(Date.UTC(window.start.year, window.start.month - 1, window.start.day)).getUTCDay();
  const factor = shape.weekday?.[(sundayFirst + 6) % 7] ?? 1;
  const share = shape.drops?.[formatLocalDate(window.start)] ?? 1;
  return rowsPerDay * factor * share;
}

/** `--weekday-volume 1,1,1,1,1.2,0.6,0.4`: seven factors, Monday to Sunday. */
export function parseWeekdayVolume(text: string): number[] {
  const factors = text.split(',').map((f) => Number(f.trim()));
  if (factors.length !== 7 || factors.some((f) => !Number.isFinite(f) || f < 0)) {
    throw new ConfigurationError(`--weekday-volume ${text}: expected seven factors of at least 0, Monday to Sunday, for example 1,1,1,1,1.2,0.6,0.4`);
  }
  return factors;
}

/** `--drop-date 2026-10-27` (a tenth of the rows) or `--drop-date 2026-10-27=0` (header only), repeatable. */
export function parseDropDates(values: readonly string[]): Record<string, number> {
  const drops: Record<string, number> = {};
  for (const v of values) {
    const [date = '', share] = v.split('=');
    const bad = () => new ConfigurationError(`--drop-date ${v}: expected YYYY-MM-DD or YYYY-MM-DD=SHARE with SHARE from 0 to 1, for example --drop-date 2026-10-27=0.1`);
    let day: string;
    try {
      day = formatLocalDate(parseLocalDateTime(date));
    } catch {
      throw bad();
    }
    if (day !== date) throw bad();
    const s = share === undefined ? DEFAULT_DROP_SHARE : Number(share);
    if (share === '' || !Number.isFinite(s) || s < 0 || s > 1) throw bad();
    drops[date] = s;
  }
  return drops;
}

/** The shape from the command-line flags, or undefined when neither was given. */
export function volumeShapeFrom(flags: { weekdayVolume?: string; dropDate?: readonly string[] }): VolumeShape | undefined {
  const weekday = flags.weekdayVolume === undefined ? undefined : parseWeekdayVolume(flags.weekdayVolume);
  const drops = flags.dropDate?.length ? parseDropDates(flags.dropDate) : undefined;
  return weekday || drops ? { ...(weekday ? { weekday } : {}), ...(drops ? { drops } : {}) } : undefined;
}
