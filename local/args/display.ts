/** How the commands print paths, counts and sizes, so `run` and `backfill` say them alike. */

export { showPath } from '../../functions/core/shown-path.js';

export const showKib = (bytes: number): string => (bytes < 10_240 ? `${bytes} B` : `${Math.round(bytes / 1024).toLocaleString('en-US')} KiB`);

export const showCount = (n: number): string => n.toLocaleString('en-US');
