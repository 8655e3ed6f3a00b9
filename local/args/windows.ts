import { parseLocalDateTime, type WindowRange } from '../../functions/core/time/window.js';

/**
 * --from and --to of a command, as a range of window starts (functions/core/time/window.ts windowsStartingIn): wall-clock
 * dates or date-times in the report's time zone, --from inclusive, --to exclusive; a flag left out is a bound left
 * to the command's default.
 */
export function windowRangeOf(from: string | undefined, to: string | undefined): WindowRange {
  return { ...(from ? { from: parseLocalDateTime(from) } : {}), ...(to ? { to: parseLocalDateTime(to) } : {}) };
}
