import { ConfigurationError } from '../../functions/core/errors.js';
import { parseLocalDateTime, type LocalDateTime, type WindowRange } from '../../functions/core/time/window.js';

/**
 * --from and --to of a command, as a range of window starts (functions/core/time/window.ts windowsStartingIn): wall-clock
 * dates or date-times in the report's time zone, --from inclusive, --to exclusive; a flag left out is a bound left
 * to the command's default.
 */
export function windowRangeOf(from: string | undefined, to: string | undefined): WindowRange {
  return { ...(from ? { from: flagDateTime('--from', from) } : {}), ...(to ? { to: flagDateTime('--to', to) } : {}) };
}

/** A --from or --to value; a mistake names the flag, so the line says which of the two to fix. */
export function flagDateTime(flag: '--from' | '--to', text: string): LocalDateTime {
  try {
    return parseLocalDateTime(text);
  } catch (e) {
    if (e instanceof ConfigurationError) throw new ConfigurationError(`${flag} ${e.message}`);
    throw e;
  }
}
