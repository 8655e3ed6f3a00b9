/**
 * How the commands print counts and sizes, so `run` and `backfill` say them alike (paths: functions/core/shown-path.ts,
 * which errors naming a user's file share).
 */

export const showKib = (bytes: number): string => (bytes < 10_240 ? `${bytes} B` : `${Math.round(bytes / 1024).toLocaleString('en-US')} KiB`);

export const showCount = (n: number): string => n.toLocaleString('en-US');
